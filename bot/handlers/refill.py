"""Re-run a PR's digest later when a part of it could not be read (issue 38, item 2).

A failed read that feeds one part (the conversation, CI statuses, the repository's
config, the symbol index's base files, linked work) is posted as unavailable rather
than failing the job; this queues the PR's job again, after a delay, to fill it in.
Bounded: each re-run waits twice as long as the one before, and after MAX_REFILLS in a
row the PR waits for its next event (or the reconcile sweep) instead: a GitHub that
keeps failing costs a handful of jobs, never a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.queue.store import Job, JobStore, NewJob, pr_key

log = logging.getLogger(__name__)
MAX_REFILLS = 5
MAX_DELAY_SECONDS = 3600.0
REFILL = "refill"  # the payload key: how many re-runs in a row led to this job


def refills_of(job: Job) -> int:
    value = job.payload.get(REFILL, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def refill_delay(refills: int, base_seconds: float) -> float:
    """The wait before re-run number `refills + 1`: base, 2 x base, 4 x base, ..."""
    return min(MAX_DELAY_SECONDS, base_seconds * 2.0 ** refills)


async def queue_refill(
    store: JobStore, job: Job, unavailable: Sequence[str], base_seconds: float
) -> bool:
    """Queue the PR's job again to read `unavailable` parts; False when the bound is met
    (or nothing is missing). A job of the PR already waiting reads everything anyway."""
    if not unavailable or job.number is None:
        return False
    done = refills_of(job)
    extra = {"repo": job.repo, "pr": job.number, "parts": list(unavailable), "refills": done}
    if done >= MAX_REFILLS:
        log.warning("parts still unavailable after %d re-runs; waiting for the PR's next "
                    "event", done, extra=extra)
        return False
    delay = refill_delay(done, base_seconds)
    await store.enqueue(NewJob(
        kind="pr", key=pr_key(job.repo, job.number), installation_id=job.installation_id,
        repo=job.repo, number=job.number, payload={"actions": [REFILL], REFILL: done + 1},
    ), later=delay)
    log.info("parts unavailable; re-run in %.1f s", delay, extra=extra)
    return True
