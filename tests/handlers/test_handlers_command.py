"""`/digest` commands and label routing through the handlers, on the in-memory fake."""

from __future__ import annotations

from bot.core.render.commands import render_help_table
from bot.core.render.marker import parse_marker
from bot.handlers.command import ALL_COMMANDS, CommentCommandJob, handle_command_comment
from bot.handlers.digest import sync_pull_request
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import BOT, COMPILE_FILES, REPO, UNTESTED_BODY, gh_for, make_ctx, make_state


def _command(state: FakeGitHubState, number: int, author: str, body: str) -> CommentCommandJob:
    comment = state.add_comment(REPO, number, author, body)
    return CommentCommandJob(repo=REPO, number=number, comment_id=comment.id, body=body,
                             author=author)


def _reactions(state: FakeGitHubState, comment_id: int) -> list[str]:
    return [content for _login, content in state.comments[comment_id].reactions]


async def test_maintainer_refresh_posts_digest_and_reacts() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[Doc] typo", files=[FakeFile("docs/a.md")], author="alice")
    state.set_permission(REPO, "maintainer", "write")
    job = _command(state, 1, "maintainer", "/digest")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    assert len(state.bot_comments(REPO, 1, BOT)) == 1  # quiet PR, but asked for
    assert _reactions(state, job.comment_id) == ["eyes", "+1"]


async def test_stranger_is_refused_once_with_a_reason() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", files=COMPILE_FILES, author="alice")
    job = _command(state, 1, "stranger", "/digest mute")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    replies = state.bot_comments(REPO, 1, BOT)
    assert len(replies) == 1
    assert parse_marker(replies[0]) is None  # a reply, not a digest
    assert "mute" in replies[0]
    # Nothing ran, so no 👀 (issue 8: refusals cost as few writes as possible).
    assert _reactions(state, job.comment_id) == ["confused"]


async def test_author_may_refresh_and_switch_language_but_not_mute() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY, files=COMPILE_FILES,
                   author="alice")
    job = _command(state, 1, "alice", "/digest zh\n/digest mute\n")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    digests = [b for b in state.bot_comments(REPO, 1, BOT) if parse_marker(b)]
    replies = [b for b in state.bot_comments(REPO, 1, BOT) if not parse_marker(b)]
    assert len(digests) == 1
    marker = parse_marker(digests[0])
    assert marker is not None
    assert marker.lang == "zh"
    assert not marker.muted
    assert len(replies) == 1


async def test_bot_comment_with_command_triggers_nothing() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", files=COMPILE_FILES)
    comment = state.add_comment(REPO, 1, "other[bot]", "/digest", author_type="Bot")
    job = CommentCommandJob(repo=REPO, number=1, comment_id=comment.id, body="/digest",
                            author="other[bot]", author_type="Bot")
    calls_before = len(state.calls)
    await handle_command_comment(gh_for(state), make_ctx(), job)
    assert len(state.calls) == calls_before
    assert state.bot_comments(REPO, 1, BOT) == []


async def test_help_replies_with_the_generated_table() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")], author="alice")
    job = _command(state, 1, "alice", "/digest help")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    assert state.bot_comments(REPO, 1, BOT) == [render_help_table(ALL_COMMANDS, "en")]


async def test_unknown_subcommand_is_refused_with_pointer_to_help() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")])
    state.set_permission(REPO, "maintainer", "admin")
    job = _command(state, 1, "maintainer", "/digest frobnicate")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    [reply] = state.bot_comments(REPO, 1, BOT)
    assert "help" in reply
    assert _reactions(state, job.comment_id)[-1] == "confused"


async def test_command_storm_is_rate_limited_per_pr() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")])
    state.set_permission(REPO, "maintainer", "write")
    ctx = make_ctx(command_runs_per_minute=2)
    jobs = [_command(state, 1, "maintainer", f"/digest {w}") for w in ("en", "zh", "explain")]
    for job in jobs:
        await handle_command_comment(gh_for(state), ctx, job)
    assert _reactions(state, jobs[-1].comment_id) == ["confused"]


async def test_labeled_pr_requests_pool_reviewers_once_across_reruns() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY, files=COMPILE_FILES,
                   labels=["torch.compile"], author="alice")
    for user in ("ProExpertProg", "zou3519", "youkaichao"):
        state.set_permission(REPO, user, "write")
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    first = list(state.pull(REPO, 1).requested_users)
    await sync_pull_request(gh, ctx, REPO, 1)
    assert len(first) == 2
    assert set(first) <= {"ProExpertProg", "zou3519", "youkaichao"}
    assert state.pull(REPO, 1).requested_users == first
    assert state.count("POST", "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers") == 1
    [body] = state.bot_comments(REPO, 1, BOT)
    assert "torch.compile" in body


