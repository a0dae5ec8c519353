"""The label view's digests (bot/view/store.py) on the shared PostgreSQL database, so
every replica's pages show what any replica converged.

A subclass of the SQLite `DigestStore` with every method replaced: the view's modules
take a `DigestStore` and need not know which database holds it.

Several replicas write; a page's entry cache (bot/view/cache.py) reads only the PRs
written since the `changed_at` it saw last, so a write must never become visible with a
`changed_at` below one already read. Here `changed_at` is the repository's `version`
taken in the writing transaction: the version row's lock is held until commit, so the
writes of one repository commit in the order of their versions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from bot.core.vocabulary import Lang
from bot.db.pool import Conn, Database
from bot.view.store import (
    _AT,
    _PR_COLUMNS,
    _PR_WRITE,
    ApiItem,
    Changed,
    DigestStore,
    PullState,
    RepoInfo,
    StoredDigest,
    _dumps,
    _entry,
    _pack,
    _unpack,
    row_labels,
)


class PostgresDigestStore(DigestStore):
    def __init__(self, database: Database, *, recent_seconds: float,
                 clock: Callable[[], float] = time.time) -> None:
        # Not the SQLite store's __init__: there is no writer thread here.
        self._db = database
        self._recent = recent_seconds
        self._clock = clock

    # -- writes (the digest job) ----------------------------------------------------

    async def record(self, pull: PullState, digests: tuple[StoredDigest, ...] = ()) -> None:
        """As the SQLite store's `record`."""
        key = pull.repo.lower()

        def write(conn: Conn) -> None:
            now = self._clock()
            row = conn.execute(
                "INSERT INTO view_repos (repo_key, repo, private, version)"
                " VALUES (%s, %s, %s, 1) ON CONFLICT (repo_key) DO UPDATE"
                " SET private = excluded.private, version = view_repos.version + 1"
                " RETURNING version",
                (key, pull.repo, pull.private),
            ).fetchone()
            assert row is not None
            changed_at = float(row[0])
            known = conn.execute(
                "SELECT labels, pr_labels FROM view_prs WHERE repo_key = %s AND number = %s",
                (key, pull.number),
            ).fetchone()
            if known is None and not digests:
                return
            labels = row_labels(pull, digests, known)
            conn.execute(
                f"INSERT INTO view_prs (repo_key, {_PR_WRITE.removeprefix('repo, ')})"  # noqa: S608
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (repo_key, number) DO UPDATE SET title = excluded.title,"
                " author = excluded.author, url = excluded.url,"
                " pr_labels = excluded.pr_labels, labels = excluded.labels,"
                " draft = excluded.draft, state = excluded.state, merged = excluded.merged,"
                " updated_at = excluded.updated_at, closed_at = excluded.closed_at,"
                " changed_at = excluded.changed_at, requested = excluded.requested",
                (key, pull.number, pull.title, pull.author, pull.url,
                 _dumps(list(pull.labels)), _dumps(labels), pull.draft, pull.state,
                 pull.merged, pull.updated_at, pull.closed_at, changed_at,
                 _dumps(list(pull.requested))),
            )
            for digest in digests:
                conn.execute(
                    "INSERT INTO view_digests VALUES (%s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (repo_key, number, lang) DO UPDATE"
                    " SET summary = excluded.summary, payload = excluded.payload,"
                    " stored_at = excluded.stored_at",
                    (key, pull.number, digest.lang, _dumps(digest.summary.to_json()),
                     _pack(digest.payload), now),
                )
            # Closed PRs stay only as long as "recently merged" shows them.
            conn.execute(
                "DELETE FROM view_digests d USING view_prs p WHERE p.repo_key = %s"
                " AND d.repo_key = p.repo_key AND d.number = p.number AND p.state != 'open'"
                " AND COALESCE(p.closed_at, p.updated_at) < %s",
                (key, now - self._recent))
            conn.execute(
                "DELETE FROM view_prs WHERE repo_key = %s AND state != 'open'"
                " AND COALESCE(closed_at, updated_at) < %s", (key, now - self._recent))

        await self._db.run(write)

    # -- reads (the pages) ------------------------------------------------------------

    async def database_bytes(self) -> int:
        """The view's tables on disk (indexes included)."""

        def read(conn: Conn) -> int:
            row = conn.execute(
                "SELECT pg_total_relation_size('view_repos') + pg_total_relation_size("
                "'view_prs') + pg_total_relation_size('view_digests')").fetchone()
            return int(row[0]) if row else 0

        return await self._db.run(read, transaction=False)

    async def repo_info(self, repo: str) -> RepoInfo | None:
        def read(conn: Conn) -> RepoInfo | None:
            row = conn.execute(
                "SELECT repo, private, version FROM view_repos WHERE repo_key = %s",
                (repo.lower(),),
            ).fetchone()
            return RepoInfo(row[0], bool(row[1]), int(row[2])) if row else None

        return await self._db.run(read, transaction=False)

    async def entries(
        self, repo: str, lang: Lang, *, changed_since: float | None = None
    ) -> list[Changed]:
        def read(conn: Conn) -> list[Changed]:
            rows = conn.execute(
                f"SELECT {_PR_COLUMNS}, COALESCE(d.summary, o.summary), p.changed_at"  # noqa: S608
                " FROM view_prs p"
                " LEFT JOIN view_digests d ON d.repo_key = p.repo_key AND d.number = p.number"
                " AND d.lang = %s"
                " LEFT JOIN view_digests o ON o.repo_key = p.repo_key AND o.number = p.number"
                " AND o.lang != %s"
                " WHERE p.repo_key = %s AND p.changed_at >= %s"
                " AND (d.summary IS NOT NULL OR o.summary IS NOT NULL)",
                (lang, lang, repo.lower(), -1.0 if changed_since is None else changed_since),
            ).fetchall()
            return [Changed(_entry(row, json.loads(row[_AT])), float(row[_AT + 1]))
                    for row in rows]

        return await self._db.run(read, transaction=False)

    async def entry(self, repo: str, number: int, lang: Lang) -> ApiItem | None:
        def read(conn: Conn) -> ApiItem | None:
            row = conn.execute(
                f"SELECT {_PR_COLUMNS}, d.summary, d.payload FROM view_prs p"  # noqa: S608
                " JOIN view_digests d ON d.repo_key = p.repo_key AND d.number = p.number"
                " WHERE p.repo_key = %s AND p.number = %s ORDER BY d.lang = %s DESC LIMIT 1",
                (repo.lower(), number, lang),
            ).fetchone()
            if row is None:
                return None
            return ApiItem(_entry(row, json.loads(row[_AT])), _unpack(bytes(row[_AT + 1])))

        return await self._db.run(read, transaction=False)

    async def page(
        self, repo: str, lang: Lang, *, label: str | None = None, since: float | None = None,
        limit: int = 50, offset: int = 0,
    ) -> tuple[list[ApiItem], bool]:
        def read(conn: Conn) -> tuple[list[ApiItem], bool]:
            where = ["p.repo_key = %s"]
            params: list[Any] = [repo.lower()]
            if label is not None:
                # `labels` is compact ASCII JSON (`_dumps`): a label is listed when its
                # JSON token sits between two of the array's separators. A quote inside
                # a label is escaped, so no label can fake another's token.
                where.append("strpos(',' || substr(p.labels, 2, length(p.labels) - 2)"
                             " || ',', %s) > 0")
                params.append(f",{_dumps(label)},")
            if since is not None:
                where.append("p.updated_at >= %s")
                params.append(since)
            rows = conn.execute(
                f"SELECT {_PR_COLUMNS}, COALESCE(d.summary, o.summary),"  # noqa: S608
                " COALESCE(d.payload, o.payload) FROM view_prs p"
                " LEFT JOIN view_digests d ON d.repo_key = p.repo_key AND d.number = p.number"
                " AND d.lang = %s"
                " LEFT JOIN view_digests o ON o.repo_key = p.repo_key AND o.number = p.number"
                " AND o.lang != %s"
                f" WHERE {' AND '.join(where)}"
                " AND (d.payload IS NOT NULL OR o.payload IS NOT NULL)"
                " ORDER BY p.updated_at DESC, p.number DESC LIMIT %s OFFSET %s",
                (lang, lang, *params, limit + 1, offset),
            ).fetchall()
            items = [ApiItem(_entry(r, json.loads(r[_AT])), _unpack(bytes(r[_AT + 1])))
                     for r in rows]
            return items[:limit], len(items) > limit

        return await self._db.run(read, transaction=False)
