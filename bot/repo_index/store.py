"""The symbol index in SQLite (the service's database by default), one generation per
indexed commit; the newest `KEEP_GENERATIONS` ready ones are kept, older ones deleted.

Writes go through their own connection in short transactions (one per batch of files),
so the job store's writer thread never waits long for the database lock. Reads open a
view on the newest ready generation; a generation still being built is never read.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.core.repo_index.model import (
    CallSite,
    ClassRecord,
    ClassRef,
    FileRecord,
    FunctionRecord,
)

KEEP_GENERATIONS = 2
_BATCH_FILES = 200
_IN_BATCH = 500  # bound variables per IN list, far below SQLite's limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS index_generations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    files INTEGER NOT NULL DEFAULT 0,
    skipped TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS index_generations_repo ON index_generations (repo, state, id);
CREATE TABLE IF NOT EXISTS index_files (
    gen INTEGER NOT NULL, path TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (gen, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_imports (
    gen INTEGER NOT NULL, module TEXT NOT NULL, path TEXT NOT NULL,
    PRIMARY KEY (gen, module, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_bases (
    gen INTEGER NOT NULL, base TEXT NOT NULL, path TEXT NOT NULL, class TEXT NOT NULL,
    bases TEXT NOT NULL,
    PRIMARY KEY (gen, base, path, class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_methods (
    gen INTEGER NOT NULL, path TEXT NOT NULL, class TEXT NOT NULL, name TEXT NOT NULL,
    PRIMARY KEY (gen, path, class, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS index_methods_name ON index_methods (gen, name);
CREATE TABLE IF NOT EXISTS index_calls (
    gen INTEGER NOT NULL, callee TEXT NOT NULL, path TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (gen, callee, path)
) WITHOUT ROWID;
"""
_TABLES = ("index_files", "index_imports", "index_bases", "index_methods", "index_calls")


@dataclass(frozen=True)
class Generation:
    id: int
    repo: str
    commit: str
    state: str
    started_at: float
    finished_at: float | None
    files: int
    skipped: dict[str, int]


def connect(path: Path | str, *, busy_timeout_ms: int = 10_000) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    _drop_outdated(conn)
    conn.executescript(_SCHEMA)
    return conn


