"""What the base's config says about one PR, in the digest's words: CI plan, labels, owners.

Pure: the parsed config (bot/core/repo_config/config.py) and the PR's facts in, plain
models out. bot/core/digest.py imports this only when a config was read, so a digest
without one loads no YAML or pathspec.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from bot.core.facts import HeadStatuses, PullRequestFacts
from bot.core.findings import CiPlan, CiStepRef, Owners, RepoLabel
from bot.core.reading.prose_lines import prose_only
from bot.core.repo_config.ci_status import read_head
from bot.core.repo_config.codeowners import CodeOwners, owners_for
from bot.core.repo_config.mergify import LabelInput, MergifyLabels, predict_labels
from bot.core.repo_config.pipeline import (
    CiSelection,
    CiStep,
    Pipeline,
    StepMatch,
    is_docs_only,
    is_test_file,
    select_steps,
)
from bot.core.repo_config.platform_code import change_platform
from bot.core.repo_config.step_tests import ChangedTests, file_marks
from bot.core.rules.added import added_lines

TEST_AREAS_DIR = ".buildkite/test_areas/"
# Mergify labels that say something about the PR's state, not its topic.
_STATE_LABELS = frozenset({"needs-rebase", "stale", "unstale"})
# Changed test files and modules checked against the steps' commands (each is indexed).
MAX_CHECKED = 2_000


def _paths(facts: PullRequestFacts) -> list[str]:
    paths = [f.filename for f in facts.files]
    # A rename moves code out of its old owner's (and old CI step's) reach: both count.
    paths += [f.previous_filename for f in facts.files if f.previous_filename]
    return paths


def code_owners(codeowners: CodeOwners, facts: PullRequestFacts) -> Owners:
    found = owners_for(codeowners, _paths(facts))
    return Owners(users=found.users, teams=found.teams, by_file=tuple(found.by_file),
                  unowned=found.unowned, unmatched=found.unmatched)


def repo_labels(mergify: MergifyLabels, facts: PullRequestFacts) -> tuple[RepoLabel, ...]:
    """The topic labels Mergify will add; labels the PR already carries are not repeated.
    A label its rules add only for the PR's test files is marked `tests_only` (a `rocm`
    label from ROCm test call sites routed ROCm reviewers to an NVIDIA fix: judged
    misdirected)."""
    def label_input(keep: Callable[[str], bool]) -> LabelInput:
        return LabelInput(
            title=facts.title,
            body=facts.body,
            files=tuple(p for p in _paths(facts) if keep(p)),
            added_files=tuple(f.filename for f in facts.files
                              if f.status in ("added", "renamed") and keep(f.filename)),
            labels=facts.labels,
            base=facts.base_ref,
            draft=facts.draft,
            changed_files=facts.changed_files or None,
        )

    present = {label.lower() for label in facts.labels}
    predicted = [p for p in predict_labels(mergify, label_input(lambda _: True))
                 if p.label.lower() not in present and p.label.lower() not in _STATE_LABELS]
    has_tests = any(is_test_file(f.filename) for f in facts.files)
    without_tests = {p.label.lower() for p in predict_labels(
        mergify, label_input(lambda path: not is_test_file(path)))} if has_tests else None
    return tuple(
        RepoLabel(label=p.label, rule=p.rule,
                  tests_only=without_tests is not None and p.label.lower() not in without_tests)
        for p in predicted
    )


def _shown_lines(patch: str) -> str:
    """The new file's lines a patch shows: added and context lines."""
    return "\n".join(line[1:] for line in patch.splitlines() if line[:1] in ("+", " "))


def _changed_tests(facts: PullRequestFacts) -> ChangedTests:
    """The PR's test files (an added one with its whole text), those whose shown tests
    all need CUDA, and its package modules."""
    files = [f for f in facts.files
             if is_test_file(f.filename) and f.status != "removed"][:MAX_CHECKED]
    tests = [(f.filename, "\n".join(added_lines(f.patch))
              if f.status == "added" and f.patch is not None else None) for f in files]
    gpu_only = [f.filename for f in files
                if f.patch is not None and file_marks(_shown_lines(f.patch)).gpu_only()]
    modules = [f.filename for f in facts.files if f.filename.startswith("vllm/")]
    return ChangedTests(tests, modules[:MAX_CHECKED], gpu_only)


