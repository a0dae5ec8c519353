"""One writer thread per SQLite file: calls that arrive together commit as one transaction.

Shared by the job inbox (bot/queue/store.py) and the ledger (bot/queue/ledger.py), so every write
leaves the event loop and a burst of webhooks costs one transaction, not one per delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
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
    (group commit), each inside its own savepoint so one failing call undoes only itself.

    The thread handoff is paid per batch, not per call: calls made during one event-loop
    tick reach the thread as one queue item, and a committed batch is resolved with one
    `call_soon_threadsafe` (one loop wake-up) instead of one wake-up per call."""

    _MAX_BATCH = 128

    def __init__(self, path: str, schema: str, *, busy_timeout_ms: int = 5000) -> None:
        self._queue: queue.SimpleQueue[list[_Op[Any]] | None] = queue.SimpleQueue()
        # Calls made during the current tick of each event loop, not yet handed over.
        self._pending: dict[asyncio.AbstractEventLoop, list[_Op[Any]]] = {}
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
        """Run `fn` on the writer thread; returns once its transaction has committed.
        `fn` may run twice (the first run rolled back): it must only touch `conn`."""
        if self._closed or not self._thread.is_alive():
            raise StoreUnavailable("store is closed")
        loop = asyncio.get_running_loop()
        op: _Op[_T] = _Op(fn, loop)
        pending = self._pending.get(loop)
        if pending is None:
            self._pending[loop] = [op]
            loop.call_soon(self._hand_over, loop)
        else:
            pending.append(op)
        return await op.future

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._conn.close()

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        ops = self._pending.pop(loop, None)
        if not ops:
            return
        if self._closed:
            for op in ops:
                if not op.future.done():
                    op.future.set_exception(StoreUnavailable("store is closed"))
            return
        self._queue.put(ops)

    def _serve(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch: list[_Op[Any]] = list(first)
            stop = False
            while len(batch) < self._MAX_BATCH:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                batch.extend(nxt)
            self._resolve(self._run_batch(batch))
            if stop:
                return

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

    @staticmethod
    def _resolve(outcomes: list[_Outcome]) -> None:
        """Results only after COMMIT: a caller never sees a write that could still vanish."""
        by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome[0].loop, []).append(outcome)
        for loop, results in by_loop.items():
            # A closed loop raises RuntimeError: nobody is waiting for these any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, results)


class _Op(Generic[_T]):
    __slots__ = ("fn", "future", "loop")

    def __init__(self, fn: Callable[[sqlite3.Connection], _T],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.loop = loop
        self.future: asyncio.Future[_T] = loop.create_future()


_Outcome = tuple[_Op[Any], Any, BaseException | None]


def _settle(results: list[_Outcome]) -> None:
    # Runs on the op's loop. A caller that was cancelled meanwhile has a done future.
    for op, result, error in results:
        if op.future.done():
            continue
        if error is None:
            op.future.set_result(result)
        else:
            op.future.set_exception(error)
