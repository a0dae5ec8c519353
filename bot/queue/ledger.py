"""What the bot last converged each PR to, and what dry-run would have written.

A cache, never the source of truth (docs/architecture.md): the reconcile sweep compares a
PR's current fingerprint with the one recorded here to find PRs a missed delivery left
stale; losing this table only costs one extra digest run per open PR.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.github.dry_run import RecordedWrite
from bot.queue.sqlite_writer import SqliteWriter

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pr_state (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    installation_id INTEGER,
    fingerprint TEXT NOT NULL,
    converged_at REAL NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE TABLE IF NOT EXISTS pr_heads (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    head_sha TEXT NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE INDEX IF NOT EXISTS pr_heads_sha ON pr_heads (repo, head_sha);
CREATE TABLE IF NOT EXISTS open_prs (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    record TEXT NOT NULL,
    stored_at REAL NOT NULL,
    PRIMARY KEY (repo, number)
);
CREATE TABLE IF NOT EXISTS open_pr_keys (
    repo TEXT NOT NULL,
    key TEXT NOT NULL,
    number INTEGER NOT NULL,
    PRIMARY KEY (repo, key, number)
);
CREATE TABLE IF NOT EXISTS previews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo TEXT NOT NULL,
    number INTEGER,
    action TEXT NOT NULL,
    detail TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
MAX_PREVIEWS = 2000
# Keys of one PR asked at once: SQLite's bound-parameter limit is far above; a PR of
# 3,000 files asks in a few rounds.
KEY_CHUNK = 500


@dataclass(frozen=True)
class OpenPrChange:
    """What storing one open PR's record replaced: the record before (None: new), and the
    open PRs that shared a key with it before or now (itself left out)."""

    previous: str | None
    sharing: list[int]


@dataclass(frozen=True)
class IndexedCommit:
    """The commit a replica last indexed for a repository (several replicas share it)."""

    repo: str
    installation_id: int | None
    commit: str


@dataclass(frozen=True)
class StoredPreview:
    """A dry-run write as `digest-bot previews` shows it."""

    id: int
    repo: str
    number: int | None
    action: str
    detail: str
    created_at: float


class LedgerStore(Protocol):
    """What the handlers and the operator's commands use of a ledger: this SQLite one,
    or bot/queue/ledger_pg.py's on the shared database."""

    def close(self) -> None: ...

    async def record_converged(
        self, repo: str, number: int, installation_id: int | None, fingerprint: str,
        *, open_head: str | None = None,
    ) -> None: ...

    async def pulls_with_head(self, repo: str, sha: str) -> list[int]: ...

    async def fingerprints(self, repo: str) -> dict[int, str]: ...

    async def record_preview(self, write: RecordedWrite) -> None: ...

    async def previews(self, limit: int = 50) -> list[RecordedWrite]: ...

    async def stored_previews(
        self, *, repo: str | None = None, number: int | None = None, limit: int = 10
    ) -> list[StoredPreview]: ...

    async def record_indexed(self, repo: str, installation_id: int | None,
                             commit: str) -> None:
        """An index job indexed `commit`: the symbol index is a per-replica cache, so
        the other replicas bring theirs to it (`indexed_commits`)."""
        ...

    async def indexed_commits(self) -> list[IndexedCommit]: ...

    async def record_open_pr(self, repo: str, number: int, record: str | None,
                             keys: Sequence[str], *, limit: int) -> OpenPrChange: ...

    async def open_prs_sharing(self, repo: str, keys: Sequence[str], *,
                               limit: int) -> list[str]: ...


