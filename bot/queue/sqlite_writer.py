"""One SQLite connection per file; the calls each event loop makes during one tick
commit as one transaction, run on that loop's thread at the end of the tick.

Shared by the job inbox (bot/queue/store.py) and the ledger (bot/queue/ledger.py). A burst
of webhooks costs one transaction per tick, not one per delivery.

Why not a writer thread: handing each tick's calls to a thread and back cost the ack path
more than the SQL itself (the GIL changing hands several times per statement, a wake-up
of each loop per batch); profiled under wrk it was the largest cost after parsing. In WAL
mode with synchronous=NORMAL a commit appends to the WAL without an fsync, so a tick's
transaction takes well under a millisecond; the fsyncs happen in checkpoints, which a
background thread runs on its own connection (PASSIVE: never blocks a writer), so
no commit on an event loop ever waits for the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

# Defined with the PostgreSQL errors (no driver imported), raised here too.
from bot.db.errors import StoreUnavailable as StoreUnavailable

_T = TypeVar("_T")
_CHECKPOINT_EVERY_SECONDS = 1.0
log = logging.getLogger(__name__)


class CannotOpenDatabase(StoreUnavailable):
    """The file cannot be opened as this store's database at all (a directory, not
    SQLite, a directory that cannot be written): `reason` says which, in a few words,
    for the one line `serve` and the operator's commands print."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class RerunOp(Exception):
    """Raised by a call to have what it did so far undone and to be run again, once (it
    tried an optimistic shortcut that turned out not to apply)."""


