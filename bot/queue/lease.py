"""A running job's lease, as the job itself knows it: the fence its GitHub writes pass.

The store's row is the truth (a generation bumped by every claim and requeue, and
`lease_until`); this keeps, besides, a local deadline on the monotonic clock: the last
time the store confirmed the lease, plus the lease, minus a margin for the replicas'
wall clocks. CLOCK_MONOTONIC keeps running while the process is stopped (SIGSTOP) or
descheduled, so a job paused between the store's answer and its request finds the
deadline past when it resumes, however long the pause.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.github.fence import LeaseLost
from bot.queue.store import Job, JobStore, StoreUnavailable

log = logging.getLogger("bot.queue.jobs")

# Of the lease, what the local deadline leaves to the replicas' clocks disagreeing: the
# store's lease ends by the other replica's wall clock, this deadline by our own.
CLOCK_MARGIN = 0.25


class JobLease:
    """`WriteFence` for one run of one job (bot/github/fence.py)."""

    def __init__(self, store: JobStore, job: Job, lease_seconds: float, *,
                 clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._job = job
        self._valid_for = lease_seconds * (1 - CLOCK_MARGIN)
        self._clock = clock
        self._monotonic = monotonic
        # The claim itself confirmed the lease, a moment ago.
        self._deadline = monotonic() + self._valid_for
        self._lost = False
        self._on_lost: list[Callable[[], object]] = []

    @property
    def lost(self) -> bool:
        return self._lost

    def on_lost(self, callback: Callable[[], object]) -> None:
        self._on_lost.append(callback)

    async def confirm(self) -> bool:
        """Ask the store (the heartbeat does, and every write): True and a new deadline
        if this run still holds the lease; False, for good, once it does not."""
        if self._lost:
            return False
        asked_at = self._monotonic()
        if not await self._store.fence(self._job.id, self._job.generation, self._clock()):
            self._lose()
            return False
        # From when we asked: the store extended the lease at some moment after that.
        self._deadline = asked_at + self._valid_for
        return True

    def _lose(self) -> None:
        if self._lost:
            return
        self._lost = True
        for callback in self._on_lost:
            callback()

    async def confirm_before_write(self) -> None:
        if not await self.confirm():
            raise LeaseLost(f"job {self._job.id} lost its lease")

    def check_before_send(self) -> None:
        if self._lost:
            raise LeaseLost(f"job {self._job.id} lost its lease")
        if self._monotonic() > self._deadline:
            self._lose()
            raise LeaseLost(f"job {self._job.id} paused past its lease")

    async def keep(self, interval: float) -> None:
        """Heartbeat: confirm every `interval` seconds until the lease is lost (then
        return) or the task is cancelled. An unreachable store is not a lost lease,
        but the deadline runs on meanwhile, and no write passes it."""
        while True:
            await asyncio.sleep(interval)
            try:
                held = await self.confirm()
            except StoreUnavailable:
                log.warning("could not renew the lease of job %d", self._job.id)
                continue
            if not held:
                return
