"""bot/service/heap.py: freed memory stays with the process instead of page-faulting back in."""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys

import pytest

from bot.service.heap import HeapReleaser, keep_freed_heap, release_freed_heap

# Allocate and free two 100 KB buffers, as the ack does with body copies; print the
# minor page faults it took. Run in a fresh interpreter: the tuning is per process.
_CHURN = """
import resource, sys
if sys.argv[1] == "tuned":
    from bot.service.heap import keep_freed_heap
    assert keep_freed_heap()
def churn():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(500):
        held = [b"x" * 100_000 for _ in range(2)]
        del held
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
churn()
print(churn())
"""

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="the trim threshold is glibc's")


def _faults(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", _CHURN, mode], env=env, check=True,
                          capture_output=True, text=True, timeout=60)
    return int(done.stdout.strip())


@glibc_only
def test_freed_buffers_are_reused_without_page_faults() -> None:
    untuned, tuned = _faults("default"), _faults("tuned")
    # Untuned, each round hands the pages back and faults them in again.
    assert untuned > 500
    assert tuned < untuned / 50


def test_an_operators_own_setting_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert keep_freed_heap() is False


def test_refused_bodies_past_the_threshold_trim_once_per_burst() -> None:
    trimmed: list[float] = []

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        releaser = HeapReleaser(threshold_bytes=1000, delay_seconds=0.05,
                                release=lambda: trimmed.append(loop.time()))
        counts = []
        releaser.refused(600)  # below the threshold: nothing
        await asyncio.sleep(0.1)
        counts.append(releaser.trims)
        for _ in range(10):  # a burst: one trim after it
            releaser.refused(600)
        await asyncio.sleep(0.2)
        counts.append(releaser.trims)
        releaser.refused(2000)  # a later burst: another
        await asyncio.sleep(0.2)
        counts.append(releaser.trims)
        return counts

    assert asyncio.run(scenario()) == [0, 1, 2]
    assert len(trimmed) == 2


@glibc_only
def test_release_freed_heap_hands_pages_back() -> None:
    # Every other 64 KB buffer freed: free pages below the top of the heap, which
    # only a trim returns.
    buffers = [bytearray(64 * 1024) for _ in range(400)]
    del buffers[::2]
    assert release_freed_heap()
    del buffers
