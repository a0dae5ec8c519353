"""One writer thread per SQLite file: calls that arrive together commit as one transaction.

Shared by the job inbox (bot/store.py) and the ledger (bot/ledger.py), so every write
leaves the event loop and a burst of webhooks costs one transaction, not one per delivery.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

_T = TypeVar("_T")


class StoreUnavailable(Exception):
    """The database cannot be reached or written; intake answers 503."""


class SqliteWriter:
    """One thread owns the connection. Calls that arrive together share one transaction
    (group commit), each inside its own savepoint so one failing call undoes only itself."""

    _MAX_BATCH = 128

    def __init__(self, path: str, schema: str, *, busy_timeout_ms: int = 5000) -> None:
        self._queue: queue.SimpleQueue[_Op[Any] | None] = queue.SimpleQueue()
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a process crash (kill -9); only an OS crash or power
        # loss may drop the last commits, and the reconcile sweep repairs those.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        self._conn.executescript(schema)
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="sqlite-writer", daemon=True)
        self._thread.start()

    async def run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed or not self._thread.is_alive():
            raise StoreUnavailable("store is closed")
        op: _Op[_T] = _Op(fn)
        self._queue.put(op)
        return await asyncio.wrap_future(op.future)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._conn.close()

    def _serve(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch: list[_Op[Any]] = [first]
            stop = False
            while len(batch) < self._MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.append(nxt)
            self._run_batch(batch)
            if stop:
                return

    def _run_batch(self, batch: list[_Op[Any]]) -> None:
        conn = self._conn
        outcomes: list[tuple[_Op[Any], Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for op in batch:
                conn.execute("SAVEPOINT op")
                try:
                    result = op.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO op")
                    conn.execute("RELEASE op")
                    outcomes.append((op, None, exc))
                else:
                    conn.execute("RELEASE op")
                    outcomes.append((op, result, None))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.rollback()
            failure = StoreUnavailable(f"sqlite: {exc}")
            for op in batch:
                op.fail(failure)
            return
        for op, result, error in outcomes:
            if error is None:
                op.succeed(result)
            elif isinstance(error, sqlite3.Error):
                op.fail(StoreUnavailable(f"sqlite: {error}"))
            else:
                op.fail(error)


class _Op(Generic[_T]):
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[sqlite3.Connection], _T]) -> None:
        self.fn = fn
        self.future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def succeed(self, result: _T) -> None:
        if self.future.set_running_or_notify_cancel():
            self.future.set_result(result)

    def fail(self, error: BaseException) -> None:
        if self.future.set_running_or_notify_cancel():
            self.future.set_exception(error)
