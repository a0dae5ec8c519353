"""The ledger (bot/queue/ledger.py) on the shared PostgreSQL database: the same calls, so
the reconcile sweep of any replica sees what every replica converged."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from bot.db.pool import Conn, Database
from bot.github.dry_run import RecordedWrite
from bot.queue.ledger import MAX_PREVIEWS, IndexedCommit, OpenPrChange, StoredPreview


class PostgresLedger:
    def __init__(self, database: Database, *, clock: Callable[[], float] = time.time) -> None:
        self._db = database
        self._clock = clock

    def close(self) -> None:
        """The database is the service's to close (shared with the job store)."""

    async def record_converged(
        self, repo: str, number: int, installation_id: int | None, fingerprint: str,
        *, open_head: str | None = None,
    ) -> None:
        now = self._clock()

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO pr_state VALUES (%s, %s, %s, %s, %s) ON CONFLICT (repo, number)"
                " DO UPDATE SET installation_id = excluded.installation_id,"
                " fingerprint = excluded.fingerprint, converged_at = excluded.converged_at",
                (repo, number, installation_id, fingerprint, now),
            )
            if open_head:
                conn.execute(
                    "INSERT INTO pr_heads VALUES (%s, %s, %s) ON CONFLICT (repo, number) DO"
                    " UPDATE SET head_sha = excluded.head_sha",
                    (repo, number, open_head),
                )
            else:
                conn.execute("DELETE FROM pr_heads WHERE repo = %s AND number = %s",
                             (repo, number))

        await self._db.run(write)

    async def pulls_with_head(self, repo: str, sha: str) -> list[int]:
        def read(conn: Conn) -> list[int]:
            rows = conn.execute(
                "SELECT number FROM pr_heads WHERE repo = %s AND head_sha = %s ORDER BY number",
                (repo, sha),
            ).fetchall()
            return [int(row[0]) for row in rows]

        return await self._db.run(read)

    async def fingerprints(self, repo: str) -> dict[int, str]:
        def read(conn: Conn) -> dict[int, str]:
            rows = conn.execute(
                "SELECT number, fingerprint FROM pr_state WHERE repo = %s", (repo,)
            ).fetchall()
            return {int(row[0]): str(row[1]) for row in rows}

        return await self._db.run(read)

    async def record_preview(self, write: RecordedWrite) -> None:
        now = self._clock()

        def insert(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO previews (repo, number, action, detail, created_at)"
                " VALUES (%s, %s, %s, %s, %s)",
                (write.repo, write.number, write.action, write.detail, now),
            )
            conn.execute(
                "DELETE FROM previews WHERE id <= (SELECT MAX(id) FROM previews) - %s",
                (MAX_PREVIEWS,),
            )

        await self._db.run(insert)

    async def previews(self, limit: int = 50) -> list[RecordedWrite]:
        def read(conn: Conn) -> list[RecordedWrite]:
            rows = conn.execute(
                "SELECT repo, number, action, detail FROM previews ORDER BY id DESC LIMIT %s",
                (limit,),
            ).fetchall()
            return [RecordedWrite(r[0], r[1], r[2], r[3]) for r in rows]

        return await self._db.run(read)

    async def stored_previews(
        self, *, repo: str | None = None, number: int | None = None, limit: int = 10
    ) -> list[StoredPreview]:
        def read(conn: Conn) -> list[StoredPreview]:
            rows = conn.execute(
                "SELECT id, repo, number, action, detail, created_at FROM previews"
                " WHERE (%s::text IS NULL OR repo = %s) AND (%s::integer IS NULL OR number = %s)"
                " ORDER BY id DESC LIMIT %s",
                (repo, repo, number, number, limit),
            ).fetchall()
            return [StoredPreview(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

        return await self._db.run(read)

    async def record_indexed(self, repo: str, installation_id: int | None,
                             commit: str) -> None:
        now = self._clock()

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO index_commits VALUES (%s, %s, %s, %s) ON CONFLICT (repo)"
                " DO UPDATE SET installation_id = COALESCE(excluded.installation_id,"
                " index_commits.installation_id), commit_sha = excluded.commit_sha,"
                " indexed_at = excluded.indexed_at",
                (repo, installation_id, commit, now),
            )

        await self._db.run(write, transaction=False)

    async def indexed_commits(self) -> list[IndexedCommit]:
        def read(conn: Conn) -> list[IndexedCommit]:
            rows = conn.execute(
                "SELECT repo, installation_id, commit_sha FROM index_commits ORDER BY repo"
            ).fetchall()
            return [IndexedCommit(r[0], r[1], r[2]) for r in rows]

        return await self._db.run(read, transaction=False)

    async def record_open_pr(self, repo: str, number: int, record: str | None,
                             keys: Sequence[str], *, limit: int) -> OpenPrChange:
        now = self._clock()

        def write(conn: Conn) -> OpenPrChange:
            row = conn.execute(
                "SELECT record FROM open_prs WHERE repo = %s AND number = %s FOR UPDATE",
                (repo, number)).fetchone()
            old_keys = [str(r[0]) for r in conn.execute(
                "SELECT key FROM open_pr_keys WHERE repo = %s AND number = %s",
                (repo, number)).fetchall()]
            if row is not None and row[0] == record:
                return OpenPrChange(previous=record, sharing=[])
            conn.execute("DELETE FROM open_pr_keys WHERE repo = %s AND number = %s",
                         (repo, number))
            if record is None:
                conn.execute("DELETE FROM open_prs WHERE repo = %s AND number = %s",
                             (repo, number))
            else:
                conn.execute(
                    "INSERT INTO open_prs VALUES (%s, %s, %s, %s) ON CONFLICT (repo, number)"
                    " DO UPDATE SET record = excluded.record, stored_at = excluded.stored_at",
                    (repo, number, record, now))
                conn.execute(
                    "INSERT INTO open_pr_keys SELECT %s, k, %s FROM unnest(%s::text[]) k"
                    " ON CONFLICT DO NOTHING", (repo, number, list(dict.fromkeys(keys))))
            sharing = _sharing(conn, repo, [*dict.fromkeys([*old_keys, *keys])], limit)
            return OpenPrChange(str(row[0]) if row else None,
                                [n for n in sharing if n != number][:limit])

        return await self._db.run(write)

    async def open_prs_sharing(self, repo: str, keys: Sequence[str], *,
                               limit: int) -> list[str]:
        def read(conn: Conn) -> list[str]:
            numbers = _sharing(conn, repo, list(dict.fromkeys(keys)), limit)[:limit]
            rows = conn.execute(
                "SELECT record FROM open_prs WHERE repo = %s AND number = ANY(%s)"
                " ORDER BY number", (repo, numbers)).fetchall()
            return [str(r[0]) for r in rows]

        return await self._db.run(read)


def _sharing(conn: Conn, repo: str, keys: list[str], limit: int) -> list[int]:
    rows = conn.execute(
        "SELECT DISTINCT number FROM open_pr_keys WHERE repo = %s AND key = ANY(%s)"
        " ORDER BY number LIMIT %s", (repo, keys, limit + 1)).fetchall()
    return [int(r[0]) for r in rows]
