"""The worker pool: claims due jobs from the store, runs the processor, records outcomes.

Per-PR exclusivity comes from the store (`claim` skips keys with a running job), so it
holds across replicas sharing one database, not just inside this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from bot.github.fence import LeaseLost, fenced
from bot.observe.logs import bind_log_context, redact
from bot.observe.metrics import GitHubCallTally, Metrics, count_github_calls
from bot.queue.lease import JobLease
from bot.queue.store import Job, JobStore, StoreUnavailable

Processor = Callable[[Job], Awaitable[None]]
Periodic = tuple[float, Callable[[], Awaitable[object]]]

log = logging.getLogger("bot.queue.jobs")


# GitHub's answers that no retry of the same job can change: the PR, comment or
# installation is gone (404, 410) or the request is invalid for it (422).
PERMANENT_STATUSES = frozenset({404, 410, 422})


def is_permanent(exc: BaseException) -> bool:
    """The failure carries an HTTP `status` (GitHubError does) that will not change."""
    return getattr(exc, "status", None) in PERMANENT_STATUSES


def retry_after_of(exc: BaseException) -> float | None:
    """A `retry_after` (seconds) the failure carries, e.g. GitHubError from a rate limit."""
    value = getattr(exc, "retry_after", None)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


class OutsiderCommand(Exception):
    """The processor found a command from someone without write access: the worker puts
    it back behind everyone else's work (`JobStore.defer_outsider`), uncounted."""


def is_outsiders(job: Job) -> bool:
    """A command already found to be from someone without write access."""
    return job.kind == "command" and job.payload.get("outsider") is True


