"""The digest handler against the shared in-memory fake: assert GitHub's end state."""

from __future__ import annotations

from datetime import timedelta

from bot.core.render.marker import parse_marker
from bot.handlers.digest import Steer, sync_pull_request
from tests.fakes.github_state import FakeFile
from tests.handler_env import (
    BOT,
    COMPILE_FILES,
    REPO,
    UNTESTED_BODY,
    gh_for,
    make_ctx,
    make_state,
)


async def test_first_run_creates_one_digest_with_areas_and_risks() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
                   files=COMPILE_FILES)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    bodies = state.bot_comments(REPO, 1, BOT)
    assert outcome.action == "create"
    assert len(bodies) == 1
    marker = parse_marker(bodies[0])
    assert marker is not None
    assert marker.head_sha == state.pull(REPO, 1).head_sha
    assert outcome.digest is not None
    assert "compile" in {a.id for a in outcome.digest.areas}
    assert "missing-gpu-eval" in {r.id for r in outcome.digest.risks}
    assert "**missing-gpu-eval**" in bodies[0]


async def test_rerun_without_change_writes_nothing() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY, files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    writes_before = sum(1 for c in state.calls if c.method in ("POST", "PATCH", "DELETE"))
    second = await sync_pull_request(gh, ctx, REPO, 1)
    writes_after = sum(1 for c in state.calls if c.method in ("POST", "PATCH", "DELETE"))
    assert second.action == "noop"
    assert writes_after == writes_before


async def test_new_head_updates_the_same_comment_and_keeps_ticks() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY,
                          files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    comment = state.comments_on(REPO, 1)[0]
    comment.body = comment.body.replace("- [ ] **missing-gpu-eval**", "- [x] **missing-gpu-eval**")
    pull.head_sha = "b" * 40
    outcome = await sync_pull_request(gh, ctx, REPO, 1)
    bodies = state.bot_comments(REPO, 1, BOT)
    assert outcome.action == "update"
    assert len(bodies) == 1
    assert "b" * 40 in bodies[0].splitlines()[0]
    assert "- [x] **missing-gpu-eval**" in bodies[0]


async def test_a_read_older_than_the_shown_digest_never_puts_its_head_back() -> None:
    # A run read the PR at head Y; meanwhile another run wrote head Z's digest, from a
    # later read: the first run's digest is not written over it.
    state = make_state()
    pull = state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY,
                          files=COMPILE_FILES, head_sha="c" * 40)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    shown = parse_marker(state.bot_comments(REPO, 1, BOT)[0])
    assert shown is not None
    assert shown.seen == int(pull.updated_at.timestamp())
    pull.head_sha, pull.updated_at = "b" * 40, pull.updated_at - timedelta(minutes=1)
    outcome = await sync_pull_request(gh, ctx, REPO, 1)
    assert outcome.action == "older"
    assert parse_marker(state.bot_comments(REPO, 1, BOT)[0]) == shown
    pull.updated_at += timedelta(minutes=2)  # a later read, of whatever head: written
    assert (await sync_pull_request(gh, ctx, REPO, 1)).action == "update"
    again = parse_marker(state.bot_comments(REPO, 1, BOT)[0])
    assert again is not None
    assert again.head_sha == "b" * 40


async def test_duplicates_from_racing_replicas_collapse_to_the_oldest() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY, files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 1)
    first = state.comments_on(REPO, 1)[0]
    state.add_comment(REPO, 1, BOT, first.body)
    await sync_pull_request(gh, ctx, REPO, 1)
    assert [c.id for c in state.comments_on(REPO, 1)] == [first.id]


async def test_another_bots_copy_of_the_marker_is_never_touched() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY, files=COMPILE_FILES)
    impostor = state.add_comment(REPO, 1, "other-bot[bot]",
                                 "<!-- pr-digest v1 sha= rules=x lang=en verdict=read risk=none -->"
                                 "\nnot ours", author_type="Bot")
    await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    assert state.comments[impostor.id].body.endswith("not ours")
    assert len(state.bot_comments(REPO, 1, BOT)) == 1


