"""Reads that feed one part of the digest, and long threads, through the real service
process and the fake GitHub over loopback (issue 38, items 2 and 3).

- A review-comments list answering 404, 403 or 500 costs the conversation part only: the
  digest is posted with that part marked unavailable, and a delayed re-run of the PR's
  job fills it in once the endpoint recovers (bounded: a few re-runs, then it waits for
  the PR's next event).
- On a PR with 5,100 comments before the first digest, three pushes leave one digest.
- A maintainer's ask after 1,000 outsiders' review comments is seen.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bot.handlers.refill import MAX_REFILLS
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    service_for,
    wait_until,
)

pytestmark = pytest.mark.slow

AUTHOR = "Codertocat"  # the author of every fixture PR payload
REVIEW_COMMENTS = "/repos/{owner}/{repo}/pulls/{number}/comments"
ISSUE_COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
CHAT_FILE = FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                     patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n")
DOCUMENTED_BODY = (
    "## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
)
ASK = "Can you add a unit test for the new branch?"
UNAVAILABLE = "The conversation could not be read this time"
REFILL_SECONDS = 0.2


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    fake = e2e_state()
    fake.set_permission(REPO, "maint", "maintain")
    # The asker may write: an outsider's ask is marked as such (issue 38, item 10d).
    fake.set_permission(REPO, "reviewer", "write")
    return fake


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with FakeGitHubServer(state) as url, \
            service_for(state, url, tmp_path_factory.mktemp("e2e-degraded"), extra_env={
                "DIGEST_REFILL_SECONDS": str(REFILL_SECONDS),
                "DIGEST_BACKOFF_BASE_SECONDS": "0.2",
            }) as service:
        yield service


def _bodies(state: FakeGitHubState, number: int) -> list[str]:
    return state.bot_comments(REPO, number, BOT)


@pytest.mark.parametrize(("number", "status"), [(401, 404), (402, 403), (403, 500)])
def test_a_failing_review_comments_list_costs_the_conversation_only_and_is_refilled(
    state: FakeGitHubState, svc: ServiceProcess, number: int, status: int
) -> None:
    state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                   body=DOCUMENTED_BODY, files=[CHAT_FILE])
    state.add_review_comment(REPO, number, "reviewer", ASK)
    route = f"/repos/{REPO}/pulls/{number}/comments"
    state.fail_next("GET", route, status, times=1_000)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202

    wait_until(lambda: len(_bodies(state, number)) == 1, 15,
               message=f"a digest despite {status} on the review comments")
    degraded = _bodies(state, number)[0]
    assert UNAVAILABLE in degraded
    assert "asked by @\u2060reviewer" not in degraded
    # The job itself succeeded: nothing parked, nothing failed.
    assert svc.job_records(pr=number, outcome="parked") == []

    # GitHub recovers: the delayed re-run reads the conversation and edits the digest.
    state.faults = [f for f in state.faults if f.path_pattern != route]
    wait_until(lambda: UNAVAILABLE not in _bodies(state, number)[0], 15,
               message="the conversation filled in by a later run")
    (filled,) = _bodies(state, number)
    assert "**tests** — asked by @\u2060reviewer — open" in filled


def test_a_review_comments_list_that_keeps_failing_is_retried_a_bounded_number_of_times(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 404
    state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                   body=DOCUMENTED_BODY, files=[CHAT_FILE])
    route = f"/repos/{REPO}/pulls/{number}/comments"
    state.fail_next("GET", route, 404, times=100_000)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    wait_until(lambda: len(_bodies(state, number)) == 1, 15, message="a degraded digest")
    # Re-runs back off (0.2 s, 0.4 s, 0.8 s, ...) and stop after MAX_REFILLS: no hot loop.
    # (A 404: the adapter's own retries of a 5xx would only slow the test.)
    wait_until(lambda: any(str(r.get("msg", "")).startswith("parts still unavailable")
                           and r.get("pr") == number for r in svc.log_records()), 20,
               interval=0.1, message="the re-runs give up")
    runs = len(svc.job_records(pr=number, outcome="ok"))
    reads = sum(1 for c in list(state.calls) if c.path == route)
    time.sleep(2)
    assert runs == 1 + MAX_REFILLS
    assert len(svc.job_records(pr=number, outcome="ok")) == runs
    assert sum(1 for c in list(state.calls) if c.path == route) == reads
    assert svc.job_records(pr=number, outcome="parked") == []
    assert UNAVAILABLE in _bodies(state, number)[0]
    state.faults = [f for f in state.faults if f.path_pattern != route]


def test_three_pushes_on_a_5100_comment_thread_leave_one_digest(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 410
    state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                   body=DOCUMENTED_BODY, files=[CHAT_FILE])
    for i in range(5_100):
        state.add_comment(REPO, number, "outsider", f"+1 ({i})")
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number, timeout=30)
    assert len(_bodies(state, number)) == 1

    for push in range(3):
        head = f"{push + 1:x}" * 40
        state.pull(REPO, number).head_sha = head
        assert svc.send("pull_request",
                        pr_event("synchronize", number, head_sha=head)).status_code == 202
        svc.wait_for_job(number, count=push + 2, timeout=30)
        # Found on the newest page: the digest is edited, never posted again.
        assert len(_bodies(state, number)) == 1, push
    assert head[:7] in _bodies(state, number)[0]


def test_a_maintainers_ask_after_1000_outsider_review_comments_is_seen(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 411
    state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                   body=DOCUMENTED_BODY, files=[CHAT_FILE])
    for i in range(1_000):
        state.add_review_comment(REPO, number, f"passerby{i % 13}", "Looks fine to me.")
    state.add_review_comment(REPO, number, "maint", ASK)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    wait_until(lambda: len(_bodies(state, number)) == 1, 30, message="a digest")
    assert "**tests** — asked by @\u2060maint — open" in _bodies(state, number)[0]
