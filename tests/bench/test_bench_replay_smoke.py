"""A few PRs of the replayed day (bench/bench_replay.py) through the real service and
the fake GitHub: the benchmark's own invariants must hold, and its counts must be real."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.bench_replay import build_day, naive_runs, run_once

pytestmark = [pytest.mark.slow, pytest.mark.timing]


def test_a_small_replayed_day_ends_with_one_current_digest_per_pr(tmp_path: Path) -> None:
    # Follow-ups at a fifth of human speed with a settle window scaled alike, so a
    # force-push burst still lands inside one window.
    day = build_day(prs=6, duration=2.0, seed=7, pace=0.2)
    actions = {s.action for s in day.steps}
    assert {"opened", "edited", "synchronize"} <= actions

    result = run_once(day, write_interval=0.05, settle=0.3, latency=0.05, workdir=tmp_path,
                      drain_timeout=20.0, label="smoke")

    assert result.drain_seconds > 0, "the service never worked off every delivery"
    assert result.rejected == 0
    assert result.deliveries == len(day.steps)
    assert result.stale == []
    assert result.duplicated == []
    assert result.missing == []
    assert result.reflected > 0
    assert result.latency_p50 > 0
    assert 0 < result.files_reads <= naive_runs(day)
    assert 0 < result.comment_writes <= naive_runs(day)
    assert result.without_digest + result.comment_writes >= 1
    assert result.peak_rss_mib > 10
