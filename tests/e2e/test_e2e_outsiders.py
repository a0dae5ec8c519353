"""Issue 38, items 5, 6 and 10d, against the real service process and the fake GitHub on
loopback: people without write access neither move the label view's triage queue nor
delay a maintainer's command, and their asks are shown as theirs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    comment_event,
    e2e_state,
    pr_event,
    review_comment_event,
    review_event,
    service_for,
    wait_until,
)

pytestmark = pytest.mark.slow

AUTHOR = "Codertocat"  # the author of every fixture PR payload
MAINTAINER = "maint"
STRANGER = "stranger"
CHAT_FILE = FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                     patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n")
DOCUMENTED_BODY = (
    "## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
)
# The flood, scaled from the 180 comments over 60 PRs at 1 s a write: a third of
# the comments at a tenth of the interval still fills GitHub's 80 writes a minute.
FLOOD_PRS = 30
FLOOD_PER_PR = 3
WRITE_INTERVAL = 0.1
MAINTAINER_WAIT = 5.0


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    fake = e2e_state()
    fake.set_permission(REPO, MAINTAINER, "maintain")
    fake.set_permission(REPO, "triager", "triage")
    return fake


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with FakeGitHubServer(state) as url, service_for(state,
        url, tmp_path_factory.mktemp("e2e-outsiders"), write_interval_seconds=WRITE_INTERVAL,
    ) as service:
        yield service


def _open(state: FakeGitHubState, svc: ServiceProcess, number: int) -> None:
    state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                   body=DOCUMENTED_BODY, files=[CHAT_FILE])
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number)


def _entry(svc: ServiceProcess, number: int) -> dict[str, Any]:
    items: list[dict[str, Any]] = svc.get(f"/api/digests/{REPO}?per_page=100").json()
    found = [item for item in items if item["number"] == number]
    assert len(found) == 1, [item["number"] for item in items]
    return found[0]


def _digest(state: FakeGitHubState, number: int) -> str:
    bodies = state.bot_comments(REPO, number, BOT)
    assert len(bodies) == 1, bodies
    return bodies[0]


def _review_comment(state: FakeGitHubState, svc: ServiceProcess, number: int, author: str,
                    body: str, jobs: int) -> None:
    comment = state.add_review_comment(REPO, number, author, body)
    sent = svc.send("pull_request_review_comment",
                    review_comment_event(number, comment.id, body, author=author))
    assert sent.status_code == 202
    svc.wait_for_job(number, count=jobs)


def _review(state: FakeGitHubState, svc: ServiceProcess, number: int, author: str,
            body: str, jobs: int) -> None:
    review = state.add_review(REPO, number, author, "CHANGES_REQUESTED", body=body)
    sent = svc.send("pull_request_review", review_event(
        number, review.id, body, author=author, state="changes_requested"))
    assert sent.status_code == 202
    svc.wait_for_job(number, count=jobs)


# --- item 5: only people with write access move the queue -----------------------------


def test_an_outsiders_nit_leaves_the_pr_in_needs_first_review(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 501
    _open(state, svc, number)
    assert _entry(svc, number)["needs_first_review"] is True

    _review_comment(state, svc, number, STRANGER, "nit", jobs=2)
    _review_comment(state, svc, number, "triager", "nit: a blank line", jobs=3)
    entry = _entry(svc, number)
    assert entry["needs_first_review"] is True
    assert entry["waiting_on"] == "reviewer"

    _review_comment(state, svc, number, MAINTAINER, "nit", jobs=4)
    assert _entry(svc, number)["needs_first_review"] is False


def test_an_outsiders_changes_requested_does_not_wait_on_the_author(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 502
    _open(state, svc, number)

    _review(state, svc, number, STRANGER, "This is wrong.", jobs=2)
    entry = _entry(svc, number)
    assert entry["waiting_on"] == "reviewer"
    assert entry["needs_first_review"] is True

    _review(state, svc, number, MAINTAINER, "This is wrong.", jobs=3)
    entry = _entry(svc, number)
    assert entry["waiting_on"] == "author"
    assert entry["needs_first_review"] is False


# --- item 10d: an outsider's ask is marked as such -------------------------------------


def test_an_outsiders_ask_is_marked_and_does_not_wait_on_the_author(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 503
    _open(state, svc, number)
    ask = "Can you add a unit test for the new branch?"
    _review_comment(state, svc, number, STRANGER, ask, jobs=2)

    body = _digest(state, number)
    assert "**tests** — asked by @\u2060stranger (no write access) — open" in body
    entry = _entry(svc, number)
    assert [a["access"] for a in entry["asks"]] == ["none"]
    assert entry["waiting_on"] == "reviewer"

    docs = "Please update the docs for the new flag."
    _review_comment(state, svc, number, MAINTAINER, docs, jobs=3)
    body = _digest(state, number)
    assert "**docs** — asked by @\u2060maint — open" in body
    assert "@\u2060maint (no write access)" not in body
    assert _entry(svc, number)["waiting_on"] == "author"


# --- item 6: maintainers first -----------------------------------------------------------


def _reacted(state: FakeGitHubState, comment_id: int) -> bool:
    return bool(state.comments[comment_id].reactions)


def test_a_maintainers_command_is_not_held_behind_an_outsider_flood(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    numbers = range(600, 600 + FLOOD_PRS)
    for number in numbers:  # a refused command reads the PR, never its digest
        state.add_pull(REPO, number, author=AUTHOR, title="[Frontend] Tidy chat",
                       body=DOCUMENTED_BODY, files=[CHAT_FILE])
    flood = []
    for round_ in range(FLOOD_PER_PR):
        for number in numbers:
            body = "/digest mute"
            comment = state.add_comment(REPO, number, f"{STRANGER}{round_}", body)
            sent = svc.send("issue_comment", comment_event(
                number, comment.id, body, author=f"{STRANGER}{round_}"))
            assert sent.status_code == 202
            flood.append(comment.id)
    # The flood is under way: some of it has been answered already.
    wait_until(lambda: sum(_reacted(state, c) for c in flood) >= 10, 60,
               message="the flood's first reactions")

    number = numbers[-1]
    comment = state.add_comment(REPO, number, MAINTAINER, "/digest")
    started = time.monotonic()
    sent = svc.send("issue_comment", comment_event(number, comment.id, "/digest",
                                                   author=MAINTAINER, association="MEMBER"))
    assert sent.status_code == 202
    wait_until(lambda: _reacted(state, comment.id), 60, interval=0.05,
               message="the maintainer's 👀")
    waited = time.monotonic() - started
    answered = sum(_reacted(state, c) for c in flood)
    assert waited <= MAINTAINER_WAIT, (waited, answered, len(flood))
