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
import threading
import time
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
    def __init__(self, worker: JobRunner, *, name: str = "job-worker") -> None:
        self._worker = worker
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._last_wake_slot = 0

    async def start(self) -> None:
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        caller = asyncio.get_running_loop()

        def report(error: BaseException | None) -> None:
            if started.done():
                return
            if error is None:
                started.set_result(None)
            else:
                started.set_exception(error)

        def run() -> None:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._worker.start())
            except BaseException as exc:
                loop.close()
                caller.call_soon_threadsafe(report, exc)
                return
            # Only a started worker has a loop to stop: stop() must never wait on a
            # loop that is not running.
            self._loop = loop
            caller.call_soon_threadsafe(report, None)
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
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
        self._worker.wake(at)  # thread-safe by contract

    async def stop(self, drain_seconds: float) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        done = asyncio.run_coroutine_threadsafe(self._worker.stop(drain_seconds), loop)
        try:
            await asyncio.wrap_future(done)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, 10)
            if thread.is_alive():
                log.error("job worker thread did not stop within 10 s")
