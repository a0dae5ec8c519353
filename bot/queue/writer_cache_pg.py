"""The writer's cache and token spend (bot/queue/writer_cache.py) on the shared
PostgreSQL database (migration 9): replicas share the results, the claims and the
hour's budget, so one packet costs one model call whichever replica writes it."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.db.pool import Conn, Database
from bot.queue.writer_cache import HOUR, MAX_ENTRIES, WRITING, CachedWriting, WritingKey

# Any 64-bit number nothing else uses as an advisory lock: the hour's budget check.
SPEND_LOCK = 0x7772697465727370  # "writersp"


class PostgresWriterCache:
    def __init__(self, database: Database, *, clock: Callable[[], float] = time.time,
                 max_entries: int = MAX_ENTRIES) -> None:
        self._db = database
        self._clock = clock
        self._max_entries = max_entries

    async def get(self, key: WritingKey) -> CachedWriting | None:
        now = self._clock()

        def read(conn: Conn) -> CachedWriting | None:
            row = conn.execute(
                "SELECT status, result, tokens, written_at FROM writer_results"
                " WHERE packet_sha256 = %s AND model = %s AND prompt_version = %s"
                " AND expires_at > %s", (*key.values(), now)).fetchone()
            return None if row is None else CachedWriting(
                str(row[0]), str(row[1]), int(row[2]), float(row[3]))

        return await self._db.run(read)

    async def claim(self, key: WritingKey, for_seconds: float) -> bool:
        now = self._clock()

        def write(conn: Conn) -> bool:
            # The primary key orders two replicas' claims: the second waits for the
            # first's commit, then finds a live row and takes nothing.
            row = conn.execute(
                "INSERT INTO writer_results VALUES (%s, %s, %s, %s, '', 0, %s, %s)"
                " ON CONFLICT (packet_sha256, model, prompt_version) DO UPDATE SET"
                " status = excluded.status, result = '', tokens = 0,"
                " written_at = excluded.written_at, expires_at = excluded.expires_at"
                " WHERE writer_results.expires_at <= %s RETURNING 1",
                (*key.values(), WRITING, now, now + for_seconds, now)).fetchone()
            return row is not None

        return await self._db.run(write)

    async def put(self, key: WritingKey, writing: CachedWriting, *, keep_seconds: float) -> None:
        now = self._clock()

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO writer_results VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (packet_sha256, model, prompt_version) DO UPDATE SET"
                " status = excluded.status, result = excluded.result,"
                " tokens = excluded.tokens, written_at = excluded.written_at,"
                " expires_at = excluded.expires_at",
                (*key.values(), writing.status, writing.result, writing.tokens,
                 writing.written_at, now + keep_seconds))
            conn.execute("DELETE FROM writer_results WHERE expires_at <= %s", (now,))
            conn.execute(
                "DELETE FROM writer_results WHERE written_at < (SELECT written_at FROM"
                " writer_results ORDER BY written_at DESC LIMIT 1 OFFSET %s)",
                (self._max_entries - 1,))

        await self._db.run(write)

    async def spend(self, tokens: int, per_hour: int) -> bool:
        now = self._clock()

        def write(conn: Conn) -> bool:
            # Replicas check and reserve one at a time: two cannot both fit the last slot.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SPEND_LOCK,))
            conn.execute("DELETE FROM writer_spend WHERE spent_at <= %s", (now - HOUR,))
            row = conn.execute("SELECT COALESCE(SUM(tokens), 0) FROM writer_spend").fetchone()
            if row is None or int(row[0]) + tokens > per_hour:
                return False
            conn.execute("INSERT INTO writer_spend (spent_at, tokens) VALUES (%s, %s)",
                         (now, tokens))
            return True

        return await self._db.run(write)

    async def settle(self, reserved: int, used: int) -> None:
        if used == reserved:
            return
        now = self._clock()

        def write(conn: Conn) -> None:
            conn.execute("INSERT INTO writer_spend (spent_at, tokens) VALUES (%s, %s)",
                         (now, used - reserved))

        await self._db.run(write)
