"""The operator's `digest-bot` commands: read the dry-run previews, inspect and retry
parked jobs, migrate the PostgreSQL schema, print the settings table. They read the
service's SQLite file, which is safe while the service runs (WAL, one writer at a time),
or, with DIGEST_DATABASE_URL set and no --db, the shared PostgreSQL database."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.settings.errors import load_settings
from bot.view.links import view_url

if TYPE_CHECKING:
    from bot.queue.store import ServiceStore

JOB_LIST_STATES = ("queued", "running", "failed", "parked")


class OpsError(Exception):
    """Bad input or a missing database: one line on stderr, exit code 2."""


def add_operator_commands(sub: Any) -> None:
    previews = sub.add_parser(
        "previews", help="print what dry-run would have written (newest first)"
    )
    previews.add_argument("--db", type=Path, default=None, help="SQLite file "
                          "(default: DIGEST_DB_PATH)")
    previews.add_argument("--repo", default=None, help="only this OWNER/REPO")
    previews.add_argument("--pr", type=int, default=None, help="only this PR number")
    previews.add_argument("--last", type=int, default=5, help="how many (default 5)")
    previews.set_defaults(run=_run_previews)

    jobs = sub.add_parser("jobs", help="list jobs or retry parked ones")
    jobs_sub = jobs.add_subparsers(dest="jobs_command", required=True)
    listing = jobs_sub.add_parser("list", help="jobs not yet done (or only the parked ones)")
    listing.add_argument("--db", type=Path, default=None)
    listing.add_argument("--parked", action="store_true", help="only parked jobs")
    listing.set_defaults(run=_run_jobs_list)
    retry = jobs_sub.add_parser("retry", help="queue parked jobs again (attempts reset)")
    retry.add_argument("--db", type=Path, default=None)
    which = retry.add_mutually_exclusive_group(required=True)
    which.add_argument("id", nargs="?", type=int, help="the parked job's id")
    which.add_argument("--all-parked", action="store_true", help="every parked job")
    retry.set_defaults(run=_run_jobs_retry)

    db = sub.add_parser("db", help="the PostgreSQL schema (DIGEST_DATABASE_URL)")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    migrate = db_sub.add_parser(
        "migrate", help="apply pending schema migrations (`serve` does at start too)")
    migrate.set_defaults(run=_run_db_migrate)
    status = db_sub.add_parser("status", help="applied and pending schema migrations")
    status.set_defaults(run=_run_db_status)

    table = sub.add_parser(
        "settings-table", help="print the DIGEST_* settings table (Markdown, for docs/settings.md)"
    )
    table.set_defaults(run=_run_settings_table)


def _postgres_url(args: argparse.Namespace) -> str | None:
    """The shared database's URL, unless --db names a SQLite file."""
    return None if args.db is not None else load_settings().postgres_url


@contextmanager
def _postgres_errors() -> Iterator[None]:
    from bot.db.errors import DatabaseUnreachable
    from bot.queue.sqlite_writer import StoreUnavailable

    try:
        yield
    except DatabaseUnreachable as exc:
        raise OpsError(exc.line) from None
    except StoreUnavailable as exc:
        raise OpsError(f"DIGEST_DATABASE_URL: {exc}") from None


@contextmanager
def _opened_database(url: str) -> Iterator[Any]:
    from bot.db.pool import Database

    database = Database(url, min_size=1, max_size=2)
    with _postgres_errors():
        database.open()
        try:
            yield database
        finally:
            database.close()


def _require_url() -> str:
    url = load_settings().postgres_url
    if url is None:
        raise OpsError("DIGEST_DATABASE_URL is not set: the SQLite file (DIGEST_DB_PATH) "
                       "needs no migrations (its tables are created when it is opened)")
    return url


def _run_db_migrate(args: argparse.Namespace) -> int:
    from bot.db.migrations import migrate
    from bot.db.url import redact_url

    url = _require_url()
    with _postgres_errors():
        applied = migrate(url)
    for migration in applied:
        print(f"applied {migration.version}: {migration.name}")
    if not applied:
        print(f"{redact_url(url)}: schema up to date, nothing to apply")
    return 0


def _run_db_status(args: argparse.Namespace) -> int:
    from bot.db.migrations import schema_status
    from bot.db.url import redact_url

    url = _require_url()
    with _postgres_errors():
        status = schema_status(url)
    print(f"database: {redact_url(url)}")
    print(f"schema version: {status.current}"
          + (" (empty: `digest-bot db migrate` or `serve` creates it)" if not status.applied
             else ""))
    for migration in status.pending:
        print(f"pending {migration.version}: {migration.name}")
    if status.unknown:
        print("applied by a newer release: " + ", ".join(map(str, status.unknown)))
    return 0


