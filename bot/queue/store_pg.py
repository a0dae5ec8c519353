"""`JobStore` over PostgreSQL: the inbox several replicas share (DIGEST_DATABASE_URL).

The same semantics as the SQLite store (bot/queue/store.py: coalescing per PR, debounce,
leases, backoff, parking), made safe for concurrent replicas:

- a delivery id is claimed by the `deliveries` primary key: the same delivery sent to two
  replicas at once is one job (the second waits for the first's commit, then sees it);
- enqueue takes a transaction advisory lock on the job's key, so two replicas merging
  events of one PR agree on its one pending job;
- claim reads candidates with `FOR UPDATE SKIP LOCKED` and takes a transaction advisory
  lock on the PR before checking that nothing of that PR runs: two replicas never run
  two jobs of one PR at once;
- a dead replica's running job is not "orphaned at start" (other replicas are alive):
  it waits out its lease, then any replica requeues it.

Times are the replicas' clocks (seconds since the epoch), as in SQLite: a lease is
minutes, so clocks kept by NTP agree well enough.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bot.db.pool import Conn, Database
from bot.queue.store import (
    CLAIM_ORDER,
    JOB_COLUMNS,
    STATES,
    Accepted,
    Delivery,
    Job,
    JobState,
    NewJob,
    StoreUnavailable,
    backoff_delay,
    index_delay,
    job_from_row,
    merged_text,
)
from bot.settings.model import Settings

_ACCEPT = ("SELECT outcome, job_id, due_at"
           " FROM digest_accept(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
_ACCEPT_MANY = ("SELECT i, outcome, job_id, due_at FROM digest_accept_many("
                "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ORDER BY i")
_AckDone = Callable[[Accepted | None, BaseException | None], None]
# How many due jobs one claim looks at: the first whose PR is free wins.
_CLAIM_CANDIDATES = 8

# The delivery's row, claimed first: a concurrent transaction with the same id waits on
# the key and then finds it taken. An earlier "ignored" record of the id is taken over.
_CLAIM_DELIVERY = (
    "INSERT INTO deliveries (delivery_id, event, action, received_at, outcome, job_id)"
    " VALUES (%s, %s, %s, %s, 'accepted', NULL) ON CONFLICT (delivery_id) DO UPDATE"
    " SET event = excluded.event, action = excluded.action,"
    " received_at = excluded.received_at, outcome = 'accepted'"
    " WHERE deliveries.job_id IS NULL RETURNING delivery_id"
)


def pr_lock_name(job_key: str, repo: str, number: int | None) -> str:
    """What claim locks: the PR (any kind of job on it), else the job's own key."""
    return f"pr:{repo}#{number}" if number is not None else job_key


