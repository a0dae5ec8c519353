"""The job store's contract, on both backends (SQLite and PostgreSQL, `open_store`):
coalescing, dedup, leases (kill -9), backoff, parking, follow-ups. Tests of one backend's
own behaviour name it."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
from pathlib import Path

import pytest

from bot.queue.ledger import Ledger
from bot.queue.sqlite_writer import RerunOp, SqliteWriter
from bot.queue.store import Delivery, NewJob, SqliteJobStore, StoreUnavailable, command_key, pr_key
from tests.queue.store_backends import AnyStore, Clock, OpenStore, Query

REPO = "vllm-project/vllm"


def pr_job(number: int = 7, **payload: object) -> NewJob:
    return NewJob(kind="pr", key=pr_key(REPO, number), installation_id=1, repo=REPO,
                  number=number, payload={"actions": ["opened"], "labels": [], **payload})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(open_store: OpenStore, clock: Clock) -> AnyStore:
    return open_store(clock=clock, settle_seconds=3.0, max_attempts=3, lease_seconds=60.0,
                      rng=random.Random(1))


async def test_pr_events_coalesce_into_one_debounced_job(
    store: AnyStore, clock: Clock
) -> None:
    first = await store.enqueue(pr_job(actions=["opened"]))
    clock.now += 1
    again = await store.enqueue(pr_job(actions=["labeled"], labels=["torch.compile"]))
    clock.now += 1
    third = await store.enqueue(pr_job(actions=["labeled"], labels=["frontend"]))
    assert first == again == third
    job = await store.get(first)
    assert job is not None
    assert job.not_before == clock.now + 3.0
    assert job.payload["labels"] == ["torch.compile", "frontend"]
    assert job.payload["actions"] == ["opened", "labeled"]
    assert await store.claim(clock.now + 2.9) is None  # still settling
    claimed = await store.claim(clock.now + 3.0)
    assert claimed is not None
    assert claimed.id == first
    assert claimed.state == "running"


async def test_other_prs_do_not_coalesce(store: AnyStore) -> None:
    assert await store.enqueue(pr_job(1)) != await store.enqueue(pr_job(2))
    assert (await store.counts())["queued"] == 2


async def test_event_while_running_gets_one_pending_follow_up(
    store: AnyStore, clock: Clock
) -> None:
    first = await store.enqueue(pr_job())
    clock.now += 5
    running = await store.claim()
    assert running is not None
    assert running.id == first
    follow = await store.enqueue(pr_job(actions=["synchronize"]))
    again = await store.enqueue(pr_job(actions=["edited"]))
    assert follow != first
    assert follow == again
    clock.now += 10
    # Per-key exclusivity: the follow-up waits for the running job.
    assert await store.claim() is None
    await store.complete(first)
    nxt = await store.claim()
    assert nxt is not None
    assert nxt.id == follow
    assert nxt.payload["actions"] == ["synchronize", "edited"]


async def test_command_jobs_dedupe_same_text(store: AnyStore) -> None:
    def cmd(body_sha: str) -> NewJob:
        return NewJob(kind="command", key=command_key(REPO, 99, body_sha), installation_id=1,
                      repo=REPO, number=7, payload={"body": "/digest"})

    a = await store.enqueue(cmd("aaa"))
    assert await store.enqueue(cmd("aaa")) == a
    assert await store.enqueue(cmd("bbb")) != a
    job = await store.claim()
    assert job is not None
    assert job.kind == "command"


async def test_delivery_dedup_and_requeue_after_parking(
    store: AnyStore, clock: Clock
) -> None:
    delivery = Delivery(delivery_id="d-1", event="pull_request", action="opened")
    outcome, job_id, due_at = await store.accept_delivery(delivery, pr_job())
    assert outcome == "accepted"
    assert due_at == clock.now + 3.0
    assert (await store.accept_delivery(delivery, pr_job()))[:2] == ("duplicate", job_id)
    for _ in range(3):
        clock.now += 3600
        job = await store.claim()
        assert job is not None
        assert job.id == job_id
        await store.fail(job_id, "boom")
    parked = await store.list_parked()
    assert [j.id for j in parked] == [job_id]
    assert (await store.accept_delivery(delivery, pr_job()))[:2] == ("requeued", job_id)
    job = await store.get(job_id)
    assert job is not None
    assert job.state == "queued"
    assert job.attempts == 0
    assert (await store.claim()) is not None


async def test_redelivery_in_a_batch_of_new_deliveries_leaves_no_stray_job(
    store: AnyStore, clock: Clock
) -> None:
    # An accepted delivery is stored optimistically (job first, then its record); a
    # redelivery of a parked job's delivery is found out by that record and undone, so
    # it requeues the parked job instead of adding one, and the rest of its tick's
    # transaction stands.
    first = Delivery(delivery_id="d-1", event="pull_request", action="opened")
    _, job_id, _ = await store.accept_delivery(first, pr_job(7))
    for _ in range(3):
        clock.now += 3600
        assert (await store.claim()) is not None
        await store.fail(job_id, "boom")
    outcomes = await asyncio.gather(
        store.accept_delivery(Delivery(delivery_id="d-2", event="pull_request"), pr_job(8)),
        store.accept_delivery(first, pr_job(7)),
        store.accept_delivery(Delivery(delivery_id="d-3", event="pull_request"), pr_job(9)),
    )
    assert [outcome[0] for outcome in outcomes] == ["accepted", "requeued", "accepted"]
    assert outcomes[1][1] == job_id
    jobs = await store.list_jobs()
    assert sorted(job.number or 0 for job in jobs) == [7, 8, 9]
    assert {job.state for job in jobs} == {"queued"}


async def test_an_ignored_delivery_accepted_later_is_recorded_with_its_job(
    store: AnyStore, query: Query
) -> None:
    delivery = Delivery(delivery_id="d-5", event="pull_request", action="edited")
    assert await store.record_delivery(delivery, "ignored")
    outcome, job_id, _ = await store.accept_delivery(delivery, pr_job(5))
    assert outcome == "accepted"
    assert query("SELECT outcome, job_id FROM deliveries") == [("accepted", job_id)]
    assert (await store.accept_delivery(delivery, pr_job(5)))[:2] == ("duplicate", job_id)


async def test_backoff_grows_exponentially_with_jitter_and_caps(open_store: OpenStore) -> None:
    clock = Clock()
    s = open_store(clock=clock, max_attempts=20, backoff_base_seconds=5.0,
                   backoff_cap_seconds=600.0, rng=random.Random(7))
    job_id = await s.enqueue(pr_job())
    delays = []
    for attempt in range(1, 10):
        clock.now += 10_000
        assert (await s.claim()) is not None
        job = await s.fail(job_id, f"try {attempt}")
        assert job is not None
        assert job.state == "failed"
        assert job.attempts == attempt
        delay = job.not_before - clock.now
        ceiling = min(600.0, 5.0 * 2 ** (attempt - 1))
        assert ceiling / 2 <= delay <= ceiling
        delays.append(delay)
    assert delays[-1] <= 600.0
    assert delays[-1] >= 300.0
    assert delays[4] > delays[0] * 4


async def test_retry_at_hint_wins_over_backoff(store: AnyStore, clock: Clock) -> None:
    job_id = await store.enqueue(pr_job())
    clock.now += 5
    await store.claim()
    job = await store.fail(job_id, "rate limited", retry_at=clock.now + 1234)
    assert job is not None
    assert job.not_before == clock.now + 1234
    assert await store.claim(clock.now + 1233) is None
    assert await store.claim(clock.now + 1234) is not None


async def test_parks_after_max_attempts(store: AnyStore, clock: Clock) -> None:
    job_id = await store.enqueue(pr_job())
    states = []
    for _ in range(3):
        clock.now += 3600
        assert (await store.claim()) is not None
        failed = await store.fail(job_id, "boom")
        assert failed is not None
        states.append(failed.state)
    assert states == ["failed", "failed", "parked"]
    clock.now += 10**6
    assert await store.claim() is None
    assert (await store.counts())["parked"] == 1
    assert await store.requeue_parked() == 1
    assert (await store.claim()) is not None


async def test_crashed_worker_job_is_released_after_lease(open_store: OpenStore) -> None:
    clock = Clock()
    crashed = open_store(clock=clock, lease_seconds=60.0, settle_seconds=0)
    job_id = await crashed.enqueue(pr_job())
    assert (await crashed.claim()) is not None
    crashed.close()  # the worker "dies": the job is never completed

    fresh = open_store(clock=clock, lease_seconds=60.0)
    assert await fresh.claim() is None  # still leased
    assert await fresh.release_expired_leases(clock.now + 59) == 0
    assert await fresh.release_expired_leases(clock.now + 61) == 1
    job = await fresh.claim(clock.now + 61)
    assert job is not None
    assert job.id == job_id
    assert job.attempts == 1
    assert job.last_error is not None
    assert "lease" in job.last_error
    await fresh.complete(job_id)
    assert (await fresh.counts())["done"] == 1


async def test_concurrent_enqueues_share_commits_and_all_land(store: AnyStore) -> None:
    deliveries = [Delivery(delivery_id=f"d-{i}", event="pull_request", action="synchronize")
                  for i in range(200)]
    results = await asyncio.gather(*(
        store.accept_delivery(d, pr_job(i % 20)) for i, d in enumerate(deliveries)
    ))
    assert all(r.outcome == "accepted" for r in results)
    assert len({r.job_id for r in results}) == 20
    assert (await store.counts())["queued"] == 20


async def test_closed_store_raises_unavailable(open_store: OpenStore) -> None:
    s = open_store()
    s.close()
    with pytest.raises(StoreUnavailable):
        await s.ping()


async def test_sqlite_failure_is_reported_as_unavailable(tmp_path: Path) -> None:
    s = SqliteJobStore(tmp_path / "d.db", busy_timeout_ms=50)
    try:
        # Another process holding the write lock for longer than busy_timeout.
        blocker = sqlite3.connect(tmp_path / "d.db", isolation_level=None)
        blocker.execute("PRAGMA busy_timeout=0")
        blocker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailable):
            await s.enqueue(pr_job())
        blocker.execute("ROLLBACK")
        blocker.close()
        assert await s.enqueue(pr_job()) > 0
    finally:
        s.close()


def command_job(number: int = 7, comment_id: int = 99) -> NewJob:
    return NewJob(kind="command", key=command_key(REPO, comment_id, "abc"), installation_id=1,
                  repo=REPO, number=number, payload={"comment_id": comment_id, "body": "/digest"})


async def test_a_command_waits_while_its_prs_digest_job_runs(
    store: AnyStore, clock: Clock
) -> None:
    await store.enqueue(pr_job(7))
    running = await store.claim(clock.now + 5)
    assert running is not None
    assert running.kind == "pr"
    await store.enqueue(command_job(7))
    await store.enqueue(command_job(8, comment_id=100))
    other = await store.claim(clock.now + 5)
    assert other is not None
    assert (other.kind, other.number) == ("command", 8)  # another PR is not held back
    assert await store.claim(clock.now + 5) is None  # PR 7's command waits for its digest run
    await store.complete(running.id)
    after = await store.claim(clock.now + 5)
    assert after is not None
    assert (after.kind, after.number) == ("command", 7)


async def test_sqlite_requeues_jobs_left_running_by_a_dead_process_at_start(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "jobs.db"
    dead = SqliteJobStore(path, clock=clock, settle_seconds=0.0, lease_seconds=300.0)
    await dead.enqueue(pr_job(7))
    claimed = await dead.claim(clock.now)
    assert claimed is not None
    dead.close()  # the process died mid-job; its 300 s lease has not expired

    fresh = SqliteJobStore(path, clock=clock, settle_seconds=0.0, lease_seconds=300.0)
    try:
        assert await fresh.recover_orphans() == 1
        again = await fresh.claim(clock.now)
        assert again is not None
        assert again.id == claimed.id
        assert again.attempts == 1
        await fresh.complete(again.id)
        assert await fresh.recover_orphans() == 0
    finally:
        fresh.close()


# --- issue 8, item 5: leases are renewed, and a stale run changes nothing -----------------


async def test_a_renewed_lease_is_not_released(store: AnyStore, clock: Clock) -> None:
    await store.enqueue(pr_job())
    clock.now += 5
    job = await store.claim()
    assert job is not None
    for _ in range(5):  # each step is longer than the 60 s lease; renewed at each
        clock.now += 100
        assert await store.renew_lease(job.id, job.attempts)
        assert await store.release_expired_leases() == 0
    assert await store.complete(job.id, attempts=job.attempts)
    assert (await store.counts())["done"] == 1


async def test_a_stale_runs_outcome_is_a_no_op(store: AnyStore, clock: Clock) -> None:
    await store.enqueue(pr_job())
    clock.now += 5
    first = await store.claim()
    assert first is not None
    clock.now += 61  # no heartbeat: the lease runs out, the job runs again
    assert await store.release_expired_leases() == 1
    second = await store.claim()
    assert second is not None
    assert second.id == first.id

    assert not await store.renew_lease(first.id, first.attempts)
    assert not await store.complete(first.id, attempts=first.attempts)
    assert await store.fail(first.id, "late", attempts=first.attempts) is None
    await store.release(first.id, attempts=first.attempts)
    current = await store.get(first.id)
    assert current is not None
    assert current.state == "running"  # still the second run's
    assert await store.complete(second.id, attempts=second.attempts)


async def test_only_the_run_that_claimed_last_passes_the_fence(
    store: AnyStore, clock: Clock,
) -> None:
    await store.enqueue(pr_job())
    clock.now += 5
    first = await store.claim()
    assert first is not None
    for _ in range(3):  # each write's fence extends the 60 s lease, as a heartbeat does
        clock.now += 40
        assert await store.fence(first.id, first.generation)
        assert await store.release_expired_leases() == 0
    clock.now += 61
    # Ran out, not yet requeued by anyone: no write passes all the same.
    assert not await store.fence(first.id, first.generation)
    assert await store.release_expired_leases() == 1
    second = await store.claim()
    assert second is not None
    assert second.id == first.id
    assert second.generation > first.generation
    assert not await store.fence(first.id, first.generation)
    assert await store.fence(second.id, second.generation)


async def test_the_fence_tells_runs_apart_where_the_attempt_count_cannot(
    store: AnyStore, clock: Clock,
) -> None:
    # An operator's retry of a parked job resets its attempts to 0: a run paused since
    # the first claim would match the new run by attempts, never by generation.
    await store.enqueue(pr_job())
    clock.now += 5
    paused = await store.claim()
    assert paused is not None
    clock.now += 61
    assert await store.release_expired_leases() == 1
    again = await store.claim()
    assert again is not None
    assert await store.fail(again.id, "HTTP 404", attempts=again.attempts, park=True)
    assert await store.requeue_parked() == 1
    rerun = await store.claim()
    assert rerun is not None
    assert rerun.attempts == paused.attempts == 0
    assert await store.renew_lease(paused.id, paused.attempts)  # fooled
    assert not await store.fence(paused.id, paused.generation)
    assert await store.fence(rerun.id, rerun.generation)
    assert len({paused.generation, again.generation, rerun.generation}) == 3


async def test_a_sqlite_file_from_before_fencing_gains_the_generation(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
            " key TEXT NOT NULL, installation_id INTEGER, repo TEXT NOT NULL, number INTEGER,"
            " payload TEXT NOT NULL, delivery_id TEXT, state TEXT NOT NULL,"
            " attempts INTEGER NOT NULL DEFAULT 0, not_before REAL NOT NULL, lease_until REAL,"
            " last_error TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL)")
        conn.execute(
            "INSERT INTO jobs (kind, key, installation_id, repo, number, payload, state,"
            " not_before, created_at, updated_at) VALUES ('pr', ?, 1, ?, 7, '{}', 'queued',"
            " 0, 0, 0)", (pr_key(REPO, 7), REPO))
    store = SqliteJobStore(path)
    try:
        job = await store.claim()
        assert job is not None
        assert job.generation == 1
        assert await store.fence(job.id, job.generation)
    finally:
        store.close()


async def test_a_permanent_failure_parks_at_once(store: AnyStore, clock: Clock) -> None:
    await store.enqueue(pr_job())
    clock.now += 5
    job = await store.claim()
    assert job is not None
    failed = await store.fail(job.id, "HTTP 404", attempts=job.attempts, park=True)
    assert failed is not None
    assert failed.state == "parked"
    assert failed.attempts == 1


async def test_ping_writes(tmp_path: Path) -> None:
    s = SqliteJobStore(tmp_path / "ping.db")
    try:
        await s.ping()
        with sqlite3.connect(tmp_path / "ping.db") as conn:
            assert conn.execute("SELECT COUNT(*) FROM health").fetchone() == (1,)
    finally:
        s.close()


async def test_a_rerun_call_is_undone_and_run_again_even_beside_a_failing_one(
    tmp_path: Path,
) -> None:
    # One call fails, so the tick's calls run again each in its own savepoint; a call
    # asking to be rerun has its first try undone there too, and the others stand.
    writer = SqliteWriter(str(tmp_path / "w.db"), "CREATE TABLE t (v TEXT);")
    tries: list[str] = []

    def rerun_once(conn: sqlite3.Connection) -> str:
        if not tries:
            tries.append("optimistic")
            conn.execute("INSERT INTO t VALUES ('optimistic')")
            raise RerunOp
        tries.append("careful")
        conn.execute("INSERT INTO t VALUES ('careful')")
        return "careful"

    def fails(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO t VALUES ('failed')")
        raise ValueError("boom")

    def plain(conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO t VALUES ('plain')")
        return "plain"

    try:
        # The failing call first: the rerun is asked for inside the savepoint pass.
        results = await asyncio.gather(writer.run(fails), writer.run(rerun_once),
                                       writer.run(plain), return_exceptions=True)
        assert isinstance(results[0], ValueError)
        assert list(results[1:]) == ["careful", "plain"]
        assert tries == ["optimistic", "careful"]
        rows = sorted(r[0] for r in writer._conn.execute("SELECT v FROM t"))
        assert rows == ["careful", "plain"]
    finally:
        writer.close()


async def test_a_read_holds_no_write_lock_and_reads_a_snapshot(tmp_path: Path) -> None:
    # A long read (every open PR sharing a file) used to hold the write lock, and a
    # webhook's ack waited behind it. Now a write commits while a read is still open,
    # and the open read keeps the snapshot it began with.
    writer = SqliteWriter(str(tmp_path / "w.db"), "CREATE TABLE t (v TEXT);")
    reading = threading.Event()
    may_finish = threading.Event()

    def slow_read(conn: sqlite3.Connection) -> list[str]:
        first = [r[0] for r in conn.execute("SELECT v FROM t")]
        reading.set()
        assert may_finish.wait(10)
        return first + [r[0] for r in conn.execute("SELECT v FROM t")]

    def write(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('written')")

    try:
        await writer.run(lambda conn: conn.execute("INSERT INTO t VALUES ('before')"))
        read = asyncio.create_task(writer.read(slow_read))
        assert await asyncio.to_thread(reading.wait, 10)
        await asyncio.wait_for(writer.run(write), 5)  # not behind the open read
        may_finish.set()
        assert await read == ["before", "before"]
        assert await writer.read(lambda conn: [r[0] for r in conn.execute(
            "SELECT v FROM t ORDER BY v")]) == ["before", "written"]
    finally:
        may_finish.set()
        writer.close()
    with pytest.raises(StoreUnavailable):
        await writer.read(lambda conn: None)


async def test_the_ledger_and_the_job_store_share_one_connection(tmp_path: Path) -> None:
    # Two connections on one file meant SQLite's busy handler (sleeps up to 100 ms)
    # between a job's ledger write and a webhook's ack.
    path = tmp_path / "digest.db"
    store = SqliteJobStore(path)
    ledger = Ledger(store.writer)
    try:
        assert ledger.writer is store.writer
        await ledger.record_converged(REPO, 7, 1, "f1", open_head="abc")
        assert await ledger.fingerprints(REPO) == {7: "f1"}
        accepted = await store.accept_delivery(
            Delivery(delivery_id="d1", event="pull_request", action="opened"), pr_job())
        assert accepted.job_id > 0
    finally:
        ledger.close()
        store.close()  # closing the shared connection twice is harmless
