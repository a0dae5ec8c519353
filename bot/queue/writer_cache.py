"""The writer's results and token spend (issue 41), in the service's SQLite file.

A result is keyed by (packet sha256, model, prompt version): the same facts asked of the
same model with the same prompt are written once, whatever job or replica asks again (a
re-delivery, a comment that changes nothing the packet holds). A cache like the ledger:
losing it costs one model call per open PR. Bounded: entries expire (failures sooner, so
a down endpoint is asked again about the same packet at most once per `FAILURE_KEEP`),
and past `MAX_ENTRIES` the oldest go.

The stored result is the writer's own JSON, opaque here (bot/queue imports no core).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.queue.sqlite_writer import SqliteWriter

SCHEMA = """
CREATE TABLE IF NOT EXISTS writer_results (
    packet_sha256 TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    written_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (packet_sha256, model, prompt_version)
);
CREATE INDEX IF NOT EXISTS writer_results_written ON writer_results (written_at);
CREATE TABLE IF NOT EXISTS writer_spend (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spent_at REAL NOT NULL,
    tokens INTEGER NOT NULL
);
"""
# A row in `writer_results` whose status is WRITING is a claim: one job is asking the
# model about that packet until `expires_at` (its timeout and a margin); any other run
# finds it and waits for the result instead of calling too.
WRITING = "writing"
MAX_ENTRIES = 20_000
KEEP = 14 * 86400.0
# A failure (endpoint down, slow, malformed) is kept this long, then asked again once.
FAILURE_KEEP = 3600.0
HOUR = 3600.0


@dataclass(frozen=True)
class WritingKey:
    packet_sha256: str
    model: str
    prompt_version: str

    def values(self) -> tuple[str, str, str]:
        return (self.packet_sha256, self.model, self.prompt_version)


@dataclass(frozen=True)
class CachedWriting:
    status: str  # the writer's status: ok | partial | timeout | ... (or WRITING)
    result: str  # the writer's result as JSON
    tokens: int
    written_at: float


class WriterCacheStore(Protocol):
    """This SQLite store, or bot/queue/writer_cache_pg.py's on the shared database."""

    async def get(self, key: WritingKey) -> CachedWriting | None:
        """The stored result, or a live claim (status WRITING); None: expired or never."""
        ...

    async def claim(self, key: WritingKey, for_seconds: float) -> bool:
        """Claim the packet's writing: False when a result or a live claim is there."""
        ...

    async def put(self, key: WritingKey, writing: CachedWriting, *, keep_seconds: float) -> None:
        ...

    async def spend(self, tokens: int, per_hour: int) -> bool:
        """Reserve `tokens` of the last hour's budget: False (nothing recorded) when
        they do not fit. Shared by every replica."""
        ...

    async def settle(self, reserved: int, used: int) -> None:
        """A call reserved `reserved` tokens and used `used`: record the difference."""
        ...


def writer_schema(path: Path | str) -> None:
    """Create the tables (a short-lived connection; the ledger's writer owns the file)."""
    conn = sqlite3.connect(str(path), timeout=5.0)
    try:
        conn.executescript(SCHEMA)
    finally:
        conn.close()


class WriterCache:
    def __init__(self, writer: SqliteWriter, *,
                 clock: Callable[[], float] = time.time,
                 max_entries: int = MAX_ENTRIES) -> None:
        self._writer = writer
        self._clock = clock
        self._max_entries = max_entries

    async def get(self, key: WritingKey) -> CachedWriting | None:
        now = self._clock()

        def read(conn: sqlite3.Connection) -> CachedWriting | None:
            row = conn.execute(
                "SELECT status, result, tokens, written_at FROM writer_results"
                " WHERE packet_sha256 = ? AND model = ? AND prompt_version = ?"
                " AND expires_at > ?", (*key.values(), now)).fetchone()
            return None if row is None else CachedWriting(
                str(row[0]), str(row[1]), int(row[2]), float(row[3]))

        return await self._writer.run(read)

    async def claim(self, key: WritingKey, for_seconds: float) -> bool:
        now = self._clock()

        def write(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT INTO writer_results VALUES (?, ?, ?, ?, '', 0, ?, ?)"
                " ON CONFLICT (packet_sha256, model, prompt_version) DO UPDATE SET"
                " status = excluded.status, result = '',"
                " tokens = 0, written_at = excluded.written_at,"
                " expires_at = excluded.expires_at WHERE writer_results.expires_at <= ?",
                (*key.values(), WRITING, now, now + for_seconds, now))
            return cur.rowcount > 0

        return await self._writer.run(write)

    async def put(self, key: WritingKey, writing: CachedWriting, *, keep_seconds: float) -> None:
        now = self._clock()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO writer_results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*key.values(), writing.status, writing.result, writing.tokens,
                 writing.written_at, now + keep_seconds))
            conn.execute("DELETE FROM writer_results WHERE expires_at <= ?", (now,))
            conn.execute(
                "DELETE FROM writer_results WHERE written_at < (SELECT written_at FROM"
                " writer_results ORDER BY written_at DESC LIMIT 1 OFFSET ?)",
                (self._max_entries - 1,))

        await self._writer.run(write)

    async def spend(self, tokens: int, per_hour: int) -> bool:
        now = self._clock()

        def write(conn: sqlite3.Connection) -> bool:
            # One writer thread runs these one at a time: the check and the insert agree.
            conn.execute("DELETE FROM writer_spend WHERE spent_at <= ?", (now - HOUR,))
            row = conn.execute("SELECT COALESCE(SUM(tokens), 0) FROM writer_spend").fetchone()
            if int(row[0]) + tokens > per_hour:
                return False
            conn.execute("INSERT INTO writer_spend (spent_at, tokens) VALUES (?, ?)",
                         (now, tokens))
            return True

        return await self._writer.run(write)

    async def settle(self, reserved: int, used: int) -> None:
        if used == reserved:
            return
        now = self._clock()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO writer_spend (spent_at, tokens) VALUES (?, ?)",
                         (now, used - reserved))

        await self._writer.run(write)
