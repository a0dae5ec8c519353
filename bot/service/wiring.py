"""Wires the service together: settings -> store, metrics, HTTP app (the intake), then,
once the port is open, the worker side (bot/service/worker_side.py: rules, GitHub sessions,
handlers, worker), built on a thread by bot/service/deferred_worker.py. Nothing here runs at
import."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING

import uvicorn

from bot.intake.app import IntakeApp, create_app
from bot.intake.http_protocol import guarded_protocol
from bot.observe.logs import configure_logging, default_log_format, register_secret
from bot.observe.metrics import Metrics
from bot.queue.ledger import Ledger
from bot.queue.store import SqliteJobStore
from bot.service.deferred_worker import DeferredWorker
from bot.service.heap import keep_freed_heap
from bot.settings.errors import SettingsError
from bot.settings.model import Settings
from bot.view.lazy import LazyLabelView
from bot.view.store import DigestStore, create_schema

if TYPE_CHECKING:
    from bot.service.worker_side import WorkerSide

# Nothing here imports the worker side (githubkit, the rules engine, RE2, the handlers,
# the view's templates): `serve` opens the port first and builds those on a thread
# (bot/service/worker_side.py, bot/service/deferred_worker.py);
# tests/service/test_startup.py keeps it so.

log = logging.getLogger(__name__)

@dataclass
class Service:
    app: IntakeApp
    store: SqliteJobStore
    ledger: Ledger
    digests: DigestStore
    worker: DeferredWorker
    view: LazyLabelView

    def close(self) -> None:
        self.worker.close()
        self.store.close()
        self.ledger.close()


def check_paths(settings: Settings) -> None:
    """The settings' paths that must exist, checked before the port opens (cheap); the
    rules themselves are parsed with the worker, and a bad one shows in /readyz."""
    if not settings.rules_dir.is_dir():
        raise SettingsError([f"DIGEST_RULES_DIR={settings.rules_dir}: not a directory"])


def build_service(settings: Settings) -> Service:
    """What the intake needs (store, metrics, the app); the worker side is built by the
    app's start-up, on a thread, after the port is open."""
    for secret in (settings.webhook_secret, settings.private_key, settings.github_token,
                   settings.view_token):
        if secret is not None:
            register_secret(secret.get_secret_value())
    metrics = Metrics()
    store = SqliteJobStore.from_settings(settings)
    ledger = Ledger(settings.db_path)
    create_schema(settings.db_path)
    digests = DigestStore(ledger.writer, recent_seconds=settings.view_recent_days * 86400)
    view = LazyLabelView(digests, settings)

    async def warm_view() -> None:
        # Readers' first page should not pay for the view's imports and templates; done
        # once the worker runs, so /readyz does not wait for it.
        await asyncio.to_thread(view.prepare)

    def build_worker_side() -> WorkerSide:
        from bot.service.worker_side import build_worker_side

        side = build_worker_side(settings, store, ledger, digests, metrics)
        side.background.append(warm_view)
        return side

    worker = DeferredWorker(build_worker_side,
                            failure_reason=lambda exc: _rules_problem(settings, exc))
    app = create_app(
        settings, store, metrics, worker=worker, extra_routes=view.routes(),
        not_ready_reason=worker.not_ready_reason,
    )
    return Service(app, store, ledger, digests, worker, view)


def _rules_problem(settings: Settings, exc: BaseException) -> str | None:
    """The rules that could not be loaded, as `DIGEST_RULES_DIR=...: file:line: message`."""
    from bot.core.rules import RuleFileError

    where = f"DIGEST_RULES_DIR={settings.rules_dir}"
    if isinstance(exc, RuleFileError):
        return f"{where}: " + "; ".join(str(problem) for problem in exc.problems[:5])
    if isinstance(exc, OSError | UnicodeDecodeError):
        return f"{where}: cannot read rules: {exc}"
    return None


def _exit_after_drain(signum: int, frame: object) -> None:
    # uvicorn drains, restores the previous handler and re-raises SIGTERM; with the
    # default handler the process would die before closing the store.
    raise SystemExit(0)


def serve(settings: Settings, *, host: str, port: int) -> None:
    check_paths(settings)
    configure_logging(settings.log_level, settings.log_format or default_log_format())
    service = build_service(settings)
    # What lives as long as the process stays out of the collector's full passes; the
    # worker side freezes again once built (bot/service/deferred_worker.py says why).
    gc.freeze()
    keep_freed_heap()
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
                                  max_connections=settings.max_connections,
                                  ack_route=service.app.ack_route),
        )
    finally:
        service.close()
