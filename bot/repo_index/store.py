"""The symbol index in SQLite (the service's database by default), one generation per
indexed commit; the newest `KEEP_GENERATIONS` ready ones are kept, older ones deleted.

Records are stored once per (path, git blob SHA) and generations point at them: a
generation is its list of (path, record), so two commits share every file that did not
change, and a refresh parses only the files whose blob changed (bot/repo_index/build.py).
The look-up tables (imports, bases, methods, calls) hang off the records too, and a
query joins them with the generation's list. Records no generation names are deleted
when a generation is pruned.

Writes go through their own connection in short transactions (one per batch of files),
so the job store's writer thread never waits long for the database lock. Reads open a
view on the newest ready generation; a generation still being built is never read.
"""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.core.repo_index.model import (
    CallSite,
    ClassRecord,
    ClassRef,
    FileRecord,
    FunctionRecord,
    module_name,
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
    skipped TEXT NOT NULL DEFAULT '{}',
    reused INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS index_generations_repo ON index_generations (repo, state, id);
CREATE TABLE IF NOT EXISTS index_records (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    record BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS index_records_blob ON index_records (path, blob);
CREATE TABLE IF NOT EXISTS index_gen_files (
    gen INTEGER NOT NULL, path TEXT NOT NULL, rec INTEGER NOT NULL,
    PRIMARY KEY (gen, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS index_gen_files_rec ON index_gen_files (rec, gen);
CREATE TABLE IF NOT EXISTS index_imports (
    module TEXT NOT NULL, rec INTEGER NOT NULL,
    PRIMARY KEY (module, rec)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_bases (
    base TEXT NOT NULL, rec INTEGER NOT NULL, class TEXT NOT NULL, bases TEXT NOT NULL,
    PRIMARY KEY (base, rec, class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_methods (
    name TEXT NOT NULL, rec INTEGER NOT NULL, class TEXT NOT NULL,
    PRIMARY KEY (name, rec, class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_calls (
    callee TEXT NOT NULL, rec INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (callee, rec)
) WITHOUT ROWID;
"""
_DERIVED = ("index_imports", "index_bases", "index_methods", "index_calls")
# Tables of the layout before records were shared between generations.
_OUTDATED = ("index_files", "index_imports", "index_bases", "index_methods", "index_calls",
             "index_generations")


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
    reused: int = 0  # files whose record an earlier generation had already


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
    old = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'index_files'"
    ).fetchone()
    if old:
        for table in _OUTDATED:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


@contextmanager
def opened(path: Path | str) -> Iterator[sqlite3.Connection]:
    with closing(connect(path)) as conn:
        yield conn


def _generation(row: sqlite3.Row) -> Generation:
    return Generation(
        id=row["id"], repo=row["repo"], commit=row["commit_sha"], state=row["state"],
        started_at=row["started_at"], finished_at=row["finished_at"], files=row["files"],
        skipped=json.loads(row["skipped"]), reused=row["reused"],
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


# --- records <-> rows: compact JSON arrays, deflated (a vLLM-sized tree has ~80k defs) ---


def _encode(record: FileRecord) -> bytes:
    # Imports and calls live in their look-up tables: the record is read for what is
    # defined where, never for who calls or imports what.
    functions = []
    for f in record.functions:
        row: list[object] = [
            f.name, f.class_name, f.line, f.end_line - f.line, f.body_line - f.line,
            list(f.decorators), list(f.params), list(f.calls), f.first_line, f.doc_line,
            f.doc_end, f.nested_in, f.signature,
        ]
        while len(row) > 7 and not row[-1]:
            row.pop()  # most functions have no local calls, docstring or nesting
        functions.append(row)
    text = json.dumps({
        "c": [[c.name, list(c.bases), c.line, c.end_line - c.line] for c in record.classes],
        "f": functions,
    }, separators=(",", ":"))
    return zlib.compress(text.encode(), 6)


def _decode(path: str, data: bytes, blob: str = "") -> FileRecord:
    parsed = json.loads(zlib.decompress(data))
    functions = []
    for row in parsed["f"]:
        name, cls, line, span, body, decs, params, *rest = row
        rest += [[], 0, 0, 0, None, ""][len(rest):]
        calls, first, doc, doc_end, nested, signature = rest
        functions.append(FunctionRecord(
            name, cls, line, line + span, line + body, tuple(decs), tuple(params), tuple(calls),
            first, doc, doc_end, nested, signature,
        ))
    return FileRecord(
        path=path,
        module=module_name(path),
        classes=tuple(ClassRecord(n, tuple(b), line, line + span)
                      for n, b, line, span in parsed["c"]),
        functions=tuple(functions),
        blob=blob,
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
        self.reused = 0
        self.skipped: Counter[str] = Counter()
        self._pending: list[FileRecord] = []
        self._pointers: list[tuple[int, str, int]] = []
        # Every record the database holds, by (path, blob): what a file that did not
        # change since an earlier generation points at instead of being parsed again.
        self._known: dict[tuple[str, str], int] = {
            (r[0], r[1]): r[2] for r in conn.execute("SELECT path, blob, id FROM index_records")
        }

    def reuse(self, path: str, blob: str) -> bool:
        """Point this generation at the stored record of `path` with this blob, if any."""
        rec = self._known.get((path, blob)) if blob else None
        if rec is None:
            return False
        self._pointers.append((self.gen, path, rec))
        self.files += 1
        self.reused += 1
        if len(self._pointers) >= _BATCH_FILES * 10:
            self.flush()
        return True

    def add(self, record: FileRecord) -> None:
        self._pending.append(record)
        self.files += 1
        if len(self._pending) >= _BATCH_FILES:
            self.flush()

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def flush(self) -> None:
        if not self._pending and not self._pointers:
            return
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._write_records()
            conn.executemany(
                "INSERT OR REPLACE INTO index_gen_files VALUES (?, ?, ?)", self._pointers
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            self._pending = []
            self._pointers = []

    def _write_records(self) -> None:
        conn = self._conn
        imports: list[tuple[str, int]] = []
        bases: list[tuple[str, int, str, str]] = []
        methods: list[tuple[str, int, str]] = []
        calls: list[tuple[str, int, int]] = []
        for r in self._pending:
            key = (r.path, r.blob or f"unnamed:{self.gen}:{r.path}")
            rec = self._known.get(key)
            if rec is None:
                cur = conn.execute(
                    "INSERT INTO index_records (path, blob, record) VALUES (?, ?, ?)",
                    (key[0], key[1], _encode(r)),
                )
                assert cur.lastrowid is not None
                rec = cur.lastrowid
                self._known[key] = rec
                imports.extend((module, rec) for module in dict.fromkeys(r.imports))
                for c in r.classes:
                    joined = " ".join(c.bases)
                    bases.extend((b, rec, c.name, joined) for b in dict.fromkeys(c.bases))
                methods.extend(
                    (f.name, rec, f.class_name) for f in r.functions
                    if f.class_name is not None and f.nested_in is None
                )
                calls.extend((callee, rec, n) for callee, n in r.calls)
            self._pointers.append((self.gen, r.path, rec))
        conn.executemany("INSERT OR IGNORE INTO index_imports VALUES (?, ?)", imports)
        conn.executemany("INSERT OR IGNORE INTO index_bases VALUES (?, ?, ?, ?)", bases)
        conn.executemany("INSERT OR IGNORE INTO index_methods VALUES (?, ?, ?)", methods)
        conn.executemany("INSERT OR REPLACE INTO index_calls VALUES (?, ?, ?)", calls)

    def finish(self) -> Generation:
        self.flush()
        self._conn.execute(
            "UPDATE index_generations SET state = 'ready', finished_at = ?, files = ?,"
            " skipped = ?, reused = ? WHERE id = ?",
            (time.time(), self.files, json.dumps(dict(sorted(self.skipped.items()))),
             self.reused, self.gen),
        )
        prune(self._conn, self.repo)
        row = self._conn.execute(
            "SELECT * FROM index_generations WHERE id = ?", (self.gen,)
        ).fetchone()
        return _generation(row)

    def abort(self) -> None:
        self._pending = []
        self._pointers = []
        _delete(self._conn, [self.gen])


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
    _delete(conn, [gen])


def _delete(conn: sqlite3.Connection, gens: Sequence[int]) -> None:
    """Delete generations, then every record no generation points at any more."""
    if not gens:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for gen in gens:
            conn.execute("DELETE FROM index_gen_files WHERE gen = ?", (gen,))
            conn.execute("DELETE FROM index_generations WHERE id = ?", (gen,))
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS orphans (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM orphans")
        conn.execute(
            "INSERT INTO orphans SELECT id FROM index_records r WHERE NOT EXISTS"
            " (SELECT 1 FROM index_gen_files g WHERE g.rec = r.id)"
        )
        if conn.execute("SELECT 1 FROM orphans LIMIT 1").fetchone():
            for table in _DERIVED:
                conn.execute(
                    f"DELETE FROM {table} WHERE rec IN (SELECT id FROM orphans)"  # noqa: S608
                )
            conn.execute("DELETE FROM index_records WHERE id IN (SELECT id FROM orphans)")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def prune(conn: sqlite3.Connection, repo: str, keep: int = KEEP_GENERATIONS) -> int:
    """Delete all but the newest `keep` ready generations, and builds that died midway."""
    ready = [g.id for g in generations(conn, repo) if g.state == "ready"]
    newest = ready[0] if ready else 0
    doomed = [
        g.id for g in generations(conn, repo)
        if (g.state == "ready" and g.id not in ready[:keep])
        or (g.state != "ready" and g.id < newest)
    ]
    _delete(conn, doomed)
    return len(doomed)


def stored_records(
    conn: sqlite3.Connection, wanted: Mapping[str, str]
) -> dict[str, FileRecord]:
    """Records of (path -> blob SHA) that the database holds, whichever generation read
    them: a PR's files as they are at its base, when an indexed commit had them."""
    found: dict[str, FileRecord] = {}
    for path, blob in wanted.items():
        row = conn.execute(
            "SELECT record FROM index_records WHERE path = ? AND blob = ?", (path, blob)
        ).fetchone()
        if row is not None:
            found[path] = _decode(path, row["record"], blob)
    return found


class SqliteIndexView:
    """IndexView over one ready generation. Each look-up table is searched by its key
    first and joined to the generation's files after (`CROSS JOIN` fixes that order:
    left to itself SQLite walks the generation's ~6k files and probes the table per file).
    """

    def __init__(self, conn: sqlite3.Connection, generation: Generation) -> None:
        self._conn = conn
        self.generation = generation
        self._gen = generation.id

    @property
    def commit(self) -> str:
        return self.generation.commit

    def file(self, path: str) -> FileRecord | None:
        row = self._conn.execute(
            "SELECT r.record, r.blob FROM index_gen_files g JOIN index_records r ON r.id = g.rec"
            " WHERE g.gen = ? AND g.path = ?", (self._gen, path),
        ).fetchone()
        # Without imports and calls: the queries ask `importers` and `call_sites` instead.
        return _decode(path, row["record"], row["blob"]) if row else None

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
            "SELECT g.path, t.class, t.bases FROM index_bases t"
            " CROSS JOIN index_gen_files g ON g.rec = t.rec AND g.gen = ?"
            " WHERE t.base IN ({marks})",
            bases,
        )
        found = {(r["path"], r["class"]): r["bases"] for r in rows}
        return [ClassRef(path, name, tuple(b.split())) for (path, name), b in found.items()]

    def classes_defining(self, method: str) -> frozenset[tuple[str, str]]:
        rows = self._conn.execute(
            "SELECT g.path, t.class FROM index_methods t"
            " CROSS JOIN index_gen_files g ON g.rec = t.rec AND g.gen = ? WHERE t.name = ?",
            (self._gen, method),
        ).fetchall()
        return frozenset((r["path"], r["class"]) for r in rows)

    def call_sites(self, callee: str, limit: int) -> Sequence[CallSite]:
        rows = self._conn.execute(
            "SELECT g.path, t.count FROM index_calls t"
            " CROSS JOIN index_gen_files g ON g.rec = t.rec AND g.gen = ?"
            " WHERE t.callee = ? ORDER BY g.path LIMIT ?",
            (self._gen, callee, limit),
        ).fetchall()
        return [CallSite(r["path"], callee, r["count"]) for r in rows]

    def importers(self, modules: Collection[str]) -> frozenset[str]:
        rows = self._in_batches(
            "SELECT g.path FROM index_imports t"
            " CROSS JOIN index_gen_files g ON g.rec = t.rec AND g.gen = ?"
            " WHERE t.module IN ({marks})",
            modules,
        )
        return frozenset(r["path"] for r in rows)

    def records(self) -> Iterator[FileRecord]:
        rows = self._conn.execute(
            "SELECT g.path, r.record, r.blob FROM index_gen_files g"
            " JOIN index_records r ON r.id = g.rec WHERE g.gen = ? ORDER BY g.path",
            (self._gen,),
        ).fetchall()
        return (_decode(r["path"], r["record"], r["blob"]) for r in rows)

    def paths(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT path FROM index_gen_files WHERE gen = ? ORDER BY path", (self._gen,)
        ).fetchall()
        return [r["path"] for r in rows]