async def test_docs_only_pr_gets_no_comment_unless_asked() -> None:
    state = make_state()
    state.add_pull(REPO, 2, title="[Doc] Fix typo", files=[FakeFile("docs/usage/faq.md")])
    gh, ctx = gh_for(state), make_ctx()
    quiet = await sync_pull_request(gh, ctx, REPO, 2)
    assert quiet.action == "noop"
    assert state.bot_comments(REPO, 2, BOT) == []
    forced = await sync_pull_request(gh, ctx, REPO, 2, Steer(force=True))
    assert forced.action == "create"
    assert len(state.bot_comments(REPO, 2, BOT)) == 1


async def test_pr_turning_quiet_neutralizes_the_existing_comment() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 3, title="[torch.compile] Fix", body=UNTESTED_BODY,
                          files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 3)
    pull.title = "[Doc] Only docs now"
    pull.files = [FakeFile("docs/index.md")]
    pull.head_sha = "c" * 40
    outcome = await sync_pull_request(gh, ctx, REPO, 3)
    [body] = state.bot_comments(REPO, 3, BOT)
    assert outcome.action == "update"
    assert "missing-gpu-eval" not in body
    marker = parse_marker(body)
    assert marker is not None
    assert marker.verdict == "quiet"


async def test_drafts_are_skipped_until_forced() -> None:
    state = make_state()
    state.add_pull(REPO, 4, title="[torch.compile] WIP", files=COMPILE_FILES, draft=True)
    gh, ctx = gh_for(state), make_ctx()
    assert (await sync_pull_request(gh, ctx, REPO, 4)).action == "draft"
    assert state.bot_comments(REPO, 4, BOT) == []
    assert (await sync_pull_request(gh, ctx, REPO, 4, Steer(force=True))).action == "create"


async def test_closed_pr_is_left_alone() -> None:
    state = make_state()
    state.add_pull(REPO, 5, title="[torch.compile] Old", files=COMPILE_FILES, state="closed")
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 5)
    assert outcome.action == "closed"
    assert state.comments_on(REPO, 5) == []


async def test_mute_stops_automatic_updates_and_unmute_resumes() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 6, title="[torch.compile] Fix", body=UNTESTED_BODY,
                          files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 6, Steer(muted=True))
    [muted_body] = state.bot_comments(REPO, 6, BOT)
    pull.head_sha = "d" * 40
    assert (await sync_pull_request(gh, ctx, REPO, 6)).action == "muted"
    assert state.bot_comments(REPO, 6, BOT) == [muted_body]
    await sync_pull_request(gh, ctx, REPO, 6, Steer(force=True, muted=False))
    [body] = state.bot_comments(REPO, 6, BOT)
    assert "d" * 40 in body.splitlines()[0]
    marker = parse_marker(body)
    assert marker is not None
    assert not marker.muted


async def test_language_choice_is_kept_for_later_updates() -> None:
    state = make_state()
    pull = state.add_pull(REPO, 7, title="[torch.compile] Fix", body=UNTESTED_BODY,
                          files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    await sync_pull_request(gh, ctx, REPO, 7, Steer(force=True, lang="zh"))
    pull.head_sha = "e" * 40
    outcome = await sync_pull_request(gh, ctx, REPO, 7)
    assert outcome.digest is not None
    assert outcome.digest.lang == "zh"


async def test_invalid_repo_config_keeps_bundled_rules_and_says_so() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": "areas: [{id: x, bogus: 1}]\n"})
    state.add_pull(REPO, 8, title="[torch.compile] Fix", body=UNTESTED_BODY, files=COMPILE_FILES)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 8)
    assert outcome.digest is not None
    assert "compile" in {a.id for a in outcome.digest.areas}
    assert [note.id for note in outcome.digest.notes] == ["repo-config-invalid"]
    assert "pr-digest.yml" in outcome.digest.notes[0].text


