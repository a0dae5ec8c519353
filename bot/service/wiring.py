"""Wires the service together: settings -> store, metrics, HTTP app (the intake), then,
once the port is open, the worker side (bot/service/worker_side.py: rules, GitHub sessions,
handlers, worker), built on a thread by bot/service/deferred_worker.py. Nothing here runs at
import."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import signal
import socket
import sqlite3
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import uvicorn

from bot.db.url import redact_url
from bot.intake.app import IntakeApp, create_app
from bot.intake.http_protocol import guarded_protocol
from bot.observe.logs import configure_logging, default_log_format, register_secret
from bot.observe.metrics import Metrics
from bot.queue.ledger import LedgerStore
from bot.queue.sqlite_writer import CannotOpenDatabase
from bot.queue.store import ServiceStore
from bot.service.deferred_worker import DeferredWorker
from bot.service.heap import HeapReleaser, keep_freed_heap
from bot.service.stores import DatabaseUnreachable, Stores, open_stores
from bot.settings.errors import SettingsError, misspelt_safety_lines, unknown_setting_lines
from bot.settings.model import Settings
from bot.view.lazy import LazyLabelView
from bot.view.store import DigestStore

if TYPE_CHECKING:
    from bot.service.worker_side import WorkerSide

# Nothing here imports the worker side (githubkit, the rules engine, RE2, the handlers,
# the view's templates): `serve` opens the port first and builds those on a thread
# (bot/service/worker_side.py, bot/service/deferred_worker.py);
# tests/service/test_startup.py keeps it so.

log = logging.getLogger(__name__)
_SWITCH_INTERVAL_SECONDS = 0.002


class StartError(Exception):
    """`serve` cannot start for a reason that is no setting (the port): one line, exit 2."""


@dataclass
class Service:
    app: IntakeApp
    stores: Stores
    worker: DeferredWorker
    view: LazyLabelView

    @property
    def store(self) -> ServiceStore:
        return self.stores.store

    @property
    def ledger(self) -> LedgerStore:
        return self.stores.ledger

    @property
    def digests(self) -> DigestStore:
        return self.stores.digests

    def close(self) -> None:
        self.worker.close()
        self.stores.close()


def check_start(settings: Settings) -> None:
    """What a start with these settings would fail on, checked before the port opens
    (cheap): the rules directory, App credentials that do not go together, an App key
    that cannot be read or is no RSA key. The rules themselves are parsed with the
    worker, and a bad one shows in /readyz; whether GitHub accepts the key is the
    credential check's (bot/service/credentials.py). One line per problem."""
    problems = settings.credential_problems()
    if not settings.rules_dir.is_dir():
        problems.insert(0, f"DIGEST_RULES_DIR={settings.rules_dir}: not a directory")
    if settings.writer_url is not None and settings.writer_model is None:
        problems.append(f"DIGEST_WRITER_URL={redact_url(settings.writer_url)}: set without "
                        "DIGEST_WRITER_MODEL: name the model the endpoint serves (or unset "
                        "DIGEST_WRITER_URL: no writer)")
    if settings.has_app_credentials:
        key_problem = private_key_problem(settings)
        if key_problem is not None:
            problems.append(key_problem)
    if problems:
        raise SettingsError(problems)


def private_key_problem(settings: Settings) -> str | None:
    """Why the App's private key cannot sign the App's JWTs, naming the variable that
    gives it and never quoting the key; None when it is a PEM RSA private key."""
    if settings.private_key is not None:
        where = "DIGEST_PRIVATE_KEY=(hidden)"
    else:
        where = f"DIGEST_PRIVATE_KEY_PATH={settings.private_key_path}"
    try:
        text = settings.private_key_text()
    except OSError as exc:
        return f"{where}: cannot read the private key ({exc.strerror or type(exc).__name__})"
    except UnicodeDecodeError:
        return f"{where}: cannot read the private key (not text: not a PEM key)"
    if text is None:
        return None
    # Here, not at import: only a start with App credentials pays for it (~30 ms).
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(text.encode(), password=None)
    except TypeError:  # a passphrase is needed
        return f"{where}: the private key is encrypted; give it without a passphrase"
    except (ValueError, UnsupportedAlgorithm):
        return f"{where}: not a PEM RSA private key (truncated, or not a key at all)"
    if not isinstance(key, rsa.RSAPrivateKey):
        return f"{where}: not an RSA private key (GitHub Apps sign with RS256)"
    return None


