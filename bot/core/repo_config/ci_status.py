"""Did the pipeline's steps run on the PR's head? Read from the head's commit statuses.

How vLLM's Buildkite reports to GitHub, as its public PR threads and vllm-project/ci-infra's
own replay tool (`ci_selector`, `codemap/pipeline/match.py` and `validate/crosscheck.py`,
which score the generator against the same statuses) show it:

- The PR build posts one status for itself, context `buildkite/ci/pr` (the pipeline
  `ci` with separate pull-request statuses). A build that sits on a block step keeps
  it `pending` ("… passed and blocked"); `success`, `failure` or `error` once done.
  vLLM's PR build starts only once the `ready` label is on: before that the head
  has no such status at all.
- Every job that runs posts `buildkite/ci/pr/<slug>`. The slug is Buildkite's, of the
  step's label: lower case, `+` `/` `.` spelled as words (`plus`, `slash`, `dot`),
  every other run of non-alphanumerics one `-` (`:amd: (MI355) E2E Core Large Memory`
  -> `amd-mi355-e2e-core-large-memory`). ci-selector also accepts the step's key, the
  label with `+` dropped, and for an AMD mirror without a label of its own the
  generator's wrap `AMD: <label> (<device>)`, with and without the device. A
  parallel step's jobs add `-<n>` (`%N` in the label); a long context is cut near
  44 characters. `bootstrap` and `fastcheck` are not steps.
- A block step, and the job behind it, posts nothing: a step that did not run has
  no status. So "not run" is inferred from an absence, and only said when the build
  exists on this head and has finished or is blocked, every status was read, and no
  unmatched status could be the step's.

Matching is exact: a status names a step when its slug is one of that step's
spellings and of no other step's; a shard or a cut-off context must point at exactly
one step of the whole pipeline. A status that points at two steps names neither.
What it does not tell: why a step did not run (not selected, optional, cancelled),
and nothing about GitHub Actions' check runs, which are not pipeline steps.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.core.facts import CommitStatus, HeadStatuses
from bot.core.findings import CiRun
from bot.core.repo_config.pipeline import CiStep

MAX_STATUSES = 2_000
MAX_CONTEXT_CHARS = 300
MAX_DESCRIPTION_CHARS = 200
# Buildkite cuts long contexts; a slug at least this long may be a cut-off spelling.
TRUNCATED_MIN = 44
# A spelling shorter than this is too generic to make an unmatched status suspect.
SUSPECT_MIN = 8
NOT_STEPS = frozenset({"bootstrap", "fastcheck"})

FINISHED = frozenset({"blocked", "passed", "failed", "error"})

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SHARD = re.compile(r"(.+)-(\d{1,4})")
_BLOCKED = re.compile(r"\bblocked\b", re.IGNORECASE)
_WORDS = (("+", " plus "), ("/", " slash "), (".", " dot "))


def slug(text: str, *, words: bool = True) -> str:
    """Buildkite's job slug of a label (`words`), or ci-infra's key-like spelling."""
    lowered = text.lower()
    if words:
        for char, word in _WORDS:
            lowered = lowered.replace(char, word)
    else:
        lowered = lowered.replace("+", " ")
    found = _NON_ALNUM.sub("-", lowered).strip("-")
    # `%N` in a parallel step's label: its jobs report as `<slug>-1`, `<slug>-2`, ...
    return found[:-2] if found.endswith("-n") else found


def generated_key(label: str) -> str:
    """ci-infra `buildkite_step._generate_step_key`: the key of a step without one."""
    key = label.replace(" ", "-").lower()
    for char in "()%":
        key = key.replace(char, "")
    for char in ",+:./":
        key = key.replace(char, "-")
    return key


def spellings(step: CiStep) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(keys, label slugs): every context suffix the step's jobs can report as."""
    key = step.key
    if step.mirror_of and not key:
        key = "amd-" + generated_key(step.mirror_of)
    keys = tuple(k for k in (key or generated_key(step.label),) if k)
    labels = [step.label]
    if step.mirror_of:
        # An older generator published every mirror under its wrap of the CUDA label.
        labels += [f"AMD: {step.mirror_of}", f"AMD: {step.mirror_of} ({step.device})"]
    slugs = dict.fromkeys(slug(text, words=w) for text in labels for w in (True, False))
    return keys, tuple(s for s in slugs if s)


def _core(step: CiStep) -> str:
    """The step's name without its emoji and device prefix: what a renamed context
    most likely still contains (`:nvidia: (H200) LoRA` -> `lora`)."""
    rest = step.label.strip()
    while rest.startswith(":"):
        end = rest.find(":", 1)
        if end <= 1 or " " in rest[1:end]:
            break
        rest = rest[end + 1:].lstrip()
    if rest.startswith("("):
        end = rest.find(")")
        if end > 0:
            rest = rest[end + 1:]
    return slug(rest)


@dataclass
class StatusMatch:
    """Which statuses name which steps (by index into the pipeline's steps)."""

    by_step: dict[int, list[str]] = field(default_factory=dict)  # -> GitHub states
    unmatched: list[str] = field(default_factory=list)  # step slugs naming no one step
    uncertain: set[int] = field(default_factory=set)  # steps an ambiguous status names


