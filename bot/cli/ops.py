"""The operator's `digest-bot` commands: read the dry-run previews, inspect and retry
parked jobs, print the settings table. They read the service's SQLite file, which is
safe while the service runs (WAL, one writer at a time)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.settings.errors import load_settings
from bot.view.links import view_url

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

    table = sub.add_parser(
        "settings-table", help="print the DIGEST_* settings table (Markdown, for the README)"
    )
    table.set_defaults(run=_run_settings_table)


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


def _run_jobs_list(args: argparse.Namespace) -> int:
    import asyncio  # not at import: `digest-bot digest` needs none of it

    from bot.queue.store import SqliteJobStore

    path = _db_path(args)
    with _database_errors(path):
        store = SqliteJobStore(path)
        try:
            jobs = asyncio.run(store.list_jobs("parked" if args.parked else None))
        finally:
            store.close()
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

    from bot.queue.store import SqliteJobStore

    path = _db_path(args)
    with _database_errors(path):
        store = SqliteJobStore(path)
        try:
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
        finally:
            store.close()
    print(f"requeued job {args.id} ({job.repo}#{job.number})")
    return 0


def _run_settings_table(args: argparse.Namespace) -> int:
    from bot.settings.table import render_settings_table

    print(render_settings_table())
    return 0
