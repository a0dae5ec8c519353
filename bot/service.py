"""Wires the service together, in exactly one place: settings -> store, GitHub sessions,
handlers, worker, HTTP app. Nothing here runs at import."""

from __future__ import annotations

import gc
import logging
import signal
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.applications import Starlette

from bot.credentials import CredentialCheck
from bot.github.protocol import GitHubError
from bot.github.session import GitHubSessionFactory
from bot.handlers.context import HandlerContext
from bot.handlers.processor import JobProcessor
from bot.handlers.repo_rules import RulesProvider
from bot.intake.app import create_app
from bot.intake.http_protocol import guarded_protocol
from bot.logs import configure_logging, default_log_format, register_secret
from bot.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.ledger import Ledger
from bot.queue.store import SqliteJobStore
from bot.queue.worker_thread import WorkerThread
from bot.repo_index.lookup import IndexLookup
from bot.repo_index.refresh import IndexRefresher
from bot.rules_files import read_rule_sources
from bot.settings import Settings
from bot.view.app import LabelViewRoutes
from bot.view.recorder import DigestRecorder
from bot.view.store import DigestStore, create_schema

log = logging.getLogger(__name__)

DEFAULT_BOT_LOGIN = "pr-digest[bot]"
PRUNE_AFTER_SECONDS = 7 * 86400


@dataclass
class Service:
    app: Starlette
    store: SqliteJobStore
    ledger: Ledger
    processor: JobProcessor
    factory: GitHubSessionFactory
    digests: DigestStore
    credentials: CredentialCheck | None = None

    def close(self) -> None:
        self.store.close()
        self.ledger.close()
        if self.processor.index_lookup is not None:
            self.processor.index_lookup.close()


def build_service(settings: Settings) -> Service:
    """Everything the running service needs; raises on invalid bundled rules (loud, early)."""
    for secret in (settings.webhook_secret, settings.private_key, settings.github_token,
                   settings.view_token):
        if secret is not None:
            register_secret(secret.get_secret_value())
    metrics = Metrics()
    rules = RulesProvider(
        read_rule_sources(settings.rules_dir), config_path=settings.repo_config_path
    )
    store = SqliteJobStore.from_settings(settings)
    ledger = Ledger(settings.db_path)
    create_schema(settings.db_path)
    digests = DigestStore(ledger.writer, recent_seconds=settings.view_recent_days * 86400)
    factory = GitHubSessionFactory(settings, metrics)
    ctx = HandlerContext(
        bot_login=settings.bot_login or DEFAULT_BOT_LOGIN,
        rules=rules,
        metrics=metrics,
        language=settings.language,
        skip_drafts=settings.skip_drafts,
        command_runs_per_minute=rules.bundled.routing.commands_per_minute,
        uncertain_write_recheck_seconds=settings.uncertain_write_recheck_seconds,
        on_converged=DigestRecorder(digests),
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

    worker = Worker(
        store, processor, metrics,
        concurrency=settings.workers,
        # An expired lease is noticed within half a lease.
        lease_check_interval=min(30.0, settings.lease_seconds / 2),
        heartbeat_interval=settings.lease_seconds / 3,
        periodic=[(settings.reconcile_interval_seconds, reconcile), (3600.0, prune)],
    )
    credentials: CredentialCheck | None = None
    background: list[Callable[[], Coroutine[Any, Any, None]]] = []
    if settings.has_app_credentials:
        credentials = CredentialCheck(settings, factory)
        background.append(credentials.run)
    app = create_app(
        settings, store, metrics, worker=WorkerThread(worker),
        extra_routes=LabelViewRoutes(digests, settings).routes(),
        not_ready_reason=(lambda: credentials.reason) if credentials is not None else None,
        background=background,
    )
    return Service(app, store, ledger, processor, factory, digests, credentials)


def _exit_after_drain(signum: int, frame: object) -> None:
    # uvicorn drains, restores the previous handler and re-raises SIGTERM; with the
    # default handler the process would die before closing the store.
    raise SystemExit(0)


def serve(settings: Settings, *, host: str, port: int) -> None:
    configure_logging(settings.log_level, settings.log_format or default_log_format())
    service = build_service(settings)
    # Everything loaded so far (GitHub's API schemas, rules) lives as long as the
    # process: keep it out of the collector's full passes, each of which otherwise walks
    # it all (~70,000 objects, ~100 ms here) and stalls every in-flight ack.
    gc.freeze()
    signal.signal(signal.SIGTERM, _exit_after_drain)
    mode = "dry-run" if settings.effective_dry_run else "live"
    log.info("pr-digest listening on http://%s:%d (%s: %s)", host, port, mode,
             settings.mode_reason())
    try:
        uvicorn.run(
            service.app, host=host, port=port, log_config=None, access_log=False,
            timeout_graceful_shutdown=int(settings.drain_seconds) + 5,
            http=guarded_protocol(header_timeout_seconds=settings.header_timeout_seconds,
                                  body_timeout_seconds=settings.body_timeout_seconds,
                                  max_connections=settings.max_connections),
        )
    finally:
        service.close()
