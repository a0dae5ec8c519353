"""The worker runs on its own loop: a job hogging that loop does not hold up the caller's."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from bot.queue.worker_thread import WorkerThread


class BusyWorker:
    """Blocks its loop for a while on start, like a job parsing a large response."""

    def __init__(self) -> None:
        self.started_on: int | None = None
        self.stopped_with: float | None = None
        self.wakes: list[float | None] = []

    async def start(self) -> None:
        self.started_on = threading.get_ident()
        asyncio.get_running_loop().call_soon(time.sleep, 0.3)

    async def stop(self, drain_seconds: float) -> None:
        self.stopped_with = drain_seconds

    def wake(self, at: float | None = None) -> None:
        self.wakes.append(at)


async def test_worker_loop_is_separate_and_stops_cleanly() -> None:
    worker = BusyWorker()
    runner = WorkerThread(worker)
    await runner.start()
    assert worker.started_on is not None
    assert worker.started_on != threading.get_ident()
    # The worker's loop is blocked for 0.3 s; ours still answers promptly.
    began = time.perf_counter()
    await asyncio.sleep(0.01)
    assert time.perf_counter() - began < 0.2
    runner.wake(5.0)
    assert worker.wakes == [5.0]
    await runner.stop(2.0)
    assert worker.stopped_with == 2.0


class FailingWorker(BusyWorker):
    async def start(self) -> None:
        raise RuntimeError("store unavailable")


async def test_start_failure_reaches_the_caller() -> None:
    runner = WorkerThread(FailingWorker())
    with pytest.raises(RuntimeError, match="store unavailable"):
        await runner.start()
    await runner.stop(1.0)  # nothing running: a no-op


def test_delayed_wakes_are_asked_once_per_slot_and_never_early() -> None:
    worker = BusyWorker()
    runner = WorkerThread(worker)
    now = time.time()
    due = [now + 3.0 + i * 0.001 for i in range(200)]  # a burst: 200 jobs due within 0.2 s
    for at in due:
        runner.wake(at)
    runner.wake(None)
    runner.wake(now - 1)  # overdue (a requeue): always passed on at once
    delayed = [w for w in worker.wakes if w is not None and w > now]
    assert 3 <= len(delayed) <= 6  # 0.2 s of due times in 50 ms slots
    # Every job is covered by a wake at or after its due time, within one slot.
    for at in due:
        assert any(at <= w < at + 0.051 for w in delayed)
    assert worker.wakes[-2:] == [None, now - 1]