class Worker:
    def __init__(
        self,
        store: JobStore,
        process: Processor,
        metrics: Metrics,
        *,
        concurrency: int = 4,
        clock: Callable[[], float] = time.time,
        poll_interval: float = 1.0,
        lease_check_interval: float = 30.0,
        heartbeat_interval: float | None = None,
        lease_seconds: float = 300.0,
        periodic: Sequence[Periodic] = (),
    ) -> None:
        self._store = store
        self._process = process
        self._metrics = metrics
        self._concurrency = concurrency
        self._clock = clock
        self._poll = poll_interval
        # Renew a running job's lease well before it runs out (a third of the lease:
        # two missed beats still leave it held). Default: from the check interval.
        self._heartbeat = heartbeat_interval or max(0.05, lease_check_interval / 3)
        self._lease_seconds = lease_seconds  # the store's: what a local deadline spans
        self._periodic = [*periodic, (lease_check_interval, self._release_expired)]
        self._loop: asyncio.AbstractEventLoop | None = None
        # Wake-up tokens. At most one is pending from wake(): each costs a store query,
        # and an idle pool of N runners must not turn every delivery into N queries.
        self._tokens: asyncio.Queue[None] | None = None
        # Loop times at which a delayed wake() is due (a heap), and one timer for the
        # earliest: a timer per delivery would pile up one loop timer per settle window.
        self._due: list[float] = []
        self._due_timer: asyncio.TimerHandle | None = None
        self._stopping = False
        self._runners: list[asyncio.Task[None]] = []
        self._timers: list[asyncio.Task[None]] = []
        # Runners running (or claiming for) outsiders' commands: one runner is always
        # kept for everyone else, so a maintainer's command never waits for them.
        self._outsider_runners = 0

    async def start(self) -> None:
        recovered = await self._store.recover_orphans()
        if recovered:
            log.warning("requeued %d job(s) a dead process left running", recovered)
        self._loop = asyncio.get_running_loop()
        self._tokens = asyncio.Queue()
        self._stopping = False
        self._runners = [
            asyncio.create_task(self._run(), name=f"worker-{i}") for i in range(self._concurrency)
        ]
        self._timers = [
            asyncio.create_task(self._every(interval, fn), name=f"periodic-{i}")
            for i, (interval, fn) in enumerate(self._periodic)
        ]

    def wake(self, at: float | None = None) -> None:
        """A job is due now (or at clock time `at`): don't wait for the next poll.
        Safe to call from any thread."""
        loop = self._loop
        if loop is None:
            return
        delay = 0.0 if at is None else at - self._clock()
        try:
            same_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            same_loop = False
        if same_loop:
            self._schedule_token(delay)
        else:
            loop.call_soon_threadsafe(self._schedule_token, delay)

    def _schedule_token(self, delay: float) -> None:
        if delay <= 0:
            self._give_token()
            return
        assert self._loop is not None
        when = self._loop.time() + delay
        heapq.heappush(self._due, when)
        timer = self._due_timer
        if timer is None or when < timer.when():
            if timer is not None:
                timer.cancel()
            self._due_timer = self._loop.call_at(when, self._on_due)

    def _on_due(self) -> None:
        assert self._loop is not None
        self._due_timer = None
        # Timers may fire up to a millisecond early (uvloop rounds to ms).
        now = self._loop.time() + 0.001
        while self._due and self._due[0] <= now:
            heapq.heappop(self._due)
        self._give_token()
        if self._due:
            self._due_timer = self._loop.call_at(self._due[0], self._on_due)

    def _give_token(self) -> None:
        if self._tokens is not None and self._tokens.qsize() == 0:
            self._tokens.put_nowait(None)

    async def stop(self, drain_seconds: float) -> None:
        """Stop claiming; let in-flight jobs finish within the bound, then cancel them
        (they go back to the queue). Queued jobs simply stay in the store."""
        self._stopping = True
        if self._due_timer is not None:
            self._due_timer.cancel()
        self._due_timer, self._due = None, []
        for task in self._timers:
            task.cancel()
        if self._tokens is not None:
            for _ in self._runners:
                self._tokens.put_nowait(None)
        if self._runners:
            _, late = await asyncio.wait(self._runners, timeout=max(drain_seconds, 0))
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=5)
        await asyncio.gather(*self._timers, return_exceptions=True)
        self._runners, self._timers = [], []
        await self._refresh_gauges()

    async def _run(self) -> None:
        assert self._tokens is not None
        while not self._stopping:
            # Provisionally one more runner for outsiders; given back unless it got one.
            outsiders = self._concurrency < 2 or self._outsider_runners < self._concurrency - 1
            self._outsider_runners += outsiders
            taken = False
            try:
                try:
                    job = await self._store.claim(self._clock(), outsiders=outsiders)
                except StoreUnavailable:
                    log.warning("store unavailable, worker backing off")
                    job = None
                taken = outsiders and job is not None and is_outsiders(job)
                if outsiders and not taken:
                    self._outsider_runners -= 1
                if not await self._run_claimed(job):
                    break
            finally:
                if taken:
                    self._outsider_runners -= 1

    async def _run_claimed(self, job: Job | None) -> bool:
        """Run what `claim` returned; False: stop this runner."""
        assert self._tokens is not None
        if job is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._tokens.get(), self._poll)
            return True
        if self._stopping:
            await self._store.release(job.id)
            return False
        # More may be due: pass the baton so another idle runner looks too.
        self._give_token()
        try:
            await self._handle(job)
        except StoreUnavailable:
            # The outcome was not recorded; the lease runs out and the job reruns.
            log.exception("store unavailable while finishing job %d", job.id)
        # A follow-up for the same PR may have been waiting for this one.
        self._give_token()
        return True

    async def _handle(self, job: Job) -> None:
        context: dict[str, object] = {
            "job": job.id, "kind": job.kind, "delivery": job.delivery_id, "repo": job.repo,
            "pr": job.number, "installation": job.installation_id, "attempt": job.attempts + 1,
        }
        started = time.perf_counter()
        # Heartbeat: a slow job keeps its lease, so it is never claimed a second time
        # while it still runs (issue 8, item 5); and each of its GitHub writes proves it
        # still holds it (issue 38, item 1).
        lease = JobLease(self._store, job, self._lease_seconds, clock=self._clock)
        heartbeat = asyncio.create_task(lease.keep(self._heartbeat), name=f"lease-{job.id}")
        try:
            # Handler lines (and the GitHub calls they make) carry the job and delivery ids;
            # the calls are logged at DEBUG each, and summed on the job's one line.
            with bind_log_context(job=job.id, delivery=job.delivery_id, repo=job.repo,
                                  pr=job.number), count_github_calls() as calls, fenced(lease):
                await self._run_job(job, lease, context, started, calls)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _run_job(self, job: Job, lease: JobLease, context: dict[str, object],
                       started: float, calls: GitHubCallTally) -> None:
        # Its own task, so that losing the lease stops it wherever it is (a long read):
        # a run that lost its lease has no outcome to finish.
        work: asyncio.Future[None] = asyncio.ensure_future(self._process(job))
        lease.on_lost(work.cancel)
        try:
            await work
        except LeaseLost:
            self._lost(job, started, context, calls)
        except OutsiderCommand:
            deferred = await self._store.defer_outsider(job.id, attempts=job.attempts)
            self._observe(job, "deferred" if deferred else "stale", started, context, calls)
            # Someone else's work may be due now; the deferred job waits its turn.
            self._give_token()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if lease.lost and task is not None and not task.cancelling():
                self._lost(job, started, context, calls)
                return
            # Drain ran out: hand the job back untouched, it reruns on the next start.
            await asyncio.shield(self._store.release(job.id, attempts=job.attempts))
            self._observe(job, "released", started, context, calls)
            raise
        except Exception as exc:
            retry_after = retry_after_of(exc)
            retry_at = self._clock() + retry_after if retry_after is not None else None
            error = redact(f"{type(exc).__name__}: {exc}")
            # Retrying a 404/410/422 or rejected credentials only repeats the failure
            # max_attempts times: park at once.
            park = bool(getattr(exc, "permanent", False)) or is_permanent(exc)
            updated = await self._store.fail(job.id, error, retry_at, attempts=job.attempts,
                                             park=park)
            if updated is None:
                self._observe(job, "stale", started, {**context, "error": error}, calls)
                return
            outcome = "parked" if updated.state == "parked" else "retry"
            self._observe(job, outcome, started, {**context, "error": error}, calls)
            if outcome == "parked":
                await self._refresh_gauges()
        else:
            # A run that lost its lease completes nothing: the job's current run decides.
            done = await self._store.complete(job.id, attempts=job.attempts)
            self._observe(job, "ok" if done else "stale", started, context, calls)

    def _lost(self, job: Job, started: float, context: dict[str, object],
              calls: GitHubCallTally) -> None:
        """The job's one line; nothing reaches the store: the job's row is another
        run's now (or will be, once any replica sees the lease ran out)."""
        self._observe(job, "lost", started, {
            **context, "error": "lost its lease: no further write, outcome dropped"}, calls)

    def _observe(
        self, job: Job, outcome: str, started: float, context: dict[str, object],
        calls: GitHubCallTally,
    ) -> None:
        elapsed = time.perf_counter() - started
        self._metrics.job_seconds.labels(kind=job.kind, outcome=outcome).observe(elapsed)
        level = logging.INFO if outcome in ("ok", "released", "deferred") else logging.WARNING
        # The job's one summary line: its outcome and its GitHub calls (by method and
        # status class, their total time, the rate limit left).
        log.log(level, "job %s", outcome, extra={
            **context, "outcome": outcome, "duration_ms": round(elapsed * 1000, 1),
            **calls.log_fields(),
        })

    async def _refresh_gauges(self) -> None:
        try:
            counts = await self._store.counts()
        except StoreUnavailable:
            return
        self._metrics.queue_depth.set(counts["queued"] + counts["failed"] + counts["running"])
        self._metrics.parked_jobs.set(counts["parked"])

    async def _release_expired(self) -> None:
        released = await self._store.release_expired_leases(self._clock())
        if released:
            log.warning("released %d jobs whose worker stopped answering", released)
            self.wake()
        await self._refresh_gauges()

    async def _every(self, interval: float, fn: Callable[[], Awaitable[object]]) -> None:
        """Run once now, then every `interval` seconds; a failure is logged, never fatal."""
        name = getattr(fn, "__qualname__", repr(fn))
        while not self._stopping:
            try:
                await fn()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("periodic task %s failed", name)
            await asyncio.sleep(interval)
