"""The digest reads the PR's conversation (in-memory fake GitHub, end state asserted):
evidence posted later settles risks, reviewers' asks are shown once, linked work shows
what it became; bots and outsiders' evidence do not count, and nobody's words go out live."""

from __future__ import annotations

import re

from bot.core.render.conversation import _OWN_COMMENT
from bot.handlers.digest import sync_pull_request
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import (
    BOT,
    COMPILE_FILES,
    REPO,
    UNTESTED_BODY,
    gh_for,
    make_ctx,
    make_state,
)
from tests.markdown_safety import live_markup

LM_EVAL = (
    "Numbers on H100:\n\n"
    "|Tasks|Version|Filter|n-shot|Metric|Value|Stderr|\n"
    "|-----|------:|------|-----:|------|----:|-----:|\n"
    "|gsm8k|3|strict-match|5|exact_match|0.7801|± 0.0114|\n"
)
SOURCE_ONLY = [FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                        patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n")]
DOCUMENTED_BODY = (
    "## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
)
REVIEWS = "/repos/{owner}/{repo}/pulls/{number}/reviews"


def _digest(state: FakeGitHubState, number: int) -> str:
    (body,) = state.bot_comments(REPO, number, BOT)
    return body


def _writes(state: FakeGitHubState) -> list[str]:
    return [c.method for c in state.calls if c.method in ("POST", "PATCH", "DELETE")
            and "/issues/" in c.path and "labels" not in c.path]


async def test_lm_eval_numbers_posted_later_by_the_author_clear_missing_gpu_eval() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
                   files=COMPILE_FILES, author="author")
    gh, ctx = gh_for(state), make_ctx()
    first = await sync_pull_request(gh, ctx, REPO, 1)
    assert first.digest is not None
    assert "missing-gpu-eval" in {r.id for r in first.digest.risks}

    posted = state.add_comment(REPO, 1, "author", LM_EVAL)
    second = await sync_pull_request(gh, ctx, REPO, 1)
    third = await sync_pull_request(gh, ctx, REPO, 1)

    assert second.digest is not None
    assert "missing-gpu-eval" not in {r.id for r in second.digest.risks}
    (later,) = second.digest.later_evidence
    assert (later.risk, later.outcome, later.by) == ("missing-gpu-eval", "cleared", "author")
    assert later.url == f"https://github.com/{REPO}/pull/1#issuecomment-{posted.id}"
    body = _digest(state, 1)
    assert "**missing-gpu-eval** cleared by @\u2060author" in body
    assert f"[comment]({later.url})" in body
    # Created once, edited once, and the unchanged third run wrote nothing.
    assert (second.action, third.action) == ("update", "noop")
    assert _writes(state) == ["POST", "PATCH"]


async def test_an_outsiders_numbers_do_not_count_a_maintainers_do() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
                   files=COMPILE_FILES, author="author")
    state.add_comment(REPO, 1, "passerby", LM_EVAL)
    gh, ctx = gh_for(state), make_ctx()
    outcome = await sync_pull_request(gh, ctx, REPO, 1)
    assert outcome.digest is not None
    assert "missing-gpu-eval" in {r.id for r in outcome.digest.risks}

    state.set_permission(REPO, "maint", "write")
    state.add_review(REPO, 1, "maint", "COMMENTED", body=LM_EVAL)
    outcome = await sync_pull_request(gh, ctx, REPO, 1)
    assert outcome.digest is not None
    assert "missing-gpu-eval" not in {r.id for r in outcome.digest.risks}
    assert [e.by for e in outcome.digest.later_evidence] == ["maint"]


async def test_a_review_asking_for_tests_is_one_open_ask_and_no_missing_tests_item() -> None:
    state = make_state()
    state.add_pull(REPO, 2, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
                   files=SOURCE_ONLY, author="author")
    gh, ctx = gh_for(state), make_ctx()
    before = await sync_pull_request(gh, ctx, REPO, 2)
    assert before.digest is not None
    assert "missing-tests" in {r.id for r in before.digest.risks}

    state.set_permission(REPO, "reviewer", "write")
    review = state.add_review(REPO, 2, "reviewer", "CHANGES_REQUESTED",
                              body="Looks fine overall. Can you add a unit test for this path?")
    outcome = await sync_pull_request(gh, ctx, REPO, 2)
    assert outcome.digest is not None
    (ask,) = outcome.digest.asks
    assert (ask.kind, ask.by, ask.status, ask.risk, ask.access) == (
        "tests", "reviewer", "open", "missing-tests", "write")
    assert "missing-tests" not in {r.id for r in outcome.digest.risks}
    body = _digest(state, 2)
    assert "**missing-tests**" not in body
    assert "**tests** — asked by @\u2060reviewer — open" in body
    assert f"#pullrequestreview-{review.id})" in body

    state.add_comment(REPO, 2, "author", "Added a unit test in tests/entrypoints/test_chat.py.")
    outcome = await sync_pull_request(gh, ctx, REPO, 2)
    assert outcome.digest is not None
    (ask,) = outcome.digest.asks
    assert (ask.status, ask.answered_by) == ("answered", "reply")
    assert "**tests** — asked by @\u2060reviewer — answered ([reply](" in _digest(state, 2)


