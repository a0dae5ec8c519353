"""The real `digest-bot serve` process against the fake GitHub: signed deliveries in,
GitHub's end state out (issue 3). One service and one fake per module, a PR per test."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    BOT,
    REPO,
    SECRET,
    ServiceProcess,
    calls_for,
    comment_event,
    count_by_route,
    e2e_state,
    fixture,
    pr_event,
    service_for,
    wait_until,
    writes_for,
)
from tests.signing import signed_headers

pytestmark = pytest.mark.slow

# the area's line in the collapsed "Why" list (an area line needs code owners to show)
COMPILE_TITLE = "✅ `compile` · fired"
ATTENTION_TITLE = "✅ `attention-backend` · fired"
ATTENTION_FILE = FakeFile(
    "vllm/v1/attention/backends/flash_attn.py", additions=30, deletions=4,
    patch="@@ -1,2 +1,3 @@ class FlashAttentionImpl:\n+    scale = 1.0\n",
)
DOCS_FILES = [FakeFile("docs/usage/faq.md", additions=3), FakeFile("README.md", additions=1)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    with FakeGitHubServer(state) as url:
        yield state, url


@pytest.fixture(scope="module")
def state(world: tuple[FakeGitHubState, str]) -> FakeGitHubState:
    return world[0]


@pytest.fixture(scope="module")
def svc(world: tuple[FakeGitHubState, str],
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    state, url = world
    # An unanswered comment create is re-checked after 1 s here (15 s in production).
    with service_for(state, url, tmp_path_factory.mktemp("e2e-service"),
                        extra_env={"DIGEST_UNCERTAIN_WRITE_RECHECK_SECONDS": "1"}) as service:
        yield service


def _quiet_period(svc: ServiceProcess) -> None:
    """Long enough for any job a delivery could have queued to be due and run."""
    time.sleep(svc.settle_seconds + 0.7)


def _digest(state: FakeGitHubState, number: int) -> str:
    bodies = state.bot_comments(REPO, number, BOT)
    assert len(bodies) == 1, bodies
    return bodies[0]


def test_burst_within_settle_converges_once_on_the_last_head(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 101
    pull = state.add_pull(REPO, number, title="[torch.compile] Fix graph break",
                          body=UNTESTED_BODY, files=list(COMPILE_FILES), head_sha="1" * 40)
    replies = [svc.send("pull_request", pr_event("opened", number, head_sha="1" * 40)),
               svc.send("pull_request", pr_event("edited", number, head_sha="1" * 40))]
    for push, sha in enumerate(("2" * 40, "3" * 40, "4" * 40)):
        pull.head_sha = sha  # each force-push moves the head, as GitHub would
        if push == 2:
            pull.files.append(ATTENTION_FILE)
        replies.append(svc.send("pull_request", pr_event("synchronize", number, head_sha=sha)))

    assert [r.status_code for r in replies] == [202] * 5
    assert len({r.json()["job"] for r in replies}) == 1  # all coalesced into one job
    svc.wait_for_job(number)
    _quiet_period(svc)

    body = _digest(state, number)
    marker = parse_marker(body)
    assert marker is not None
    assert marker.head_sha == "4" * 40
    assert COMPILE_TITLE in body
    assert ATTENTION_TITLE in body  # only the last push touched attention
    assert count_by_route(writes_for(state, number)) == {
        ("POST", "/repos/{owner}/{repo}/issues/{number}/comments"): 1}
    assert len(svc.job_records(pr=number)) == 1


def test_redelivery_of_the_same_delivery_changes_nothing(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 102
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    first = svc.send("pull_request", pr_event("opened", number), delivery="e2e-102")
    assert first.status_code == 202
    svc.wait_for_job(number)
    calls_before = len(calls_for(state, number))
    body_before = _digest(state, number)

    again = svc.send("pull_request", pr_event("opened", number), delivery="e2e-102")
    assert again.status_code == 202
    assert again.json()["duplicate"] is True
    _quiet_period(svc)

    assert len(calls_for(state, number)) == calls_before
    assert len(svc.job_records(pr=number)) == 1
    assert _digest(state, number) == body_before


def test_response_lost_after_github_created_the_comment_yields_one_comment(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 103
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    state.fail_next("POST", f"/repos/{REPO}/issues/{number}/comments", 502, applied=True)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202

    svc.wait_for_job(number, outcome="retry", timeout=10)
    svc.wait_for_job(number, outcome="ok", timeout=15)  # re-checked after 1 s
    body = _digest(state, number)
    assert parse_marker(body) is not None
    writes = count_by_route(writes_for(state, number))
    assert writes == {("POST", "/repos/{owner}/{repo}/issues/{number}/comments"): 1}


def test_draft_gets_nothing_until_ready_for_review(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 104
    pull = state.add_pull(REPO, number, title="[torch.compile] WIP", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES), draft=True)
    assert svc.send("pull_request", pr_event("opened", number, draft=True)).status_code == 202
    svc.wait_for_job(number)
    assert state.comments_on(REPO, number) == []
    assert writes_for(state, number) == []

    pull.draft = False
    assert svc.send("pull_request", pr_event("ready_for_review", number)).status_code == 202
    svc.wait_for_job(number, count=2)
    marker = parse_marker(_digest(state, number))
    assert marker is not None
    assert marker.head_sha == pull.head_sha


def test_unsigned_and_forged_deliveries_are_refused_and_change_nothing(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 105
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    raw = json.dumps(pr_event("opened", number)).encode()
    unsigned = signed_headers("pull_request", raw, SECRET)
    del unsigned["X-Hub-Signature-256"]

    forged = svc.send("pull_request", raw, secret="not-the-secret")
    missing = svc.post_raw(raw, unsigned)
    other_body = svc.post_raw(raw, signed_headers("pull_request", b"{}", SECRET))

    assert [r.status_code for r in (forged, missing, other_body)] == [401, 401, 401]
    _quiet_period(svc)
    assert calls_for(state, number) == []
    assert svc.job_records(pr=number) == []
    assert not any(r.get("pr") == number for r in svc.log_records())  # no job, no trace


def test_closed_pr_stops_work(state: FakeGitHubState, svc: ServiceProcess) -> None:
    number = 106
    pull = state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES))
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    pull.state = "closed"  # closed within the settle window
    assert svc.send("pull_request", pr_event("closed", number)).status_code == 202
    svc.wait_for_job(number)
    pull.head_sha = "e" * 40
    assert svc.send("pull_request",
                    pr_event("synchronize", number, head_sha="e" * 40)).status_code == 202
    svc.wait_for_job(number, count=2)

    assert state.comments_on(REPO, number) == []
    assert writes_for(state, number) == []
    # Each run stops after reading the PR: no files, comments or rules are fetched.
    assert count_by_route(calls_for(state, number)) == {
        ("GET", "/repos/{owner}/{repo}/pulls/{number}"): 2}


def test_own_and_other_bots_events_trigger_nothing(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 107
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    own = state.add_comment(REPO, number, BOT, "<!-- pr-digest -->\nSay `/digest` to refresh",
                            author_type="Bot")
    own_event = comment_event(number, own.id, own.body, author=BOT, author_type="Bot")
    other = fixture("issue_comment.created.bot")
    other["issue"]["number"] = number
    own_label = pr_event("labeled", number, label="torch.compile", sender=BOT,
                         sender_type="Bot")

    replies = [svc.send("issue_comment", own_event), svc.send("issue_comment", other),
               svc.send("pull_request", own_label)]

    assert [r.status_code for r in replies] == [202, 202, 202]
    assert [r.json().get("ignored") for r in replies] == [
        "sent by this bot", "comment by a bot", "sent by this bot"]
    _quiet_period(svc)
    assert calls_for(state, number) == []
    assert svc.job_records(pr=number) == []
    assert [c.id for c in state.comments_on(REPO, number)] == [own.id]
    assert state.comments[own.id].reactions == []


def test_docs_only_pr_gets_no_comment(state: FakeGitHubState, svc: ServiceProcess) -> None:
    number = 108
    state.add_pull(REPO, number, title="[Doc] Clarify the FAQ", body="Typo fixes.",
                   files=DOCS_FILES)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number)
    assert state.comments_on(REPO, number) == []
    assert writes_for(state, number) == []
    # It did look: the verdict, not a skipped job, kept it quiet.
    assert ("GET", "/repos/{owner}/{repo}/pulls/{number}/files") in count_by_route(
        calls_for(state, number))


def test_synchronize_on_an_existing_pr_reads_five_lists_and_writes_once(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 110
    pull = state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES))
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number)
    before = len(state.calls)

    pull.head_sha = "d" * 40
    assert svc.send("pull_request",
                    pr_event("synchronize", number, head_sha="d" * 40)).status_code == 202
    svc.wait_for_job(number, count=2)
    _quiet_period(svc)

    per_sync = count_by_route(state.calls[before:])
    assert per_sync == {
        ("GET", "/repos/{owner}/{repo}/pulls/{number}"): 1,
        ("GET", "/repos/{owner}/{repo}/issues/{number}/comments"): 1,
        ("GET", "/repos/{owner}/{repo}/pulls/{number}/files"): 1,
        ("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews"): 1,
        ("GET", "/repos/{owner}/{repo}/pulls/{number}/comments"): 1,
        # How far the base moved since the PR's merge base (the live state, issue 42).
        ("GET", "/repos/{owner}/{repo}/compare/{basehead}"): 1,
        ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}"): 1,
    }
    # The conversation's lists were asked with their ETags: unchanged, they cost a 304
    # each, which the rate limit does not count (the comments changed: the digest).
    conditional = {c.route: c.status for c in state.calls[before:]
                   if c.route.endswith(("/reviews", "/comments")) and c.method == "GET"}
    assert conditional == {"/repos/{owner}/{repo}/pulls/{number}/reviews": 304,
                           "/repos/{owner}/{repo}/pulls/{number}/comments": 304,
                           "/repos/{owner}/{repo}/issues/{number}/comments": 200}
    marker = parse_marker(_digest(state, number))
    assert marker is not None
    assert marker.head_sha == "d" * 40


def test_kill_9_between_ack_and_processing_still_converges(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    number = 109
    pull = state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES))
    crashing = ServiceProcess(url, tmp_path, settle_seconds=1.5, name="crashing")
    crashing.start()
    try:
        reply = crashing.send("pull_request", pr_event("opened", number))
        assert reply.status_code == 202
        crashing.kill()  # acknowledged and persisted, never processed
        assert calls_for(state, number) == []
        assert crashing.job_records(pr=number) == []

        crashing.restart(settle_seconds=0.2)
        crashing.wait_for_job(number, timeout=10)
    finally:
        crashing.stop()
    marker = parse_marker(_digest(state, number))
    assert marker is not None
    assert marker.head_sha == pull.head_sha
    assert count_by_route(writes_for(state, number)) == {
        ("POST", "/repos/{owner}/{repo}/issues/{number}/comments"): 1}


def test_the_service_asks_get_app_once(tmp_path: Path) -> None:
    # The credential check (the server's loop) and the worker (its own loop) both need
    # the bot's login at start; one GET /app serves both, slowed so that they overlap.
    state = e2e_state()
    state.latency = 0.3
    number = 121
    state.add_pull(REPO, number, title="[torch.compile] y", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    with FakeGitHubServer(state) as url, ServiceProcess(url, tmp_path) as service:
        wait_until(lambda: service.get("/readyz").status_code == 200, 20, message="ready")
        assert service.send("pull_request", pr_event("opened", number)).status_code == 202
        service.wait_for_job(number, timeout=20)
    assert state.count("GET", "/app") == 1
