"""Security issue 8, the command path, against the real service process and the fake
GitHub on loopback: what anyone who can comment can make the bot post or spend."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeComment, FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.markdown_safety import live_markup
from tests.service_harness import (
    BOT,
    REPO,
    WRITE_METHODS,
    ServiceProcess,
    calls_for,
    comment_event,
    e2e_state,
    service_for,
)

pytestmark = pytest.mark.slow

MAINTAINER = "maintainer"
STRANGER = "stranger"
POOL = ("ProExpertProg", "zou3519", "youkaichao")  # rules/routing.yaml: torch.compile
REACTION_ROUTE = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
REQUEST_ROUTE = "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers"
# The issue's example: one backtick closes the code span the reply quoted it in.
HOSTILE = ("/digest x`@vllm-project/maintainers,@alice,[login](https://evil.example/login),"
           "![t](https://evil.example/p.png)")


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    fake = e2e_state()
    for login in (*POOL, MAINTAINER):
        fake.set_permission(REPO, login, "write")
    return fake


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with FakeGitHubServer(state) as url, \
            service_for(state, url, tmp_path_factory.mktemp("e2e-cmd-sec")) as service:
        yield service


def _say(state: FakeGitHubState, svc: ServiceProcess, number: int, author: str,
         body: str, *, association: str = "NONE") -> FakeComment:
    comment = state.add_comment(REPO, number, author, body)
    reply = svc.send("issue_comment", comment_event(number, comment.id, body, author=author,
                                                    association=association))
    assert reply.status_code == 202, reply.text
    return comment


def _pull(state: FakeGitHubState, number: int, **kw: object) -> None:
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), author="alice", **kw)  # type: ignore[arg-type]


def _replies(state: FakeGitHubState, number: int) -> list[str]:
    return [b for b in state.bot_comments(REPO, number, BOT) if parse_marker(b) is None]


def _digests(state: FakeGitHubState, number: int) -> list[str]:
    return [b for b in state.bot_comments(REPO, number, BOT) if parse_marker(b) is not None]


def _reactions(state: FakeGitHubState, comment_id: int) -> list[str]:
    return [content for _login, content in state.comments[comment_id].reactions]


def _reaction_posts(state: FakeGitHubState, comment_ids: set[int]) -> int:
    return sum(1 for c in list(state.calls) if c.method == "POST" and c.route == REACTION_ROUTE
               and int(c.path.rstrip("/").split("/")[-2]) in comment_ids)


def _content_writes(state: FakeGitHubState) -> int:
    """Writes that create or change content (not the installation-token mint)."""
    return sum(1 for c in list(state.calls)
               if c.method in WRITE_METHODS and "access_tokens" not in c.route)


def _settle(svc: ServiceProcess) -> None:
    time.sleep(svc.settle_seconds + 0.7)


# --- item 1: live mentions, links and images through an unknown subcommand ----------


def test_outsiders_unknown_command_gets_no_reply(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 801
    _pull(state, number)
    body = "\n".join([HOSTILE, *(f"/digest w{i}`@alice" for i in range(9))])
    comment = _say(state, svc, number, STRANGER, body)
    svc.wait_for_job(number, kind="command")

    assert _replies(state, number) == []
    assert _reactions(state, comment.id) in ([], ["confused"])  # a 😕 at most


def test_maintainers_unknown_command_reply_quotes_it_inert(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 802
    _pull(state, number)
    _say(state, svc, number, MAINTAINER, HOSTILE + "\n/digest <img src=x>\n/digest &#64;bob",
         association="MEMBER")
    svc.wait_for_job(number, kind="command")

    replies = _replies(state, number)
    assert len(replies) == 1
    assert "/digest x" in replies[0]  # still says what was not understood
    assert live_markup(replies[0]) == []


# --- item 10: a lone surrogate in a command --------------------------------------------


def test_lone_surrogate_command_is_answered_once_without_a_retry(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 803
    _pull(state, number)
    comment = _say(state, svc, number, MAINTAINER, "/digest \ud800x", association="MEMBER")
    svc.wait_for_job(number, kind="command")
    _settle(svc)

    assert svc.job_records(pr=number, kind="command", outcome="retry") == []
    assert len(svc.job_records(pr=number, kind="command")) == 1
    replies = _replies(state, number)
    assert len(replies) == 1
    assert "\ud800" not in replies[0]
    assert _reactions(state, comment.id) == ["confused"]
    assert _reaction_posts(state, {comment.id}) == 1


# --- item 3: outsiders deny maintainers' commands and drain the write budget -----------


def test_outsider_junk_neither_blocks_a_maintainer_nor_spends_writes(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 804
    _pull(state, number)
    writes_before = _content_writes(state)
    junk = [_say(state, svc, number, STRANGER, f"/digest route {i}") for i in range(20)]
    svc.wait_for_job(number, kind="command", count=20, timeout=30)
    junk_writes = _content_writes(state) - writes_before

    mute = _say(state, svc, number, MAINTAINER, "/digest mute", association="MEMBER")
    svc.wait_for_job(number, kind="command", count=21, timeout=15)

    marker = parse_marker(_digests(state, number)[0])
    assert marker is not None
    assert marker.muted
    assert _reactions(state, mute.id) == ["eyes", "+1"]
    assert len(_replies(state, number)) == 1  # one reply per PR per hour for outsiders
    assert all("eyes" not in _reactions(state, c.id) for c in junk)
    # One reply, and a 😕 on at most a handful: was 3 writes per junk comment (60).
    assert junk_writes <= 6, junk_writes


# --- item 6: the PR author bypasses mute ------------------------------------------------


def test_author_refresh_on_a_muted_pr_neither_updates_nor_requests_reviewers(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 805
    _pull(state, number, labels=["torch.compile"])
    _say(state, svc, number, MAINTAINER, "/digest mute", association="MEMBER")
    svc.wait_for_job(number, kind="command")
    muted_body = _digests(state, number)[0]
    assert (parse_marker(muted_body) or pytest.fail("no marker")).muted
    state.pull(REPO, number).head_sha = "b" * 40  # the author pushed since

    _say(state, svc, number, "alice", "/digest", association="CONTRIBUTOR")
    svc.wait_for_job(number, kind="command", count=2)

    assert _digests(state, number) == [muted_body]
    assert state.pull(REPO, number).requested_users == []
    assert not any(c.method == "POST" and c.route == REQUEST_ROUTE
                   for c in calls_for(state, number))


def test_maintainer_refresh_on_a_muted_pr_still_works(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 806
    _pull(state, number)
    _say(state, svc, number, MAINTAINER, "/digest mute", association="MEMBER")
    svc.wait_for_job(number, kind="command")
    state.pull(REPO, number).head_sha = "c" * 40
    _say(state, svc, number, MAINTAINER, "/digest", association="MEMBER")
    svc.wait_for_job(number, kind="command", count=2)

    marker = parse_marker(_digests(state, number)[0])
    assert marker is not None
    assert marker.head_sha == "c" * 40
    assert marker.muted  # a refresh does not unmute


def test_issue_example_from_stranger_posts_nothing_live(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 807
    _pull(state, number)
    _say(state, svc, number, STRANGER, "/digest mute\n" + HOSTILE)
    svc.wait_for_job(number, kind="command")
    for body in state.bot_comments(REPO, number, BOT):
        assert live_markup(body) == [], body
