"""Issue 32, item 1, against the real `digest-bot serve` process: a review request GitHub
refuses must not lose the digest.

Before the fix (304b613) the job requested reviewers before writing the sticky comment,
and a 422 on `POST .../requested_reviewers` (a pool member who lost access, a race with
the author's own change) reached the job runner, which parks a 422 at once: no digest
comment, no label-view page. Now requesting reviewers is best effort: a refused request
is asked again name by name, the refused names are dropped (and said so in the digest),
and only a transient failure retries the job, which still posts one digest.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    REPO,
    ServiceProcess,
    calls_for,
    e2e_state,
    pr_event,
    service_for,
    wait_until,
)
from tests.view_env import FRONTEND_FILES

pytestmark = pytest.mark.slow

# rules/routing.yaml: torch.compile (cap 2) and frontend (cap 2).
COMPILE_POOL = ("ProExpertProg", "zou3519", "youkaichao")
FRONTEND_POOL = ("DarkLight1337", "njhill", "aarnphm", "chaunceyjiang")
REQUEST_ROUTE = "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers"
REQUEST_PATH = f"/repos/{REPO}/pulls/{{number}}/requested_reviewers"
LABELS = ["frontend", "torch.compile"]


@pytest.fixture
def state() -> FakeGitHubState:
    fake = e2e_state()
    for login in (*COMPILE_POOL, *FRONTEND_POOL):
        fake.set_permission(REPO, login, "write")
    return fake


@pytest.fixture
def svc(state: FakeGitHubState, tmp_path: Path) -> Iterator[ServiceProcess]:
    # One service per test: the refusals a service remembers must not leak across tests.
    with FakeGitHubServer(state) as url, service_for(state, url, tmp_path) as service:
        yield service


def _open(state: FakeGitHubState, number: int, author: str = "alice") -> None:
    state.add_pull(REPO, number, title="[Frontend][torch.compile] Compile the server path",
                   body=UNTESTED_BODY, files=[*COMPILE_FILES, *FRONTEND_FILES],
                   labels=LABELS, author=author)


def _requests(state: FakeGitHubState, number: int) -> int:
    return sum(1 for c in calls_for(state, number)
               if c.method == "POST" and c.route == REQUEST_ROUTE)


def _settled(svc: ServiceProcess, number: int) -> None:
    svc.wait_for_job(number, timeout=20)
    time.sleep(svc.settle_seconds + 0.3)  # nothing else may follow


def _assert_one_digest_and_a_page(state: FakeGitHubState, svc: ServiceProcess,
                                  number: int) -> str:
    comments = state.bot_comments(REPO, number)
    assert len(comments) == 1, [c[:80] for c in comments]
    assert svc.get(f"/view/{REPO}/{number}").status_code == 200
    assert svc.job_records(pr=number, outcome="parked") == []
    return comments[0]


def test_one_refused_review_request_still_posts_the_digest_and_asks_one_by_one(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    control, faulted = 3201, 3202
    _open(state, control)
    _open(state, faulted)
    state.fail_next("POST", REQUEST_PATH.format(number=faulted), 422, times=1,
                    body={"message": "Validation Failed"})
    for number in (control, faulted):
        assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    for number in (control, faulted):
        _settled(svc, number)

    _assert_one_digest_and_a_page(state, svc, control)
    body = _assert_one_digest_and_a_page(state, svc, faulted)
    requested = state.pull(REPO, faulted).requested_users
    # The refusal named nobody; asked one by one, everyone was taken this time.
    assert len(state.pull(REPO, control).requested_users) == 4
    assert len(requested) == 4
    assert len(set(requested) & set(COMPILE_POOL)) == 2
    assert len(set(requested) & set(FRONTEND_POOL)) == 2
    assert _requests(state, faulted) == 1 + 4
    marker = parse_marker(body)
    assert marker is not None
    assert set(marker.routed) == set(requested)
    for login in requested:
        assert login in body
    refusals = [r for r in svc.log_records() if r.get("msg", "").startswith(
        "review request refused; asking one by one") and r.get("pr") == faulted]
    assert len(refusals) == 1
    assert sorted(refusals[0]["users"]) == sorted(requested)


def test_a_pool_member_who_lost_access_is_dropped_and_the_others_are_asked(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 3203
    _open(state, number)
    # Every request naming them is refused; routing must not know who in advance.
    state.add_repo(REPO).no_access.update(FRONTEND_POOL)
    try:
        assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        _settled(svc, number)
    finally:
        state.add_repo(REPO).no_access.clear()
    body = _assert_one_digest_and_a_page(state, svc, number)
    requested = state.pull(REPO, number).requested_users
    assert len(requested) == 2
    assert set(requested) <= set(COMPILE_POOL)
    assert "GitHub refused the review request" in body
    marker = parse_marker(body)
    assert marker is not None
    assert set(marker.routed) == set(requested)


def test_every_review_request_refused_still_ends_with_one_digest(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 3204
    _open(state, number)
    state.fail_next("POST", REQUEST_PATH.format(number=number), 422, times=50)
    try:
        assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        _settled(svc, number)
    finally:
        state.faults.clear()
    body = _assert_one_digest_and_a_page(state, svc, number)
    assert state.pull(REPO, number).requested_users == []
    assert "GitHub refused the review request" in body
    marker = parse_marker(body)
    assert marker is not None
    assert marker.routed == ()


def test_a_transient_failure_retries_the_job_and_still_posts_one_digest(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 3205
    _open(state, number, author="bob")
    state.fail_next("POST", REQUEST_PATH.format(number=number), 502, times=1)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    wait_until(lambda: len(state.bot_comments(REPO, number)) == 1, timeout=30,
               message="the retried job's digest")
    _settled(svc, number)
    _assert_one_digest_and_a_page(state, svc, number)
    assert len(state.pull(REPO, number).requested_users) == 4
    assert svc.job_records(pr=number, outcome="retry")
