"""The real `digest-bot serve` process against the fake GitHub: a PR whose CI build on the
head finished without the H200 steps its change reaches. The build's own `status` event
re-runs the digest and edits the comment once; the ~100 step statuses do nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    BOT,
    REPO,
    count_by_route,
    e2e_state,
    fixture,
    pr_event,
    service_for,
    writes_for,
)

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_config" / "0.34.0"
C = "buildkite/ci/pr"
NUMBER = 130
HEAD = "1a" * 20
PATCH_COMMENT = ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
PULLS_OF_COMMIT = ("GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls")
STATUS = ("GET", "/repos/{owner}/{repo}/commits/{ref}/status")
BODY = "## Purpose\nFix.\n\n## Test Plan\npytest tests/multimodal\n\n## Test Result\n12 passed\n"
# Steps the PR's build ran (Buildkite's job slugs); the H200 KV-offload step is not one.
RAN = ("nvidia-h200-mig-35gb-v1-core", "amd-mi355-dpx-v1-core",
       "nvidia-h200-mig-18gb-v1-executor-plus-worker", "docker-build-image")


def status_event(context: str, state: str, description: str) -> dict[str, Any]:
    payload = fixture("status")
    payload.update(sha=HEAD, context=context, state=state, description=description)
    payload["commit"]["sha"] = HEAD
    return payload


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    with FakeGitHubServer(state) as url:
        yield state, url


def test_the_builds_status_event_brings_the_not_run_h200_step_into_the_digest(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    base = state.add_commit(REPO, {str(p.relative_to(FIXTURES)): p.read_text()
                                   for p in FIXTURES.rglob("*") if p.is_file()})
    pull = state.add_pull(REPO, NUMBER, title="[Multimodal] Fix the processor cache key",
                          body=BODY, head_sha=HEAD, files=[FakeFile(
                              "vllm/multimodal/processing.py", additions=12, deletions=3,
                              patch="@@ -1,2 +1,3 @@ def key():\n+    return (a, b)\n")])
    pull.base_sha = base
    with service_for(state, url, tmp_path) as svc:
        assert svc.send("pull_request", pr_event("opened", NUMBER, head_sha=HEAD)
                        ).status_code == 202
        svc.wait_for_job(NUMBER)
        (before,) = state.bot_comments(REPO, NUMBER, BOT)
        assert "- CI on this head: no build yet" in before
        assert "relevant-ci-not-run" not in before

        # The build runs (its jobs post their statuses) and ends blocked.
        for name in RAN:
            state.set_status(REPO, HEAD, f"{C}/{name}", "success")
        state.set_status(REPO, HEAD, C, "pending", "Build #64532 passed and blocked")
        calls_before = len(state.calls)
        steps = [svc.send("status", status_event(f"{C}/{name}", "success", "Passed"))
                 for name in RAN]
        assert [r.json() for r in steps] == [{"ignored": "status of another context"}] * 4
        reply = svc.send("status", status_event(C, "pending", "Build #64532 passed and blocked"))
        assert reply.status_code == 202
        assert "job" in reply.json()
        svc.wait_for_job(NUMBER, count=2)
        # The same state again (a new description) is no new job.
        again = svc.send("status", status_event(C, "pending", "Build #64532 passed and blocked."))
        assert again.json() == {"ignored": "CI state unchanged"}
        time.sleep(svc.settle_seconds + 0.7)

        assert len(svc.job_records(kind="status")) == 1
        assert len(svc.job_records(pr=NUMBER)) == 2
    after_calls = count_by_route(state.calls[calls_before:])
    assert PULLS_OF_COMMIT not in after_calls  # the ledger knew the PR's head
    assert after_calls[STATUS] == 1
    assert after_calls[PATCH_COMMENT] == 1  # edited once
    assert count_by_route(writes_for(state, NUMBER)) == {  # created once, before
        ("POST", "/repos/{owner}/{repo}/issues/{number}/comments"): 1}
    (after,) = state.bot_comments(REPO, NUMBER, BOT)
    assert "- CI on this head: blocked" in after
    assert "**relevant-ci-not-run**" in after
    assert "`V1 KV Offload (H200 MIG 35GB): not run`" in after
