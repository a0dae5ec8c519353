"""A job runner whose worker is built after the service's port opens.

uvicorn opens its port only once the app's start-up has returned; building the worker
side there (githubkit's schemas, the rules engine, RE2) kept `/healthz` silent for
1-2 s. `start()` returns at once; the build runs on a thread, then the real runner
starts. Until then `/readyz` says "starting", and deliveries are still verified and
stored by the intake: the worker claims them when it starts (it claims whatever is due
on start and polls for the rest), so nothing that arrives early is lost.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from bot.observe.logs import redact
from bot.queue.worker_thread import JobRunner

log = logging.getLogger("bot.service.wiring")

STARTING = "starting"


class StartedSide(Protocol):
    """What the deferred build returns (bot.service.worker_side.WorkerSide)."""

    @property
    def runner(self) -> JobRunner: ...

    @property
    def background(self) -> Sequence[Callable[[], Coroutine[Any, Any, None]]]: ...

    def not_ready_reason(self) -> str | None: ...

    def close(self) -> None: ...


class DeferredWorker:
    """A JobRunner for the intake; `not_ready_reason` is what /readyz reports."""

    def __init__(self, build: Callable[[], StartedSide], *,
                 failure_reason: Callable[[BaseException], str | None] = lambda exc: None
                 ) -> None:
        self._build = build
        self._failure_reason = failure_reason
        self._side: StartedSide | None = None
        self._started = False
        self._stopping = False
        self._reason: str | None = STARTING
        self._bring_up_task: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def side(self) -> StartedSide | None:
        return self._side

    def not_ready_reason(self) -> str | None:
        if self._reason is not None or self._side is None:
            return self._reason
        return self._side.not_ready_reason()

    async def start(self) -> None:
        self._stopping = False
        self._bring_up_task = asyncio.create_task(self._bring_up(), name="worker-start-up")

    async def started(self) -> None:
        """Returns once the bring-up has finished (started, failed or stopped)."""
        if self._bring_up_task is not None:
            await asyncio.shield(self._bring_up_task)

    async def _bring_up(self) -> None:
        try:
            side = await asyncio.to_thread(self._build_and_freeze)
        except Exception as exc:
            known = self._failure_reason(exc)
            self._reason = f"the worker could not start: {known or redact(repr(exc))}"
            if known is not None:
                log.error("%s; deliveries are still stored; fix it and restart", self._reason)
            else:
                log.exception("the worker could not start; deliveries are still stored")
            return
        self._side = side
        if self._stopping:
            return
        await side.runner.start()
        self._started = True
        if self._stopping:
            return
        self._tasks = [asyncio.create_task(task()) for task in side.background]
        self._reason = None
        log.info("worker started")

    def _build_and_freeze(self) -> StartedSide:
        side = self._build()
        # What the build loaded (GitHub's API schemas, rules) lives as long as the
        # process: keep it out of the collector's full passes, each of which otherwise
        # walks it all (~70,000 objects, ~100 ms here) and stalls every in-flight ack.
        gc.freeze()
        return side

    def wake(self, at: float | None = None) -> None:
        # Before the worker runs there is nothing to wake: on start it claims what is due.
        side = self._side
        if self._started and side is not None:
            side.runner.wake(at)

    async def stop(self, drain_seconds: float) -> None:
        self._stopping = True
        if self._bring_up_task is not None and not self._bring_up_task.done():
            # The build cannot be interrupted; it is short, and the runner then stays off.
            await asyncio.wait([self._bring_up_task])
        for task in self._tasks:
            task.cancel()
        side = self._side
        if self._started and side is not None:
            await side.runner.stop(drain_seconds)

    def close(self) -> None:
        if self._side is not None:
            self._side.close()
