"""Spaces content-creating requests for one installation, maintainers' commands first.

GitHub's secondary rate limits ask for at least one second between writes and at
most 80 content-creating requests per minute ("Best practices for using the REST
API"); going faster earns a 403 with Retry-After instead of a comment.

Writes have a priority, set by the job around its calls (`writes_as`): a maintainer's
command goes before the digests, and they before the commands of people without write
access (issue 38, item 6). A waiting write of higher priority is served first; the lower
ones may fill only part of the minute's budget, so a maintainer never finds it spent by
others; an outsider's write that would wait longer than a few intervals is skipped
(`WriteSkipped`): it is a reaction or a reply nobody is owed, or a command run again later.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from bot.github.protocol import GitHubError

OUTSIDER, NORMAL, MAINTAINER = 0, 1, 2
# The share of the minute's budget each priority may fill (of 80: 40, 72, 80).
_SHARE = {OUTSIDER: 0.5, NORMAL: 0.9, MAINTAINER: 1.0}
# An outsider's write waits at most this many write intervals (and at least a second).
OUTSIDER_WAIT_INTERVALS = 3
_priority: ContextVar[int] = ContextVar("write_priority", default=NORMAL)


@contextmanager
def writes_as(priority: int) -> Iterator[None]:
    """The priority of the writes made inside the block (the current task's)."""
    token = _priority.set(priority)
    try:
        yield
    finally:
        _priority.reset(token)


class WriteSkipped(GitHubError):
    """An outsider's write that would have waited too long; nothing was sent."""


class WritePacer:
    """`await pacer.acquire()` before each write; waits just long enough."""

    def __init__(
        self,
        min_interval: float,
        per_minute: int = 80,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self._min_interval = max(0.0, min_interval)
        self._per_minute = per_minute
        self._clock = clock
        self._sleep = sleep
        self._recent: deque[float] = deque()
        # Waiting writes: (-priority, arrival order); the first is the one to serve.
        self._waiting: list[tuple[int, int]] = []
        self._order = itertools.count()
        self.outsider_max_wait = max(1.0, OUTSIDER_WAIT_INTERVALS * self._min_interval)

    def _cap(self, priority: int) -> int:
        return max(1, int(self._per_minute * _SHARE.get(priority, _SHARE[NORMAL])))

    def _wait_needed(self, now: float, priority: int) -> float:
        while self._recent and self._recent[0] <= now - 60.0:
            self._recent.popleft()
        wait = 0.0
        if self._recent:
            wait = self._recent[-1] + self._min_interval - now
        cap = self._cap(priority)
        if len(self._recent) >= cap:
            # Until enough of the last minute's writes age out to leave this one room.
            wait = max(wait, self._recent[len(self._recent) - cap] + 60.0 - now)
        return max(0.0, wait)

    async def acquire(self) -> None:
        """Wait for this write's turn: raises WriteSkipped for an outsider's write that
        would wait longer than `outsider_max_wait`."""
        priority = _priority.get()
        ticket = (-priority, next(self._order))
        arrived = self._clock()
        heapq.heappush(self._waiting, ticket)
        try:
            while True:
                now = self._clock()
                first = self._waiting[0] == ticket
                wait = self._wait_needed(now, priority) if first else self._min_interval
                if first and wait <= 0:
                    break
                if priority <= OUTSIDER and now + wait - arrived > self.outsider_max_wait:
                    raise WriteSkipped("an outsider's write would wait too long",
                                       retry_after=max(wait, self.outsider_max_wait))
                # Someone ahead looks again when its own wait is over; the first one
                # sleeps its wait and checks again (a more urgent write may have come).
                await self._sleep(max(wait, 0.01))
            self._recent.append(self._clock())
        finally:
            self._waiting.remove(ticket)
            heapq.heapify(self._waiting)
