"""Which pipeline steps ran on the PR's head, from its commit statuses: vLLM 0.34.0's real
pipeline, statuses shaped as vLLM's Buildkite posts them (`buildkite/ci/pr/<job slug>`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.facts import ChangedFile, CommitStatus, HeadStatuses, PullRequestFacts
from bot.core.repo_config.ci_status import generated_key, read_head, slug, spellings
from bot.core.repo_config.for_digest import ci_plan
from bot.core.repo_config.pipeline import CiStep, parse_pipeline

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_config" / "0.34.0"
PIPELINE = parse_pipeline(
    {str(p.relative_to(ROOT)): p.read_text() for p in ROOT.rglob("*.yaml")})
STEPS = {step.key: step for step in PIPELINE.steps}
C = "buildkite/ci/pr"
BLOCKED = CommitStatus(context=C, state="pending", description="Build #64532 passed and blocked")


def head(*statuses: CommitStatus | tuple[str, str], complete: bool = True) -> HeadStatuses:
    made = [s if isinstance(s, CommitStatus) else CommitStatus(context=f"{C}/{s[0]}", state=s[1])
            for s in statuses]
    return HeadStatuses(context=C, statuses=tuple(made), complete=complete)


def status(key: str, read: HeadStatuses) -> str | None:
    return read_head(PIPELINE.steps, read).status_of.get(STEPS[key])


def step(label: str, **fields: object) -> CiStep:
    values: dict[str, object] = {
        "label": label, "key": "", "file": ".buildkite/test_areas/x.yaml", "group": "",
        "device": "", "gpus": 1, "platform": "cuda", "dependencies": ("vllm/x",),
        "excludes": (), "optional": False, "nightly": False, "line": 1}
    values.update(fields)
    return CiStep(**values)  # type: ignore[arg-type]


# --- spellings -------------------------------------------------------------------


def test_the_label_slug_is_buildkites_job_slug() -> None:
    # The context vLLM's PR build posted for this AMD step (vllm-project/vllm#54627).
    assert slug(":amd: (MI355) E2E Core Large Memory") == "amd-mi355-e2e-core-large-memory"
    assert slug(":nvidia: (H200 MIG 18GB) V1 Executor + Worker") == (
        "nvidia-h200-mig-18gb-v1-executor-plus-worker")
    assert slug(":nvidia: (H200 MIG 18GB) V1 Executor + Worker", words=False) == (
        "nvidia-h200-mig-18gb-v1-executor-worker")
    # `%N` numbers a parallel step's jobs: the slug is their common stem.
    assert slug(":computer: (CPU) Multimodal Processor Shard %N") == (
        "computer-cpu-multimodal-processor-shard")


def test_a_keyless_step_gets_the_generators_key() -> None:
    # ci-infra's own example (vllm-project/vllm#53085): a label-derived key.
    assert generated_key(":nvidia: (H200) MRCR Eval Small Models") == (
        "-nvidia--h200-mrcr-eval-small-models")


def test_a_mirror_is_spelled_by_its_key_its_label_and_the_generators_wrap() -> None:
    keys, slugs = spellings(STEPS["amd-lora"])
    assert keys == ("amd-lora",)
    assert "amd-mi355-dpx-lora" in slugs
    assert "amd-nvidia-h200-mig-35gb-lora" in slugs  # "AMD: <CUDA label>"


# --- one step's status -----------------------------------------------------------


def test_a_finished_build_reports_passed_failed_and_not_run() -> None:
    read = head(BLOCKED, ("nvidia-h200-mig-35gb-v1-core", "success"),
                ("amd-mi355-dpx-lora", "failure"), ("bootstrap", "success"))
    result = read_head(PIPELINE.steps, read)
    assert result.run.state == "blocked"
    assert result.run.reported == 2
    assert result.status_of[STEPS["v1-core"]] == "passed"
    assert result.status_of[STEPS["amd-lora"]] == "failed"
    assert result.status_of[STEPS["lora"]] == "not-run"


def test_the_key_names_a_step_too() -> None:
    assert status("lora", head(BLOCKED, ("lora", "success"))) == "passed"


def test_while_the_build_runs_a_step_without_a_status_is_pending() -> None:
    running = CommitStatus(context=C, state="pending", description="Build #1 is running")
    read = head(running, ("nvidia-h200-mig-35gb-v1-core", "pending"))
    assert read_head(PIPELINE.steps, read).run.state == "running"
    assert status("v1-core", read) == "pending"
    assert status("lora", read) == "pending"


def test_an_optional_step_without_a_status_waits_for_an_unblock() -> None:
    optional = next(s for s in PIPELINE.steps if s.optional and not s.nightly)
    result = read_head(PIPELINE.steps, head(BLOCKED, ("nvidia-h200-mig-35gb-v1-core", "success")))
    assert result.status_of[optional] == "blocked"


@pytest.mark.parametrize(("state", "expected"), [
    ("success", "passed"), ("failure", "failed"), ("error", "error")])
def test_the_builds_own_status_is_its_state(state: str, expected: str) -> None:
    own = CommitStatus(context=C, state=state, description="Build #1")
    assert read_head(PIPELINE.steps, head(own)).run.state == expected


def test_no_build_on_the_head_claims_nothing_about_steps() -> None:
    # vLLM's PR build starts only with the `ready` label: before, the head has none.
    other = CommitStatus(context="DCO", state="success")
    result = read_head(PIPELINE.steps, head(other))
    assert result.run.state == "not-started"
    assert result.status_of == {}


def test_an_unread_call_is_unreadable_and_claims_nothing() -> None:
    result = read_head(PIPELINE.steps, HeadStatuses(context=C, problem="HTTP 502"))
    assert (result.run.state, result.run.problem) == ("unreadable", "HTTP 502")
    assert result.status_of == {}


def test_statuses_not_all_read_make_absence_unknown() -> None:
    read = head(BLOCKED, ("nvidia-h200-mig-35gb-v1-core", "success"), complete=False)
    assert status("v1-core", read) == "passed"
    assert status("lora", read) == "unknown"


def test_a_parallel_steps_jobs_are_its_shards() -> None:
    stem = slug(":nvidia: (H200 MIG 35GB) Language Models (Hybrid) Shard %N")
    sharded = next(s for s in PIPELINE.steps if slug(s.label) == stem and "%N" in s.label)
    read = head(BLOCKED, (f"{stem}-1", "success"), (f"{stem}-2", "failure"))
    assert read_head(PIPELINE.steps, read).status_of[sharded] == "failed"


def test_a_number_after_a_step_that_is_not_parallel_names_nothing() -> None:
    # `lora-2` is not a shard of LoRA: a step that is not on the base could be named so.
    read = head(BLOCKED, ("nvidia-h200-mig-35gb-lora-2", "success"),
                ("nvidia-h200-mig-35gb-v1-core", "success"))
    result = read_head(PIPELINE.steps, read)
    assert result.status_of[STEPS["lora"]] == "unknown"  # suspect, never "not run"
    assert result.run.reported == 1


def test_a_cut_off_context_names_the_one_step_it_can_be() -> None:
    third, fourth = ("multi-modal-models-standard-3-llava-qwen2-vl",
                     "multi-modal-models-standard-4-other-whisper")
    full = slug(STEPS[third].label)
    assert full.startswith("nvidia-h200-mig-35gb-multimodal-models-standard-3-")
    read = head(BLOCKED, (full[:50], "success"))
    assert (status(third, read), status(fourth, read)) == ("passed", "not-run")
    # Cut before the number, it could be either: it names neither.
    read = head(BLOCKED, (full[:46], "success"), ("nvidia-h200-mig-35gb-v1-core", "success"))
    assert (status(third, read), status(fourth, read)) == ("unknown", "unknown")


def test_a_status_two_steps_could_have_posted_names_neither() -> None:
    twins = (step(":nvidia: (H200) Twin", key="twin-a", file="a.yaml"),
             step(":nvidia: (H200) Twin", key="twin-b", file="b.yaml"),
             step(":nvidia: (H200) Other", key="other"))
    read = HeadStatuses(context=C, statuses=(
        BLOCKED, CommitStatus(context=f"{C}/nvidia-h200-twin", state="success"),
        CommitStatus(context=f"{C}/nvidia-h200-other", state="success")))
    result = read_head(twins, read)
    assert [result.status_of[s] for s in twins] == ["unknown", "unknown", "passed"]
    assert result.run.reported == 1


def test_a_cut_off_context_that_fits_two_steps_names_neither() -> None:
    long = ":nvidia: (H200) Distributed Tests With A Very Long Name For Sure"
    twins = (step(long + " One", key="one"), step(long + " Two", key="two"))
    cut = slug(long)[:45]
    read = HeadStatuses(context=C, statuses=(
        BLOCKED, CommitStatus(context=f"{C}/{cut}", state="failure")))
    result = read_head(twins, read)
    assert [result.status_of[s] for s in twins] == ["unknown", "unknown"]


def test_other_pipelines_and_non_step_contexts_are_not_steps() -> None:
    read = head(BLOCKED,
                CommitStatus(context="buildkite/ci-amd/pr/amd-mi355-dpx-lora", state="success"),
                ("fastcheck", "success"), ("nvidia-h200-mig-35gb-v1-core", "success"))
    result = read_head(PIPELINE.steps, read)
    assert result.status_of[STEPS["amd-lora"]] == "not-run"
    assert result.run.reported == 1


# --- in the CI plan ------------------------------------------------------------------


def test_the_plan_carries_each_listed_steps_status_and_the_build() -> None:
    facts = PullRequestFacts(files=(ChangedFile(filename="vllm/lora/layers/base.py"),),
                             changed_files=1)
    read = head(BLOCKED, ("nvidia-h200-mig-35gb-lora", "success"))
    plan = ci_plan(PIPELINE, facts, "base 1234567", read)
    assert plan.run is not None
    assert plan.run.state == "blocked"
    by_key = {s.key: s.status for s in plan.steps}
    assert by_key["lora"] == "passed"
    assert by_key["amd-lora"] == "not-run"
    without = ci_plan(PIPELINE, facts, "base 1234567")
    assert without.run is None
    assert {s.status for s in without.steps} == {""}


def test_an_unblocked_build_that_runs_again_is_running() -> None:
    own = CommitStatus(context=C, state="pending", description="Build #2 unblocked, running")
    assert read_head(PIPELINE.steps, head(own)).run.state == "running"
