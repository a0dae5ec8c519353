"""Runs the job worker on its own event loop, in its own thread.

Jobs parse GitHub responses and build digests: CPU work that, on the intake's loop,
held webhook acks back (p99 ~125-185 ms while jobs ran, against ~10 ms idle). On a
separate loop the interpreter switches threads every few milliseconds, so an ack waits
at most a switch interval or two. The store's writer resolves each call on its
caller's loop, so both loops share one SQLite writer.
"""

from __future__ import annotations

import asyncio
import logging
import math
import signal
import threading
import time
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

# A delayed job runs at most this much after it is due (settle windows are seconds).
_WAKE_SLOT_SECONDS = 0.05


class JobRunner(Protocol):
    """What the intake needs of a worker (bot.queue.jobs.Worker, or this thread around one)."""

    async def start(self) -> None: ...

    async def stop(self, drain_seconds: float) -> None: ...

    def wake(self, at: float | None = None) -> None: ...


class WorkerThread:
    """`worker`, or the one `build` makes. With `build`, start() returns at once and the
    worker is built and started on its own thread: the service answers /healthz and
    takes deliveries (they wait, durable, in the store) while the digest engine loads.
    A build or start that fails stops the whole service (SIGTERM to itself); `failure`
    says why."""

    def __init__(
        self, worker: JobRunner | None = None, *, name: str = "job-worker",
        build: Callable[[], JobRunner] | None = None,
    ) -> None:
        if (worker is None) == (build is None):
            raise TypeError("give either worker or build")
        self._worker = worker
        self._build = build
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._last_wake_slot = 0
        self._settled = threading.Event()  # started, or failed to
        self.failure: BaseException | None = None

    async def start(self) -> None:
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        caller = asyncio.get_running_loop()
        lazy = self._build is not None

        def report(error: BaseException | None) -> None:
            if error is not None and lazy:
                log.critical("job worker failed to start, stopping the service: %s", error)
                signal.raise_signal(signal.SIGTERM)
            if started.done():
                return
            if error is None:
                started.set_result(None)
            else:
                started.set_exception(error)

        def run() -> None:
            loop = asyncio.new_event_loop()
            try:
                if self._worker is None and self._build is not None:
                    self._worker = self._build()
                loop.run_until_complete(self._worker.start())  # type: ignore[union-attr]
            except BaseException as exc:
                loop.close()
                self.failure = exc
                self._settled.set()
                caller.call_soon_threadsafe(report, exc)
                return
            # Only a started worker has a loop to stop: stop() must never wait on a
            # loop that is not running.
            self._loop = loop
            self._settled.set()
            caller.call_soon_threadsafe(report, None)
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        if not lazy:
            await started

    def wake(self, at: float | None = None) -> None:
        """Thread-safe. A job due later is rounded up to its 50 ms slot, and a slot
        already asked for is not asked again: under load thousands of deliveries per
        second then cost a few cross-thread wake-ups, not one each."""
        if at is not None and at > time.time() + _WAKE_SLOT_SECONDS:
            slot = math.ceil(at / _WAKE_SLOT_SECONDS)
            if slot == self._last_wake_slot:
                return
            # A race between two intake threads only costs one extra wake-up.
            self._last_wake_slot = slot
            at = slot * _WAKE_SLOT_SECONDS
        worker = self._worker
        if worker is not None:  # not built yet: it claims everything due when it starts
            worker.wake(at)  # thread-safe by contract

    async def stop(self, drain_seconds: float) -> None:
        if self._thread is not None and self._thread.is_alive():
            # Still being built: let it finish starting, then stop it properly.
            await asyncio.to_thread(self._settled.wait, 60)
        loop, thread, worker = self._loop, self._thread, self._worker
        if loop is None or thread is None or worker is None or not thread.is_alive():
            return
        done = asyncio.run_coroutine_threadsafe(worker.stop(drain_seconds), loop)
        try:
            await asyncio.wrap_future(done)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, 10)
            if thread.is_alive():
                log.error("job worker thread did not stop within 10 s")
