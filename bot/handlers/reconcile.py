"""The reconcile sweep: GitHub never redelivers a failed delivery, so every so often
list recently updated open PRs and queue a digest run for any we have not converged."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from hashlib import sha256

from bot.github.protocol import PullRequest
from bot.queue.store import JobStore, NewJob, pr_key

log = logging.getLogger(__name__)

def fingerprint(pr: PullRequest, rules_version: str) -> str:
    """Everything the digest is a function of that the PR list endpoint shows.

    Files change only with the head SHA, so the SHA stands for them.
    """
    parts = (
        pr.title, pr.body, ",".join(sorted(pr.labels)), pr.base_ref, pr.head_sha,
        str(pr.draft), ",".join(sorted(pr.requested_users)), rules_version,
    )
    return sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def stale_pulls(
    pulls: Sequence[PullRequest],
    converged: dict[int, str],
    rules_version: str,
    *,
    since: datetime,
    skip_drafts: bool,
) -> list[PullRequest]:
    """The PRs updated since `since` whose fingerprint differs from the converged one."""
    return [
        pr for pr in pulls
        if (pr.updated_at is None or pr.updated_at >= since)
        and not (pr.draft and skip_drafts)
        and converged.get(pr.number) != fingerprint(pr, rules_version)
    ]


async def enqueue_stale(
    store: JobStore,
    installation_id: int,
    repo: str,
    pulls: Sequence[PullRequest],
    converged: dict[int, str],
    rules_version: str,
    *,
    window: timedelta = timedelta(days=2),
    skip_drafts: bool = True,
    now: Callable[[], float] = time.time,
) -> int:
    since = datetime.fromtimestamp(now(), UTC) - window
    stale = stale_pulls(pulls, converged, rules_version, since=since, skip_drafts=skip_drafts)
    for pr in stale:
        await store.enqueue(NewJob(
            kind="pr", key=pr_key(repo, pr.number), installation_id=installation_id,
            repo=repo, number=pr.number, payload={"actions": ["reconcile"]},
        ))
    if stale:
        log.info("reconcile queued %d stale PR(s)", len(stale), extra={"repo": repo})
    return len(stale)