class SqliteWriter:
    """One connection, guarded by a lock (the intake's loop and the worker's loop both
    write). Calls that arrive together share one transaction (group commit), each inside
    its own savepoint when one fails, so a failing call undoes only itself."""

    def __init__(self, path: str, schema: str, *, busy_timeout_ms: int = 5000,
                 upgrade: Callable[[sqlite3.Connection], None] | None = None) -> None:
        # Calls made during the current tick of each event loop, not yet run.
        self._pending: dict[asyncio.AbstractEventLoop, list[_Op[Any]]] = {}
        self._conn = _open(path, schema, busy_timeout_ms, upgrade)
        self._lock = threading.Lock()
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._read_conn: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._closed = False
        self._stop_checkpoints = threading.Event()
        self._checkpointer: threading.Thread | None = None
        if path != ":memory:":
            # Checkpoints (and their fsyncs) off every event loop: see the module doc.
            self._conn.execute("PRAGMA wal_autocheckpoint=0")
            self._checkpointer = threading.Thread(
                target=self._checkpoint_forever, args=(path,), name="sqlite-checkpoint",
                daemon=True)
            self._checkpointer.start()

    async def read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """`fn` on a connection of its own, in a worker thread, inside one read
        transaction (a snapshot: WAL lets it read while a write commits). For reads
        that can be long (every open PR sharing a file): under `run` they held the
        write lock, and a webhook's ack waited behind them. `fn` must not write."""
        if self._closed:
            raise StoreUnavailable("store is closed")
        if self._path == ":memory:":  # a second connection would see another database
            return await self.run(fn)
        return await asyncio.to_thread(self._read, fn)

    def _read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._read_lock:
            if self._closed:
                raise StoreUnavailable("store is closed")
            try:
                if self._read_conn is None:
                    conn = sqlite3.connect(self._path, isolation_level=None,
                                           check_same_thread=False)
                    conn.row_factory = sqlite3.Row
                    conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
                    self._read_conn = conn
                conn = self._read_conn
                conn.execute("BEGIN")
                try:
                    return fn(conn)
                finally:
                    conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"sqlite: {exc}") from None

    def add_schema(self, schema: str) -> None:
        """Create another store's tables (idempotent DDL) on this connection."""
        with self._lock:
            try:
                self._conn.executescript(schema)
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"sqlite: {exc}") from None

    async def run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run `fn` at the end of this loop tick; returns once its transaction has
        committed. `fn` may run more than once (the earlier runs rolled back): it must
        only touch `conn`. It may raise `RerunOp` to be undone and run again, once."""
        if self._closed:
            raise StoreUnavailable("store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._add(_Op(fn, future), loop)
        return await future

    def submit(self, fn: Callable[[sqlite3.Connection], _T],
               done: Callable[[_T | None, BaseException | None], None],
               loop: asyncio.AbstractEventLoop) -> None:
        """`run` without a coroutine: `done(result, None)` or `done(None, error)` is called
        on `loop` once the tick's transaction has committed (or failed). For callers with
        no task of their own (the HTTP protocol's webhook ack), where a future and a task
        wake-up per call cost more than the call. Must be called on `loop`, running: the
        caller passes it because `asyncio.get_running_loop()` costs a `getpid` system
        call each time (its fork check)."""
        if self._closed:
            loop.call_soon(done, None, StoreUnavailable("store is closed"))
            return
        self._add(_Op(fn, done), loop)

    def _add(self, op: _Op[Any], loop: asyncio.AbstractEventLoop) -> None:
        pending = self._pending.get(loop)
        if pending is None:
            self._pending[loop] = [op]
            loop.call_soon(self._run_pending, loop)
        else:
            pending.append(op)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._stop_checkpoints.set()
            if self._checkpointer is not None:
                self._checkpointer.join(timeout=10)
            with self._lock:
                self._conn.close()
            with self._read_lock:
                if self._read_conn is not None:
                    self._read_conn.close()

    def _run_pending(self, loop: asyncio.AbstractEventLoop) -> None:
        ops = self._pending.pop(loop, None)
        if not ops:
            return
        if self._closed:
            _settle([(op, None, StoreUnavailable("store is closed")) for op in ops])
            return
        with self._lock:
            outcomes = self._run_batch(ops)
        _settle(outcomes)

    def _checkpoint_forever(self, path: str) -> None:
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            return
        try:
            while not self._stop_checkpoints.wait(_CHECKPOINT_EVERY_SECONDS):
                # Busy (another checkpoint running) or failing: the next round retries.
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            conn.close()

    def _run_batch(self, batch: list[_Op[Any]]) -> list[_Outcome]:
        # Optimistic first: no savepoints (two statements, two GIL round trips per call
        # fewer). If any call fails, nothing is committed and the batch reruns with a
        # savepoint per call, so the failing call undoes only itself.
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            # Not retried here: a locked database already waited busy_timeout once.
            return [(op, None, StoreUnavailable(f"sqlite: {exc}")) for op in batch]
        try:
            results = [op.fn(conn) for op in batch]
        except Exception:
            try:
                conn.rollback()
            except sqlite3.Error as exc:
                return [(op, None, StoreUnavailable(f"sqlite: {exc}")) for op in batch]
            return self._run_batch_isolated(batch)
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            return [(op, None, StoreUnavailable(f"sqlite: {exc}")) for op in batch]
        return [(op, result, None) for op, result in zip(batch, results, strict=True)]

    def _run_batch_isolated(self, batch: list[_Op[Any]]) -> list[_Outcome]:
        conn = self._conn
        outcomes: list[_Outcome] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for op in batch:
                conn.execute("SAVEPOINT op")
                try:
                    try:
                        result = op.fn(conn)
                    except RerunOp:
                        conn.execute("ROLLBACK TO op")
                        result = op.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO op")
                    conn.execute("RELEASE op")
                    if isinstance(exc, sqlite3.Error):
                        exc = StoreUnavailable(f"sqlite: {exc}")
                    outcomes.append((op, None, exc))
                else:
                    conn.execute("RELEASE op")
                    outcomes.append((op, result, None))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            return [(op, None, StoreUnavailable(f"sqlite: {exc}")) for op in batch]
        return outcomes


def _open(path: str, schema: str, busy_timeout_ms: int,
          upgrade: Callable[[sqlite3.Connection], None] | None) -> sqlite3.Connection:
    """The connection, in WAL mode, with the schema (and `upgrade`: what a file made by
    an older release lacks); CannotOpenDatabase if the file cannot be this database
    (sqlite3's own "unable to open database file" names no cause)."""
    try:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise CannotOpenDatabase(path, _open_problem(Path(path), exc)) from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a process crash (kill -9): a commit is in the WAL
        # file before the caller hears of it. Only an OS crash or power loss may drop the
        # last commits (not yet fsynced); bot/queue's reconcile sweep repairs those.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        conn.executescript(schema)
        if upgrade is not None:
            upgrade(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise CannotOpenDatabase(path, _open_problem(Path(path), exc)) from None
    return conn


def _open_problem(path: Path, exc: BaseException) -> str:
    """Why `path` cannot be opened, in a few words (checked in this order: what the path
    is, its directory, then sqlite's own word)."""
    if path.is_dir():
        return "is a directory, not a database file"
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot be created: {ancestor} is a file, not a directory"
    if isinstance(exc, OSError):
        return f"cannot create the directory {path.parent} ({exc.strerror or exc})"
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        return "not a SQLite database"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        # Even an existing file needs it: its write-ahead log is created next to it.
        return f"directory {path.parent} is not writable"
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return "the file is not readable and writable by this user"
    if "unable to open" in str(exc):
        return f"cannot create or open the file in {path.parent} (sqlite: {exc})"
    return f"cannot use it as the database (sqlite: {exc})"


class _Op(Generic[_T]):
    """A call and who hears of its outcome: an awaiting task's future, or a callback."""

    __slots__ = ("fn", "waiter")

    def __init__(self, fn: Callable[[sqlite3.Connection], _T],
                 waiter: asyncio.Future[_T] | Callable[[_T | None, BaseException | None], None],
                 ) -> None:
        self.fn = fn
        self.waiter = waiter


_Outcome = tuple[_Op[Any], Any, BaseException | None]


def _settle(results: list[_Outcome]) -> None:
    # Runs on the op's loop. A caller that was cancelled meanwhile has a done future.
    for op, result, error in results:
        waiter = op.waiter
        if not isinstance(waiter, asyncio.Future):
            _call_back(waiter, result, error)
        elif waiter.done():
            continue
        elif error is None:
            waiter.set_result(result)
        else:
            waiter.set_exception(error)


def _call_back(done: Callable[[Any, BaseException | None], None], result: Any,
               error: BaseException | None) -> None:
    # One failing callback must not keep the rest of the batch from hearing of theirs.
    try:
        done(result, error)
    except Exception:
        log.exception("store callback failed")
