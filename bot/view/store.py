"""The label view's copy of every converged digest, in the service's SQLite file.

A cache like the ledger (docs/architecture.md): losing it empties the view until the
next job or sweep. Writes and reads go through the ledger's writer thread, so the
view never opens a second writer on the file and never blocks an event loop.

Per PR one row of GitHub state (title, labels, draft/closed, visibility) and one row
per language of its digest: the `--format json` payload (compressed: the Markdown is
most of it) and the small summary the page lists, so a page of 500 PRs parses only
the summaries.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from bot.core.label_view import Summary, ViewEntry
from bot.core.vocabulary import Lang
from bot.queue.sqlite_writer import SqliteWriter

SCHEMA = """
CREATE TABLE IF NOT EXISTS view_repos (
    repo TEXT PRIMARY KEY COLLATE NOCASE,
    private INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS view_prs (
    repo TEXT NOT NULL COLLATE NOCASE,
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    url TEXT NOT NULL,
    pr_labels TEXT NOT NULL,
    labels TEXT NOT NULL,
    draft INTEGER NOT NULL,
    state TEXT NOT NULL,
    merged INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    closed_at REAL,
    changed_at REAL NOT NULL,
    requested TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (repo, number)
);
CREATE INDEX IF NOT EXISTS view_prs_updated ON view_prs (repo, updated_at);
CREATE INDEX IF NOT EXISTS view_prs_changed ON view_prs (repo, changed_at);
CREATE TABLE IF NOT EXISTS view_digests (
    repo TEXT NOT NULL COLLATE NOCASE,
    number INTEGER NOT NULL,
    lang TEXT NOT NULL,
    summary TEXT NOT NULL,
    payload BLOB NOT NULL,
    stored_at REAL NOT NULL,
    PRIMARY KEY (repo, number, lang)
);
"""


@dataclass(frozen=True)
class PullState:
    """A PR as GitHub shows it, at the moment the job converged it."""

    repo: str
    number: int
    title: str
    author: str
    url: str
    labels: tuple[str, ...]
    draft: bool
    state: str
    merged: bool
    private: bool
    updated_at: float
    closed_at: float | None = None
    requested: tuple[str, ...] = ()  # reviewers requested on GitHub; teams as org/slug


@dataclass(frozen=True)
class StoredDigest:
    lang: Lang
    payload: Mapping[str, Any]  # the digest's JSON contract, as `digest_json` made it
    summary: Summary


@dataclass(frozen=True)
class RepoInfo:
    repo: str
    private: bool
    version: int


@dataclass(frozen=True)
class Changed:
    entry: ViewEntry
    changed_at: float  # when the view last wrote this PR's row


@dataclass
class ApiItem:
    entry: ViewEntry
    raw: bytes  # the digest's JSON (ASCII), as stored

    @cached_property
    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.raw)
        return data


def create_schema(path: Path | str) -> None:
    """Create the view's tables (a short-lived connection; the writer owns the file after)."""
    if str(path) == ":memory:":
        raise ValueError("the label view needs a database file, not :memory:")
    conn = sqlite3.connect(str(path), timeout=5.0)
    try:
        conn.executescript(SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(view_prs)")}
        if "changed_at" not in columns:
            # A file from before `changed_at`: the view is a cache, so start it afresh.
            conn.executescript("DROP TABLE view_prs; DROP TABLE view_digests;"
                               " DROP TABLE view_repos;" + SCHEMA)
        elif "requested" not in columns:
            # Forward only: a file from before issue 43 keeps its rows; each PR's
            # requested reviewers appear with its next job.
            conn.execute("ALTER TABLE view_prs ADD COLUMN requested TEXT NOT NULL DEFAULT '[]'")
    finally:
        conn.close()


def _dumps(data: Any) -> str:
    # ASCII: text with a lone surrogate cannot be bound as UTF-8; escaped, it can.
    return json.dumps(data, separators=(",", ":"))


def _pack(payload: Mapping[str, Any]) -> bytes:
    # ASCII JSON: PR text may carry lone surrogates that UTF-8 cannot encode, and the
    # API serves these bytes as they are (zlib takes back what the escapes cost).
    return zlib.compress(json.dumps(payload, separators=(",", ":")).encode("ascii"), 6)


def _unpack(blob: bytes) -> bytes:
    return zlib.decompress(blob)


def row_labels(pull: PullState, digests: tuple[StoredDigest, ...],
               known: Sequence[Any] | None) -> list[str]:
    """The labels a PR's row lists: its own, then the areas' labels its newest digest
    suggests. `known` is the stored row's (labels, pr_labels), None for a new row."""
    if digests:
        area_labels = tuple(label for d in digests[:1] for label in d.summary.area_labels)
        return list(dict.fromkeys((*pull.labels, *area_labels)))
    # No new digest: keep the areas' labels the last one suggested.
    assert known is not None
    old_own = set(json.loads(known[1]))
    kept = [x for x in json.loads(known[0]) if x not in old_own]
    return list(dict.fromkeys((*pull.labels, *kept)))


class DigestStore:
    def __init__(
        self, writer: SqliteWriter, *, recent_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._writer = writer
        self._recent = recent_seconds
        self._clock = clock
        self._last_write = 0.0

    @property
    def recent_seconds(self) -> float:
        return self._recent

    # -- writes (the digest job) ----------------------------------------------------

    async def record(self, pull: PullState, digests: tuple[StoredDigest, ...] = ()) -> None:
        """Store the PR's state and, when the job computed them, its digests.

        A PR without any stored digest gets no row from a state alone: a closed or
        draft PR the view never listed stays out of it."""

        def write(conn: sqlite3.Connection) -> None:
            # Taken on the writer thread, which runs writes one at a time: `changed_at`
            # never goes backwards, so a reader that saw time T misses no write before T.
            now = self._last_write = max(self._clock(), self._last_write)
            conn.execute(
                "INSERT INTO view_repos (repo, private, version) VALUES (?, ?, 1)"
                " ON CONFLICT (repo) DO UPDATE SET private = excluded.private,"
                " version = version + 1",
                (pull.repo, int(pull.private)),
            )
            known = conn.execute(
                "SELECT labels, pr_labels FROM view_prs WHERE repo = ? AND number = ?",
                (pull.repo, pull.number),
            ).fetchone()
            if known is None and not digests:
                return
            labels = row_labels(pull, digests, known)
            conn.execute(
                f"INSERT OR REPLACE INTO view_prs ({_PR_WRITE})"  # noqa: S608
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (pull.repo, pull.number, pull.title, pull.author, pull.url,
                 _dumps(list(pull.labels)), _dumps(labels), int(pull.draft), pull.state,
                 int(pull.merged), pull.updated_at, pull.closed_at, now,
                 _dumps(list(pull.requested))),
            )
            for digest in digests:
                conn.execute(
                    "INSERT OR REPLACE INTO view_digests VALUES (?, ?, ?, ?, ?, ?)",
                    (pull.repo, pull.number, digest.lang, _dumps(digest.summary.to_json()),
                     _pack(digest.payload), now),
                )
            self._forget_old(conn, pull.repo, now)

        await self._writer.run(write)

    def _forget_old(self, conn: sqlite3.Connection, repo: str, now: float) -> None:
        # Closed PRs stay only as long as "recently merged" shows them.
        old = [row[0] for row in conn.execute(
            "SELECT number FROM view_prs WHERE repo = ? AND state != 'open'"
            " AND COALESCE(closed_at, updated_at) < ?", (repo, now - self._recent))]
        for number in old:
            conn.execute("DELETE FROM view_prs WHERE repo = ? AND number = ?", (repo, number))
            conn.execute("DELETE FROM view_digests WHERE repo = ? AND number = ?",
                         (repo, number))

    # -- reads (the pages) ------------------------------------------------------------

    async def database_bytes(self) -> int:
        """The SQLite file's size as this connection sees it (the WAL's pages included)."""

        def read(conn: sqlite3.Connection) -> int:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
            return int(pages) * int(size)

        return await self._writer.run(read)

    async def repo_info(self, repo: str) -> RepoInfo | None:
        def read(conn: sqlite3.Connection) -> RepoInfo | None:
            row = conn.execute(
                "SELECT repo, private, version FROM view_repos WHERE repo = ?", (repo,)
            ).fetchone()
            return RepoInfo(row[0], bool(row[1]), int(row[2])) if row else None

        return await self._writer.run(read)

    async def entries(
        self, repo: str, lang: Lang, *, changed_since: float | None = None
    ) -> list[Changed]:
        """Stored PRs of `repo` with their summary in `lang` (else the other language);
        with `changed_since`, only those written at or after that moment."""

        def read(conn: sqlite3.Connection) -> list[Changed]:
            rows = conn.execute(
                f"SELECT {_PR_COLUMNS}, COALESCE(d.summary, o.summary), p.changed_at"  # noqa: S608
                " FROM view_prs p"
                " LEFT JOIN view_digests d ON d.repo = p.repo AND d.number = p.number"
                " AND d.lang = ?"
                " LEFT JOIN view_digests o ON o.repo = p.repo AND o.number = p.number"
                " AND o.lang != ?"
                " WHERE p.repo = ? AND p.changed_at >= ?"
                " AND (d.summary IS NOT NULL OR o.summary IS NOT NULL)",
                (lang, lang, repo, -1.0 if changed_since is None else changed_since),
            ).fetchall()
            return [Changed(_entry(row, json.loads(row[_AT])), float(row[_AT + 1]))
                    for row in rows]

        return await self._writer.run(read)

    async def entry(self, repo: str, number: int, lang: Lang) -> ApiItem | None:
        def read(conn: sqlite3.Connection) -> ApiItem | None:
            row = conn.execute(
                f"SELECT {_PR_COLUMNS}, d.summary, d.payload FROM view_prs p"  # noqa: S608
                " JOIN view_digests d ON d.repo = p.repo AND d.number = p.number"
                " WHERE p.repo = ? AND p.number = ? ORDER BY d.lang = ? DESC LIMIT 1",
                (repo, number, lang),
            ).fetchone()
            if row is None:
                return None
            return ApiItem(_entry(row, json.loads(row[_AT])), _unpack(row[_AT + 1]))

        return await self._writer.run(read)

    async def page(
        self, repo: str, lang: Lang, *, label: str | None = None, since: float | None = None,
        limit: int = 50, offset: int = 0,
    ) -> tuple[list[ApiItem], bool]:
        """Open and recently closed PRs, freshest first; True when more follow."""

        def read(conn: sqlite3.Connection) -> tuple[list[ApiItem], bool]:
            where = ["p.repo = ?"]
            params: list[Any] = [repo]
            if label is not None:
                where.append("EXISTS (SELECT 1 FROM json_each(p.labels) WHERE value = ?)")
                params.append(label)
            if since is not None:
                where.append("p.updated_at >= ?")
                params.append(since)
            rows = conn.execute(
                f"SELECT {_PR_COLUMNS}, COALESCE(d.summary, o.summary),"  # noqa: S608
                " COALESCE(d.payload, o.payload) FROM view_prs p"
                " LEFT JOIN view_digests d ON d.repo = p.repo AND d.number = p.number"
                " AND d.lang = ?"
                " LEFT JOIN view_digests o ON o.repo = p.repo AND o.number = p.number"
                " AND o.lang != ?"
                f" WHERE {' AND '.join(where)}"
                " AND (d.payload IS NOT NULL OR o.payload IS NOT NULL)"
                " ORDER BY p.updated_at DESC, p.number DESC LIMIT ? OFFSET ?",
                (lang, lang, *params, limit + 1, offset),
            ).fetchall()
            items = [ApiItem(_entry(r, json.loads(r[_AT])), _unpack(r[_AT + 1])) for r in rows]
            return items[:limit], len(items) > limit

        return await self._writer.run(read)


_PR_COLUMNS = (
    "p.number, p.title, p.author, p.url, p.pr_labels, p.labels, p.draft, p.state, p.merged,"
    " p.updated_at, p.closed_at, p.requested"
)
# Where a read's own columns (the summary, then the payload or `changed_at`) start.
_AT = _PR_COLUMNS.count(",") + 1
# A row's columns by name: a column added later goes last, without a positional VALUES.
_PR_WRITE = ("repo, number, title, author, url, pr_labels, labels, draft, state, merged,"
             " updated_at, closed_at, changed_at, requested")


def _entry(row: sqlite3.Row | tuple[Any, ...], summary: Mapping[str, Any]) -> ViewEntry:
    parsed = Summary.from_json(summary)
    pr_labels = tuple(json.loads(row[4]))
    # Area labels as stored with the PR (they outlive a digest in the other language).
    areas = tuple(x for x in json.loads(row[5]) if x not in pr_labels)
    return ViewEntry(
        number=int(row[0]), title=str(row[1]), author=str(row[2]), url=str(row[3]),
        pr_labels=pr_labels,
        summary=replace(parsed, area_labels=areas),
        draft=bool(row[6]), state=str(row[7]), merged=bool(row[8]),
        updated_at=float(row[9]), closed_at=None if row[10] is None else float(row[10]),
        requested=tuple(str(name) for name in json.loads(row[11] or "[]")),
    )
