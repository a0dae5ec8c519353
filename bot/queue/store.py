"""The durable inbox: deliveries and jobs in SQLite, coalesced per PR, safe against kill -9.

The store is an inbox and a cache, never the source of truth (docs/architecture.md): every
job recomputes the digest from GitHub, so coalescing and re-running are harmless.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from bot.queue.sqlite_writer import RerunOp, SqliteWriter

# Part of the JobStore contract (every method may raise it), so callers import it from
# here; it is defined next to the SQLite writer that raises it.
from bot.queue.sqlite_writer import StoreUnavailable as StoreUnavailable
from bot.settings.model import Settings

JobKind = Literal["pr", "command", "sweep", "index", "status", "writer"]
JobState = Literal["queued", "running", "done", "failed", "parked"]
Acceptance = Literal["accepted", "duplicate", "requeued"]
STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed", "parked")
# "failed" means: failed, retry at not_before. Both it and "queued" are waiting to run.


def pr_key(repo: str, number: int) -> str:
    return f"pr:{repo}#{number}"


def index_key(repo: str) -> str:
    return f"index:{repo}"


def status_key(repo: str, sha: str) -> str:
    """A CI build's state on one commit: its events coalesce as a PR's do."""
    return f"status:{repo}@{sha}"


def command_key(repo: str, comment_id: int, body_sha1: str) -> str:
    return f"cmd:{repo}#{comment_id}:{body_sha1}"


class NewJob(BaseModel):
    """A job as intake asks for it; the store decides whether it is new or merged."""

    model_config = ConfigDict(frozen=True)

    kind: JobKind
    key: str
    installation_id: int | None
    repo: str
    number: int | None
    payload: dict[str, Any] = Field(default_factory=dict)


class Job(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    kind: JobKind
    key: str
    installation_id: int | None
    repo: str
    number: int | None
    payload: dict[str, Any]
    delivery_id: str | None
    attempts: int
    state: JobState
    not_before: float
    last_error: str | None
    # The fencing token of this run: bumped by every claim and every requeue, so only
    # the run that claimed last matches it (`JobStore.fence`).
    generation: int = 0


class Accepted(NamedTuple):
    outcome: Acceptance
    job_id: int
    due_at: float  # when the job becomes claimable, so intake can wake the worker then


class Delivery(BaseModel):
    model_config = ConfigDict(frozen=True)

    delivery_id: str
    event: str
    action: str | None = None


class JobStore(Protocol):
    async def accept_delivery(self, delivery: Delivery, job: NewJob) -> Accepted:
        """Record the delivery and enqueue its job atomically; dedupe by delivery id."""
        ...

    async def record_delivery(self, delivery: Delivery, outcome: str) -> bool: ...

    async def enqueue(self, job: NewJob, delivery_id: str | None = None, *,
                      later: float | None = None) -> int:
        """`later`: run no sooner than this many seconds from now, unless a job of the
        same key is already waiting (it is left as it is: it will run first)."""
        ...

    async def claim(self, now: float | None = None, *,
                    outsiders: bool = True) -> Job | None:
        """The next due job: commands not yet sorted (maybe a maintainer's) first, then
        the rest, and outsiders' commands (see `defer_outsider`) last; none of those
        when `outsiders` is False."""
        ...

    async def defer_outsider(self, job_id: int, *, attempts: int) -> bool:
        """A running command found to be from someone without write access goes back to
        the queue behind everyone else's work, without counting an attempt; its payload
        says `outsider` so the next run does it. False: that run no longer holds the job."""
        ...

    async def complete(self, job_id: int, *, attempts: int | None = None) -> bool:
        """Done, unless `attempts` is given and that run no longer holds the job
        (its lease ran out and it was requeued): then a no-op returning False."""
        ...

    async def fail(
        self, job_id: int, error: str, retry_at: float | None = None, *,
        attempts: int | None = None, park: bool = False,
    ) -> Job | None:
        """Count a failed attempt; park the job after the last one, or at once if `park`.
        None: `attempts` was given and that run is stale (see `complete`), nothing changed."""
        ...

    async def renew_lease(self, job_id: int, attempts: int, now: float | None = None) -> bool:
        """Heartbeat: extend the running job's lease; False if this run lost it."""
        ...

    async def fence(self, job_id: int, generation: int, now: float | None = None) -> bool:
        """Whether the run that claimed `generation` still holds the job's lease; if so
        the lease is extended from `now`, in the same statement. False once the lease ran
        out, or the job was requeued or claimed again: that run must write nothing more."""
        ...

    async def release(self, job_id: int, *, attempts: int | None = None) -> None: ...

    async def release_expired_leases(self, now: float | None = None) -> int: ...

    async def recover_orphans(self) -> int: ...

    async def counts(self) -> dict[JobState, int]: ...

    async def get(self, job_id: int) -> Job | None: ...

    async def list_parked(self) -> list[Job]: ...

    async def requeue_parked(self, job_ids: Sequence[int] | None = None) -> int: ...

    async def ping(self) -> None: ...


class ServiceStore(JobStore, Protocol):
    """What the service and the operator's commands use beyond `JobStore`: both the
    SQLite store and the PostgreSQL one (bot/queue/store_pg.py) are one."""

    def close(self) -> None: ...

    def submit_accept(self, delivery: Delivery, job: NewJob,
                      done: Callable[[Accepted | None, BaseException | None], None],
                      loop: asyncio.AbstractEventLoop) -> None: ...

    def submit_record(self, delivery: Delivery, outcome: str,
                      done: Callable[[bool | None, BaseException | None], None],
                      loop: asyncio.AbstractEventLoop) -> None: ...

    async def list_jobs(self, state: JobState | None = None) -> list[Job]: ...

    async def prune(self, older_than: float) -> int: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    action TEXT,
    received_at REAL NOT NULL,
    outcome TEXT NOT NULL,
    job_id INTEGER
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    installation_id INTEGER,
    repo TEXT NOT NULL,
    number INTEGER,
    payload TEXT NOT NULL,
    delivery_id TEXT,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL NOT NULL,
    lease_until REAL,
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    outsider INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS health (
    id INTEGER PRIMARY KEY,
    checked_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, not_before);
CREATE INDEX IF NOT EXISTS jobs_key ON jobs (key, state);
CREATE INDEX IF NOT EXISTS jobs_pr ON jobs (repo, number, state);
"""
# Claim order (both stores): commands not yet sorted first (a maintainer's is among them,
# and sorting one costs a cached permission read), then every other job, then the
# commands of people without write access (issue 38, item 6). Oldest first within each.
CLAIM_ORDER = ("CASE WHEN outsider THEN 0 WHEN kind = 'command' THEN 2 ELSE 1 END DESC,"
               " not_before, id")
# A column added after the first release: SQLite files made before it get it here.
# Columns newer than the oldest files in use: a file made by an older release keeps its
# rows and gets them (0 everywhere) when it is opened.
_ADDED_COLUMNS = (
    ("jobs", "generation", "INTEGER NOT NULL DEFAULT 0"),
    ("jobs", "outsider", "INTEGER NOT NULL DEFAULT 0"),
)

# The columns `job_from_row` reads, in its order (both stores select them).
JOB_COLUMNS = (
    "id, kind, key, installation_id, repo, number, payload, delivery_id, attempts, state,"
    " not_before, last_error, generation"
)


# A new delivery's row, or the accepted outcome over an earlier "ignored" record of the
# same id; a row that already names a job is left alone (no change: seen before).
_RECORD_ACCEPTED = (
    "INSERT INTO deliveries VALUES (?, ?, ?, ?, 'accepted', ?) ON CONFLICT (delivery_id)"
    " DO UPDATE SET event = excluded.event, action = excluded.action,"
    " received_at = excluded.received_at, outcome = 'accepted', job_id = excluded.job_id"
    " WHERE deliveries.job_id IS NULL"
)


def job_from_row(row: Iterable[Any]) -> Job:
    """A job from a row of `JOB_COLUMNS` (a SQLite row or a PostgreSQL tuple)."""
    (id_, kind, key, installation_id, repo, number, payload, delivery_id, attempts, state,
     not_before, last_error, generation) = row
    return Job(id=id_, kind=kind, key=key, installation_id=installation_id, repo=repo,
               number=number, payload=json.loads(payload), delivery_id=delivery_id,
               attempts=attempts, state=state, not_before=not_before, last_error=last_error,
               generation=generation)


def _add_columns(conn: sqlite3.Connection) -> None:
    """A file from an older release has none of `_ADDED_COLUMNS`: add them."""
    for table, column, spec in _ADDED_COLUMNS:
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if columns and column not in columns:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {spec}")


def _oldest(rows: Iterable[sqlite3.Row]) -> sqlite3.Row | None:
    """The row with the lowest id: what `ORDER BY id LIMIT 1` returns. In Python because
    `state IN (...)` reads two ranges of the (key, state) index, which SQLite would merge
    with a temporary B-tree per call; a key has at most one pending job, so this sees
    one row or none."""
    return min(rows, key=_row_id, default=None)


def _row_id(row: sqlite3.Row) -> int:
    return int(row["id"])


def merge_payloads(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Lists are unions in arrival order (actions, label names); scalars: newest wins."""
    merged = dict(old)
    for name, value in new.items():
        if isinstance(value, list) and isinstance(merged.get(name), list):
            merged[name] = merged[name] + [v for v in value if v not in merged[name]]
        else:
            merged[name] = value
    return merged


def merged_text(stored: str, new: dict[str, Any]) -> str:
    """A pending job's stored payload with `new` merged in, as stored text. A burst of
    the same event changes nothing: the stored text is kept rather than re-encoded."""
    old = json.loads(stored)
    merged = merge_payloads(old, new)
    return stored if merged == old else json.dumps(merged)


def backoff_delay(attempts: int, base: float, cap: float, jitter: float) -> float:
    """Exponential, capped, with jitter in [50%, 100%] so retries do not stampede;
    `jitter` is a draw in [0, 1)."""
    ceiling = min(cap, base * 2 ** max(attempts - 1, 0))
    return float(ceiling * (0.5 + 0.5 * jitter))


def index_delay(job: NewJob, index_settle_seconds: float) -> float:
    """How long a new index job waits: a push waits out the window; "no index yet"
    (no sha: start-up) runs now."""
    return index_settle_seconds if job.payload.get("sha") else 0.0


class SqliteJobStore:
    """`JobStore` over one SQLite file (WAL). The calls each event loop makes during one
    tick commit together, as one transaction (bot/queue/sqlite_writer.py)."""

    def __init__(
        self,
        path: Path | str,
        *,
        clock: Callable[[], float] = time.time,
        settle_seconds: float = 3.0,
        index_settle_seconds: float = 600.0,
        max_attempts: int = 8,
        lease_seconds: float = 300.0,
        backoff_base_seconds: float = 5.0,
        backoff_cap_seconds: float = 600.0,
        rng: random.Random | None = None,
        busy_timeout_ms: int = 5000,
    ) -> None:
        self._clock = clock
        self._settle = settle_seconds
        self._index_settle = index_settle_seconds
        self._max_attempts = max_attempts
        self._lease = lease_seconds
        self._backoff_base = backoff_base_seconds
        self._backoff_cap = backoff_cap_seconds
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not security
        self._writer = SqliteWriter(str(path), _SCHEMA, busy_timeout_ms=busy_timeout_ms,
                                    upgrade=_add_columns)

    @classmethod
    def from_settings(
        cls, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> SqliteJobStore:
        return cls(settings.db_path, clock=clock, settle_seconds=settings.settle_seconds,
                   index_settle_seconds=settings.index_settle_seconds,
                   max_attempts=settings.max_attempts, lease_seconds=settings.lease_seconds,
                   backoff_base_seconds=settings.backoff_base_seconds)

    @property
    def writer(self) -> SqliteWriter:
        """The file's one connection, shared with the ledger (bot/queue/ledger.py)."""
        return self._writer

    def close(self) -> None:
        self._writer.close()

    # -- intake ---------------------------------------------------------------------

    async def accept_delivery(self, delivery: Delivery, job: NewJob) -> Accepted:
        return await self._writer.run(self._accept_op(delivery, job))

    def submit_accept(self, delivery: Delivery, job: NewJob,
                      done: Callable[[Accepted | None, BaseException | None], None],
                      loop: asyncio.AbstractEventLoop) -> None:
        """`accept_delivery` for a caller without a task (the HTTP protocol's ack): `done`
        hears the outcome on `loop`, the running one, once the transaction has committed."""
        self._writer.submit(self._accept_op(delivery, job), done, loop)

    def _accept_op(self, delivery: Delivery, job: NewJob,
                   ) -> Callable[[sqlite3.Connection], Accepted]:
        optimistic = True

        def op(conn: sqlite3.Connection) -> Accepted:
            nonlocal optimistic
            now = self._clock()
            if optimistic:
                # Almost every delivery is new: store its job, then record it, and learn
                # from that one statement whether it was seen before. If it was (an
                # operator's redelivery), this run is undone and the op runs again the
                # careful way, which looks first.
                job_id, due_at = self._enqueue(conn, job, delivery.delivery_id, now)
                if conn.execute(_RECORD_ACCEPTED, (delivery.delivery_id, delivery.event,
                                                   delivery.action, now, job_id)).rowcount:
                    return Accepted("accepted", job_id, due_at)
                optimistic = False
                raise RerunOp
            seen = conn.execute(
                "SELECT job_id FROM deliveries WHERE delivery_id = ?", (delivery.delivery_id,)
            ).fetchone()
            if seen is not None and seen["job_id"] is not None:
                return self._redeliver(conn, seen["job_id"], now)
            job_id, due_at = self._enqueue(conn, job, delivery.delivery_id, now)
            conn.execute(
                "INSERT OR REPLACE INTO deliveries VALUES (?, ?, ?, ?, 'accepted', ?)",
                (delivery.delivery_id, delivery.event, delivery.action, now, job_id),
            )
            return Accepted("accepted", job_id, due_at)

        return op

    def _redeliver(self, conn: sqlite3.Connection, job_id: int, now: float) -> Accepted:
        # GitHub never redelivers by itself: a redelivery is an operator asking for a retry.
        cur = conn.execute(
            "UPDATE jobs SET state = 'queued', attempts = 0, not_before = ?, updated_at = ?"
            " WHERE id = ? AND state IN ('failed', 'parked')",
            (now, now, job_id),
        )
        if cur.rowcount:
            return Accepted("requeued", job_id, now)
        return Accepted("duplicate", job_id, now)

    async def record_delivery(self, delivery: Delivery, outcome: str) -> bool:
        return await self._writer.run(self._record_op(delivery, outcome))

    def submit_record(self, delivery: Delivery, outcome: str,
                      done: Callable[[bool | None, BaseException | None], None],
                      loop: asyncio.AbstractEventLoop) -> None:
        """`record_delivery` with a callback, as `submit_accept`."""
        self._writer.submit(self._record_op(delivery, outcome), done, loop)

    def _record_op(self, delivery: Delivery, outcome: str,
                   ) -> Callable[[sqlite3.Connection], bool]:
        def op(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT OR IGNORE INTO deliveries VALUES (?, ?, ?, ?, ?, NULL)",
                (delivery.delivery_id, delivery.event, delivery.action, self._clock(), outcome),
            )
            return cur.rowcount > 0

        return op

    async def enqueue(self, job: NewJob, delivery_id: str | None = None, *,
                      later: float | None = None) -> int:
        def op(conn: sqlite3.Connection) -> int:
            if later is not None:
                return self._enqueue_later(conn, job, self._clock() + later)
            return self._enqueue(conn, job, delivery_id, self._clock())[0]

        return await self._writer.run(op)

    def _enqueue(
        self, conn: sqlite3.Connection, job: NewJob, delivery_id: str | None, now: float
    ) -> tuple[int, float]:
        """(job id, when it is due)."""
        if job.kind == "command":
            # Same comment, same text: one run. A parked one may run again.
            same = conn.execute(
                "SELECT id FROM jobs WHERE key = ? AND state != 'parked' LIMIT 1", (job.key,)
            ).fetchone()
            if same is not None:
                return int(same["id"]), now
            return self._insert(conn, job, delivery_id, now, not_before=now), now
        if job.kind == "index":
            return self._enqueue_index(conn, job, delivery_id, now)
        # PR-Agent's pattern: at most one running and one pending job per PR. A new event
        # merges into the pending one and pushes it back (vLLM's body-cleanup `edited`
        # arrives seconds after `opened`; force-pushes come in bursts).
        pending = _oldest(conn.execute(
            "SELECT id, payload FROM jobs WHERE key = ? AND state IN ('queued', 'failed')",
            (job.key,),
        ))
        not_before = now + self._settle
        if pending is None:
            return self._insert(conn, job, delivery_id, now, not_before=not_before), not_before
        conn.execute(
            "UPDATE jobs SET payload = ?, state = 'queued', not_before = ?, updated_at = ?,"
            " installation_id = COALESCE(?, installation_id) WHERE id = ?",
            (merged_text(pending["payload"], job.payload), not_before, now,
             job.installation_id, pending["id"]),
        )
        return int(pending["id"]), not_before

    def _enqueue_later(self, conn: sqlite3.Connection, job: NewJob, not_before: float) -> int:
        pending = _oldest(conn.execute(
            "SELECT id, payload FROM jobs WHERE key = ? AND state IN ('queued', 'failed')",
            (job.key,),
        ))
        if pending is not None:
            return _row_id(pending)
        return self._insert(conn, job, None, self._clock(), not_before=not_before)

    def _enqueue_index(
        self, conn: sqlite3.Connection, job: NewJob, delivery_id: str | None, now: float
    ) -> tuple[int, float]:
        """Throttled, not debounced: vLLM merges many PRs an hour, so a push folds into
        the pending refresh (newest commit wins) without pushing it back; the index is
        at most `index_settle_seconds` behind the branch, and rebuilt at most that often."""
        pending = _oldest(conn.execute(
            "SELECT id, payload, not_before FROM jobs WHERE key = ?"
            " AND state IN ('queued', 'failed')",
            (job.key,),
        ))
        if pending is None:
            not_before = now + index_delay(job, self._index_settle)
            return self._insert(conn, job, delivery_id, now, not_before=not_before), not_before
        conn.execute(
            "UPDATE jobs SET payload = ?, updated_at = ?,"
            " installation_id = COALESCE(?, installation_id) WHERE id = ?",
            (merged_text(pending["payload"], job.payload), now, job.installation_id,
             pending["id"]),
        )
        return int(pending["id"]), float(pending["not_before"])

    def _insert(
        self, conn: sqlite3.Connection, job: NewJob, delivery_id: str | None, now: float,
        *, not_before: float,
    ) -> int:
        cur = conn.execute(
            "INSERT INTO jobs (kind, key, installation_id, repo, number, payload, delivery_id,"
            " state, attempts, not_before, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?)",
            (job.kind, job.key, job.installation_id, job.repo, job.number,
             json.dumps(job.payload), delivery_id, not_before, now, now),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    # -- worker side ----------------------------------------------------------------

    async def claim(self, now: float | None = None, *,
                    outsiders: bool = True) -> Job | None:
        def op(conn: sqlite3.Connection) -> Job | None:
            at = self._clock() if now is None else now
            row = conn.execute(
                f"SELECT {JOB_COLUMNS} FROM jobs j WHERE state IN ('queued', 'failed')"  # noqa: S608
                " AND not_before <= ? AND (? OR NOT outsider) AND NOT EXISTS (SELECT 1"
                " FROM jobs r WHERE r.state = 'running' AND (r.key = j.key"
                # One job per PR at a time, whatever its kind: a /digest command and the
                # PR's own digest run would otherwise both find no comment and both post.
                " OR (r.repo = j.repo AND r.number = j.number)))"
                f" ORDER BY {CLAIM_ORDER} LIMIT 1",
                (at, outsiders),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE jobs SET state = 'running', lease_until = ?, updated_at = ?,"
                " generation = generation + 1 WHERE id = ?",
                (at + self._lease, at, row["id"]),
            )
            return job_from_row(row).model_copy(
                update={"state": "running", "generation": row["generation"] + 1})

        return await self._writer.run(op)

    async def complete(self, job_id: int, *, attempts: int | None = None) -> bool:
        return await self._set_state(job_id, "done", attempts)

    async def defer_outsider(self, job_id: int, *, attempts: int) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            now = self._clock()
            row = conn.execute("SELECT payload FROM jobs WHERE id = ? AND state = 'running'"
                               " AND attempts = ?", (job_id, attempts)).fetchone()
            if row is None:
                return False
            conn.execute(
                "UPDATE jobs SET state = 'queued', outsider = 1, payload = ?,"
                " lease_until = NULL, updated_at = ? WHERE id = ?",
                (merged_text(row["payload"], {"outsider": True}), now, job_id),
            )
            return True

        return await self._writer.run(op)

    async def release(self, job_id: int, *, attempts: int | None = None) -> None:
        """Back to the queue without counting an attempt (shutdown mid-job)."""
        await self._set_state(job_id, "queued", attempts)

    async def _set_state(self, job_id: int, state: JobState, attempts: int | None) -> bool:
        # A run is identified by the attempt count it was claimed with: an expired
        # lease requeues the job with one more attempt, so a stale run matches nothing.
        def op(conn: sqlite3.Connection) -> bool:
            now = self._clock()
            cur = conn.execute(
                "UPDATE jobs SET state = ?, lease_until = NULL, updated_at = ?,"
                " not_before = MIN(not_before, ?) WHERE id = ? AND state = 'running'"
                " AND (? IS NULL OR attempts = ?)",
                (state, now, now, job_id, attempts, attempts),
            )
            return cur.rowcount > 0

        return await self._writer.run(op)

    async def renew_lease(self, job_id: int, attempts: int, now: float | None = None) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            at = self._clock() if now is None else now
            cur = conn.execute(
                "UPDATE jobs SET lease_until = ? WHERE id = ? AND state = 'running'"
                " AND attempts = ?",
                (at + self._lease, job_id, attempts),
            )
            return cur.rowcount > 0

        return await self._writer.run(op)

    async def fence(self, job_id: int, generation: int, now: float | None = None) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            at = self._clock() if now is None else now
            cur = conn.execute(
                "UPDATE jobs SET lease_until = ? WHERE id = ? AND state = 'running'"
                " AND generation = ? AND lease_until >= ?",
                (at + self._lease, job_id, generation, at),
            )
            return cur.rowcount > 0

        return await self._writer.run(op)

    def backoff_seconds(self, attempts: int) -> float:
        return backoff_delay(attempts, self._backoff_base, self._backoff_cap,
                             self._rng.random())

    async def fail(
        self, job_id: int, error: str, retry_at: float | None = None, *,
        attempts: int | None = None, park: bool = False,
    ) -> Job | None:
        """Count a failed attempt; park the job after the last one, or at once if `park`."""

        def op(conn: sqlite3.Connection) -> Job | None:
            now = self._clock()
            row = conn.execute(
                "SELECT attempts, state FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if row is None:
                raise KeyError(job_id)
            if attempts is not None and (
                row["state"] != "running" or int(row["attempts"]) != attempts
            ):
                return None  # a stale run: the job was requeued and may run elsewhere
            attempts_now = int(row["attempts"]) + 1
            out_of_attempts = attempts_now >= self._max_attempts
            state: JobState = "parked" if park or out_of_attempts else "failed"
            when = retry_at if retry_at is not None else now + self.backoff_seconds(attempts_now)
            conn.execute(
                "UPDATE jobs SET state = ?, attempts = ?, not_before = ?, last_error = ?,"
                " lease_until = NULL, updated_at = ? WHERE id = ?",
                (state, attempts_now, when, error[:2000], now, job_id),
            )
            return self._get(conn, job_id)

        return await self._writer.run(op)

    async def release_expired_leases(self, now: float | None = None) -> int:
        """A worker killed mid-job never completes it: its lease runs out and the job
        returns to the queue. Counted as an attempt, so a job that kills its worker
        every time ends up parked instead of looping."""

        at = self._clock() if now is None else now
        return await self._requeue_running("lease expired (worker died?)", lease_before=at)

    async def recover_orphans(self) -> int:
        """At start-up, every job still marked running belongs to a process that died:
        the embedded store serves one process, so waiting out the lease (minutes) would
        only hold those PRs back. Counted as an attempt, like an expired lease."""
        return await self._requeue_running("found running at start-up (process died?)")

    async def _requeue_running(self, reason: str, lease_before: float | None = None) -> int:
        # Every running job holds a lease (set by claim); infinity means "any lease".
        before = math.inf if lease_before is None else lease_before

        def op(conn: sqlite3.Connection) -> int:
            at = self._clock()
            cur = conn.execute(
                "UPDATE jobs SET state = CASE WHEN attempts + 1 >= ? THEN 'parked'"
                " ELSE 'queued' END, attempts = attempts + 1, not_before = ?,"
                " last_error = ?, lease_until = NULL, generation = generation + 1,"
                " updated_at = ? WHERE state = 'running' AND lease_until < ?",
                (self._max_attempts, at, reason, at, before),
            )
            return cur.rowcount

        return await self._writer.run(op)

    # -- inspection -----------------------------------------------------------------

    async def counts(self) -> dict[JobState, int]:
        def op(conn: sqlite3.Connection) -> dict[JobState, int]:
            found = dict.fromkeys(STATES, 0)
            for row in conn.execute("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state"):
                found[row["state"]] = row["n"]
            return found

        return await self._writer.run(op)

    def _get(self, conn: sqlite3.Connection, job_id: int) -> Job:
        row = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()  # noqa: S608
        if row is None:
            raise KeyError(job_id)
        return job_from_row(row)

    async def get(self, job_id: int) -> Job | None:
        def op(conn: sqlite3.Connection) -> Job | None:
            try:
                return self._get(conn, job_id)
            except KeyError:
                return None

        return await self._writer.run(op)

    async def list_jobs(self, state: JobState | None = None) -> list[Job]:
        def op(conn: sqlite3.Connection) -> list[Job]:
            sql = f"SELECT {JOB_COLUMNS} FROM jobs"  # noqa: S608
            rows = (conn.execute(sql + " WHERE state = ? ORDER BY id", (state,)) if state
                    else conn.execute(sql + " ORDER BY id"))
            return [job_from_row(r) for r in rows]

        return await self._writer.run(op)

    async def list_parked(self) -> list[Job]:
        return await self.list_jobs("parked")

    async def requeue_parked(self, job_ids: Sequence[int] | None = None) -> int:
        def op(conn: sqlite3.Connection) -> int:
            now = self._clock()
            sql = ("UPDATE jobs SET state = 'queued', attempts = 0, not_before = ?,"
                   " updated_at = ? WHERE state = 'parked'")
            if job_ids is None:
                return conn.execute(sql, (now, now)).rowcount
            marks = ",".join("?" * len(job_ids))
            return conn.execute(f"{sql} AND id IN ({marks})", (now, now, *job_ids)).rowcount

        return await self._writer.run(op)

    async def prune(self, older_than: float) -> int:
        """Forget finished jobs and deliveries older than this (keeps the file small)."""

        def op(conn: sqlite3.Connection) -> int:
            n = conn.execute(
                "DELETE FROM jobs WHERE state = 'done' AND updated_at < ?", (older_than,)
            ).rowcount
            conn.execute("DELETE FROM deliveries WHERE received_at < ?", (older_than,))
            return n

        return await self._writer.run(op)

    async def ping(self) -> None:
        """Raises StoreUnavailable unless the database can be *written*: a read would
        pass on a full disk, and intake would then 202 deliveries it cannot keep."""

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO health (id, checked_at) VALUES (1, ?)", (self._clock(),)
            )

        await self._writer.run(op)