def _drop_outdated(conn: sqlite3.Connection) -> None:
    # The index is a cache: tables of an older layout are dropped and rebuilt on refresh.
    columns = {r["name"] for r in conn.execute("PRAGMA table_info(index_files)")}
    if "imports" in columns:
        for table in (*_TABLES, "index_generations"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")


@contextmanager
def opened(path: Path | str) -> Iterator[sqlite3.Connection]:
    with closing(connect(path)) as conn:
        yield conn


def _generation(row: sqlite3.Row) -> Generation:
    return Generation(
        id=row["id"], repo=row["repo"], commit=row["commit_sha"], state=row["state"],
        started_at=row["started_at"], finished_at=row["finished_at"], files=row["files"],
        skipped=json.loads(row["skipped"]),
    )


def latest(conn: sqlite3.Connection, repo: str | None = None) -> Generation | None:
    """The newest ready generation (of `repo`, or of any repository)."""
    sql = "SELECT * FROM index_generations WHERE state = 'ready'"
    args: tuple[str, ...] = ()
    if repo is not None:
        sql += " AND repo = ?"
        args = (repo,)
    row = conn.execute(sql + " ORDER BY id DESC LIMIT 1", args).fetchone()
    return _generation(row) if row else None


def generations(conn: sqlite3.Connection, repo: str) -> list[Generation]:
    rows = conn.execute(
        "SELECT * FROM index_generations WHERE repo = ? ORDER BY id DESC", (repo,)
    ).fetchall()
    return [_generation(row) for row in rows]


# --- records <-> rows (compact JSON arrays: the records of a vLLM-sized tree are ~100k) ---


def _encode(record: FileRecord) -> str:
    # Calls live in index_calls only: the record is read for siblings, never for calls.
    return json.dumps({
        "m": record.module,
        "c": [[c.name, list(c.bases), c.line, c.end_line] for c in record.classes],
        "f": [
            [f.name, f.class_name, f.line, f.end_line, f.body_line, list(f.decorators),
             list(f.params)]
            for f in record.functions
        ],
    }, separators=(",", ":"))


def _decode(path: str, text: str) -> FileRecord:
    data = json.loads(text)
    return FileRecord(
        path=path,
        module=data["m"],
        classes=tuple(ClassRecord(n, tuple(b), line, end) for n, b, line, end in data["c"]),
        functions=tuple(
            FunctionRecord(n, cls, line, end, body, tuple(decs), tuple(params))
            for n, cls, line, end, body, decs, params in data["f"]
        ),
    )


class IndexWriter:
    """Writes one generation; `finish` makes it readable, `abort` deletes it."""

    def __init__(
        self, conn: sqlite3.Connection, repo: str, commit: str, *, gen: int | None = None
    ) -> None:
        """A new generation, or (`gen`) one another process started with `begin`."""
        self._conn = conn
        self.repo = repo
        self.commit = commit
        self.gen = begin(conn, repo, commit) if gen is None else gen
        self.files = 0
        self.skipped: Counter[str] = Counter()
        self._pending: list[FileRecord] = []

    def add(self, record: FileRecord) -> None:
        self._pending.append(record)
        self.files += 1
        if len(self._pending) >= _BATCH_FILES:
            self.flush()

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def flush(self) -> None:
        if not self._pending:
            return
        gen = self.gen
        files: list[tuple[int, str, str]] = []
        imports: list[tuple[int, str, str]] = []
        bases: list[tuple[int, str, str, str, str]] = []
        methods: list[tuple[int, str, str, str]] = []
        calls: list[tuple[int, str, str, int]] = []
        for r in self._pending:
            files.append((gen, r.path, _encode(r)))
            imports.extend((gen, module, r.path) for module in dict.fromkeys(r.imports))
            for c in r.classes:
                joined = " ".join(c.bases)
                bases.extend((gen, b, r.path, c.name, joined) for b in dict.fromkeys(c.bases))
            counts: Counter[str] = Counter()
            for f in r.functions:
                if f.class_name is not None:
                    methods.append((gen, r.path, f.class_name, f.name))
                counts.update(f.calls)
            calls.extend((gen, callee, r.path, n) for callee, n in counts.items())
        self._pending = []
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO index_files VALUES (?, ?, ?)", files)
            conn.executemany("INSERT OR IGNORE INTO index_imports VALUES (?, ?, ?)", imports)
            conn.executemany("INSERT OR IGNORE INTO index_bases VALUES (?, ?, ?, ?, ?)", bases)
            conn.executemany("INSERT OR IGNORE INTO index_methods VALUES (?, ?, ?, ?)", methods)
            conn.executemany("INSERT OR REPLACE INTO index_calls VALUES (?, ?, ?, ?)", calls)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def finish(self) -> Generation:
        self.flush()
        self._conn.execute(
            "UPDATE index_generations SET state = 'ready', finished_at = ?, files = ?,"
            " skipped = ? WHERE id = ?",
            (time.time(), self.files, json.dumps(dict(sorted(self.skipped.items()))), self.gen),
        )
        prune(self._conn, self.repo)
        row = self._conn.execute(
            "SELECT * FROM index_generations WHERE id = ?", (self.gen,)
        ).fetchone()
        return _generation(row)

    def abort(self) -> None:
        self._pending = []
        _delete(self._conn, self.gen)


def begin(conn: sqlite3.Connection, repo: str, commit: str) -> int:
    """Start a generation in state `building`: invisible to readers until finished."""
    cur = conn.execute(
        "INSERT INTO index_generations (repo, commit_sha, state, started_at)"
        " VALUES (?, ?, 'building', ?)",
        (repo, commit, time.time()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def discard(conn: sqlite3.Connection, gen: int) -> None:
    """Delete a generation that will never finish (its builder failed or was killed)."""
    _delete(conn, gen)


def _delete(conn: sqlite3.Connection, gen: int) -> None:
    for table in _TABLES:
        conn.execute(f"DELETE FROM {table} WHERE gen = ?", (gen,))  # noqa: S608 - fixed names
    conn.execute("DELETE FROM index_generations WHERE id = ?", (gen,))


def prune(conn: sqlite3.Connection, repo: str, keep: int = KEEP_GENERATIONS) -> int:
    """Delete all but the newest `keep` ready generations, and builds that died midway."""
    ready = [g.id for g in generations(conn, repo) if g.state == "ready"]
    newest = ready[0] if ready else 0
    doomed = [
        g.id for g in generations(conn, repo)
        if (g.state == "ready" and g.id not in ready[:keep])
        or (g.state != "ready" and g.id < newest)
    ]
    for gen in doomed:
        _delete(conn, gen)
    return len(doomed)


class SqliteIndexView:
    """IndexView over one ready generation."""

    def __init__(self, conn: sqlite3.Connection, generation: Generation) -> None:
        self._conn = conn
        self.generation = generation
        self._gen = generation.id

    @property
    def commit(self) -> str:
        return self.generation.commit

    def file(self, path: str) -> FileRecord | None:
        row = self._conn.execute(
            "SELECT record FROM index_files WHERE gen = ? AND path = ?", (self._gen, path)
        ).fetchone()
        # Without `imports`: the queries ask `importers` instead, an indexed look-up.
        return _decode(path, row["record"]) if row else None

    def _in_batches(self, sql: str, values: Collection[str]) -> list[sqlite3.Row]:
        """`sql` holds one `{marks}` for an IN list; run it over `values` in batches."""
        rows: list[sqlite3.Row] = []
        ordered = sorted(values)
        for start in range(0, len(ordered), _IN_BATCH):
            batch = ordered[start:start + _IN_BATCH]
            marks = ",".join("?" * len(batch))
            rows.extend(self._conn.execute(sql.format(marks=marks), (self._gen, *batch)))
        return rows

    def subclasses(self, bases: Collection[str]) -> Sequence[ClassRef]:
        rows = self._in_batches(
            "SELECT path, class, bases FROM index_bases WHERE gen = ? AND base IN ({marks})",
            bases,
        )
        found = {(r["path"], r["class"]): r["bases"] for r in rows}
        return [ClassRef(path, name, tuple(b.split())) for (path, name), b in found.items()]

    def classes_defining(self, method: str) -> frozenset[tuple[str, str]]:
        rows = self._conn.execute(
            "SELECT path, class FROM index_methods WHERE gen = ? AND name = ?",
            (self._gen, method),
        ).fetchall()
        return frozenset((r["path"], r["class"]) for r in rows)

    def call_sites(self, callee: str, limit: int) -> Sequence[CallSite]:
        rows = self._conn.execute(
            "SELECT path, count FROM index_calls WHERE gen = ? AND callee = ?"
            " ORDER BY path LIMIT ?",
            (self._gen, callee, limit),
        ).fetchall()
        return [CallSite(r["path"], callee, r["count"]) for r in rows]

    def importers(self, modules: Collection[str]) -> frozenset[str]:
        rows = self._in_batches(
            "SELECT path FROM index_imports WHERE gen = ? AND module IN ({marks})", modules
        )
        return frozenset(r["path"] for r in rows)

    def records(self) -> Iterator[FileRecord]:
        rows = self._conn.execute(
            "SELECT path, record FROM index_files WHERE gen = ? ORDER BY path", (self._gen,)
        ).fetchall()
        return (_decode(r["path"], r["record"]) for r in rows)

    def paths(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT path FROM index_files WHERE gen = ? ORDER BY path", (self._gen,)
        ).fetchall()
        return [r["path"] for r in rows]
