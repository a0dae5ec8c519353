"""The fence every GitHub write of a job passes (docs/architecture.md, "Several replicas").

The worker puts the running job's fence here (a context variable, so each job's task sees
its own); the adapter asks it before each write (`confirm_before_write`: a store round
trip proving the job still holds its lease) and the session's request hook asks it again
immediately before the request leaves (`check_before_send`: no store call, a monotonic
deadline), so a pause of any length between the two cannot slip a write through.
Outside a job (the CLI's online mode) there is no fence and nothing is checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class LeaseLost(BaseException):
    """The job lost its lease: it must write nothing more and its outcome is dropped.

    A BaseException, as `asyncio.CancelledError` is, so that no handler's
    `except Exception` (a failing call degrades one part of the digest) swallows it
    and goes on to its next write."""


class WriteFence(Protocol):
    async def confirm_before_write(self) -> None:
        """Raise LeaseLost unless the job still holds its lease (extending it)."""
        ...

    def check_before_send(self) -> None:
        """Raise LeaseLost unless the last confirmation is still valid now."""
        ...


_current: ContextVar[WriteFence | None] = ContextVar("write_fence", default=None)


@contextmanager
def fenced(fence: WriteFence) -> Iterator[None]:
    """GitHub writes made inside this block (by this task and those it starts) pass
    `fence`."""
    token = _current.set(fence)
    try:
        yield
    finally:
        _current.reset(token)


async def confirm_before_write() -> None:
    fence = _current.get()
    if fence is not None:
        await fence.confirm_before_write()


def check_before_send() -> None:
    fence = _current.get()
    if fence is not None:
        fence.check_before_send()