# Words of a file name that name no feature: a step label carrying one says nothing.
_GENERIC_WORDS = frozenset({
    "util", "utils", "common", "base", "core", "config", "init", "main", "model", "layer",
    "test", "type", "interface", "abstract", "registry", "loader", "kernel", "fused",
    "backend", "linear", "quant", "worker", "engine", "server", "serving", "protocol",
    "api", "ops", "gpu", "cpu", "cuda", "rocm", "xpu", "tpu", "amd", "nvidia", "intel",
    "distributed", "multi", "modal", "large", "small", "unit", "e2e", "basic", "extended",
    "standard", "entrypoint", "example", "misc", "other", "async", "sync", "quantization",
    "input", "output", "processor", "client", "request", "schedule", "scheduler",
    "attention",
})
_WORD = re.compile(r"[a-z][a-z0-9]*")


def _words(text: str) -> set[str]:
    """Lower-case words of at least four letters, a plural's `s` dropped."""
    return {w[:-1] if w.endswith("s") and len(w) > 4 else w
            for w in _WORD.findall(text.lower()) if len(w) >= 4} - _GENERIC_WORDS


# A model's name in a step label: hyphened parts, one of them with a digit
# (`DSv4-Flash`, `Qwen3.8-Flash-Next-FP8`, `Llama-3.2-1B`).
_MODEL_NAME = re.compile(r"[\w.]+(?:-[\w.]+)+")


def _label_words(label: str) -> set[str]:
    """The feature words of a step's label, less those of the models it names: "Flash"
    of `DSv4-Flash` is a model's size, not FlashAttention (a heavy optional DeepSeek step
    was named for a change to `flash_attn.py`: judged misdirected)."""
    return _words(_MODEL_NAME.sub(
        lambda m: "" if any(ch.isdigit() for ch in m.group(0)) else m.group(0), label))


def _module_words(facts: PullRequestFacts) -> frozenset[str]:
    """The feature words of the changed source files' names (`fused_humming_moe.py` ->
    `humming`): tests and docs name no module."""
    words: set[str] = set()
    for f in facts.files[:MAX_CHECKED]:
        name = f.filename
        if name.startswith(("vllm/", "csrc/")) and not is_test_file(name):
            words |= _words(name.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("_", " "))
    return frozenset(words)


def _ref(pipeline: Pipeline, change: ChangedTests, match: StepMatch, status: str,
         module_words: frozenset[str] = frozenset()) -> CiStepRef:
    step = match.step
    # a CPU step skips a test that needs CUDA
    distance = change.distance(step.test_runs, gpu=step.gpus > 0)
    # A test folder the step lists reached it through the PR's tests; unless its commands
    # run them, that says when it runs, not that it is the change's own step (Distributed
    # Models, reached through `tests/models/` by an added model test it does not run, led
    # the CI line: judged misdirected).
    entries = [e for e in match.matched if distance >= 0 or not e.startswith("tests/")]
    return CiStepRef(label=step.label, key=step.key, file=step.file, device=step.device,
                     gpus=step.gpus, nightly=step.nightly, optional=step.optional,
                     matched=match.matched, status=status,
                     shared_by=min((pipeline.listed_by(e) for e in entries or match.matched),
                                   default=0),
                     runs_changed_tests=distance >= 0,
                     runs_module_tests=distance < 0 and change.runs_module_tests(step.test_runs),
                     runs_module_test_file=distance < 0 and change.runs_module_test_files(
                         step.test_runs),
                     test_distance=max(distance, 0),
                     names_changed_module=bool(module_words & _label_words(step.label)),
                     lists_changed_file=any(e in match.files for e in match.matched),
                     source_entries=_source_entries(step),
                     pipeline="intel" if step.platform == "intel" else "")


def _source_entries(step: CiStep) -> int:
    """How many of the step's dependency entries name source: not a test path, nor the
    job file the generator appends."""
    return sum(1 for d in step.dependencies if not d.startswith("tests/") and d != step.file)


def _edits_job_files(steps: Sequence[CiStep], facts: PullRequestFacts) -> bool:
    """Whether the PR edits a job file: its own steps may then run a test the base's do
    not (a moved test with the step that now runs it), and the base cannot tell."""
    files = {step.file for step in steps}
    return any(f.filename in files or (f.filename.startswith(".buildkite/")
                                       and f.filename.endswith(".yaml")) for f in facts.files)


