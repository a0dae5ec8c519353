"""`/digest` commands and label routing through the real service process (issue 4):
signed issue_comment / pull_request deliveries in, reactions, replies and review
requests on the fake GitHub out."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bot.core.render.i18n import t
from bot.core.render.marker import parse_marker
from bot.handlers.command import ALL_COMMANDS
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeComment, FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    calls_for,
    comment_event,
    e2e_state,
    pr_event,
    service_for,
)

pytestmark = pytest.mark.slow

POOL = ("ProExpertProg", "zou3519", "youkaichao")  # rules/routing.yaml: torch.compile, cap 2
MAINTAINER = "maintainer"
REQUEST_ROUTE = "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers"
REACTION_ROUTE = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"


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
            service_for(state, url, tmp_path_factory.mktemp("e2e-commands")) as service:
        yield service


def _say(state: FakeGitHubState, svc: ServiceProcess, number: int, author: str, body: str,
         *, association: str, delivery: str | None = None) -> FakeComment:
    comment = state.add_comment(REPO, number, author, body)
    reply = svc.send("issue_comment",
                     comment_event(number, comment.id, body, author=author,
                                   association=association),
                     delivery=delivery)
    assert reply.status_code == 202, reply.text
    return comment


def _reactions(state: FakeGitHubState, comment_id: int) -> list[tuple[str, str]]:
    return list(state.comments[comment_id].reactions)


def _reaction_posts(state: FakeGitHubState, comment_id: int) -> int:
    return sum(1 for c in list(state.calls) if c.method == "POST" and c.route == REACTION_ROUTE
               and f"/comments/{comment_id}/" in c.path)


def _requests(state: FakeGitHubState, number: int) -> int:
    return sum(1 for c in calls_for(state, number)
               if c.method == "POST" and c.route == REQUEST_ROUTE)


def _digests(state: FakeGitHubState, number: int) -> list[str]:
    return [b for b in state.bot_comments(REPO, number, BOT) if parse_marker(b) is not None]


def _replies(state: FakeGitHubState, number: int) -> list[str]:
    return [b for b in state.bot_comments(REPO, number, BOT) if parse_marker(b) is None]


def test_maintainer_refresh_updates_the_digest_and_reacts_eyes_then_thumbs_up(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 201
    pull = state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES), author="alice")
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number)
    first = parse_marker(_digests(state, number)[0])
    assert first is not None
    assert first.head_sha == pull.head_sha
    pull.head_sha = "a" * 40  # GitHub moved on; the push event was lost

    command = _say(state, svc, number, MAINTAINER, "Please look again.\n/digest\n",
                   association="MEMBER")
    svc.wait_for_job(number, kind="command")

    digests = _digests(state, number)
    assert len(digests) == 1
    marker = parse_marker(digests[0])
    assert marker is not None
    assert first.head_sha != marker.head_sha == "a" * 40
    assert _reactions(state, command.id) == [(BOT, "eyes"), (BOT, "+1")]
    assert _replies(state, number) == []


def test_non_collaborator_route_is_refused_once_with_a_reason(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 202
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), labels=["torch.compile"], author="alice")
    command = _say(state, svc, number, "stranger", "/digest route", association="NONE",
                   delivery="e2e-202-comment")
    svc.wait_for_job(number, kind="command")
    # GitHub's redelivery, and the same comment delivered again under a new id.
    again = svc.send("issue_comment", comment_event(number, command.id, command.body,
                                                    author="stranger"),
                     delivery="e2e-202-comment")
    assert again.json().get("duplicate") is True
    assert svc.send("issue_comment", comment_event(number, command.id, command.body,
                                                   author="stranger")).status_code == 202
    time.sleep(svc.settle_seconds + 0.7)

    assert _replies(state, number) == [
        f"- {t('en', 'commands.refused.write-only', command='`/digest route`')}"]
    # Nothing ran, so no 👀 (issue 8: a refusal costs as few writes as possible).
    assert _reactions(state, command.id) == [(BOT, "confused")]
    assert _reaction_posts(state, command.id) == 1
    assert _requests(state, number) == 0
    assert state.pull(REPO, number).requested_users == []
    # One run, after it was sorted behind everyone else's work (issue 38, item 6).
    assert len(svc.job_records(pr=number, kind="command", outcome="ok")) == 1
    assert len(svc.job_records(pr=number, kind="command", outcome="deferred")) == 1


def test_own_comment_containing_digest_triggers_nothing(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 203
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), author="alice")
    own = state.add_comment(REPO, number, BOT, "Commands:\n/digest refresh\n/digest route\n",
                            author_type="Bot")
    created = comment_event(number, own.id, own.body, author=BOT, author_type="Bot")
    edited = comment_event(number, own.id, own.body + "/digest explain\n", author=BOT,
                           author_type="Bot", action="edited")
    edited["changes"] = {"body": {"from": own.body}}

    replies = [svc.send("issue_comment", created), svc.send("issue_comment", edited)]

    assert [r.json().get("ignored") for r in replies] == ["sent by this bot"] * 2
    time.sleep(svc.settle_seconds + 0.7)
    assert calls_for(state, number) == []
    assert _reaction_posts(state, own.id) == 0
    assert svc.job_records(pr=number) == []


def test_routed_label_requests_reviewers_exactly_once_across_redeliveries(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 204
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), labels=["torch.compile"], author="alice")
    labeled = pr_event("labeled", number, label="torch.compile")
    assert svc.send("pull_request", labeled, delivery="e2e-204-labeled").status_code == 202
    svc.wait_for_job(number)
    assert svc.send("pull_request", labeled,
                    delivery="e2e-204-labeled").json().get("duplicate") is True
    # A second, distinct delivery of the same fact (e.g. the label re-added).
    assert svc.send("pull_request", labeled).status_code == 202
    svc.wait_for_job(number, count=2)
    time.sleep(svc.settle_seconds + 0.5)

    requested = state.pull(REPO, number).requested_users
    assert _requests(state, number) == 1
    assert len(requested) == 2  # the pool's cap
    assert set(requested) <= set(POOL)
    marker = parse_marker(_digests(state, number)[0])
    assert marker is not None
    assert set(marker.routed) == set(requested)


def test_route_on_a_pool_members_pr_skips_the_author(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 205
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), labels=["torch.compile"], author="zou3519")
    command = _say(state, svc, number, MAINTAINER, "/digest route", association="MEMBER")
    svc.wait_for_job(number, kind="command")

    assert sorted(state.pull(REPO, number).requested_users) == ["ProExpertProg", "youkaichao"]
    assert _requests(state, number) == 1
    assert _reactions(state, command.id) == [(BOT, "eyes"), (BOT, "+1")]
    assert len(_digests(state, number)) == 1
    assert _replies(state, number) == []


def test_maintainers_typo_is_answered_with_the_command_meant(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 206
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), author="alice")
    command = _say(state, svc, number, MAINTAINER, "/digest refersh", association="MEMBER")
    svc.wait_for_job(number, kind="command")

    [reply] = _replies(state, number)
    assert reply.startswith(
        f"- {t('en', 'commands.refused.unknown', command='`/digest refersh`')} "
        f"{t('en', 'commands.refused.did-you-mean', command='`/digest refresh`')} ")
    assert reply.endswith(", ".join(f"`{spec.name}`" for spec in ALL_COMMANDS) + ".")
    assert _reactions(state, command.id) == [(BOT, "confused")]
    assert _digests(state, number) == []  # nothing ran
