"""`digest-bot digest OWNER/REPO#N [--post]`: one digest through the API.

Runs the service's own handler, so the CLI shows exactly what the App would post.
Without --post every write is recorded instead of executed (dry-run).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from bot.core.render.contract import digest_json
from bot.core.vocabulary import Lang
from bot.github.dry_run import DryRunGitHub, RecordedWrite
from bot.github.protocol import GitHubAPI, GitHubError, RepositoryArchive
from bot.github.session import GitHubSessionFactory
from bot.handlers.context import HandlerContext
from bot.handlers.digest import Steer, sync_pull_request
from bot.handlers.repo_rules import RulesProvider
from bot.observe.metrics import Metrics
from bot.repo_index.refresh import IndexRefresher, RefreshOutcome
from bot.rulebook.files import read_rule_sources
from bot.settings.model import DEFAULT_BOT_LOGIN, Settings


async def digest_online(
    settings: Settings,
    repo: str,
    number: int,
    *,
    lang: Lang,
    rules_dir: Path,
    post: bool,
    explain: bool,
) -> tuple[str, dict[str, Any]]:
    metrics = Metrics()
    factory = GitHubSessionFactory(settings, metrics)
    rules = RulesProvider(read_rule_sources(rules_dir), config_path=settings.repo_config_path)
    async with await _session(settings, factory, repo) as gh:
        login = settings.bot_login or (
            await factory.bot_login() if settings.has_app_credentials else DEFAULT_BOT_LOGIN
        )
        ctx = HandlerContext(bot_login=login, rules=rules, metrics=metrics, language=lang)
        recorded: list[RecordedWrite] = []

        async def keep(write: RecordedWrite) -> None:
            recorded.append(write)

        target: GitHubAPI = gh if post else DryRunGitHub(gh, keep, login)
        outcome = await sync_pull_request(
            target, ctx, repo, number, Steer(force=True, lang=lang, explain=explain)
        )
    if outcome.digest is None or outcome.markdown is None:
        return f"{repo}#{number} is {outcome.action}: no digest", {"action": outcome.action}
    payload = digest_json(outcome.digest, outcome.markdown)
    payload["action"] = outcome.action
    payload["dry_run_writes"] = [w.action for w in recorded]
    return outcome.markdown, payload


async def _session(
    settings: Settings, factory: GitHubSessionFactory, repo: str
) -> AbstractAsyncContextManager[GitHubAPI]:
    if settings.github_token is not None:
        return factory.for_token()
    if settings.has_app_credentials:
        return factory.for_installation(await factory.installation_for_repo(repo))
    return factory.for_anonymous()


async def build_index_online(settings: Settings, repo: str, db_path: Path) -> RefreshOutcome:
    """`digest-bot index build --repo OWNER/REPO`: the refresh job, run once, now."""
    factory = GitHubSessionFactory(settings, Metrics())
    refresher = IndexRefresher(db_path, max_tarball_bytes=settings.index_max_tarball_bytes)
    async with await _session(settings, factory, repo) as gh:
        if not isinstance(gh, RepositoryArchive):
            raise GitHubError("this GitHub session cannot download archives")
        return await refresher.refresh(gh, repo)
