"""The digest: everything the core concludes about one pull request at one head SHA.

Its parts are the shared words of bot/core/vocabulary.py."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.core.neighbours.model import Neighbours
from bot.core.reading.specifics import Decision, Link, Mention, StructureNote, ValueChange
from bot.core.reading.template import is_ai_assistance_box
from bot.core.repo_index.findings import RepoContext
from bot.core.vocabulary import (
    AreaMatch,
    Ask,
    Lang,
    LaterEvidence,
    Note,
    Part,
    Reviewers,
    Risk,
    RoutingOutcome,
    Symbol,
    TraceEntry,
    Verdict,
    VerdictGrounds,
)


class Owners(BaseModel):
    """Code owners of the changed files (GitHub's CODEOWNERS semantics)."""

    model_config = ConfigDict(frozen=True)

    users: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    by_file: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (path, owners as written)
    unowned: tuple[str, ...] = ()
    # Paths whose owners were not worked out: the CODEOWNERS matching budget ran out
    # (bot/core/repo_config/codeowners.py, MAX_MATCH_COST).
    unmatched: tuple[str, ...] = ()


class CiStepRef(BaseModel):
    """One Buildkite step the base's pipeline would run (or offer) for this PR."""

    model_config = ConfigDict(frozen=True)

    label: str
    key: str = ""
    file: str = ""  # the job file that defines it (.buildkite/test_areas/<area>.yaml)
    device: str = ""  # "" when the step names none: the generic GPU queue
    gpus: int = 0
    nightly: bool = False
    optional: bool = False
    matched: tuple[str, ...] = ()  # the dependency entries that reached it
    # How many steps of the pipeline list the least shared of those entries; 0 unknown.
    # A step only a widely shared entry reaches (`vllm/config/`) is not this change's own.
    shared_by: int = 0
    # Its own commands run a test file the PR changes (bot/core/repo_config/step_tests.py);
    # `test_distance` is then 0 when a command names the file, k when it runs a folder k
    # levels above it.
    runs_changed_tests: bool = False
    # Its commands run the tests of a module the PR changes (`tests/tokenizers_` for
    # `vllm/tokenizers/registry.py`), and no changed test file.
    runs_module_tests: bool = False
    # Of those, a run names a changed module's own test file (`v1/spec_decode/test_eagle.py`
    # for `vllm/v1/spec_decode/eagle.py`), not only a test in its package's test folder.
    runs_module_test_file: bool = False
    test_distance: int = 0
    # Its label names a word of a changed module's file name (`Cudagraph` for
    # `encoder_cudagraph.py`, `Humming` for `fused_humming_moe.py`): the pipeline's authors
    # meant it for that code, whatever folder reached it.
    names_changed_module: bool = False
    # One of its entries is a changed file itself, not a folder holding it.
    lists_changed_file: bool = False
    # On the PR's head commit (bot/core/repo_config/ci_status.py): passed | failed |
    # pending | blocked | not-run | unknown; "" when the head's statuses were not read.
    status: str = ""
    # "intel" for a step of Intel's pipeline (.buildkite/ci_config_intel.yaml), "" for the
    # main one
    pipeline: str = ""
    # How many source entries (outside `tests/`) its dependencies list: a step listing
    # one folder is that folder's own; one listing many (`vllm/distributed/`,
    # `vllm/engine/`, `vllm/model_executor/models/`) runs its own tests whenever any of
    # them changes. 0 unknown.
    source_entries: int = 0

    @property
    def exercises_change(self) -> bool:
        """Its own commands run the change's tests or its module's: it tests the change,
        whatever folder reached it."""
        return self.runs_changed_tests or self.runs_module_tests

    @property
    def directness(self) -> tuple[int, int, int, int]:
        """How directly the step exercises the change, smallest first: its commands run a
        changed test (the closer the path, the earlier: the file before its folder), then
        the changed module's tests, then its label names the changed module (blind judges
        called a line led by MoE kernel steps a shared folder reached, the Fusion and
        Cudagraph steps in "+N more", misdirected); within each, the fewer steps share
        the entry that reached it, the earlier. A step only an entry reaches ranks by
        that entry's depth first: one listing `vllm/v1/worker/gpu/` before one listing
        `vllm/v1/worker/` (Distributed DP steps led a model-runner-V2 change, its own
        steps in "+N more": misdirected). Last, of steps the same entry reaches, the one
        listing no other source entry: it is that entry's own (Basic Models (Extra
        Initialization), which lists only `vllm/model_executor/models/`, before Pipeline +
        Context Parallelism, which lists it beside `vllm/distributed/` and `vllm/engine/`:
        judged misdirected when that led on model changes)."""
        shared = self.shared_by if self.shared_by > 0 else 1 << 30
        focus = 0 if self.source_entries == 1 else 1
        if self.runs_changed_tests:
            return (0, self.test_distance, shared, focus)
        if self.runs_module_tests:
            return (1, shared, -self.specificity, focus)
        if self.names_changed_module:
            return (2, shared, -self.specificity, focus)
        return (3, -self.specificity, shared, focus)

    @property
    def specificity(self) -> int:
        """The longest dependency entry that reached the step: the closer to the change,
        the longer (`vllm/lora/layers` before `vllm/v1`)."""
        return max((len(m.rstrip("/")) for m in self.matched), default=0)


class CiRun(BaseModel):
    """The pipeline's build on the PR's head, as its commit statuses state it."""

    model_config = ConfigDict(frozen=True)

    context: str  # the build's own status context, e.g. "buildkite/ci/pr"
    # not-started | running | blocked | passed | failed | error | unreadable
    state: str
    description: str = ""
    reported: int = 0  # step statuses that name a step of the pipeline
    complete: bool = True  # every status of the head was read
    problem: str = ""  # why the statuses could not be read (state "unreadable")


class CiPlan(BaseModel):
    """What the base's CI pipeline does with this PR's paths (pipeline_generator's selection)."""

    model_config = ConfigDict(frozen=True)

    steps: tuple[CiStepRef, ...] = ()  # run on the PR, reached through a narrow entry
    broad_count: int = 0  # other steps that run, reached only through a catch-all
    broad_through: tuple[str, ...] = ()
    run_all: bool = False
    docs_only: bool = False
    nightly: tuple[CiStepRef, ...] = ()  # narrow matches the PR build does not run
    optional: tuple[CiStepRef, ...] = ()  # narrow matches waiting for a manual unblock
    tests_without_step: tuple[str, ...] = ()
    # Added tests a step's pytest reaches but whose selection leaves them out in every
    # step (path, the selections: `-m core_model`): also in tests_without_step.
    tests_selected_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str = ""
    run: CiRun | None = None  # None when the head's statuses were not read
    # The one hardware platform the changed code runs on (rocm | xpu | tpu | sm<major> |
    # gpu:<device name>), "" when not one (bot/core/repo_config/platform_code.py), and its
    # changed source files.
    platform: str = ""
    platform_files: tuple[str, ...] = ()
    # Intel's pipeline (.buildkite/ci_config_intel.yaml), where the base has one: the
    # steps it runs for the PR reached through a narrow entry, and how many others it runs.
    intel_steps: tuple[CiStepRef, ...] = ()
    intel_broad_count: int = 0
    intel_broad_through: tuple[str, ...] = ()  # what reached those others, or run-all
    # a path matched Intel's run-all patterns (`requirements/xpu.txt`): it runs every step
    intel_run_all: bool = False
    # Every changed line outside docs is a comment, a docstring line or blank
    # (bot/core/reading/prose_lines.py): the steps run, but none can test it.
    prose_only: bool = False


class RepoLabel(BaseModel):
    """A label the base's Mergify rules put on this PR."""

    model_config = ConfigDict(frozen=True)

    label: str
    rule: str
    # Mergify adds it only because of test files (its rule does not fire on the PR's
    # other files): a label, not a sign of whose code changed.
    tests_only: bool = False


class Digest(BaseModel):
    """The whole reading guide for one PR at one head SHA, as data: no sentence in it is
    the code's own (rule texts carry both languages). Rendered to Markdown and JSON;
    `lang` is the language rendering words it in."""

    model_config = ConfigDict(frozen=True)

    repo: str
    number: int
    head_sha: str
    lang: Lang
    rules_version: str
    verdict: Verdict
    reading_minutes: int
    # What the verdict weighed; rendering words the one-line reason from it.
    verdict_grounds: VerdictGrounds | None = None
    areas: tuple[AreaMatch, ...] = ()
    risks: tuple[Risk, ...] = ()
    # From the conversation: reviewers' asks (each stands in for the digest's own
    # matching item, which `risks` then leaves out) and evidence posted later.
    asks: tuple[Ask, ...] = ()
    later_evidence: tuple[LaterEvidence, ...] = ()
    symbols: tuple[Symbol, ...] = ()
    removed_files: tuple[str, ...] = ()  # not those moved
    # (old path, new path) of files removed and added again with (mostly) the same lines.
    moved_files: tuple[tuple[str, str], ...] = ()
    # What is specific to this PR (bot/core/reading/specifics.py): names the description points
    # at that the change contains, the author's decisions, the patch's structure,
    # linked work, values the description's tables change, and files to start with
    # when the patch shows no symbols.
    mentions: tuple[Mention, ...] = ()
    decisions: tuple[Decision, ...] = ()
    structure: tuple[StructureNote, ...] = ()
    links: tuple[Link, ...] = ()
    value_changes: tuple[ValueChange, ...] = ()
    start_files: tuple[str, ...] = ()
    ci_areas: tuple[str, ...] = ()
    reviewers: Reviewers = Field(default_factory=Reviewers)
    labels: tuple[str, ...] = ()
    routing: RoutingOutcome | None = None
    trace: tuple[TraceEntry, ...] = ()
    # From the default branch's symbol index; None when there is no index.
    repo_context: RepoContext | None = None
    # The changed files' owners by the base's CODEOWNERS; None when it was not read.
    owners: Owners | None = None
    # The base's CI pipeline and Mergify labels; None / () when they were not read.
    ci: CiPlan | None = None
    repo_labels: tuple[RepoLabel, ...] = ()
    # The base's PR-template checklist boxes the author ticked (the template's wording).
    ticked: tuple[str, ...] = ()
    repo_config_source: str = ""
    repo_config_problems: tuple[str, ...] = ()
    # The PR among the other open PRs and its live state (issue 42); None when the
    # caller read no open PRs.
    neighbours: Neighbours | None = None
    # Parts whose read failed this time: each shows one line where it would be.
    unavailable: tuple[Part, ...] = ()
    notes: tuple[Note, ...] = ()  # e.g. GitHub listed only 3,000 of 4,200 files
    files_total: int = 0
    additions: int = 0
    deletions: int = 0
    explain: bool = False  # render the full trace open (after `/digest explain`)
    muted: bool = False  # `/digest mute`: automatic updates stop until `/digest unmute`
    # Remembered in the marker: reviewers routing requested and labels the bot added,
    # so a request a human removed is not made again and only our own labels are removed.
    routed: tuple[str, ...] = ()
    owned_labels: tuple[str, ...] = ()

    @property
    def ai_assisted(self) -> bool:
        """One of the ticked template boxes says an AI assistant helped write the PR."""
        return any(is_ai_assistance_box(box) for box in self.ticked)
