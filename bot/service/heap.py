"""The C heap of a long-running service: keep freed memory for the next delivery.

glibc's malloc hands the free memory at the top of its heap back to the kernel as soon
as more than 128 KB of it is free, and asks for it again (fresh pages, each a page fault
and a zero-fill) on the next allocation. The webhook ack copies each body (tens of KB)
a few times and frees the copies together, so under load it crossed that line every
few deliveries: 6.4 minor page faults per delivery, gone with a higher threshold
(bench/README.md). Python can only reach this through `mallopt`; glibc reads the same
setting from `MALLOC_TRIM_THRESHOLD_`, which an operator may still set (it wins: this
leaves it alone).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

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
