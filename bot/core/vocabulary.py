"""The words every stage of the core shares: languages, verdicts, severities, the
evidence a rule keeps, and the pieces a digest is made of (areas, risks, symbols,
trace lines, reviewers, routing). The ground floor: it imports nothing of the core,
so rules/, reading/ and judging/ never import back up to findings.py."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

Lang = Literal["en", "zh"]
# Where the digest is delivered: a sticky comment, a check run on the head, or both.
Delivery = Literal["comment", "check", "both"]
LANGS: tuple[Lang, ...] = ("en", "zh")
Verdict = Literal["deep-read", "read", "skim", "quiet"]
VERDICTS: tuple[Verdict, ...] = ("deep-read", "read", "skim", "quiet")
Severity = Literal["high", "medium", "low"]
# The parts of a digest fed by a read of their own: when that read fails, the digest is
# posted without the part (one line says it is unavailable) and the job re-runs later.
Part = Literal["conversation", "ci", "repo_config", "index", "linked"]
PARTS: tuple[Part, ...] = ("conversation", "ci", "repo_config", "index", "linked")
Criticality = Literal["low", "medium", "high", "critical"]
EvidenceKind = Literal[
    "path", "label", "title", "body", "added", "base", "author", "size", "mention"
]


class Evidence(BaseModel):
    """Why something fired: which rule saw what (a file, a label, a phrase)."""

    model_config = ConfigDict(frozen=True)

    rule: str  # rule id, e.g. "compile" or "compile/checklist/spawn"
    kind: EvidenceKind
    subject: str  # the file name, label, matched phrase or branch (untrusted: escape it)


class RuleText(BaseModel):
    """A text a rule file gives (rules/*.yaml): content, not words the code chose. English,
    and Chinese where the rule gives it; rendering picks the language (and sets Chinese
    typography). A plain string is English."""

    model_config = ConfigDict(frozen=True)

    en: str
    zh: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_plain_string(cls, value: object) -> object:
        return {"en": value} if isinstance(value, str) else value


class ChecklistItem(BaseModel):
    """A rule-supplied reminder. `id` is stable so a ticked box survives updates."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: RuleText  # trusted (comes from rules/, not from the PR)


class AreaMatch(BaseModel):
    """One matched area rule and everything it contributes to the digest."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: RuleText
    audience: RuleText  # who should read it
    criticality: Criticality
    numerics: bool  # touching it can change model outputs -> GPU evaluation expected
    files: tuple[str, ...] = ()  # the PR files this area claims
    reasons: tuple[Evidence, ...] = ()
    focus: tuple[RuleText, ...] = ()  # the focus questions that apply to this PR
    # The subset of `focus` whose `when` condition fired on this PR's own content;
    # the rest are the area's standing questions.
    focus_triggered: tuple[RuleText, ...] = ()
    checklist: tuple[ChecklistItem, ...] = ()
    ci_areas: tuple[str, ...] = ()  # Buildkite test areas (.buildkite/test_areas/<name>.yaml)
    labels: tuple[str, ...] = ()  # labels the rule suggests
    quiet: bool = False  # docs/ci trivia: on its own it never makes a PR worth a comment
    catch_all: bool = False  # refined by more specific areas (see AreaRule.catch_all)


ClueKind = Literal[
    "quote", "file", "area", "absent", "base", "diff", "files", "platform", "ci-step"
]


class Clue(BaseModel):
    """One piece of evidence behind a finding, as data; rendering words it.

    quote: `text` as the PR wrote it (untrusted). file: a path. area: an area id.
    absent: what the description lacks (`text`, an id under the finding's own, or
    `missing-test-results.<id>` where that finding was folded into this one; `detail`
    the section heading it names, as written). base: the base branch `text`. diff:
    `numbers` (additions, deletions). files: `numbers` (changed files,). platform: a
    hardware platform `text` the description names no hardware of. ci-step: a CI step,
    `text` its label, `detail` its status on the head, `device` and `numbers` (gpus,)."""

    model_config = ConfigDict(frozen=True)

    kind: ClueKind
    text: str = ""
    detail: str = ""
    device: str = ""
    numbers: tuple[int, ...] = ()


RiskParam = int | str | tuple[str, ...]


class Risk(BaseModel):
    """One open item of the risk checklist: its id, weight, parameters and evidence.
    The words are rendering's (bot/core/render/words.py)."""

    model_config = ConfigDict(frozen=True)

    id: str  # stable: missing-gpu-eval, missing-test-results, ...
    severity: Severity
    # Per id (docs/architecture.md, "The digest's JSON"): counts, files, platforms, the
    # area ids behind it, the build's state...
    params: tuple[tuple[str, RiskParam], ...] = ()
    evidence: tuple[Clue, ...] = ()

    def param(self, name: str, default: RiskParam = "") -> RiskParam:
        return next((value for key, value in self.params if key == name), default)


class Note(BaseModel):
    """A note on how complete the digest is, as data: `id` (files-truncated, no-files,
    added-scan-partial, text-scan-partial, repo-config-invalid), its numbers and the
    problem text (untrusted) it quotes."""

    model_config = ConfigDict(frozen=True)

    id: str
    numbers: tuple[int, ...] = ()
    text: str = ""


class Symbol(BaseModel):
    """A function or class the patch touches: where a reader should start."""

    model_config = ConfigDict(frozen=True)

    file: str
    name: str
    change: Literal["added", "removed", "modified"]


class TraceEntry(BaseModel):
    """One line of `/digest explain`: a rule that fired, or nearly did."""

    model_config = ConfigDict(frozen=True)

    rule: str
    fired: bool
    evidence: tuple[Evidence, ...] = ()
    files: int = 0  # files a fired rule matched
    note: str = ""  # a rule that did not fire: e.g. "matched paths but excluded by ..."


class Reviewers(BaseModel):
    model_config = ConfigDict(frozen=True)

    users: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()


# defer_build: only the service routes; the CLI's digest never validates one.
class RoutingOutcome(BaseModel):
    """What routing did (or would do) on this PR, for the digest's routing section."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    requested_users: tuple[str, ...] = ()
    requested_teams: tuple[str, ...] = ()
    because: tuple[tuple[str, str], ...] = ()  # (reviewer, label that routed them)
    skipped: tuple[tuple[str, str], ...] = ()  # (name, reason)


AskKind = Literal[
    "tests", "test-results", "gpu-eval", "numbers", "hardware-run", "docs", "rebase", "split"
]
ASK_KINDS: tuple[AskKind, ...] = (
    "tests", "test-results", "gpu-eval", "numbers", "hardware-run", "docs", "rebase", "split"
)
AskStatus = Literal["open", "answered"]
Answer = Literal["", "reply", "commit", "evidence"]
AskAccess = Literal["", "write", "none"]


class Ask(BaseModel):
    """A reviewer's request found in the conversation, shown once in the digest."""

    model_config = ConfigDict(frozen=True)

    kind: AskKind
    by: str  # the reviewer's login (untrusted: escape)
    quote: str  # the sentence that asks (untrusted: escape)
    url: str = ""  # where it was asked (built by us)
    status: AskStatus = "open"
    answered_by: Answer = ""
    answer_url: str = ""
    # The digest's own item this ask stands in for (shown once, as the ask), and its
    # severity: an open ask keeps the weight of the item it replaced.
    risk: str = ""
    severity: Severity | None = None
    # Whether the asker may write to the repository: "write", "none" (shown as such), or
    # "" when it was not asked.
    access: AskAccess = ""


class LaterEvidence(BaseModel):
    """Evidence posted after the description that cleared or lowered one of its risks."""

    model_config = ConfigDict(frozen=True)

    risk: str  # the risk id it answered
    outcome: Literal["cleared", "lowered"]
    by: str  # login (untrusted: escape)
    url: str = ""  # where it was posted (built by us)
    evidence: str = ""  # the line that shows it (untrusted: escape)


class VerdictGrounds(BaseModel):
    """What the verdict weighed, as data; rendering words the one-line reason."""

    model_config = ConfigDict(frozen=True)

    lead: str = ""  # the lead area's id; "" when no loud area matched
    criticality: Criticality = "low"  # the lead area's
    more_areas: int = 0  # loud areas besides the lead
    areas: tuple[str, ...] = ()  # without a lead: the (quiet) areas' ids
    files: int = 0
    additions: int = 0
    deletions: int = 0
    kind: Literal["", "tests", "new", "removal"] = ""  # tests only, all new, mostly deletions
    high_risk: bool = False
    open_risks: int = 0  # risks above low
    context: bool = False  # quiet, but the symbol index found code around the change
    # What the lead area's change touches: the functions/classes changed in its most
    # changed code file, or that file's name when the PR adds it.
    touches: tuple[str, ...] = ()
