"""What every handler needs, built once by the service and passed in (never global)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cachetools import TTLCache

from bot.core.commands.permissions import (
    HOUR_SECONDS,
    OUTSIDER_REPLIES_PER_HOUR,
    REFUSAL_REACTIONS_PER_HOUR,
    CommandBudget,
    Permission,
)
from bot.core.vocabulary import Delivery, Lang
from bot.github.protocol import GitHubAPI
from bot.handlers.converged import ConvergedSink
from bot.handlers.neighbours import OpenPrStore
from bot.handlers.repo_config import RepoConfigCache
from bot.handlers.repo_rules import RulesProvider
from bot.observe.metrics import Metrics
from bot.repo_index.lookup import IndexLookup

if TYPE_CHECKING:
    from bot.handlers.writing import Writer


def _ttl_cache(ttl: float) -> TTLCache[str, object]:
    # Per-process caches for facts that change slowly (permissions, review load).
    return TTLCache(maxsize=10_000, ttl=ttl)


@dataclass
class HandlerContext:
    bot_login: str
    rules: RulesProvider
    metrics: Metrics
    language: Lang = "en"
    # Where the digest goes (DIGEST_DELIVERY); a repository's override may say otherwise.
    delivery: Delivery = "comment"
    skip_drafts: bool = True
    command_runs_per_minute: int = 6
    uncertain_write_recheck_seconds: float = 15.0
    clock: Callable[[], float] = time.monotonic
    index: IndexLookup | None = None  # the default branch's symbol index, when kept
    # Told about every digest job's result (the label view's store); None: nobody listens.
    on_converged: ConvergedSink | None = None
    permissions: TTLCache[str, object] = field(default_factory=lambda: _ttl_cache(600.0))
    review_load: TTLCache[str, object] = field(default_factory=lambda: _ttl_cache(600.0))
    # Per repository, the reviewers GitHub refused to be asked (lost access, left).
    refused_reviewers: TTLCache[str, object] = field(
        default_factory=lambda: _ttl_cache(3600.0))
    # Read the PR's reviews and review comments (asks, evidence posted later) besides
    # the comments every job lists; DIGEST_READ_CONVERSATION.
    read_conversation: bool = True
    # What the PRs and issues a description links to are now (title, state, a superseded
    # PR's objection), per linking repository: every digest of a PR would read them again.
    linked: TTLCache[str, object] = field(default_factory=lambda: _ttl_cache(900.0))
    # The repository's own config (CI, CODEOWNERS, Mergify) read at each PR's base.
    repo_configs: RepoConfigCache = field(default_factory=RepoConfigCache)
    # The open PRs' records (the ledger): a digest names the PRs it overlaps (issue 42);
    # None: the part is left out.
    open_prs: OpenPrStore | None = None
    # The CI pipeline's own status context on a PR's head ("" : statuses are not read).
    ci_status_context: str = "buildkite/ci/pr"
    # The language-model writer (issue 41); None: off (DIGEST_WRITER_URL unset).
    writer: Writer | None = None
    # Maintainers' commands and everyone else's are budgeted apart: outsiders can never
    # spend (and so deny) a maintainer's budget (issue 8, item 3).
    command_budget: CommandBudget = field(init=False)
    outsider_command_budget: CommandBudget = field(init=False)
    outsider_replies: CommandBudget = field(init=False)
    refusal_reactions: CommandBudget = field(init=False)

    def __post_init__(self) -> None:
        self.command_budget = CommandBudget(self.command_runs_per_minute, self.clock)
        self.outsider_command_budget = CommandBudget(self.command_runs_per_minute, self.clock)
        self.outsider_replies = CommandBudget(
            OUTSIDER_REPLIES_PER_HOUR, self.clock, window_seconds=HOUR_SECONDS)
        self.refusal_reactions = CommandBudget(
            REFUSAL_REACTIONS_PER_HOUR, self.clock, window_seconds=HOUR_SECONDS)


def cached_permission(ctx: HandlerContext, repo: str, user: str) -> Permission | None:
    """The collaborator permission read for (repo, login) in the last ten minutes, if any."""
    cached = ctx.permissions.get(f"{repo}:{user.casefold()}")
    return cached if isinstance(cached, str) else None  # type: ignore[return-value]


async def permission_of(gh: GitHubAPI, ctx: HandlerContext, repo: str, user: str) -> Permission:
    """Collaborator permission, cached: routing and commands ask for the same people."""
    cached = cached_permission(ctx, repo, user)
    if cached is not None:
        return cached
    permission = await gh.get_permission(repo, user)
    ctx.permissions[f"{repo}:{user.casefold()}"] = permission
    return permission
