"""Sans-I/O intake: signature check and event → job mapping on real payload shapes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bot.intake.webhooks import (
    BotIdentity,
    Ignored,
    PayloadError,
    digest_lines,
    route_event,
    verify_signature,
)
from bot.queue.store import pr_key
from tests.signing import sign

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "webhooks"
NOBODY = BotIdentity()


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def test_signature_accepts_any_configured_secret_and_nothing_else() -> None:
    body = b'{"zen": "Design for failure."}'
    secrets = [b"old-secret", b"new-secret"]
    assert verify_signature(body, sign(body, "old-secret"), secrets)
    assert verify_signature(body, sign(body, "new-secret"), secrets)
    assert not verify_signature(body, sign(body, "other"), secrets)
    assert not verify_signature(body + b" ", sign(body, "new-secret"), secrets)
    bare_hex = sign(body, "new-secret").removeprefix("sha256=")
    assert not verify_signature(body, bare_hex, secrets)
    assert not verify_signature(body, "sha1=" + bare_hex, secrets)
    assert not verify_signature(body, None, secrets)
    assert not verify_signature(body, "sha256=ü", secrets)
    assert not verify_signature(body, sign(body, "new-secret"), [])


@pytest.mark.parametrize("action", [
    "opened", "reopened", "synchronize", "edited", "ready_for_review", "labeled",
    "unlabeled", "converted_to_draft", "closed",
])
def test_pull_request_actions_make_one_pr_job(action: str) -> None:
    job = route_event("pull_request", fixture(f"pull_request.{action}"), NOBODY)
    assert not isinstance(job, Ignored)
    assert job.kind == "pr"
    assert job.key == "pr:vllm-project/vllm#2"
    assert (job.repo, job.number, job.installation_id) == ("vllm-project/vllm", 2, 41723890)
    assert job.payload["actions"] == [action]
    assert job.payload["labels"] == (["torch.compile"] if action == "labeled" else [])


def test_other_pull_request_actions_are_ignored() -> None:
    payload = fixture("pull_request.opened")
    payload["action"] = "assigned"
    result = route_event("pull_request", payload, NOBODY)
    assert isinstance(result, Ignored)
    assert "assigned" in result.reason


def test_edit_that_cannot_change_the_digest_is_ignored() -> None:
    payload = fixture("pull_request.edited")
    payload["changes"] = {"milestone": {"from": None}}
    assert isinstance(route_event("pull_request", payload, NOBODY), Ignored)
    payload["changes"] = {"base": {"ref": {"from": "releases/v0.9"}}}
    assert not isinstance(route_event("pull_request", payload, NOBODY), Ignored)


def test_events_sent_by_the_bot_itself_are_ignored() -> None:
    payload = fixture("pull_request.labeled")
    payload["sender"] = {"login": "pr-digest[bot]", "type": "Bot"}
    result = route_event("pull_request", payload, BotIdentity(login="PR-Digest[bot]"))
    assert result == Ignored("sent by this bot")
    # Other bots' labels still route (Mergify adds most area labels on vLLM).
    assert not isinstance(route_event("pull_request", payload, NOBODY), Ignored)


def test_wrong_shape_raises_payload_error_naming_the_field() -> None:
    payload = fixture("pull_request.opened")
    del payload["number"]
    with pytest.raises(PayloadError, match="number"):
        route_event("pull_request", payload, NOBODY)
    payload = fixture("issue_comment.created")
    payload["comment"]["id"] = "not-a-number"
    with pytest.raises(PayloadError, match=r"comment\.id"):
        route_event("issue_comment", payload, NOBODY)


def test_digest_comment_on_a_pr_makes_a_command_job() -> None:
    payload = fixture("issue_comment.created")
    job = route_event("issue_comment", payload, NOBODY)
    assert not isinstance(job, Ignored)
    comment = payload["comment"]
    assert job.kind == "command"
    assert job.number == payload["issue"]["number"]
    assert job.key.startswith(f"cmd:vllm-project/vllm#{comment['id']}:")
    assert job.payload["comment_id"] == comment["id"]
    assert job.payload["body"] == comment["body"]
    assert job.payload["author_login"] == comment["user"]["login"]
    assert job.payload["author_type"] == "User"
    other_text = copy.deepcopy(payload)
    other_text["comment"]["body"] = "/digest explain"
    job2 = route_event("issue_comment", other_text, NOBODY)
    assert not isinstance(job2, Ignored)
    assert job2.key != job.key


@pytest.mark.parametrize(("body", "wanted"), [
    ("/digest", True),
    ("   /DIGEST explain", True),
    ("looks good\n\t/digest refresh\nthanks", True),
    ("please run /digest", False),
    ("/digests are great", False),
    ("/digest-bot", False),
    ("", False),
])
def test_digest_lines_are_line_anchored(body: str, wanted: bool) -> None:
    assert bool(digest_lines(body)) is wanted


def test_comments_that_must_not_trigger_are_ignored() -> None:
    bot = fixture("issue_comment.created.bot")
    assert route_event("issue_comment", bot, NOBODY) == Ignored("comment by a bot")

    on_issue = fixture("issue_comment.created")
    del on_issue["issue"]["pull_request"]
    assert isinstance(route_event("issue_comment", on_issue, NOBODY), Ignored)

    via_app = fixture("issue_comment.created")
    via_app["comment"]["performed_via_github_app"] = {"id": 4242, "slug": "pr-digest"}
    assert route_event("issue_comment", via_app, BotIdentity(app_id=4242)) == Ignored(
        "sent by this bot")

    mine = fixture("issue_comment.created")
    mine["comment"]["body"] = "LGTM"
    assert route_event("issue_comment", mine, BotIdentity(login="Codertocat")) == Ignored(
        "sent by this bot")

    pinned = fixture("issue_comment.created")
    pinned["action"] = "pinned"
    assert isinstance(route_event("issue_comment", pinned, NOBODY), Ignored)


@pytest.mark.parametrize("action", ["created", "edited", "deleted"])
def test_any_other_comment_reruns_the_digest_through_the_prs_job(action: str) -> None:
    chatter = fixture("issue_comment.created")
    chatter["action"] = action
    chatter["comment"]["body"] = "LGTM, but can you add a test?"
    job = route_event("issue_comment", chatter, NOBODY)
    assert not isinstance(job, Ignored)
    # The same key as the PR's own events: a burst of comments is one run.
    assert (job.kind, job.key, job.number) == (
        "pr", pr_key("vllm-project/vllm", chatter["issue"]["number"]),
        chatter["issue"]["number"])
    assert job.payload == {"actions": [f"comment.{action}"], "labels": []}


def test_edited_comment_runs_a_command_only_when_its_command_changed() -> None:
    payload = fixture("issue_comment.edited")  # "/digest" -> "/digest explain"
    job = route_event("issue_comment", payload, NOBODY)
    assert not isinstance(job, Ignored)
    assert job.kind == "command"
    typo_fix = copy.deepcopy(payload)
    typo_fix["comment"]["body"] = "Fixed a typo.\n/digest explain\n"
    typo_fix["changes"] = {"body": {"from": "Fixd a typo.\n/digest explain\n"}}
    rerun = route_event("issue_comment", typo_fix, NOBODY)
    assert not isinstance(rerun, Ignored)
    assert rerun.kind == "pr"  # the words changed, the command did not
    unchanged = copy.deepcopy(typo_fix)
    unchanged["changes"] = {"body": {"from": typo_fix["comment"]["body"]}}
    assert isinstance(route_event("issue_comment", unchanged, NOBODY), Ignored)
    no_changes = copy.deepcopy(payload)
    del no_changes["changes"]
    assert isinstance(route_event("issue_comment", no_changes, NOBODY), Ignored)


@pytest.mark.parametrize(("event", "name"), [
    ("pull_request_review", "pull_request_review.submitted"),
    ("pull_request_review_comment", "pull_request_review_comment.created"),
])
def test_reviews_and_review_comments_rerun_the_digest(event: str, name: str) -> None:
    payload = fixture(name)
    job = route_event(event, payload, NOBODY)
    assert not isinstance(job, Ignored)
    assert (job.kind, job.key, job.installation_id) == (
        "pr", pr_key("vllm-project/vllm", payload["pull_request"]["number"]),
        payload["installation"]["id"])

    by_bot = copy.deepcopy(payload)
    by_bot["sender"]["login"] = by_bot["sender"]["login"] + "[bot]"
    assert isinstance(route_event(event, by_bot, NOBODY), Ignored)
    assert route_event(event, payload, BotIdentity(login="Codertocat")) == Ignored(
        "sent by this bot")
    other = copy.deepcopy(payload)
    other["action"] = "requested_changes_whatever"
    assert isinstance(route_event(event, other, NOBODY), Ignored)
    broken = copy.deepcopy(payload)
    del broken["pull_request"]
    with pytest.raises(PayloadError):
        route_event(event, broken, NOBODY)


def test_installation_events_are_acknowledged_and_unknown_events_ignored() -> None:
    result = route_event("installation", fixture("installation.created"), NOBODY)
    assert isinstance(result, Ignored)
    assert "acknowledged" in result.reason
    assert isinstance(route_event("check_run", {"action": "completed"}, NOBODY), Ignored)
