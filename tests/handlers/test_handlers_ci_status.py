"""The digest job reads the head's commit statuses for the base's pipeline: end state on
the in-memory fake GitHub, with statuses present, absent, many, and a failing call."""

from __future__ import annotations

from pathlib import Path

from bot.handlers.digest import sync_pull_request
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import REPO, gh_for, make_ctx, make_state

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_config"
STATUS_ROUTE = "/repos/{owner}/{repo}/commits/{ref}/status"
C = "buildkite/ci/pr"
MM_FILE = FakeFile(
    "vllm/multimodal/processing.py", additions=12, deletions=3,
    patch="@@ -1,2 +1,3 @@ def key():\n+    return (a, b)\n",
)
BODY = "## Purpose\nFix.\n\n## Test Plan\npytest tests/multimodal\n\n## Test Result\n12 passed\n"


def _tree(version: str) -> dict[str, str | bytes]:
    root = FIXTURES / version
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def _world(number: int = 7) -> tuple[FakeGitHubState, str]:
    state = make_state()
    pull = state.add_pull(REPO, number, title="[Multimodal] Fix the cache key", body=BODY,
                          files=[MM_FILE])
    pull.base_sha = state.add_commit(REPO, _tree("0.34.0"))
    return state, pull.head_sha


def _blocked_build(state: FakeGitHubState, head: str) -> None:
    """A build that ran two steps and sits blocked: the H200 KV-offload step did not run."""
    state.set_status(REPO, head, C, "pending", "Build #64532 passed and blocked")
    state.set_status(REPO, head, f"{C}/nvidia-h200-mig-35gb-v1-core", "success")
    state.set_status(REPO, head, f"{C}/amd-mi355-dpx-v1-core", "failure")


async def test_a_blocked_build_without_a_relevant_h200_step_is_a_risk() -> None:
    state, head = _world()
    _blocked_build(state, head)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7)

    assert outcome.digest is not None
    assert outcome.digest.ci is not None
    assert outcome.digest.ci.run is not None
    assert outcome.digest.ci.run.state == "blocked"
    posted = state.comments_on(REPO, 7)[-1].body
    assert "- CI on this head: blocked — failed: V1 Core (MI355 DPX)" in posted
    assert "**relevant-ci-not-run**" in posted
    assert "`V1 KV Offload (H200 MIG 35GB): not run`" in posted
    assert state.count("GET", STATUS_ROUTE) == 1


async def test_before_the_build_starts_one_line_says_so_and_no_risk() -> None:
    state, _ = _world()
    await sync_pull_request(gh_for(state), make_ctx(), REPO, 7)
    posted = state.comments_on(REPO, 7)[-1].body
    assert "- CI on this head: no build yet" in posted
    assert "relevant-ci-not-run" not in posted


async def test_a_failing_status_call_costs_only_that_line() -> None:
    state, head = _world()
    _blocked_build(state, head)
    state.fail_next("GET", STATUS_ROUTE, 502)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7)

    assert outcome.action == "create"  # the digest is posted all the same
    posted = state.comments_on(REPO, 7)[-1].body
    assert "- CI on this head: statuses could not be read (HTTP 502)" in posted
    assert "relevant-ci-not-run" not in posted
    assert "CI to run: " in posted  # the pipeline's own lines are untouched


async def test_a_hundred_and_fifty_statuses_take_two_calls() -> None:
    state, head = _world()
    _blocked_build(state, head)
    for job in range(147):
        state.set_status(REPO, head, f"{C}/other-job-{job}", "success")
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7)
    assert state.count("GET", STATUS_ROUTE) == 2
    assert outcome.digest is not None
    assert outcome.digest.ci is not None
    assert outcome.digest.ci.run is not None
    assert outcome.digest.ci.run.complete


async def test_no_pipeline_at_the_base_no_status_call() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 8, title="[Multimodal] Fix", body=BODY, files=[MM_FILE])
    pull.base_sha = state.add_commit(REPO, {"README.md": "vLLM\n"})
    state.set_status(REPO, pull.head_sha, C, "success", "Build #1 passed")
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 8)
    assert outcome.digest is not None
    assert outcome.digest.ci is None
    assert state.count("GET", STATUS_ROUTE) == 0


async def test_without_a_status_context_no_status_call() -> None:
    state, head = _world()
    _blocked_build(state, head)
    outcome = await sync_pull_request(gh_for(state), make_ctx(ci_status_context=""), REPO, 7)
    assert outcome.digest is not None
    assert outcome.digest.ci is not None
    assert outcome.digest.ci.run is None
    assert state.count("GET", STATUS_ROUTE) == 0
