"""One connection pool per process, shared by the job store, the ledger and the label
view's store; calls run on the pool's own threads and resolve on the caller's loop.

Why threads around a synchronous pool, not psycopg's AsyncConnectionPool: the service
runs two event loops (the intake's and the worker thread's, bot/queue/worker_thread.py)
and an async pool belongs to the loop that opened it. A thread-safe pool serves both, and
the operator's commands (`asyncio.run` per call) too. Each call is one transaction: the
pool commits when the call returns and rolls back when it raises.

Statements: every connection is opened with `prepare_threshold=0`, so psycopg prepares
each statement on a connection the first time it runs there and reuses the plan after
(our statements are constant text; the few with a variable part are not hot).
Connections are in autocommit mode: a call runs inside BEGIN/COMMIT unless it asks for
none (`transaction=False`: one statement, which commits by itself, a round trip saved).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from bot.db.errors import DatabaseUnreachable as DatabaseUnreachable
from bot.db.errors import StoreUnavailable
from bot.db.url import redact_url, secrets_in_url

_T = TypeVar("_T")
log = logging.getLogger(__name__)

Conn = psycopg.Connection[Any]
# Two transactions that lock the same rows in another order: PostgreSQL aborts one.
# Our calls are idempotent as a whole (they run again from the start), so retry it.
_RETRIED = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)
_RETRIES = 3


def describe_error(url: str, exc: BaseException) -> str:
    """psycopg's message on one line, scrubbed of the URL's password."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    for secret in secrets_in_url(url):
        text = text.replace(secret, "***")
    return text[:300]


def check_connection(url: str, *, timeout_seconds: float = 5.0) -> None:
    """Connect once and run a query; raises DatabaseUnreachable with the reason."""
    where = redact_url(url)
    try:
        with psycopg.connect(url, connect_timeout=max(1, round(timeout_seconds)),
                             autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        raise DatabaseUnreachable(
            f"DIGEST_DATABASE_URL={where}: cannot connect ({describe_error(url, exc)})"
        ) from None


class Database:
    """A pool of `max_size` connections and as many threads to run calls on."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8,
                 acquire_timeout_seconds: float = 5.0,
                 connect_timeout_seconds: float = 5.0) -> None:
        self.url = url
        self.shown_url = redact_url(url)
        self._acquire_timeout = acquire_timeout_seconds
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, name="pr-digest",
            timeout=acquire_timeout_seconds,
            kwargs={"prepare_threshold": 0, "autocommit": True,
                    "connect_timeout": max(1, round(connect_timeout_seconds))},
        )
        self._threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_size, thread_name_prefix="pg")
        self._closed = False

    def open(self) -> None:
        """Connect now: raises DatabaseUnreachable with the reason, never a traceback."""
        check_connection(self.url, timeout_seconds=self._acquire_timeout)
        self._pool.open(wait=False)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._threads.shutdown(wait=True, cancel_futures=False)
        self._pool.close()

    def run_sync(self, fn: Callable[[Conn], _T], *, transaction: bool = True) -> _T:
        """`fn` in one transaction (or, with `transaction=False`, as its statements
        commit), on this thread. `fn` may run more than once (after a deadlock the
        first run rolled back): it must only touch `conn`."""
        if self._closed:
            raise StoreUnavailable("database is closed")
        for attempt in range(_RETRIES):
            used: Conn | None = None
            try:
                with self._pool.connection(timeout=self._acquire_timeout) as conn:
                    used = conn
                    if not transaction:
                        return fn(conn)
                    with conn.transaction():
                        return fn(conn)
            except _RETRIED:
                if attempt == _RETRIES - 1:
                    raise StoreUnavailable("database: transaction kept deadlocking") from None
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                # A pooled connection the server closed since (a restart, a failover):
                # the pool drops it and, checked now, any other idle one that is closed
                # too; once more on a fresh one. Our calls are safe to repeat (a delivery
                # stored twice is a duplicate, outcomes name their run).
                if attempt == 0 and used is not None and used.broken:
                    self._pool.check()
                    continue
                raise StoreUnavailable(f"database: {describe_error(self.url, exc)}") from None
            except (PoolTimeout, PoolClosed) as exc:
                raise StoreUnavailable(f"database: {describe_error(self.url, exc)}") from None
        raise AssertionError("unreachable")

    async def run(self, fn: Callable[[Conn], _T], *, transaction: bool = True) -> _T:
        """`run_sync` on one of the pool's threads; resolves on the caller's loop."""
        if self._closed:
            raise StoreUnavailable("database is closed")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._threads, functools.partial(self.run_sync, fn, transaction=transaction))
        except RuntimeError as exc:  # the executor was shut down under us
            raise StoreUnavailable(f"database is closed ({exc})") from None

    def submit(self, fn: Callable[[Conn], _T],
               done: Callable[[_T | None, BaseException | None], None],
               loop: asyncio.AbstractEventLoop, *, transaction: bool = True) -> None:
        """`run` for a caller without a task (the HTTP protocol's ack route): `done`
        hears the outcome on `loop` once the transaction has committed."""
        def finished(future: concurrent.futures.Future[_T]) -> None:
            error = future.exception()
            result = None if error is not None else future.result()
            loop.call_soon_threadsafe(done, result, error)

        try:
            future = self._threads.submit(self.run_sync, fn, transaction=transaction)
        except RuntimeError as exc:
            loop.call_soon(done, None, StoreUnavailable(f"database is closed ({exc})"))
            return
        future.add_done_callback(finished)
