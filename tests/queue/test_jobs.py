"""Worker: processes, retries, drains within the bound, one running job per PR."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key

REPO = "vllm-project/vllm"


def pr_job(number: int) -> NewJob:
    return NewJob(kind="pr", key=pr_key(REPO, number), installation_id=1, repo=REPO,
                  number=number, payload={"actions": ["synchronize"], "labels": []})


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteJobStore]:
    s = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0, max_attempts=3,
                       backoff_base_seconds=0.01, backoff_cap_seconds=0.02)
    yield s
    s.close()


async def wait_until(predicate: Callable[[], Awaitable[bool]], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached in time")


async def test_processes_queued_jobs(store: SqliteJobStore) -> None:
    seen: list[int | None] = []

    async def process(job: Job) -> None:
        seen.append(job.number)

    for n in (1, 2, 3):
        await store.enqueue(pr_job(n))
    metrics = Metrics()
    worker = Worker(store, process, metrics, concurrency=2, poll_interval=0.02)
    await worker.start()

    async def all_done() -> bool:
        return (await store.counts())["done"] == 3

    await wait_until(all_done)
    await worker.stop(1.0)
    assert sorted(n for n in seen if n is not None) == [1, 2, 3]
    ok = metrics.registry.get_sample_value(
        "digest_job_seconds_count", {"kind": "pr", "outcome": "ok"})
    assert ok == 3


class Flaky(Exception):
    retry_after = 0.0


async def test_retries_a_failing_processor_then_succeeds(store: SqliteJobStore) -> None:
    calls: list[int] = []

    async def process(job: Job) -> None:
        calls.append(job.attempts)
        if len(calls) < 3:
            raise Flaky("GitHub said 502")

    job_id = await store.enqueue(pr_job(5))
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    await worker.start()

    async def done() -> bool:
        job = await store.get(job_id)
        return job is not None and job.state == "done"

    await wait_until(done)
    await worker.stop(1.0)
    assert calls == [0, 1, 2]  # each run sees how many attempts failed before it
    job = await store.get(job_id)
    assert job is not None
    assert job.last_error == "Flaky: GitHub said 502"


async def test_failure_without_hint_parks_after_max_attempts(store: SqliteJobStore) -> None:
    async def process(job: Job) -> None:
        raise RuntimeError("always broken")

    metrics = Metrics()
    job_id = await store.enqueue(pr_job(6))
    worker = Worker(store, process, metrics, concurrency=1, poll_interval=0.01)
    await worker.start()

    async def parked() -> bool:
        return [j.id for j in await store.list_parked()] == [job_id]

    await wait_until(parked)
    await worker.stop(1.0)
    assert metrics.registry.get_sample_value("digest_parked_jobs") == 1
    assert metrics.registry.get_sample_value(
        "digest_job_seconds_count", {"kind": "pr", "outcome": "retry"}) == 2


async def test_stop_drains_within_bound_and_releases_unfinished(
    store: SqliteJobStore,
) -> None:
    started = asyncio.Event()

    async def process(job: Job) -> None:
        if job.number == 1:
            started.set()
            await asyncio.sleep(30)  # a job that cannot finish in time

    slow = await store.enqueue(pr_job(1))
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    await worker.start()
    await asyncio.wait_for(started.wait(), 5)
    queued_behind = await store.enqueue(pr_job(2))
    t0 = time.monotonic()
    await worker.stop(drain_seconds=0.2)
    elapsed = time.monotonic() - t0
    assert 0.2 <= elapsed < 1.5
    slow_job = await store.get(slow)
    behind = await store.get(queued_behind)
    assert slow_job is not None
    assert slow_job.state == "queued"
    assert slow_job.attempts == 0
    assert behind is not None
    assert behind.state == "queued"


async def test_in_flight_job_finishing_within_drain_completes(store: SqliteJobStore) -> None:
    started = asyncio.Event()

    async def process(job: Job) -> None:
        started.set()
        await asyncio.sleep(0.1)

    job_id = await store.enqueue(pr_job(1))
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    await worker.start()
    await asyncio.wait_for(started.wait(), 5)
    await worker.stop(drain_seconds=5)
    job = await store.get(job_id)
    assert job is not None
    assert job.state == "done"


async def test_never_two_running_jobs_for_the_same_pr(store: SqliteJobStore) -> None:
    running: Counter[int] = Counter()
    worst: Counter[int] = Counter()
    overlap = 0
    processed = 0

    async def process(job: Job) -> None:
        nonlocal overlap, processed
        assert job.number is not None
        running[job.number] += 1
        worst[job.number] = max(worst[job.number], running[job.number])
        overlap = max(overlap, sum(1 for v in running.values() if v))
        await asyncio.sleep(0.02)
        running[job.number] -= 1
        processed += 1

    worker = Worker(store, process, Metrics(), concurrency=6, poll_interval=0.01)
    await worker.start()
    for _ in range(10):
        for n in (1, 2, 3):
            await store.enqueue(pr_job(n))
            worker.wake()
        await asyncio.sleep(0.01)

    async def drained() -> bool:
        counts = await store.counts()
        return counts["queued"] == counts["running"] == 0

    await wait_until(drained)
    await worker.stop(1.0)
    assert max(worst.values()) == 1
    assert overlap >= 2  # different PRs did run side by side
    assert processed >= 6  # follow-ups ran after the running job


async def test_wake_beats_the_poll_interval(store: SqliteJobStore) -> None:
    done = asyncio.Event()

    async def process(job: Job) -> None:
        done.set()

    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=30)
    await worker.start()
    await asyncio.sleep(0.05)  # the runner is now parked on its 30 s poll
    await store.enqueue(pr_job(9))
    t0 = time.monotonic()
    worker.wake()
    await asyncio.wait_for(done.wait(), 2)
    assert time.monotonic() - t0 < 1.0
    await worker.stop(1.0)


async def test_periodic_runs_at_startup_and_survives_errors(store: SqliteJobStore) -> None:
    runs = 0

    async def sweep() -> None:
        nonlocal runs
        runs += 1
        raise RuntimeError("GitHub down")

    async def process(job: Job) -> None:
        return None

    worker = Worker(store, process, Metrics(), poll_interval=0.05, periodic=[(0.05, sweep)])
    await worker.start()
    await asyncio.sleep(0.01)
    assert runs == 1  # once at startup, before the first interval
    await asyncio.sleep(0.2)
    await worker.stop(1.0)
    assert runs >= 3
