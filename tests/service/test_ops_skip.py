"""Issue 14 item 8: no digest for bot authors or skip labels; a PR that gains a skip label
has its digest reduced like a quiet one. Handlers over the in-memory fake, end state."""

from __future__ import annotations

from bot.core.render.marker import parse_marker
from bot.core.routing.config import RoutingConfig
from bot.handlers.digest import Steer, sync_pull_request
from tests.handler_env import (
    BOT,
    COMPILE_FILES,
    REPO,
    UNTESTED_BODY,
    gh_for,
    make_ctx,
    make_state,
)

OVERRIDE = "routing:\n  skip_labels: [no-digest]\n"


def test_skip_reason_defaults_and_case() -> None:
    config = RoutingConfig(skip_labels=["No-Digest"])
    assert config.skip_reason("dependabot[bot]", (), BOT) == "author dependabot[bot]"
    assert config.skip_reason(BOT.upper(), (), BOT) == f"author {BOT.upper()}"
    assert config.skip_reason("alice", ("no-digest",), BOT) == "label no-digest"
    assert config.skip_reason("alice", ("documentation",), BOT) is None


async def test_a_dependabot_pr_gets_no_digest_and_no_reviewers() -> None:
    state = make_state()
    state.add_pull(REPO, 1, title="[torch.compile] Bump torch", body=UNTESTED_BODY,
                   files=COMPILE_FILES, author="dependabot[bot]", author_type="Bot",
                   labels=["torch.compile"])
    await sync_pull_request(gh_for(state), make_ctx(), REPO, 1)
    assert state.bot_comments(REPO, 1, BOT) == []
    assert state.pull(REPO, 1).requested_users == []


async def test_gaining_a_skip_label_reduces_the_digest_like_a_quiet_one() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": OVERRIDE})
    state.add_pull(REPO, 2, title="[torch.compile] Fix", body=UNTESTED_BODY,
                   files=COMPILE_FILES)
    gh, ctx = gh_for(state), make_ctx()
    first = await sync_pull_request(gh, ctx, REPO, 2)
    assert first.action == "create"
    before = state.bot_comments(REPO, 2, BOT)
    assert "missing-gpu-eval" in before[0]

    state.pull(REPO, 2).labels.append("no-digest")
    await sync_pull_request(gh, ctx, REPO, 2)
    after = state.bot_comments(REPO, 2, BOT)
    assert len(after) == 1
    marker = parse_marker(after[0])
    assert marker is not None
    assert marker.verdict == "quiet"
    assert "missing-gpu-eval" not in after[0]

    # A maintainer's explicit `/digest` still gets the full digest.
    await sync_pull_request(gh, ctx, REPO, 2, Steer(force=True))
    assert "missing-gpu-eval" in state.bot_comments(REPO, 2, BOT)[0]


async def test_a_skip_labelled_pr_gets_no_first_digest() -> None:
    state = make_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": OVERRIDE})
    state.add_pull(REPO, 3, title="[torch.compile] Fix", body=UNTESTED_BODY,
                   files=COMPILE_FILES, labels=["no-digest"])
    await sync_pull_request(gh_for(state), make_ctx(), REPO, 3)
    assert state.bot_comments(REPO, 3, BOT) == []
