"""Fuzz the whole command path (parse, permission, budgets, replies, reactions, the
steered digest run) with hostile comments: nothing the bot posts in answer may hold a
live mention, link, image or HTML, and everything it posts must encode as UTF-8
(issue 8, items 1 and 10). On the in-memory fake, so hundreds of comments run in
seconds; tests/e2e/test_e2e_command_security.py drives the real service."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.render.marker import parse_marker
from bot.handlers.command import CommentCommandJob, handle_command_comment
from bot.handlers.repo_rules import RulesProvider
from tests.fakes.github_state import FakeFile
from tests.handler_env import BOT, REPO, gh_for, make_ctx, make_state
from tests.markdown_safety import live_markup

pytestmark = pytest.mark.property

HOSTILE_PIECES = (
    "`", "``", "```", "\\", "\\`", "@alice", "@vllm-project/maintainers", "&#64;bob",
    "&commat;carol", "[login](https://evil.example/login)", "![t](https://evil.example/p.png)",
    "[x]: https://evil.example", "<img src=x onerror=alert(1)>", "<a href=x>", "<!--", "-->",
    "</details>", "https://evil.example", "www.evil.example", "evil.example/a",
    "\u200b", "\u200d", "\u2060", "\ufeff", "\u202e", "\uff20dave", "\uff3bx\uff3d", "＜b＞",
    "\ud800", "\udfff", "\x00", "\x1b[31m", "|", "*", "_", "~", "#123", "GH-1",
    "vllm-project/vllm#1", "1.", "- ", "> ", "\t", " ", "explain", "zh", "mute", "route",
    "help", "refresh", "x",
)
ACTORS = ("stranger", "alice", "maintainer")  # outsider, PR author, write access

word = st.lists(
    st.one_of(st.sampled_from(HOSTILE_PIECES), st.text(max_size=6)), min_size=1, max_size=6,
).map("".join)
line = st.lists(word, min_size=0, max_size=4).map(lambda ws: " ".join(["/digest", *ws]))
comment = st.lists(st.one_of(line, word), min_size=1, max_size=12).map("\n".join)

RULES = make_ctx().rules


async def _run(bodies: list[tuple[str, str]], rules: RulesProvider) -> list[str]:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] x", author="alice",
                   files=[FakeFile("vllm/compilation/backends.py")],
                   labels=["torch.compile"])
    state.set_permission(REPO, "maintainer", "write")
    gh, ctx = gh_for(state), make_ctx(rules=rules)
    for actor, body in bodies:
        posted = state.add_comment(REPO, 1, actor, body)
        await handle_command_comment(gh, ctx, CommentCommandJob(
            repo=REPO, number=1, comment_id=posted.id, body=body, author=actor))
    return state.bot_comments(REPO, 1, BOT)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(ACTORS), comment), min_size=1, max_size=3))
def test_hostile_commands_never_make_the_bot_post_live_markup(
    comments: list[tuple[str, str]],
) -> None:
    for body in asyncio.run(_run(comments, RULES)):
        body.encode("utf-8")  # a lone surrogate would raise here, as it did in httpx
        if parse_marker(body) is not None:
            continue  # the digest itself: built from the PR, see test_hostile_digest.py
        assert live_markup(body) == [], body


def test_the_oracle_would_catch_the_old_reply() -> None:
    # Today's main quoted the word in single backticks: one backtick escaped the span.
    old = "- Unknown command `/digest x`@alice`; see `/digest help`."
    assert "mention" in live_markup(old)