def _db_path(args: argparse.Namespace) -> Path:
    path: Path = args.db or load_settings().db_path
    if not path.is_file():
        raise OpsError(f"{path}: no database (give --db PATH or set DIGEST_DB_PATH)")
    return path


@contextmanager
def _database_errors(path: Path) -> Iterator[None]:
    """A database that cannot be opened or read (not SQLite, not writable, locked) as
    one line naming the file, not sqlite3's traceback."""
    from bot.queue.sqlite_writer import CannotOpenDatabase, StoreUnavailable

    try:
        yield
    except CannotOpenDatabase as exc:
        raise OpsError(f"{path}: {exc.reason}") from None
    except StoreUnavailable as exc:
        raise OpsError(f"{path}: cannot read the database ({exc})") from None


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _run_previews(args: argparse.Namespace) -> int:
    import asyncio  # not at import: `digest-bot digest` needs none of it

    from bot.queue.ledger import Ledger

    if args.last < 1:
        raise OpsError("--last must be ≥ 1")
    url = _postgres_url(args)
    if url is not None:
        from bot.queue.ledger_pg import PostgresLedger

        with _opened_database(url) as database:
            rows = asyncio.run(PostgresLedger(database).stored_previews(
                repo=args.repo, number=args.pr, limit=args.last))
    else:
        path = _db_path(args)
        with _database_errors(path):
            ledger = Ledger(path)
            try:
                rows = asyncio.run(ledger.stored_previews(repo=args.repo, number=args.pr,
                                                          limit=args.last))
            finally:
                ledger.close()
    if not rows:
        print("no dry-run previews stored" + _filter_text(args.repo, args.pr), file=sys.stderr)
        return 0
    public_url = load_settings().public_url
    for row in rows:
        target = row.repo if row.number is None else f"{row.repo}#{row.number}"
        print(f"## {target} · {row.action} · {_when(row.created_at)}\n")
        if public_url and row.number is not None:
            # The label view renders the same digest (DIGEST_PUBLIC_URL: where it is served).
            print(f"view: {view_url(public_url, row.repo, row.number)}\n")
        print(row.detail if row.detail else "(no text)")
        print()
    return 0


def _filter_text(repo: str | None, number: int | None) -> str:
    parts = [f"repo {repo}"] if repo else []
    parts += [f"PR #{number}"] if number is not None else []
    return f" for {' '.join(parts)}" if parts else ""


@contextmanager
def _job_store(args: argparse.Namespace) -> Iterator[ServiceStore]:
    """The job store the service uses: the shared database, or the SQLite file."""
    url = _postgres_url(args)
    if url is not None:
        from bot.queue.store_pg import PostgresJobStore

        with _opened_database(url) as database:
            yield PostgresJobStore(database)
        return
    from bot.queue.store import SqliteJobStore

    path = _db_path(args)
    with _database_errors(path):
        store = SqliteJobStore(path)
        try:
            yield store
        finally:
            store.close()


def _run_jobs_list(args: argparse.Namespace) -> int:
    import asyncio  # not at import: `digest-bot digest` needs none of it

    with _job_store(args) as store:
        jobs = asyncio.run(store.list_jobs("parked" if args.parked else None))
    shown = [job for job in jobs if job.state in JOB_LIST_STATES]
    if not shown:
        print("no parked jobs" if args.parked else "no pending jobs", file=sys.stderr)
        return 0
    print("id\tstate\tkind\tpr\tattempts\tnext\tlast error")
    for job in shown:
        target = job.repo if job.number is None else f"{job.repo}#{job.number}"
        # A parked job never runs again by itself (only `jobs retry` queues it): no next.
        next_run = "-" if job.state == "parked" else _when(job.not_before)
        print(f"{job.id}\t{job.state}\t{job.kind}\t{target}\t{job.attempts}\t"
              f"{next_run}\t{(job.last_error or '-').splitlines()[0][:200]}")
    return 0


def _run_jobs_retry(args: argparse.Namespace) -> int:
    import asyncio  # not at import: `digest-bot digest` needs none of it

    with _job_store(args) as store:
        if args.all_parked:
            count = asyncio.run(store.requeue_parked())
            print(f"requeued {count} parked job(s)")
            return 0
        job = asyncio.run(store.get(args.id))
        if job is None:
            raise OpsError(f"job {args.id}: no such job")
        if job.state != "parked":
            raise OpsError(f"job {args.id} is {job.state}, not parked: nothing to retry")
        asyncio.run(store.requeue_parked([args.id]))
    print(f"requeued job {args.id} ({job.repo}#{job.number})")
    return 0


def _run_settings_table(args: argparse.Namespace) -> int:
    from bot.settings.table import render_settings_table

    print(render_settings_table())
    return 0
