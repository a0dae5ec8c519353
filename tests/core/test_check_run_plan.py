"""The pure plan of the digest as a check run: create, edit in place, leave alone."""

from __future__ import annotations

import pytest

from bot.core.render.check_run import (
    SUMMARY_MAX_CHARS,
    CheckRunSnapshot,
    plan_check_run,
)
from bot.core.render.marker import Marker, render_marker

HEAD = "a" * 40


def _body(text: str, seen: int | None = None) -> str:
    marker = Marker(head_sha=HEAD, rules_version="r1", lang="en", verdict="read",
                    risk_level="low", seen=seen)
    return f"{render_marker(marker)}\n{text}"


def _run(run_id: int, summary: str, *, slug: str = "pr-digest", sha: str = HEAD
         ) -> CheckRunSnapshot:
    return CheckRunSnapshot(id=run_id, head_sha=sha, app_slug=slug, summary=summary)


def test_no_run_of_ours_on_the_head_is_created() -> None:
    runs = [_run(1, "theirs", slug="other-app"), _run(2, _body("old"), sha="b" * 40)]
    plan = plan_check_run(runs, "pr-digest", HEAD, _body("new"))
    assert plan.action == "create"
    assert plan.summary is not None
    assert plan.summary.endswith("new")


def test_our_run_is_updated_in_place_or_left_when_equal() -> None:
    runs = [_run(7, _body("old"))]
    update = plan_check_run(runs, "pr-digest", HEAD, _body("new"))
    same = plan_check_run(runs, "pr-digest", HEAD, _body("old  "))
    assert (update.action, update.run_id) == ("update", 7)
    assert (same.action, same.run_id) == ("noop", 7)


def test_a_quiet_pr_creates_nothing_and_reduces_an_existing_run() -> None:
    assert plan_check_run([], "pr-digest", HEAD, None, quiet_body="q").action == "noop"
    reduced = plan_check_run([_run(3, _body("loud"))], "pr-digest", HEAD, None,
                             quiet_body=_body("quiet"))
    assert reduced.action == "update"
    assert reduced.summary is not None
    assert reduced.summary.endswith("quiet")


def test_a_run_built_from_a_later_read_is_left_alone() -> None:
    runs = [_run(4, _body("newer", seen=200))]
    assert plan_check_run(runs, "pr-digest", HEAD, _body("older"), seen=100).action == "older"


def test_a_summary_over_githubs_limit_is_refused_before_any_call() -> None:
    with pytest.raises(ValueError, match="65535"):
        plan_check_run([], "pr-digest", HEAD, "x" * (SUMMARY_MAX_CHARS + 1))