class _Index:
    def __init__(self, steps: Sequence[CiStep]) -> None:
        self.keys: dict[str, set[int]] = {}
        self.slugs: dict[str, set[int]] = {}
        # Label slugs of parallel steps (`%N` in the label): their jobs add `-<n>`.
        self.sharded: dict[str, set[int]] = {}
        # Per step, the names an unmatched status would contain if it were the step's.
        self.names: list[tuple[str, ...]] = []
        for number, step in enumerate(steps):
            keys, slugs = spellings(step)
            self.names.append(tuple(
                n for n in dict.fromkeys((*keys, *slugs, _core(step))) if len(n) >= SUSPECT_MIN))
            for key in keys:
                self.keys.setdefault(key, set()).add(number)
            for found in slugs:
                self.slugs.setdefault(found, set()).add(number)
                if "%n" in step.label.lower():
                    self.sharded.setdefault(found, set()).add(number)
        self.sorted = sorted({*self.keys, *self.slugs})

    def exact(self, name: str) -> set[int]:
        # A key is the step's own name: it wins over another step's label slug.
        return self.keys.get(name) or self.slugs.get(name) or set()

    def prefixed(self, name: str) -> set[int]:
        """Steps with a spelling that starts with `name` (a cut-off context)."""
        found: set[int] = set()
        start = bisect.bisect_left(self.sorted, name)
        for spelling in self.sorted[start:]:
            if not spelling.startswith(name):
                break
            found |= self.exact(spelling)
        return found


# One index per pipeline: the base's config is parsed once per content and shared by
# every PR on it (bot/handlers/repo_config.py), so its steps tuple is the same object.
# Keyed by id() and holding the tuple itself, so an id is never reused while cached.
_INDEXES: dict[int, tuple[Sequence[CiStep], _Index]] = {}
_INDEXES_MAX = 8


def _index(steps: Sequence[CiStep]) -> _Index:
    hit = _INDEXES.get(id(steps))
    if hit is not None and hit[0] is steps:
        return hit[1]
    built = _Index(steps)
    if len(_INDEXES) >= _INDEXES_MAX:
        # Digests are built on worker threads: another may evict the same key first.
        _INDEXES.pop(next(iter(_INDEXES), 0), None)
    _INDEXES[id(steps)] = (steps, built)
    return built


def match_statuses(steps: Sequence[CiStep], statuses: Iterable[CommitStatus],
                   context: str) -> StatusMatch:
    """The step statuses (`<context>/<slug>`) matched to `steps`, exactly (module doc)."""
    index = _index(steps)
    match = StatusMatch()
    prefix = context + "/"
    for status in statuses:
        name = status.context
        if not name.startswith(prefix) or len(name) > MAX_CONTEXT_CHARS:
            continue
        suffix = name[len(prefix):].lower()
        if not suffix or suffix in NOT_STEPS:
            continue
        found = index.exact(suffix)
        if not found:
            shard = _SHARD.fullmatch(suffix)
            found = set(index.sharded.get(shard.group(1), ())) if shard else set()
        if not found and len(suffix) >= TRUNCATED_MIN:
            found = index.prefixed(suffix)
        if len(found) == 1:
            match.by_step.setdefault(next(iter(found)), []).append(status.state)
        else:
            match.unmatched.append(suffix)
            match.uncertain |= found
    return match


def build_state(statuses: Iterable[CommitStatus], context: str,
                any_step_status: bool) -> tuple[str, str]:
    """(state, description) of the build's own status on the head."""
    for status in statuses:
        if status.context != context:
            continue
        description = status.description[:MAX_DESCRIPTION_CHARS]
        if status.state == "success":
            return "passed", description
        if status.state == "failure":
            return "failed", description
        if status.state == "error":
            return "error", description
        if _BLOCKED.search(description):
            return "blocked", description
        return "running", description
    # Steps reporting without the build's own status: it is under way at best.
    return ("running" if any_step_status else "not-started"), ""


def _combined(states: Sequence[str]) -> str:
    if any(s in ("failure", "error") for s in states):
        return "failed"
    if any(s != "success" for s in states):
        return "pending"
    return "passed"


@dataclass(frozen=True)
class HeadRun:
    run: CiRun
    status_of: dict[CiStep, str]  # every step of the pipeline with a known status


def read_head(steps: Sequence[CiStep], head: HeadStatuses) -> HeadRun:
    """The build's state on the head and each step's: passed, failed, pending (no
    status yet while the build runs, or a pending one), blocked (an optional step
    that was not unblocked), not-run (the build is done or blocked and the step
    posted nothing), unknown (the statuses were not all read, or one that names no
    single step could be this one's)."""
    if head.problem:
        return HeadRun(CiRun(context=head.context, state="unreadable",
                             problem=head.problem[:MAX_DESCRIPTION_CHARS],
                             complete=False), {})
    statuses = head.statuses[:MAX_STATUSES]
    complete = head.complete and len(head.statuses) <= MAX_STATUSES
    match = match_statuses(steps, statuses, head.context)
    prefix = head.context + "/"
    any_step = any(s.context.startswith(prefix) for s in statuses)
    state, description = build_state(statuses, head.context, any_step)
    run = CiRun(context=head.context, state=state, description=description,
                reported=sum(len(v) for v in match.by_step.values()), complete=complete)
    if state == "not-started":
        return HeadRun(run, {})
    suspects = [u for u in match.unmatched if len(u) >= SUSPECT_MIN]
    names = _index(steps).names
    status_of: dict[CiStep, str] = {}
    for number, step in enumerate(steps):
        reported = match.by_step.get(number)
        if reported:
            status_of[step] = _combined(reported)
        elif number in match.uncertain or not complete or _suspect(names[number], suspects):
            status_of[step] = "unknown"
        elif step.optional:
            status_of[step] = "blocked"
        elif state in FINISHED or step.nightly:
            status_of[step] = "not-run"
        else:
            status_of[step] = "pending"
    return HeadRun(run, status_of)


def _suspect(names: Sequence[str], unmatched: Sequence[str]) -> bool:
    """An unmatched status that contains one of the step's names (or the reverse): it
    could be the step's under a spelling we do not know, so its absence proves nothing."""
    return any(name in other or other in name for name in names for other in unmatched)