class PostgresJobStore:
    """`JobStore` over a shared PostgreSQL database; every call is one transaction."""

    def __init__(
        self,
        database: Database,
        *,
        clock: Callable[[], float] = time.time,
        settle_seconds: float = 3.0,
        index_settle_seconds: float = 600.0,
        max_attempts: int = 8,
        lease_seconds: float = 300.0,
        backoff_base_seconds: float = 5.0,
        backoff_cap_seconds: float = 600.0,
        rng: random.Random | None = None,
        owns_database: bool = False,
    ) -> None:
        self._db = database
        self._owns_db = owns_database
        self._clock = clock
        self._settle = settle_seconds
        self._index_settle = index_settle_seconds
        self._max_attempts = max_attempts
        self._lease = lease_seconds
        self._backoff_base = backoff_base_seconds
        self._backoff_cap = backoff_cap_seconds
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security
        # The acks each event loop asked for during its current tick (submit_accept).
        self._ticks: dict[asyncio.AbstractEventLoop,
                          list[tuple[Delivery, NewJob, _AckDone]]] = {}
        self._ticks_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, database: Database, *,
                      clock: Callable[[], float] = time.time) -> PostgresJobStore:
        return cls(database, clock=clock, settle_seconds=settings.settle_seconds,
                   index_settle_seconds=settings.index_settle_seconds,
                   max_attempts=settings.max_attempts, lease_seconds=settings.lease_seconds,
                   backoff_base_seconds=settings.backoff_base_seconds)

    def close(self) -> None:
        if self._owns_db:
            self._db.close()

    # -- intake ---------------------------------------------------------------------

    async def accept_delivery(self, delivery: Delivery, job: NewJob) -> Accepted:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Accepted] = loop.create_future()

        def done(result: Accepted | None, error: BaseException | None) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_exception(error)
            else:
                assert result is not None
                answer.set_result(result)

        self.submit_accept(delivery, job, done, loop)
        return await answer

    def submit_accept(self, delivery: Delivery, job: NewJob, done: _AckDone,
                      loop: asyncio.AbstractEventLoop) -> None:
        """`accept_delivery` for the HTTP protocol's ack route: `done` hears the outcome
        on `loop` (the running one) once committed. The acks `loop` asks for during one
        tick go to the database together, as one statement and one commit."""
        with self._ticks_lock:
            batch = self._ticks.get(loop)
            first = batch is None
            if batch is None:
                batch = self._ticks[loop] = []
            batch.append((delivery, job, done))
        if first:
            loop.call_soon(self._flush_acks, loop)

    def _flush_acks(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._ticks_lock:
            batch = self._ticks.pop(loop, [])
        if not batch:
            return

        def answer(results: list[Accepted] | None, error: BaseException | None) -> None:
            for index, (_, _, done) in enumerate(batch):
                if error is not None or results is None:
                    done(None, error or StoreUnavailable("no answer"))
                else:
                    done(results[index], None)

        self._db.submit(self._accept_batch_op([(d, j) for d, j, _ in batch]), answer, loop,
                        transaction=False)

    def _delay(self, job: NewJob) -> float:
        """How long after now a new job of this kind is due (see `_enqueue`)."""
        if job.kind == "index":
            return index_delay(job, self._index_settle)
        return 0.0 if job.kind == "command" else self._settle

    def _accept_batch_op(self, batch: list[tuple[Delivery, NewJob]],
                         ) -> Callable[[Conn], list[Accepted]]:
        """One statement, one round trip, one commit for the whole batch:
        `digest_accept_many` (migration 3) does for each what `_careful_accept_op` does.
        In the order of (key, delivery id), so two replicas' batches take their locks in
        one order. A payload PostgreSQL's JSON cannot hold (a NUL, a lone surrogate in a
        label name) fails the statement as a whole: then each delivery is taken on its
        own, that one the careful way (the Python path, which merges payloads as text)."""
        order = sorted(range(len(batch)),
                       key=lambda i: (batch[i][1].key, batch[i][0].delivery_id))

        def op(conn: Conn) -> list[Accepted]:
            now = self._clock()
            ranked = [batch[i] for i in order]
            try:
                rows = conn.execute(_ACCEPT_MANY, (
                    [d.delivery_id for d, _ in ranked], [d.event for d, _ in ranked],
                    [d.action for d, _ in ranked], now, [j.kind for _, j in ranked],
                    [j.key for _, j in ranked], [j.installation_id for _, j in ranked],
                    [j.repo for _, j in ranked], [j.number for _, j in ranked],
                    [json.dumps(j.payload) for _, j in ranked],
                    [self._delay(j) for _, j in ranked])).fetchall()
            except psycopg.DataError:
                return [self._accept_one(conn, delivery, job) for delivery, job in batch]
            results: list[Accepted | None] = [None] * len(batch)
            for rank, outcome, job_id, due_at in rows:
                results[order[rank - 1]] = Accepted(outcome, int(job_id), float(due_at))
            assert all(r is not None for r in results)
            return [r for r in results if r is not None]

        return op

    def _accept_one(self, conn: Conn, delivery: Delivery, job: NewJob) -> Accepted:
        try:
            row = conn.execute(_ACCEPT, (
                delivery.delivery_id, delivery.event, delivery.action, self._clock(),
                job.kind, job.key, job.installation_id, job.repo, job.number,
                json.dumps(job.payload), self._delay(job))).fetchone()
        except psycopg.DataError:
            with conn.transaction():
                return self._careful_accept_op(delivery, job)(conn)
        assert row is not None
        return Accepted(row[0], int(row[1]), float(row[2]))

    def _careful_accept_op(self, delivery: Delivery, job: NewJob,
                           ) -> Callable[[Conn], Accepted]:
        def op(conn: Conn) -> Accepted:
            now = self._clock()
            claimed = conn.execute(_CLAIM_DELIVERY, (delivery.delivery_id, delivery.event,
                                                     delivery.action, now)).fetchone()
            if claimed is None:
                seen = conn.execute("SELECT job_id FROM deliveries WHERE delivery_id = %s",
                                    (delivery.delivery_id,)).fetchone()
                assert seen is not None
                assert seen[0] is not None
                return self._redeliver(conn, int(seen[0]), now)
            job_id, due_at = self._enqueue(conn, job, delivery.delivery_id, now)
            conn.execute("UPDATE deliveries SET job_id = %s WHERE delivery_id = %s",
                         (job_id, delivery.delivery_id))
            return Accepted("accepted", job_id, due_at)

        return op

    def _redeliver(self, conn: Conn, job_id: int, now: float) -> Accepted:
        # GitHub never redelivers by itself: a redelivery is an operator asking for a retry.
        cur = conn.execute(
            "UPDATE jobs SET state = 'queued', attempts = 0, not_before = %s, updated_at = %s"
            " WHERE id = %s AND state IN ('failed', 'parked')",
            (now, now, job_id),
        )
        if cur.rowcount:
            return Accepted("requeued", job_id, now)
        return Accepted("duplicate", job_id, now)

    async def record_delivery(self, delivery: Delivery, outcome: str) -> bool:
        return await self._db.run(self._record_op(delivery, outcome))

    def submit_record(self, delivery: Delivery, outcome: str,
                      done: Callable[[bool | None, BaseException | None], None],
                      loop: asyncio.AbstractEventLoop) -> None:
        self._db.submit(self._record_op(delivery, outcome), done, loop)

    def _record_op(self, delivery: Delivery, outcome: str) -> Callable[[Conn], bool]:
        def op(conn: Conn) -> bool:
            cur = conn.execute(
                "INSERT INTO deliveries (delivery_id, event, action, received_at, outcome,"
                " job_id) VALUES (%s, %s, %s, %s, %s, NULL) ON CONFLICT DO NOTHING",
                (delivery.delivery_id, delivery.event, delivery.action, self._clock(),
                 outcome),
            )
            return cur.rowcount > 0

        return op

    async def enqueue(self, job: NewJob, delivery_id: str | None = None, *,
                      later: float | None = None) -> int:
        def op(conn: Conn) -> int:
            now = self._clock()
            if later is not None:
                pending = self._pending(conn, job.key)
                if pending is not None:
                    return int(pending[0])  # it runs first, and reads everything
                return self._insert(conn, job, None, now, not_before=now + later)
            return self._enqueue(conn, job, delivery_id, now)[0]

        return await self._db.run(op)

    def _pending(self, conn: Conn, key: str) -> tuple[Any, ...] | None:
        # Locks the key for this transaction: replicas enqueueing one PR take turns, so
        # they agree on its one pending job (none inserts a second beside it).
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))
        return conn.execute(
            "SELECT id, payload, not_before FROM jobs WHERE key = %s"
            " AND state IN ('queued', 'failed') ORDER BY id LIMIT 1 FOR UPDATE",
            (key,),
        ).fetchone()

    def _enqueue(self, conn: Conn, job: NewJob, delivery_id: str | None,
                 now: float) -> tuple[int, float]:
        """(job id, when it is due)."""
        if job.kind == "command":
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (job.key,))
            same = conn.execute(
                "SELECT id FROM jobs WHERE key = %s AND state != 'parked' LIMIT 1", (job.key,)
            ).fetchone()
            if same is not None:
                return int(same[0]), now
            return self._insert(conn, job, delivery_id, now, not_before=now), now
        pending = self._pending(conn, job.key)
        if job.kind == "index":
            # Throttled, not debounced (see the SQLite store).
            if pending is None:
                not_before = now + index_delay(job, self._index_settle)
                return (self._insert(conn, job, delivery_id, now, not_before=not_before),
                        not_before)
            conn.execute(
                "UPDATE jobs SET payload = %s, updated_at = %s,"
                " installation_id = COALESCE(%s, installation_id) WHERE id = %s",
                (merged_text(pending[1], job.payload), now, job.installation_id, pending[0]),
            )
            return int(pending[0]), float(pending[2])
        not_before = now + self._settle
        if pending is None:
            return self._insert(conn, job, delivery_id, now, not_before=not_before), not_before
        conn.execute(
            "UPDATE jobs SET payload = %s, state = 'queued', not_before = %s, updated_at = %s,"
            " installation_id = COALESCE(%s, installation_id) WHERE id = %s",
            (merged_text(pending[1], job.payload), not_before, now, job.installation_id,
             pending[0]),
        )
        return int(pending[0]), not_before

    def _insert(self, conn: Conn, job: NewJob, delivery_id: str | None, now: float, *,
                not_before: float) -> int:
        row = conn.execute(
            "INSERT INTO jobs (kind, key, installation_id, repo, number, payload, delivery_id,"
            " state, attempts, not_before, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, 'queued', 0, %s, %s, %s) RETURNING id",
            (job.kind, job.key, job.installation_id, job.repo, job.number,
             json.dumps(job.payload), delivery_id, not_before, now, now),
        ).fetchone()
        assert row is not None
        return int(row[0])

    # -- worker side ----------------------------------------------------------------

    async def claim(self, now: float | None = None, *,
                    outsiders: bool = True) -> Job | None:
        def op(conn: Conn) -> Job | None:
            at = self._clock() if now is None else now
            candidates = conn.execute(
                f"SELECT {JOB_COLUMNS} FROM jobs j WHERE state IN ('queued', 'failed')"  # noqa: S608
                " AND not_before <= %s AND (%s OR NOT outsider) AND NOT EXISTS (SELECT 1"
                " FROM jobs r WHERE r.state = 'running' AND (r.key = j.key"
                " OR (r.repo = j.repo AND r.number = j.number)))"
                f" ORDER BY {CLAIM_ORDER} LIMIT %s FOR UPDATE SKIP LOCKED",
                (at, outsiders, _CLAIM_CANDIDATES),
            ).fetchall()
            for row in candidates:
                job = job_from_row(row)
                if not self._take_pr(conn, job):
                    continue
                taken = conn.execute(
                    "UPDATE jobs SET state = 'running', lease_until = %s, updated_at = %s,"
                    " generation = generation + 1 WHERE id = %s RETURNING generation",
                    (at + self._lease, at, job.id),
                ).fetchone()
                assert taken is not None
                return job.model_copy(update={"state": "running", "generation": int(taken[0])})
            return None

        return await self._db.run(op)

    def _take_pr(self, conn: Conn, job: Job) -> bool:
        """Whether this transaction may start `job`: it holds the PR's lock (until it
        commits) and, checked after taking it, nothing of that PR runs. Two replicas
        claiming two jobs of one PR at once: one gets the lock; the other either fails
        to get it or gets it after the first committed, and then sees its running job."""
        name = pr_lock_name(job.key, job.repo, job.number)
        got = conn.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 1))",
                           (name,)).fetchone()
        if not got or not got[0]:
            return False
        busy = conn.execute(
            "SELECT 1 FROM jobs WHERE state = 'running' AND (key = %s"
            " OR (repo = %s AND number = %s)) LIMIT 1",
            (job.key, job.repo, job.number),
        ).fetchone()
        return busy is None

    async def complete(self, job_id: int, *, attempts: int | None = None) -> bool:
        return await self._set_state(job_id, "done", attempts)

    async def defer_outsider(self, job_id: int, *, attempts: int) -> bool:
        def op(conn: Conn) -> bool:
            cur = conn.execute(
                "UPDATE jobs SET state = 'queued', outsider = true,"
                " payload = digest_merge_payload(payload, %s), lease_until = NULL,"
                " updated_at = %s WHERE id = %s AND state = 'running' AND attempts = %s",
                (json.dumps({"outsider": True}), self._clock(), job_id, attempts),
            )
            return cur.rowcount > 0

        return await self._db.run(op)

    async def release(self, job_id: int, *, attempts: int | None = None) -> None:
        """Back to the queue without counting an attempt (shutdown mid-job)."""
        await self._set_state(job_id, "queued", attempts)

    async def _set_state(self, job_id: int, state: JobState, attempts: int | None) -> bool:
        def op(conn: Conn) -> bool:
            now = self._clock()
            cur = conn.execute(
                "UPDATE jobs SET state = %s, lease_until = NULL, updated_at = %s,"
                " not_before = LEAST(not_before, %s) WHERE id = %s AND state = 'running'"
                " AND (%s::integer IS NULL OR attempts = %s)",
                (state, now, now, job_id, attempts, attempts),
            )
            return cur.rowcount > 0

        return await self._db.run(op)

    async def renew_lease(self, job_id: int, attempts: int, now: float | None = None) -> bool:
        def op(conn: Conn) -> bool:
            at = self._clock() if now is None else now
            cur = conn.execute(
                "UPDATE jobs SET lease_until = %s WHERE id = %s AND state = 'running'"
                " AND attempts = %s",
                (at + self._lease, job_id, attempts),
            )
            return cur.rowcount > 0

        return await self._db.run(op)

    async def fence(self, job_id: int, generation: int, now: float | None = None) -> bool:
        def op(conn: Conn) -> bool:
            at = self._clock() if now is None else now
            cur = conn.execute(
                "UPDATE jobs SET lease_until = %s WHERE id = %s AND state = 'running'"
                " AND generation = %s AND lease_until >= %s",
                (at + self._lease, job_id, generation, at),
            )
            return cur.rowcount > 0

        return await self._db.run(op, transaction=False)

    def backoff_seconds(self, attempts: int) -> float:
        return backoff_delay(attempts, self._backoff_base, self._backoff_cap,
                             self._rng.random())

    async def fail(
        self, job_id: int, error: str, retry_at: float | None = None, *,
        attempts: int | None = None, park: bool = False,
    ) -> Job | None:
        # The jitter is drawn here, once: the transaction may run again after a deadlock.
        jitter = self._rng.random()

        def op(conn: Conn) -> Job | None:
            now = self._clock()
            row = conn.execute("SELECT attempts, state FROM jobs WHERE id = %s FOR UPDATE",
                               (job_id,)).fetchone()
            if row is None:
                raise KeyError(job_id)
            if attempts is not None and (row[1] != "running" or int(row[0]) != attempts):
                return None  # a stale run: the job was requeued and may run elsewhere
            attempts_now = int(row[0]) + 1
            out_of_attempts = attempts_now >= self._max_attempts
            state: JobState = "parked" if park or out_of_attempts else "failed"
            when = retry_at if retry_at is not None else now + backoff_delay(
                attempts_now, self._backoff_base, self._backoff_cap, jitter)
            conn.execute(
                "UPDATE jobs SET state = %s, attempts = %s, not_before = %s, last_error = %s,"
                " lease_until = NULL, updated_at = %s WHERE id = %s",
                (state, attempts_now, when, error[:2000], now, job_id),
            )
            return self._get(conn, job_id)

        return await self._db.run(op)

    async def release_expired_leases(self, now: float | None = None) -> int:
        """A replica killed mid-job never completes it: its lease runs out and any
        replica returns the job to the queue, counted as an attempt (see SQLite's)."""
        at = self._clock() if now is None else now

        def op(conn: Conn) -> int:
            stamp = self._clock()
            cur = conn.execute(
                "UPDATE jobs SET state = CASE WHEN attempts + 1 >= %s THEN 'parked'"
                " ELSE 'queued' END, attempts = attempts + 1, not_before = %s,"
                " last_error = %s, lease_until = NULL, updated_at = %s,"
                " generation = generation + 1 WHERE state = 'running' AND lease_until < %s",
                (self._max_attempts, stamp, "lease expired (worker died?)", stamp, at),
            )
            return cur.rowcount

        return await self._db.run(op)

    async def recover_orphans(self) -> int:
        """Unlike one process on SQLite, a replica starting cannot tell a dead process's
        running job from a live replica's: only expired leases are requeued."""
        return await self.release_expired_leases()

    # -- inspection -----------------------------------------------------------------

    async def counts(self) -> dict[JobState, int]:
        def op(conn: Conn) -> dict[JobState, int]:
            found = dict.fromkeys(STATES, 0)
            for state, n in conn.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"):
                found[state] = int(n)
            return found

        return await self._db.run(op)

    def _get(self, conn: Conn, job_id: int) -> Job:
        row = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = %s",  # noqa: S608
                           (job_id,)).fetchone()
        if row is None:
            raise KeyError(job_id)
        return job_from_row(row)

    async def get(self, job_id: int) -> Job | None:
        def op(conn: Conn) -> Job | None:
            try:
                return self._get(conn, job_id)
            except KeyError:
                return None

        return await self._db.run(op)

    async def list_jobs(self, state: JobState | None = None) -> list[Job]:
        def op(conn: Conn) -> list[Job]:
            if state:
                rows = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE state = %s"  # noqa: S608
                                    " ORDER BY id", (state,))
            else:
                rows = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs ORDER BY id")  # noqa: S608
            return [job_from_row(r) for r in rows]

        return await self._db.run(op)

    async def list_parked(self) -> list[Job]:
        return await self.list_jobs("parked")

    async def requeue_parked(self, job_ids: Sequence[int] | None = None) -> int:
        def op(conn: Conn) -> int:
            now = self._clock()
            sql = ("UPDATE jobs SET state = 'queued', attempts = 0, not_before = %s,"
                   " updated_at = %s WHERE state = 'parked'")
            if job_ids is None:
                return conn.execute(sql, (now, now)).rowcount
            return conn.execute(sql + " AND id = ANY(%s)", (now, now, list(job_ids))).rowcount

        return await self._db.run(op)

    async def prune(self, older_than: float) -> int:
        """Forget finished jobs and deliveries older than this."""

        def op(conn: Conn) -> int:
            n = conn.execute("DELETE FROM jobs WHERE state = 'done' AND updated_at < %s",
                             (older_than,)).rowcount
            conn.execute("DELETE FROM deliveries WHERE received_at < %s", (older_than,))
            return n

        return await self._db.run(op)

    async def ping(self) -> None:
        """Raises StoreUnavailable unless the database can be *written* (see SQLite's)."""

        def op(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO health (id, checked_at) VALUES (1, %s) ON CONFLICT (id)"
                " DO UPDATE SET checked_at = excluded.checked_at", (self._clock(),))

        await self._db.run(op)
