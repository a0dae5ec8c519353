"""Spaces content-creating requests for one installation.

GitHub's secondary rate limits ask for at least one second between writes and at
most 80 content-creating requests per minute ("Best practices for using the REST
API"); going faster earns a 403 with Retry-After instead of a comment.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable


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
        self._lock = asyncio.Lock()

    def _wait_needed(self, now: float) -> float:
        while self._recent and self._recent[0] <= now - 60.0:
            self._recent.popleft()
        wait = 0.0
        if self._recent:
            wait = self._recent[-1] + self._min_interval - now
        if len(self._recent) >= self._per_minute:
            wait = max(wait, self._recent[0] + 60.0 - now)
        return max(0.0, wait)

    async def acquire(self) -> None:
        async with self._lock:
            while (wait := self._wait_needed(self._clock())) > 0:
                await self._sleep(wait)
            self._recent.append(self._clock())