class Ledger:
    def __init__(self, source: Path | str | SqliteWriter, *,
                 clock: Callable[[], float] = time.time) -> None:
        """`source`: the database file, or the connection of the job store on that file.
        One connection per file: with two, a webhook's ack waited in SQLite's busy
        handler (sleeps of up to 100 ms) while a job's ledger transaction held the write
        lock; on one they queue on a lock that wakes the next at once."""
        if isinstance(source, SqliteWriter):
            source.add_schema(_SCHEMA)
            self._writer = source
        else:
            self._writer = SqliteWriter(str(source), _SCHEMA)
        self._clock = clock

    @property
    def writer(self) -> SqliteWriter:
        """The file's writer thread, shared with the label view's store."""
        return self._writer

    def close(self) -> None:
        self._writer.close()

    async def record_converged(
        self, repo: str, number: int, installation_id: int | None, fingerprint: str,
        *, open_head: str | None = None,
    ) -> None:
        """`open_head`: the head SHA of a PR that is still open (a CI status on that
        commit maps back to it without a call); None forgets the PR's head."""
        now = self._clock()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO pr_state VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, number) DO "
                "UPDATE SET installation_id = excluded.installation_id, "
                "fingerprint = excluded.fingerprint, converged_at = excluded.converged_at",
                (repo, number, installation_id, fingerprint, now),
            )
            if open_head:
                conn.execute(
                    "INSERT INTO pr_heads VALUES (?, ?, ?) ON CONFLICT (repo, number) DO "
                    "UPDATE SET head_sha = excluded.head_sha",
                    (repo, number, open_head),
                )
            else:
                conn.execute("DELETE FROM pr_heads WHERE repo = ? AND number = ?",
                             (repo, number))

        await self._writer.run(write)

    async def pulls_with_head(self, repo: str, sha: str) -> list[int]:
        """The open PRs whose last converged head is `sha`."""
        def read(conn: sqlite3.Connection) -> list[int]:
            rows = conn.execute(
                "SELECT number FROM pr_heads WHERE repo = ? AND head_sha = ? ORDER BY number",
                (repo, sha),
            ).fetchall()
            return [int(row[0]) for row in rows]

        return await self._writer.run(read)

    async def fingerprints(self, repo: str) -> dict[int, str]:
        def read(conn: sqlite3.Connection) -> dict[int, str]:
            rows = conn.execute(
                "SELECT number, fingerprint FROM pr_state WHERE repo = ?", (repo,)
            ).fetchall()
            return {int(row[0]): str(row[1]) for row in rows}

        return await self._writer.run(read)

    async def record_preview(self, write: RecordedWrite) -> None:
        now = self._clock()

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO previews (repo, number, action, detail, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (write.repo, write.number, write.action, write.detail, now),
            )
            conn.execute(
                "DELETE FROM previews WHERE id <= (SELECT MAX(id) FROM previews) - ?",
                (MAX_PREVIEWS,),
            )

        await self._writer.run(insert)

    async def previews(self, limit: int = 50) -> list[RecordedWrite]:
        def read(conn: sqlite3.Connection) -> list[RecordedWrite]:
            rows = conn.execute(
                "SELECT repo, number, action, detail FROM previews ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
            return [RecordedWrite(r[0], r[1], r[2], r[3]) for r in rows]

        return await self._writer.run(read)

    async def stored_previews(
        self, *, repo: str | None = None, number: int | None = None, limit: int = 10
    ) -> list[StoredPreview]:
        """The newest `limit` previews, optionally of one repository or PR, newest first."""

        def read(conn: sqlite3.Connection) -> list[StoredPreview]:
            where, params = _preview_filter(repo, number)
            rows = conn.execute(
                "SELECT id, repo, number, action, detail, created_at FROM previews"  # noqa: S608
                f"{where} ORDER BY id DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
            return [StoredPreview(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

        return await self._writer.run(read)

    async def record_indexed(self, repo: str, installation_id: int | None,
                             commit: str) -> None:
        """One process on one SQLite file: its index is the only one, nothing to share."""

    async def indexed_commits(self) -> list[IndexedCommit]:
        return []


    # -- the open PRs' records (issue 42): what each open PR changes, by key -------------

    async def record_open_pr(self, repo: str, number: int, record: str | None,
                             keys: Sequence[str], *, limit: int) -> OpenPrChange:
        """Keep `record` (JSON) under `keys` (file, symbol, issue), or forget the PR when
        `record` is None (closed); answer what it replaced and who shared a key with it."""
        now = self._clock()

        def write(conn: sqlite3.Connection) -> OpenPrChange:
            row = conn.execute("SELECT record FROM open_prs WHERE repo = ? AND number = ?",
                               (repo, number)).fetchone()
            old_keys = [r[0] for r in conn.execute(
                "SELECT key FROM open_pr_keys WHERE repo = ? AND number = ?", (repo, number))]
            if row is not None and row[0] == record:
                return OpenPrChange(previous=record, sharing=[])
            conn.execute("DELETE FROM open_pr_keys WHERE repo = ? AND number = ?", (repo, number))
            if record is None:
                conn.execute("DELETE FROM open_prs WHERE repo = ? AND number = ?", (repo, number))
            else:
                conn.execute("INSERT OR REPLACE INTO open_prs VALUES (?, ?, ?, ?)",
                             (repo, number, record, now))
                conn.executemany("INSERT OR IGNORE INTO open_pr_keys VALUES (?, ?, ?)",
                                 [(repo, key, number) for key in dict.fromkeys(keys)])
            sharing = _sharing(conn, repo, [*dict.fromkeys([*old_keys, *keys])], limit)
            return OpenPrChange(row[0] if row else None,
                                [n for n in sharing if n != number][:limit])

        return await self._writer.run(write)

    async def open_prs_sharing(self, repo: str, keys: Sequence[str], *,
                               limit: int) -> list[str]:
        """The records of the open PRs that hold any of `keys`, at most `limit`."""

        def read(conn: sqlite3.Connection) -> list[str]:
            numbers = _sharing(conn, repo, list(dict.fromkeys(keys)), limit)[:limit]
            records: list[str] = []
            for start in range(0, len(numbers), KEY_CHUNK):
                chunk = numbers[start:start + KEY_CHUNK]
                marks = ", ".join("?" * len(chunk))
                records.extend(r[0] for r in conn.execute(
                    f"SELECT record FROM open_prs WHERE repo = ? AND number IN ({marks})"  # noqa: S608
                    " ORDER BY number", (repo, *chunk)))
            return records

        return await self._writer.read(read)


def _sharing(conn: sqlite3.Connection, repo: str, keys: list[str], limit: int) -> list[int]:
    found: dict[int, None] = {}
    for start in range(0, len(keys), KEY_CHUNK):
        chunk = keys[start:start + KEY_CHUNK]
        marks = ", ".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT DISTINCT number FROM open_pr_keys WHERE repo = ? AND key IN ({marks})"  # noqa: S608
            " ORDER BY number LIMIT ?", (repo, *chunk, limit + 1)):
            found[int(row[0])] = None
        if len(found) > limit:
            break
    return list(found)[:limit + 1]


def _preview_filter(repo: str | None, number: int | None) -> tuple[str, tuple[object, ...]]:
    clauses: list[str] = []
    params: list[object] = []
    if repo is not None:
        clauses.append("repo = ?")
        params.append(repo)
    if number is not None:
        clauses.append("number = ?")
        params.append(number)
    return ((" WHERE " + " AND ".join(clauses)) if clauses else ""), tuple(params)
