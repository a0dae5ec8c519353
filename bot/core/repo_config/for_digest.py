"""What the base's config says about one PR, in the digest's words: CI plan, labels, owners.

Pure: the parsed config (bot/core/repo_config/config.py) and the PR's facts in, plain
models out. bot/core/digest.py imports this only when a config was read, so a digest
without one loads no YAML or pathspec.
"""

from __future__ import annotations

from bot.core.facts import PullRequestFacts
from bot.core.findings import CiPlan, CiStepRef, Owners, RepoLabel
from bot.core.repo_config.codeowners import CodeOwners, owners_for
from bot.core.repo_config.mergify import LabelInput, MergifyLabels, predict_labels
from bot.core.repo_config.pipeline import CiStep, Pipeline, StepMatch, select_steps

TEST_AREAS_DIR = ".buildkite/test_areas/"
# Mergify labels that say something about the PR's state, not its topic.
_STATE_LABELS = frozenset({"needs-rebase", "stale", "unstale"})


def _paths(facts: PullRequestFacts) -> list[str]:
    paths = [f.filename for f in facts.files]
    # A rename moves code out of its old owner's (and old CI step's) reach: both count.
    paths += [f.previous_filename for f in facts.files if f.previous_filename]
    return paths


def code_owners(codeowners: CodeOwners, facts: PullRequestFacts) -> Owners:
    found = owners_for(codeowners, _paths(facts))
    return Owners(users=found.users, teams=found.teams, by_file=tuple(found.by_file),
                  unowned=found.unowned)


def repo_labels(mergify: MergifyLabels, facts: PullRequestFacts) -> tuple[RepoLabel, ...]:
    """The topic labels Mergify will add; labels the PR already carries are not repeated."""
    pr = LabelInput(
        title=facts.title,
        body=facts.body,
        files=tuple(_paths(facts)),
        added_files=tuple(f.filename for f in facts.files if f.status in ("added", "renamed")),
        labels=facts.labels,
        base=facts.base_ref,
        draft=facts.draft,
        changed_files=facts.changed_files or None,
    )
    present = {label.lower() for label in facts.labels}
    return tuple(
        RepoLabel(label=p.label, rule=p.rule)
        for p in predict_labels(mergify, pr)
        if p.label.lower() not in present and p.label.lower() not in _STATE_LABELS
    )


def _ref(step: CiStep, matched: tuple[str, ...] = ()) -> CiStepRef:
    return CiStepRef(label=step.label, key=step.key, file=step.file, device=step.device,
                     gpus=step.gpus, nightly=step.nightly, optional=step.optional,
                     matched=matched)


def _refs(matches: tuple[StepMatch, ...]) -> tuple[CiStepRef, ...]:
    return tuple(_ref(m.step, m.matched) for m in matches)


def ci_plan(pipeline: Pipeline, facts: PullRequestFacts, source: str) -> CiPlan:
    selection = select_steps(pipeline, _paths(facts))
    return CiPlan(
        steps=_refs(selection.narrow),
        broad_count=selection.broad_count,
        broad_through=selection.broad_through,
        run_all=selection.run_all,
        docs_only=selection.docs_only,
        nightly=_refs(selection.nightly),
        optional=_refs(selection.optional),
        tests_without_step=selection.tests_without_step,
        source=source,
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
