"""A PR's triage fields (bot/core/judging/triage.py): plain data in, plain data out."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.core.facts import Conversation, Remark, RemarkKind
from bot.core.judging.triage import activity, owners, signals, triage

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 9, 1, tzinfo=UTC)


def remark(author: str, minutes: int, *, kind: RemarkKind = "comment", state: str = "",
           maintainer: bool = False, bot: bool = False) -> Remark:
    return Remark(kind=kind, id=minutes, author=author, author_is_bot=bot,
                  created_at=datetime.fromtimestamp(T0.timestamp() + minutes * 60, UTC),
                  review_state=state, maintainer=maintainer)


def test_activity_tells_the_author_from_reviewers_and_ignores_bots_and_drive_bys() -> None:
    talk = Conversation(remarks=(
        remark("someone", 5),  # a drive-by "+1": not a review
        remark("pr-digest[bot]", 6, bot=True),
        remark("Alice", 10),  # the author, any case
        remark("rev", 20, kind="review", state="CHANGES_REQUESTED", maintainer=True),
        remark("maint", 30, maintainer=True),
    ))
    done = activity(talk, "alice", T0.timestamp())
    assert done.last_author_at == T0.timestamp() + 600
    assert done.last_reviewer_at == T0.timestamp() + 1800
    assert done.reviewed
    assert done.changes_requested
    alone = activity(Conversation(remarks=(remark("someone", 5),)), "alice", T0.timestamp())
    assert not alone.reviewed
    assert alone.last_reviewer_at is None
    assert alone.last_author_at == T0.timestamp()  # the opening counts


def test_a_later_approval_by_the_same_reviewer_lifts_their_change_request() -> None:
    talk = Conversation(remarks=(
        remark("rev", 20, kind="review", state="CHANGES_REQUESTED", maintainer=True),
        remark("rev", 40, kind="review", state="APPROVED", maintainer=True),
    ))
    assert not activity(talk, "alice", None).changes_requested


_REVIEW: RemarkKind = "review"
_REVIEW_COMMENT: RemarkKind = "review_comment"


def test_reviews_by_people_without_write_access_move_nothing() -> None:
    # Issue 38, item 5: an outsider's "nit" or CHANGES_REQUESTED, or one whose access
    # was not read (neither flag), is not a review for the queue.
    for outsider in (True, False):
        talk = Conversation(remarks=tuple(
            remark(who, minutes, kind=kind, state=state).model_copy(
                update={"outsider": outsider})
            for who, minutes, kind, state in (
                ("stranger", 20, _REVIEW_COMMENT, ""),
                ("stranger", 30, _REVIEW, "CHANGES_REQUESTED"),
                ("other", 40, _REVIEW, "APPROVED"))))
        done = activity(talk, "alice", T0.timestamp())
        assert not done.reviewed
        assert not done.changes_requested
        assert done.last_reviewer_at is None
    with_maintainer = Conversation(remarks=(
        remark("stranger", 20, kind="review", state="CHANGES_REQUESTED"),
        remark("maint", 30, kind="review_comment", maintainer=True)))
    done = activity(with_maintainer, "alice", T0.timestamp())
    assert done.reviewed
    assert not done.changes_requested
    assert done.last_reviewer_at == T0.timestamp() + 1800


def test_an_unfilled_template_or_empty_body_is_a_signal_and_no_real_pr_has_it() -> None:
    for version in ("0.31.0", "0.34.0"):
        config = ROOT / "tests/fixtures/vllm_config" / version
        template = config / ".github" / "PULL_REQUEST_TEMPLATE.md"
        assert "template-unfilled" in signals({}, template.read_text())
    assert signals({}, "") == ("template-unfilled",)
    assert signals({}, "## Purpose\nTBD\n\n## Test Plan\n\n## Test Result\nN/A") == (
        "template-unfilled",)
    cases = json.loads((ROOT / "tests/fixtures/cases/real/real_prs.json").read_text())
    fired = [c["name"] for c in cases
             if "template-unfilled" in signals({}, c["event"]["pull_request"]["body"] or "")]
    assert fired == []  # precision: every real PR describes itself


def test_ai_assistance_core_without_rationale_and_large_multi_area_changes() -> None:
    core = {"areas": [{"id": "core"}]}
    assert "ai-assisted" in signals({"ai_assisted": True}, "## Purpose\nA fix.")
    assert "ai-assisted" not in signals({"ai_assisted": False}, "## Purpose\nA fix.")
    assert "core-unexplained" in signals(core, "Fix scheduler.")
    why = ("The scheduler drops a request when its KV blocks are freed twice during "
           "preemption; this keeps a reference count so the second free is a no-op and "
           "the request is resumed instead of aborted.")
    assert "core-unexplained" not in signals(core, f"## Purpose\n{why}")
    assert "core-unexplained" not in signals(core, why)  # no headings, still explained
    assert "core-unexplained" not in signals({"areas": [{"id": "docs"}]}, "Fix.")
    big: dict[str, Any] = {"areas": [{"id": a} for a in ("core", "kernels", "frontend")],
           "additions": 900, "deletions": 200}
    assert "large-multi-area" in signals(big, why)
    assert "large-multi-area" not in signals({**big, "areas": big["areas"][:2]}, why)
    assert "large-multi-area" not in signals({**big, "additions": 100}, why)


def test_owners_gather_codeowners_reviewers_routing_and_pools_once_each() -> None:
    digest = {"owners": {"users": ["alice", "Bob"], "teams": ["vllm-project/ci"]},
              "reviewers": {"users": ["bob"], "teams": []},
              "routing": {"requested_users": ["carol"]}}
    assert owners(digest, ["@dave", "ALICE"]) == ("alice", "Bob", "vllm-project/ci", "carol",
                                                  "dave")
    assert owners({}, []) == ()


def test_triage_takes_size_ci_and_risks_from_the_digest() -> None:
    digest = {
        "additions": 12, "deletions": 3, "files_total": 2,
        "ci": {"state": "failed", "steps": [{"label": "a", "status": "failed"},
                                            {"label": "b", "status": "passed"},
                                            {"label": "c", "status": "passed"}]},
        "risks": [{"id": "missing-tests", "severity": "medium"}],
    }
    found = triage(digest, conversation=None, author="alice", body="## Purpose\nA fix.",
                   created_at=T0.timestamp())
    assert (found.additions, found.deletions, found.files, found.lines) == (12, 3, 2, 15)
    assert found.ci_state == "failed"
    assert dict(found.ci_steps) == {"failed": 1, "passed": 2}
    assert found.risks == (("missing-tests", "medium"),)
    assert found.created_at == found.last_author_at == T0.timestamp()
    assert not found.reviewed
    assert triage({}, conversation=None, author="a", body="x", created_at=None).ci_state == ""
