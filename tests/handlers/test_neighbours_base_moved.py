"""How far the base branch moved since the PR's merge base (issue 42, live state): one
compare call a job, counted in its `neighbours` calls; shown from `BASE_MOVED_SHOWN`
commits; a compare that fails leaves only that line out, never the digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.render.words import BASE_MOVED_SHOWN
from bot.handlers.digest import sync_pull_request
from bot.queue.ledger import Ledger
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import (
    BOT,
    COMPILE_FILES,
    REPO,
    UNTESTED_BODY,
    gh_for,
    make_ctx,
    make_state,
)

COMPARE = "/repos/{owner}/{repo}/compare/{basehead}"
MERGE_BASE = "e" * 40


def _state(moved: int) -> FakeGitHubState:
    state = make_state()
    pull = state.add_pull(REPO, 7, title="Fix a graph break", body=UNTESTED_BODY,
                          files=COMPILE_FILES)
    pull.base_sha = MERGE_BASE
    state.repos[REPO].base_moved[MERGE_BASE] = moved
    return state


async def _sync(state: FakeGitHubState, ledger_path: Path) -> tuple[str, int, int | None]:
    ledger = Ledger(ledger_path)
    try:
        outcome = await sync_pull_request(gh_for(state), make_ctx(open_prs=ledger), REPO, 7)
    finally:
        ledger.close()
    assert outcome.digest is not None
    assert outcome.digest.neighbours is not None
    (body,) = state.bot_comments(REPO, 7, BOT)
    return body, outcome.neighbour_calls, outcome.digest.neighbours.live.base_behind_by


async def test_a_base_moved_far_is_said_and_counted(tmp_path: Path) -> None:
    state = _state(BASE_MOVED_SHOWN + 73)
    body, calls, behind_by = await _sync(state, tmp_path / "ledger.db")
    assert behind_by == BASE_MOVED_SHOWN + 73
    assert f"has moved {BASE_MOVED_SHOWN + 73} commits since this PR's merge base" in body
    assert calls == 1
    (call,) = [c for c in state.calls if c.route == COMPARE]
    assert call.path == f"/repos/{REPO}/compare/{MERGE_BASE}...main"


async def test_a_base_moved_a_little_is_kept_in_the_data_only(tmp_path: Path) -> None:
    body, calls, behind_by = await _sync(_state(BASE_MOVED_SHOWN - 1), tmp_path / "ledger.db")
    assert behind_by == BASE_MOVED_SHOWN - 1
    assert "merge base" not in body
    assert calls == 1


@pytest.mark.parametrize("status", [404, 500])
async def test_a_failing_compare_leaves_the_digest_whole(tmp_path: Path, status: int) -> None:
    state = _state(500)
    state.fail_next("GET", COMPARE, status, times=5)
    body, calls, behind_by = await _sync(state, tmp_path / "failed.db")
    assert behind_by is None
    assert calls == 1
    # Word for word the digest of a base that did not move: only the line is left out.
    unmoved, _, _ = await _sync(_state(0), tmp_path / "unmoved.db")
    assert "verdict=deep-read" in unmoved  # a full digest, not a quiet one
    # (The marker's first line holds the time it was written.)
    assert body.split("\n", 1)[1] == unmoved.split("\n", 1)[1]