async def test_route_on_pr_by_pool_member_skips_the_author() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY, files=COMPILE_FILES,
                   labels=["torch.compile"], author="zou3519")
    for user in ("ProExpertProg", "zou3519", "youkaichao", "maintainer"):
        state.set_permission(REPO, user, "write")
    job = _command(state, 1, "maintainer", "/digest route")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    requested = state.pull(REPO, 1).requested_users
    assert "zou3519" not in requested
    assert set(requested) == {"ProExpertProg", "youkaichao"}


async def test_request_removed_by_a_human_is_not_made_again() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=COMPILE_FILES, labels=["torch.compile"], author="alice")
    for user in ("ProExpertProg", "zou3519", "youkaichao"):
        state.set_permission(REPO, user, "write")
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    removed = pull.requested_users.pop(0)
    pull.head_sha = "f" * 40
    await sync_pull_request(gh, ctx, REPO, 1)
    assert removed not in pull.requested_users


async def test_non_collaborators_in_a_pool_are_skipped_not_fatal() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY, files=COMPILE_FILES,
                   labels=["torch.compile"], author="alice")
    state.set_permission(REPO, "youkaichao", "write")  # the other two are not collaborators
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    assert state.pull(REPO, 1).requested_users == ["youkaichao"]
    assert outcome.digest is not None
    assert outcome.digest.routing is not None
    assert {name for name, _ in outcome.digest.routing.skipped} >= {"ProExpertProg", "zou3519"}


async def test_edited_comment_runs_only_the_commands_it_added() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", body=UNTESTED_BODY, files=COMPILE_FILES,
                   author="alice")
    state.set_permission(REPO, "maintainer", "write")
    job = _command(state, 1, "maintainer", "/digest zh\n/digest mute")
    edited = job.model_copy(
        update={"previous_body": "/digest zh", "body": "/digest zh\n/digest en"}
    )
    await handle_command_comment(gh_for(state), make_ctx(), edited)
    [digest] = [b for b in state.bot_comments(REPO, 1, BOT) if parse_marker(b)]
    marker = parse_marker(digest)
    assert marker is not None
    assert marker.lang == "en"


async def test_a_maintainers_typo_is_answered_with_the_command_meant_and_the_known_ones(
) -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")], author="alice")
    state.set_permission(REPO, "maintainer", "write")
    job = _command(state, 1, "maintainer", "/digest refersh")
    await handle_command_comment(gh_for(state), make_ctx(), job)
    [reply] = state.bot_comments(REPO, 1, BOT)
    assert reply == (
        "- Unknown command `/digest refersh`; see `/digest help`. "
        "Did you mean `/digest refresh`? Known after `/digest`: "
        + ", ".join(f"`{spec.name}`" for spec in ALL_COMMANDS) + ".")
    assert _reactions(state, job.comment_id) == ["confused"]  # nothing ran


async def test_the_authors_typo_is_answered_once_an_hour_a_strangers_never() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")], author="alice")
    ctx = make_ctx()
    first = _command(state, 1, "alice", "/digest explian")
    await handle_command_comment(gh_for(state), ctx, first)
    [reply] = state.bot_comments(REPO, 1, BOT)
    assert "Did you mean `/digest explain`?" in reply
    await handle_command_comment(gh_for(state), ctx, _command(state, 1, "alice", "/digest zhh"))
    stranger = _command(state, 1, "stranger", "/digest refersh")
    await handle_command_comment(gh_for(state), ctx, stranger)
    assert state.bot_comments(REPO, 1, BOT) == [reply]  # capped, and no echo for outsiders


async def test_a_word_nothing_resembles_gets_the_known_commands_without_a_guess() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="x", files=[FakeFile("vllm/a.py")])
    state.set_permission(REPO, "maintainer", "write")
    await handle_command_comment(gh_for(state), make_ctx(),
                                 _command(state, 1, "maintainer", "/digest xyzzy"))
    [reply] = state.bot_comments(REPO, 1, BOT)
    assert "Did you mean" not in reply
    assert "Known after `/digest`: `refresh`, `explain`" in reply
