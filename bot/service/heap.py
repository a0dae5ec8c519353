"""The C heap of a long-running service: keep freed memory for the next delivery.

glibc's malloc hands the free memory at the top of its heap back to the kernel as soon
as more than 128 KB of it is free, and asks for it again (fresh pages, each a page fault
and a zero-fill) on the next allocation. The webhook ack copies each body (tens of KB)
a few times and frees the copies together, so under load it crossed that line every
few deliveries: 6.4 minor page faults per delivery, gone with a higher threshold
(bench/README.md). Python can only reach this through `mallopt`; glibc reads the same
setting from `MALLOC_TRIM_THRESHOLD_`, which an operator may still set (it wins: this
leaves it alone).

The other side of that: bodies refused after they were read (a forged signature is
known only once the whole body is hashed) free megabytes at once, mostly below the top
of the heap, where no threshold returns them: 200 forged 1 MB bodies held at once left
the process at 300 MB after they closed. `HeapReleaser` hands freed pages back
(`malloc_trim`) once refused bodies add up to more than the threshold, one trim per
burst, on a thread.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

# mallopt's parameter number for the trim threshold (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
# Up to this much freed memory stays with the process instead of going back to the
# kernel: a burst's worth of megabyte bodies, small next to the process itself.
TRIM_THRESHOLD_BYTES = 8 * 1024 * 1024


def keep_freed_heap(threshold_bytes: int = TRIM_THRESHOLD_BYTES) -> bool:
    """Raise glibc's trim threshold to `threshold_bytes`. False where there is nothing to
    tune: not Linux, not glibc (musl's `mallopt` does nothing), or the operator set
    `MALLOC_TRIM_THRESHOLD_` themselves."""
    if not sys.platform.startswith("linux") or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    applied = bool(mallopt(_M_TRIM_THRESHOLD, threshold_bytes))
    log.debug("malloc trim threshold %d bytes: %s", threshold_bytes,
              "set" if applied else "not supported")
    return applied


def release_freed_heap() -> bool:
    """Hand every whole free page of the C heap back to the kernel (glibc's
    `malloc_trim(0)`; ctypes releases the GIL for the call). True when some was handed
back; False when none was, or where there is no `malloc_trim`."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    malloc_trim.argtypes = [ctypes.c_size_t]
    malloc_trim.restype = ctypes.c_int
    return bool(malloc_trim(0))


class HeapReleaser:
    """Counts the bytes of refused bodies (`refused`, called on the event loop) and,
    once they pass `threshold_bytes`, trims the heap `delay_seconds` later on a thread:
    a burst of refusals costs one trim after it, and the loop never waits for one."""

    def __init__(self, threshold_bytes: int = TRIM_THRESHOLD_BYTES,
                 delay_seconds: float = 0.5,
                 release: Callable[[], object] = release_freed_heap) -> None:
        self._threshold = threshold_bytes
        self._delay = delay_seconds
        self._release = release
        self._pending = 0
        self._scheduled = False
        self.trims = 0

    def refused(self, size: int) -> None:
        self._pending += size
        if self._pending > self._threshold and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_later(self._delay, self._trim)

    def _trim(self) -> None:
        self._pending = 0
        self._scheduled = False
        self.trims += 1
        asyncio.get_running_loop().run_in_executor(None, self._release)
