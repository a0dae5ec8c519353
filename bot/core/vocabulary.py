"""The words every stage of the core shares: languages, verdicts, severities, the
evidence a rule keeps, and the pieces a digest is made of (areas, risks, symbols,
trace lines, reviewers, routing). The ground floor: it imports nothing of the core,
so rules/, reading/ and judging/ never import back up to findings.py."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")
Verdict = Literal["deep-read", "read", "skim", "quiet"]
VERDICTS: tuple[Verdict, ...] = ("deep-read", "read", "skim", "quiet")
Severity = Literal["high", "medium", "low"]
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


class ChecklistItem(BaseModel):
    """A rule-supplied reminder. `id` is stable so a ticked box survives updates."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str  # already localized; trusted (comes from rules/, not from the PR)


class AreaMatch(BaseModel):
    """One matched area rule and everything it contributes to the digest."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str  # localized
    audience: str  # localized: who should read it
    criticality: Criticality
    numerics: bool  # touching it can change model outputs -> GPU evaluation expected
    files: tuple[str, ...] = ()  # the PR files this area claims
    reasons: tuple[Evidence, ...] = ()
    focus: tuple[str, ...] = ()  # localized focus questions that apply to this PR
    # The subset of `focus` whose `when` condition fired on this PR's own content;
    # the rest are the area's standing questions.
    focus_triggered: tuple[str, ...] = ()
    checklist: tuple[ChecklistItem, ...] = ()
    ci_areas: tuple[str, ...] = ()  # Buildkite test areas (.buildkite/test_areas/<name>.yaml)
    labels: tuple[str, ...] = ()  # labels the rule suggests
    quiet: bool = False  # docs/ci trivia: on its own it never makes a PR worth a comment


class Risk(BaseModel):
    """One open item of the risk checklist."""

    model_config = ConfigDict(frozen=True)

    id: str  # stable: missing-gpu-eval, missing-test-results, ...
    severity: Severity
    text: str  # localized
    evidence: tuple[str, ...] = ()  # untrusted snippets (file names, body phrases): escape


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
    note: str = ""  # e.g. "matched paths but excluded by ..." (trusted text)


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
