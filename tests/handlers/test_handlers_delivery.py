"""DIGEST_DELIVERY against the shared in-memory fake: a check run instead of (or beside)
the sticky comment, one per head, edited in place."""

from __future__ import annotations

from bot.core.render.check_run import CHECK_NAME
from bot.core.render.marker import parse_marker
from bot.handlers.digest import Steer, sync_pull_request
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


def _pr(state: FakeGitHubState) -> None:
    state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY, files=COMPILE_FILES)


async def test_check_delivery_writes_a_neutral_run_and_no_comment() -> None:
    state = make_state()
    _pr(state)
    outcome = await sync_pull_request(gh_for(state), make_ctx(delivery="check"), REPO, 1)
    head = state.pull(REPO, 1).head_sha
    runs = state.check_runs_for(REPO, head, CHECK_NAME)
    assert outcome.action == "create"
    assert state.comments_on(REPO, 1) == []
    assert len(runs) == 1
    assert (runs[0].status, runs[0].conclusion) == ("completed", "neutral")
    assert "**missing-gpu-eval**" in runs[0].summary
    marker = parse_marker(runs[0].summary)
    assert marker is not None
    assert marker.head_sha == head
    assert 0 < len(runs[0].title) <= 120
    assert "\n" not in runs[0].title


async def test_a_rerun_changes_nothing_and_a_new_head_gets_its_own_run() -> None:
    state = make_state()
    _pr(state)
    gh, ctx = gh_for(state), make_ctx(delivery="check")
    await sync_pull_request(gh, ctx, REPO, 1)
    again = await sync_pull_request(gh, ctx, REPO, 1)
    assert again.action == "noop"
    assert len(state.check_runs) == 1
    first_head = state.pull(REPO, 1).head_sha
    state.pull(REPO, 1).head_sha = "e" * 40
    pushed = await sync_pull_request(gh, ctx, REPO, 1)
    assert pushed.action == "create"
    assert len(state.check_runs_for(REPO, "e" * 40, CHECK_NAME)) == 1
    assert len(state.check_runs_for(REPO, first_head, CHECK_NAME)) == 1
    assert state.comments_on(REPO, 1) == []


async def test_a_changed_digest_updates_the_heads_run_in_place() -> None:
    state = make_state()
    _pr(state)
    gh, ctx = gh_for(state), make_ctx(delivery="check")
    await sync_pull_request(gh, ctx, REPO, 1)
    (run,) = state.check_runs.values()
    outcome = await sync_pull_request(gh, ctx, REPO, 1, Steer(force=True, lang="zh"))
    assert outcome.action == "update"
    assert list(state.check_runs) == [run.id]
    marker = parse_marker(state.check_runs[run.id].summary)
    assert marker is not None
    assert marker.lang == "zh"
    # The language a command chose is remembered by the run's marker, as by a comment's.
    await sync_pull_request(gh, ctx, REPO, 1)
    remembered = parse_marker(state.check_runs[run.id].summary)
    assert remembered is not None
    assert remembered.lang == "zh"


async def test_both_writes_the_comment_and_the_run() -> None:
    state = make_state()
    _pr(state)
    await sync_pull_request(gh_for(state), make_ctx(delivery="both"), REPO, 1)
    assert len(state.bot_comments(REPO, 1, BOT)) == 1
    assert len(state.check_runs) == 1


async def test_a_comment_posted_before_is_kept_current_not_duplicated() -> None:
    state = make_state()
    _pr(state)
    gh = gh_for(state)
    await sync_pull_request(gh, make_ctx(), REPO, 1)
    state.pull(REPO, 1).head_sha = "e" * 40
    await sync_pull_request(gh, make_ctx(delivery="check"), REPO, 1)
    bodies = state.bot_comments(REPO, 1, BOT)
    assert len(bodies) == 1
    assert "e" * 40 in bodies[0].splitlines()[0]
    assert len(state.check_runs) == 1


async def test_another_apps_run_of_that_name_is_never_touched() -> None:
    state = make_state()
    _pr(state)
    head = state.pull(REPO, 1).head_sha
    foreign = state.create_check_run(REPO, "someone-else", {
        "name": CHECK_NAME, "head_sha": head, "output": {"title": "t", "summary": "theirs"}})
    await sync_pull_request(gh_for(state), make_ctx(delivery="check"), REPO, 1)
    assert state.check_runs[foreign.id].summary == "theirs"
    assert len(state.check_runs) == 2


async def test_the_repositorys_override_chooses_the_delivery() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": "delivery: check\n"})
    _pr(state)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    assert outcome.action == "create"
    assert state.comments_on(REPO, 1) == []
    assert len(state.check_runs) == 1


async def test_a_bad_delivery_in_the_override_is_named_and_the_setting_holds() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": "delivery: pigeon\n"})
    _pr(state)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    assert state.check_runs == {}
    bodies = state.bot_comments(REPO, 1, BOT)
    assert len(bodies) == 1
    assert outcome.digest is not None
    assert any("delivery" in note.text for note in outcome.digest.notes)
