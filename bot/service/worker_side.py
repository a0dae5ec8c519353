"""The service's worker side: rules, GitHub sessions, handlers, the job worker and the
credential check. Importing and building it takes most of a second (githubkit's API
schemas, the rules engine and its RE2 patterns), so bot.service.wiring imports this module on
its start-up thread after the port is open, never before: the intake only needs the
settings, the store and the metrics."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from bot.db.url import redact_url
from bot.github.protocol import GitHubError
from bot.github.session import GitHubSessionFactory
from bot.handlers.context import HandlerContext
from bot.handlers.processor import JobProcessor
from bot.handlers.repo_rules import RulesProvider
from bot.handlers.writer import WriterService
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.ledger import LedgerStore
from bot.queue.store import ServiceStore
from bot.queue.worker_thread import WorkerThread
from bot.queue.writer_cache import WriterCacheStore
from bot.repo_index.lookup import IndexLookup
from bot.repo_index.refresh import IndexRefresher
from bot.rulebook.files import read_rule_sources
from bot.service.credentials import CredentialCheck
from bot.settings.model import DEFAULT_BOT_LOGIN, Settings
from bot.view.recorder import DigestRecorder
from bot.view.store import DigestStore

log = logging.getLogger("bot.service.wiring")

PRUNE_AFTER_SECONDS = 7 * 86400


@dataclass
class WorkerSide:
    runner: WorkerThread
    processor: JobProcessor
    credentials: CredentialCheck | None = None
    # Coroutines to run on the server's loop while it serves (the credential check).
    background: list[Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=list)

    def not_ready_reason(self) -> str | None:
        return self.credentials.reason if self.credentials is not None else None

    def close(self) -> None:
        if self.processor.index_lookup is not None:
            self.processor.index_lookup.close()


def build_worker_side(
    settings: Settings, store: ServiceStore, ledger: LedgerStore, digests: DigestStore,
    metrics: Metrics, writings: WriterCacheStore | None = None,
) -> WorkerSide:
    """Raises RuleFileError or OSError on rules that cannot be loaded."""
    rules = RulesProvider(
        read_rule_sources(settings.rules_dir), config_path=settings.repo_config_path
    )
    factory = GitHubSessionFactory(settings, metrics)
    ctx = HandlerContext(
        bot_login=settings.bot_login or DEFAULT_BOT_LOGIN,
        rules=rules,
        metrics=metrics,
        language=settings.language,
        delivery=settings.delivery,
        skip_drafts=settings.skip_drafts,
        read_conversation=settings.read_conversation,
        command_runs_per_minute=rules.bundled.routing.commands_per_minute,
        uncertain_write_recheck_seconds=settings.uncertain_write_recheck_seconds,
        on_converged=DigestRecorder(digests),
        open_prs=ledger,
        ci_status_context=settings.ci_status_context.strip(),
        writer=build_writer(settings, writings) if writings is not None else None,
    )
    refresher = None
    if settings.index_enabled:
        ctx.index = IndexLookup(settings.db_path)
        refresher = IndexRefresher(
            settings.db_path, max_tarball_bytes=settings.index_max_tarball_bytes
        )
    processor = JobProcessor(settings, factory, ctx, store, ledger, refresher)

    async def learn_identity() -> None:
        # The bot's login (for finding its own comments and ignoring its own events)
        # comes from GET /app; without it the service must not write anything.
        if settings.bot_login is None and settings.has_app_credentials:
            try:
                ctx.bot_login = await factory.bot_login()
                settings.bot_login = ctx.bot_login
            except GitHubError as exc:
                log.error("cannot read GET /app yet (%s); using %s", exc, ctx.bot_login)

    first_sweep = True

    async def reconcile() -> None:
        nonlocal first_sweep
        await learn_identity()
        if first_sweep and not settings.reconcile_on_startup:
            first_sweep = False
            return
        first_sweep = False
        await processor.sweep()

    async def prune() -> None:
        await store.prune(time.time() - PRUNE_AFTER_SECONDS)

    periodic: list[tuple[float, Callable[[], Coroutine[Any, Any, object]]]] = [
        (settings.reconcile_interval_seconds, reconcile), (3600.0, prune)]
    if refresher is not None and settings.postgres_url is not None:
        # Replicas share the queue but each keeps its own index (docs/architecture.md).
        periodic.append((settings.index_sync_seconds, processor.sync_indexes))
    worker = Worker(
        store, processor, metrics,
        concurrency=settings.workers,
        # An expired lease is noticed within half a lease.
        lease_check_interval=min(30.0, settings.lease_seconds / 2),
        heartbeat_interval=settings.lease_seconds / 3,
        lease_seconds=settings.lease_seconds,
        periodic=periodic,
    )
    side = WorkerSide(WorkerThread(worker), processor)
    if settings.has_app_credentials:
        side.credentials = CredentialCheck(settings, factory)
        side.background.append(side.credentials.run)
    return side


def build_writer(settings: Settings, writings: WriterCacheStore) -> WriterService | None:
    """The language-model writer (issue 41) when DIGEST_WRITER_URL and _MODEL are set;
    None leaves every digest as the rules write it. Its client library is imported only
    then."""
    if settings.writer_url is None or settings.writer_model is None:
        return None
    from bot.core.writer.packet import Packet
    from bot.core.writer.request import WriterRequest
    from bot.core.writer.result import WriterResult
    from bot.writer.client import Endpoint, write

    key = settings.writer_api_key
    endpoint = Endpoint(settings.writer_url, key.get_secret_value() if key else None,
                        settings.writer_timeout)

    async def ask(request: WriterRequest, packet: Packet) -> WriterResult:
        return (await write(endpoint, request, packet)).result

    log.info("writer: %s at %s, %d tokens an hour", settings.writer_model,
             redact_url(settings.writer_url), settings.writer_tokens_per_hour)
    return WriterService(
        model=settings.writer_model, max_tokens=settings.writer_max_tokens,
        tokens_per_hour=settings.writer_tokens_per_hour,
        timeout_seconds=settings.writer_timeout, cache=writings, ask=ask)