def bind_listening_sockets(host: str, port: int) -> list[socket.socket]:
    """The sockets uvicorn serves on, bound (listening once uvicorn starts) before any
    line says "listening": a port in use is one line, not uvicorn's error after the
    start-up lines. Bound as asyncio's `create_server(host=, port=)` binds them (every
    address the host resolves to, SO_REUSEADDR, IPv6 sockets IPv6-only)."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartError(f"--host {host}: cannot resolve it ({exc.strerror})") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartError(
                f"port {port} on {host} is taken (address already in use): stop what "
                "listens there or choose another port with --port") from None
        raise StartError(f"cannot listen on {host}:{port} "
                         f"({exc.strerror or exc}); choose another with --host/--port") from None
    return sockets


def build_service(settings: Settings) -> Service:
    """What the intake needs (store, metrics, the app); the worker side is built by the
    app's start-up, on a thread, after the port is open."""
    for secret in (settings.webhook_secret, settings.private_key, settings.github_token,
                   settings.view_token, settings.database_url, settings.writer_api_key):
        if secret is not None:
            register_secret(secret.get_secret_value())
    if settings.postgres_url is not None:
        from bot.db.url import secrets_in_url

        for password in secrets_in_url(settings.postgres_url):
            register_secret(password)
    metrics = Metrics()
    stores = open_stores(settings)
    store, ledger, digests = stores.store, stores.ledger, stores.digests
    view = LazyLabelView(digests, settings)

    async def warm_view() -> None:
        # Readers' first page should not pay for the view's imports and templates; done
        # once the worker runs, so /readyz does not wait for it.
        await asyncio.to_thread(view.prepare)

    def build_worker_side() -> WorkerSide:
        from bot.service.worker_side import build_worker_side

        side = build_worker_side(settings, store, ledger, digests, metrics, stores.writings)
        side.background.append(warm_view)
        return side

    worker = DeferredWorker(build_worker_side,
                            failure_reason=lambda exc: _rules_problem(settings, exc))
    app = create_app(
        settings, store, metrics, worker=worker, extra_routes=view.routes(),
        not_ready_reason=worker.not_ready_reason, refused_bytes=HeapReleaser().refused,
    )
    return Service(app, stores, worker, view)


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


def database_line(settings: Settings) -> str:
    """Which database this replica uses, for the start-up line (never a password)."""
    if settings.postgres_url is not None:
        return (f"database: PostgreSQL {redact_url(settings.postgres_url)}"
                f" (symbol index in SQLite {settings.db_path})")
    return f"database: SQLite {settings.db_path.resolve()}"


def missing_db_folder_line(settings: Settings) -> str | None:
    """A SQLite path in a folder that does not exist is most likely a typo or an unmounted
    volume: one line, and no folder is created where nobody meant one."""
    folder = settings.db_path.parent
    if str(settings.db_path) == ":memory:" or folder.exists():
        return None  # a folder, or a file in its place (the open names that)
    return (f"DIGEST_DB_PATH={settings.db_path}: the folder {folder} does not exist;"
            " create it (or mount the volume) first: the service creates no folders")


def _open_service(settings: Settings) -> Service:
    """`build_service`, with a database that cannot be opened as one line naming
    DIGEST_DB_PATH (sqlite3 alone says "unable to open database file" and no more), or
    DIGEST_DATABASE_URL with its password hidden."""
    try:
        return build_service(settings)
    except DatabaseUnreachable as exc:
        raise SettingsError([exc.line]) from None
    except CannotOpenDatabase as exc:
        raise SettingsError([f"DIGEST_DB_PATH={settings.db_path}: {exc.reason}"]) from None
    except sqlite3.Error as exc:
        raise SettingsError([f"DIGEST_DB_PATH={settings.db_path}: cannot use it as the "
                             f"database (sqlite: {exc})"]) from None


def serve(settings: Settings, *, host: str, port: int) -> None:
    # First: a misspelt safety setting makes every other check moot, and nothing may
    # reach GitHub before it is fixed.
    misspelt = misspelt_safety_lines()
    if misspelt:
        raise SettingsError(misspelt)
    check_start(settings)
    missing = missing_db_folder_line(settings)
    if missing:
        raise SettingsError([missing])
    configure_logging(settings.log_level, settings.log_format or default_log_format())
    for line in unknown_setting_lines():
        log.warning(line)
    service = _open_service(settings)
    try:
        sockets = bind_listening_sockets(host, port)
    except StartError:
        service.close()
        raise
    # What lives as long as the process stays out of the collector's full passes; the
    # worker side freezes again once built (bot/service/deferred_worker.py says why).
    gc.freeze()
    keep_freed_heap()
    # A job's rule matching and rendering are pure Python on worker threads; the loop
    # that acks needs the GIL back after every socket and SQLite call. At the default
    # 5 ms it waited several intervals per ack behind a big PR's job: worst acks of
    # 210-430 ms in tests/e2e/test_e2e_pattern_stress.py. At 2 ms: 95-190 ms, and that
    # hostile job took ~10% longer (3.2-3.9 s against 3.0-3.3 s, same machine).
    sys.setswitchinterval(_SWITCH_INTERVAL_SECONDS)
    signal.signal(signal.SIGTERM, _exit_after_drain)
    mode = "dry-run" if settings.effective_dry_run else "live"
    log.info("pr-digest listening on http://%s:%d (%s: %s), %s", host,
             sockets[0].getsockname()[1], mode, settings.mode_reason(),
             database_line(settings))
    config = uvicorn.Config(
        service.app, host=host, port=port, log_config=None, access_log=False,
        timeout_graceful_shutdown=int(settings.drain_seconds) + 5,
        http=guarded_protocol(header_timeout_seconds=settings.header_timeout_seconds,
                              body_timeout_seconds=settings.body_timeout_seconds,
                              max_connections=settings.max_connections,
                              max_idle_connections=settings.max_idle_connections,
                              ack_route=service.app.ack_route),
    )
    server = uvicorn.Server(config)
    try:
        # What `uvicorn.run` does, on the sockets bound above.
        server.run(sockets=sockets)
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
        for sock in sockets:
            sock.close()
    if not server.started:
        raise SystemExit(3)  # uvicorn's STARTUP_FAILURE, as `uvicorn.run` exits