def _no_command_runs(steps: Sequence[CiStep], tests: tuple[str, ...]) -> tuple[str, ...]:
    """Of the changed tests no step's dependencies name, those no step's commands run
    either: a step whose pytest names the file runs it (blind judges called "no step
    runs" wrong when the Engine step's command did); the check costs each step's paths
    times their depth, once, whatever the count of tests."""
    if not tests:
        return ()
    change = ChangedTests([(test, None) for test in tests], ())
    run = {test for step in steps for test in change.tests_run(step.test_runs)}
    return tuple(test for test in tests if test not in run)


def _through(selection: CiSelection) -> tuple[str, ...]:
    """What reached a selection's counted steps: its broad entries, or the paths that
    matched its run-all patterns (every step then runs)."""
    return selection.run_all_files[:3] if selection.run_all else selection.broad_through


def _refs(pipeline: Pipeline, change: ChangedTests, matches: tuple[StepMatch, ...],
          status_of: dict[CiStep, str] | None = None,
          module_words: frozenset[str] = frozenset()) -> tuple[CiStepRef, ...]:
    known = status_of or {}
    return tuple(_ref(pipeline, change, m, known.get(m.step, ""), module_words)
                 for m in matches)


def ci_plan(pipeline: Pipeline, facts: PullRequestFacts, source: str,
            head: HeadStatuses | None = None, intel: Pipeline | None = None) -> CiPlan:
    """The steps the PR's paths reach and, when the head's statuses were read, how
    each of them fared on the head (bot/core/repo_config/ci_status.py); with Intel's
    pipeline, the steps it runs as well (their head statuses are its own build's: not read)."""
    # The generator lists `git diff --name-only`: a rename by its new name only.
    paths = [f.filename for f in facts.files]
    selection = select_steps(pipeline, paths)
    intel_selection = select_steps(intel, paths) if intel is not None and intel.steps else None
    read = read_head(pipeline.steps, head) if head is not None else None
    status_of = read.status_of if read else None
    change = _changed_tests(facts)
    words = _module_words(facts)
    platform, platform_files = change_platform(facts.files)
    steps: tuple[CiStep, ...] = pipeline.steps
    without_step = selection.tests_without_step
    if intel_selection is not None and intel is not None:
        steps += intel.steps
        # a test an Intel step names is run, by that pipeline
        intel_uncovered = set(intel_selection.tests_without_step)
        without_step = tuple(p for p in without_step if p in intel_uncovered)
    # An added test some step's pytest reaches, left out by every such run's selection
    # (an unmarked model test beside `-m core_model` runs): no step runs it either.
    edits_jobs = _edits_job_files(steps, facts)
    selected_out = {} if edits_jobs else change.selected_out(
        [run for step in steps for run in step.test_runs])
    unrun = () if edits_jobs else _no_command_runs(steps, without_step)
    return CiPlan(
        steps=_refs(pipeline, change, selection.narrow, status_of, words),
        broad_count=selection.broad_count,
        broad_through=selection.broad_through,
        run_all=selection.run_all,
        docs_only=selection.docs_only,
        nightly=_refs(pipeline, change, selection.nightly, status_of, words),
        optional=_refs(pipeline, change, selection.optional, status_of, words),
        tests_without_step=tuple(sorted({*unrun, *selected_out})),
        tests_selected_out=tuple(sorted(selected_out.items())),
        source=source,
        run=read.run if read else None,
        platform=platform,
        platform_files=platform_files,
        intel_steps=(_refs(intel, change, intel_selection.narrow, None, words)
                     if intel_selection is not None and intel is not None else ()),
        intel_broad_count=intel_selection.broad_count if intel_selection is not None else 0,
        intel_broad_through=_through(intel_selection) if intel_selection is not None else (),
        intel_run_all=intel_selection is not None and intel_selection.run_all,
        prose_only=prose_only(f for f in facts.files if not is_docs_only([f.filename])),
    )


def ci_area_names(plan: CiPlan) -> tuple[str, ...]:
    """The job files of the narrow steps, as `ci_areas` names them: a test area's stem
    (`attention`), any other job file by its path."""
    names: dict[str, None] = {}
    for step in plan.steps:
        name = step.file
        if name.startswith(TEST_AREAS_DIR) and name.endswith(".yaml"):
            name = name[len(TEST_AREAS_DIR):-len(".yaml")]
        if name:
            names.setdefault(name, None)
    return tuple(names)