async def test_a_promise_is_not_an_answer_and_a_thread_reply_is() -> None:
    state = make_state()
    state.add_pull(REPO, 3, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
                   files=SOURCE_ONLY, author="author")
    root = state.add_review_comment(REPO, 3, "reviewer", "Please add a test for this branch.")
    state.add_comment(REPO, 3, "author", "Will add tests later.")
    gh, ctx = gh_for(state), make_ctx()
    outcome = await sync_pull_request(gh, ctx, REPO, 3)
    assert outcome.digest is not None
    assert [a.status for a in outcome.digest.asks] == ["open"]

    state.add_review_comment(REPO, 3, "author", "Done, see the new case.", in_reply_to=root.id)
    outcome = await sync_pull_request(gh, ctx, REPO, 3)
    assert outcome.digest is not None
    assert [(a.status, a.answered_by) for a in outcome.digest.asks] == [("answered", "reply")]


async def test_bots_and_the_author_ask_nothing() -> None:
    state = make_state()
    state.add_pull(REPO, 4, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
                   files=SOURCE_ONLY, author="author")
    state.add_comment(REPO, 4, "mergify[bot]", "Please rebase: this PR has merge conflicts.",
                      author_type="Bot")
    state.add_review(REPO, 4, "gemini-code-assist[bot]", "COMMENTED",
                     body="Could you add unit tests for the new path?", author_type="Bot")
    state.add_comment(REPO, 4, "author", "Can you review? I should add tests too.")
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 4)
    assert outcome.digest is not None
    assert outcome.digest.asks == ()
    assert "missing-tests" in {r.id for r in outcome.digest.risks}


async def test_a_superseded_closed_prs_title_state_and_objection_appear() -> None:
    state = make_state()
    old = state.add_pull(REPO, 30, title="Wrap at the processor layer", author="author",
                         state="closed")
    state.add_comment(REPO, 30, "passerby", "Why not merge this? It works for me.")
    state.set_permission(REPO, "maint", "maintain")
    state.add_review(REPO, 30, "maint", "CHANGES_REQUESTED",
                     body="> wrap it\n\nWe should not wrap at the processor layer. Move it down.")
    state.add_comment(REPO, 30, "someone", "Sad to see this closed.")
    assert not old.merged
    state.add_pull(REPO, 31, title="[torch.compile] Fix", author="author",
                   body="Supersedes #30.\n" + UNTESTED_BODY, files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    outcome = await sync_pull_request(gh, ctx, REPO, 31)
    assert outcome.digest is not None
    (link,) = outcome.digest.links
    assert (link.title, link.state, link.objection, link.objection_by) == (
        "Wrap at the processor layer", "closed",
        "We should not wrap at the processor layer.", "maint")
    assert ("- supersedes \\#\u206030 (Wrap at the processor layer) — closed unmerged · "
            "@\u2060maint: “We should not wrap at the processor layer.”") in _digest(state, 31)

    reads = len(state.calls)
    await sync_pull_request(gh, ctx, REPO, 31)
    # The linked PR and its objection are cached: no read of #30 again.
    assert not [c for c in state.calls[reads:] if "/30" in c.path]


async def test_routing_reuses_the_reviews_the_digest_listed() -> None:
    state = make_state()
    state.add_pull(REPO, 5, title="[torch.compile] Fix", body=UNTESTED_BODY,
                   files=COMPILE_FILES, labels=["torch.compile"], author="author")
    for login in ("ProExpertProg", "zou3519", "youkaichao"):
        state.set_permission(REPO, login, "write")
    await sync_pull_request(gh_for(state), make_ctx(), REPO, 5)
    assert state.count("GET", REVIEWS) == 1


async def test_switched_off_it_reads_no_reviews_or_review_comments() -> None:
    state = make_state()
    state.add_pull(REPO, 6, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
                   files=SOURCE_ONLY, author="author")
    state.add_review(REPO, 6, "reviewer", "COMMENTED", body="Can you add a unit test?")
    outcome = await sync_pull_request(gh_for(state), make_ctx(read_conversation=False), REPO, 6)
    assert outcome.digest is not None
    assert outcome.digest.asks == ()
    assert state.count("GET", REVIEWS) == 0
    assert state.count("GET", "/repos/{owner}/{repo}/pulls/{number}/comments") == 0


async def test_nothing_an_outsider_wrote_goes_out_live() -> None:
    state = make_state()
    state.add_pull(REPO, 7, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
                   files=SOURCE_ONLY, author="author")
    hostile = ("@vllm-project/maintainers please add tests <img src=x onerror=alert(1)> "
               "[click](https://evil.example) #1234 ![x](https://evil.example/a.png) "
               "https://evil.example `code` <!-- -->")
    state.add_comment(REPO, 7, "evil-user", hostile)
    state.add_review_comment(REPO, 7, "evil-user", "Could you share benchmark numbers? "
                             "<details><summary>x</summary></details> @someone")
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7)
    assert outcome.digest is not None
    assert {a.kind for a in outcome.digest.asks} == {"tests", "numbers"}
    body = _digest(state, 7)
    section = body[body.index("**Since the description**"):]
    section = section[:section.index("\n\n")]
    own = re.compile(r"\[(?:comment|review|review comment|reply)\]\(" + _OWN_COMMENT.pattern
                     + r"\)")
    assert own.search(section)
    assert live_markup(own.sub("", section)) == []