async def test_repo_config_can_disable_an_area() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": "disable: [compile]\n"})
    state.add_pull(REPO, 9, title="Fix", body=UNTESTED_BODY, files=COMPILE_FILES)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 9)
    assert outcome.digest is not None
    assert "compile" not in {a.id for a in outcome.digest.areas}
    assert outcome.digest.notes == ()


async def test_linked_work_is_read_at_most_three_per_job_and_cached() -> None:
    state = make_state()
    for number, title in ((11, "Old approach"), (12, "First part"), (13, "Base"), (14, "Extra")):
        state.add_pull(REPO, number, title=title, body="", files=COMPILE_FILES)
    state.pull(REPO, 12).state = "closed"
    state.pull(REPO, 12).merged = True
    state.add_issue(REPO, 99, "Crash on start", state="closed")
    body = (
        "Supersedes #11. Follow-up to #12 and #13. Part of #14. Fixes #99.\n\n"
        + UNTESTED_BODY
    )
    state.add_pull(REPO, 20, title="[torch.compile] Fix", body=body, files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()

    def issue_reads() -> list[str]:
        return [c.path for c in state.calls
                if c.method == "GET" and c.route == "/repos/{owner}/{repo}/issues/{number}"]

    outcome = await sync_pull_request(gh, ctx, REPO, 20)
    assert outcome.digest is not None
    read = {(link.kind, link.number): (link.title, link.state) for link in outcome.digest.links}
    # Three reads, most telling links first: #11, #99 and #12; the rest wait for a later job.
    assert read == {("supersedes", 11): ("Old approach", "open"),
                    ("fixes", 99): ("Crash on start", "closed"),
                    ("follow-up", 12): ("First part", "merged"),
                    ("follow-up", 13): ("", ""), ("part-of", 14): ("", "")}
    assert sorted(issue_reads()) == [f"/repos/{REPO}/issues/{n}" for n in (11, 12, 99)]
    (comment,) = state.bot_comments(REPO, 20, BOT)
    assert "- supersedes \\#\u206011 (Old approach) — open" in comment
    assert "- fixes \\#\u206099 (Crash on start) — closed" in comment
    assert "- follow-up to \\#\u206012 (First part) — merged" in comment

    await sync_pull_request(gh, ctx, REPO, 20)
    # What was read is cached; the ones left over are read now.
    assert sorted(issue_reads()).count(f"/repos/{REPO}/issues/11") == 1
    assert f"/repos/{REPO}/issues/13" in issue_reads()
    assert f"/repos/{REPO}/issues/14" in issue_reads()


async def test_an_unreadable_linked_pr_leaves_the_number_and_the_digest_posts() -> None:
    state = make_state()
    state.add_pull(REPO, 20, title="[torch.compile] Fix", body="Depends on #77.\n" + UNTESTED_BODY,
                   files=COMPILE_FILES)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 20)
    assert outcome.action == "create"
    assert outcome.digest is not None
    assert [(link.number, link.title) for link in outcome.digest.links] == [(77, "")]
    (comment,) = state.bot_comments(REPO, 20, BOT)
    assert "depends on \\#\u206077" in comment


async def test_a_failing_title_read_is_not_cached_and_does_not_fail_the_job() -> None:
    state = make_state()
    state.add_pull(REPO, 11, title="Old approach", body="", files=COMPILE_FILES)
    state.add_pull(REPO, 20, title="[torch.compile] Fix", body="Supersedes #11.\n" + UNTESTED_BODY,
                   files=COMPILE_FILES)
    state.fail_next("GET", f"/repos/{REPO}/issues/11", 502)
    gh, ctx = gh_for(state), make_ctx()
    first = await sync_pull_request(gh, ctx, REPO, 20)
    assert first.action == "create"
    assert first.digest is not None
    assert [link.title for link in first.digest.links] == [""]
    second = await sync_pull_request(gh, ctx, REPO, 20)
    assert second.digest is not None
    assert [link.title for link in second.digest.links] == ["Old approach"]
