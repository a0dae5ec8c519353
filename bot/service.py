"""Wires the service together, in exactly one place: settings -> store, GitHub sessions,
handlers, worker, HTTP app. Nothing here runs at import.

Start-up order: the intake (store, app) first, so the port answers within a fraction of
a second; the digest engine, rules and GitHub client (most of a second to import and
build) load on the worker's thread while deliveries already land in the store.
"""

from __future__ import annotations

import gc
import logging
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import uvicorn

from bot.intake.app import create_app
from bot.intake.http_protocol import guarded_protocol
from bot.logs import configure_logging, register_secret
from bot.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import SqliteJobStore
from bot.queue.worker_thread import WorkerThread
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.github.session import GitHubSessionFactory
    from bot.handlers.processor import JobProcessor
    from bot.queue.ledger import Ledger

log = logging.getLogger(__name__)

DEFAULT_BOT_LOGIN = "pr-digest[bot]"
PRUNE_AFTER_SECONDS = 7 * 86400


@dataclass
class Service:
    """The worker side: everything a job needs, built after the intake is listening."""

    worker: Worker
    ledger: Ledger
    processor: JobProcessor
    factory: GitHubSessionFactory

    def close(self) -> None:
        self.ledger.close()


def build_service(settings: Settings, store: SqliteJobStore, metrics: Metrics) -> Service:
    """The job worker and all it needs; raises on invalid bundled rules (loud, early)."""
    # Imported here, on the worker's thread, not at start: see the module doc.
    from bot.github.protocol import GitHubError
    from bot.github.session import GitHubSessionFactory
    from bot.handlers.context import HandlerContext
    from bot.handlers.processor import JobProcessor
    from bot.handlers.repo_rules import RulesProvider
    from bot.queue.ledger import Ledger
    from bot.rules_files import read_rule_sources

    rules = RulesProvider(
        read_rule_sources(settings.rules_dir), config_path=settings.repo_config_path
    )
    ledger = Ledger(settings.db_path)
    factory = GitHubSessionFactory(settings, metrics)
    ctx = HandlerContext(
        bot_login=settings.bot_login or DEFAULT_BOT_LOGIN,
        rules=rules,
        metrics=metrics,
        language=settings.language,
        skip_drafts=settings.skip_drafts,
        command_runs_per_minute=rules.bundled.routing.commands_per_minute,
        uncertain_write_recheck_seconds=settings.uncertain_write_recheck_seconds,
    )
    processor = JobProcessor(settings, factory, ctx, store, ledger)

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
        periodic=[(settings.reconcile_interval_seconds, reconcile), (3600.0, prune)],
    )
    return Service(worker, ledger, processor, factory)


def _exit_after_drain(signum: int, frame: object) -> None:
    # uvicorn drains, restores the previous handler and re-raises SIGTERM; with the
    # default handler the process would die before closing the store.
    raise SystemExit(0)


def serve(settings: Settings, *, host: str, port: int) -> None:
    configure_logging(settings.log_level)
    for secret in (settings.webhook_secret, settings.private_key, settings.github_token):
        if secret is not None:
            register_secret(secret.get_secret_value())
    metrics = Metrics()
    store = SqliteJobStore.from_settings(settings)
    built: list[Service] = []

    def build_worker() -> Worker:
        service = build_service(settings, store, metrics)
        built.append(service)
        # Everything loaded so far (GitHub's API schemas, rules) lives as long as the
        # process: keep it out of the collector's full passes, each of which otherwise
        # walks it all and stalls every in-flight ack (p99) for tens of milliseconds.
        gc.freeze()
        return service.worker

    worker = WorkerThread(build=build_worker)
    app = create_app(settings, store, metrics, worker=worker)
    signal.signal(signal.SIGTERM, _exit_after_drain)
    mode = "dry-run" if settings.effective_dry_run else "live"
    log.info("pr-digest listening on http://%s:%d (%s)", host, port, mode)
    try:
        uvicorn.run(
            app, host=host, port=port, log_config=None, access_log=False,
            timeout_graceful_shutdown=int(settings.drain_seconds) + 5,
            http=guarded_protocol(header_timeout_seconds=settings.header_timeout_seconds,
                                  body_timeout_seconds=settings.body_timeout_seconds,
                                  max_connections=settings.max_connections),
        )
    finally:
        for service in built:
            service.close()
        store.close()
        if worker.failure is not None:
            raise SystemExit(1)  # the worker could not start: not a clean exit
