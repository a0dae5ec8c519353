"""The label view benchmark on a small store: it must build real digests, time real
routes and measure a real file (bench/bench_view.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench.bench_view import run

pytestmark = pytest.mark.slow


def test_the_view_benchmark_measures_what_it_says(tmp_path: Path) -> None:
    report = asyncio.run(run(prs=40, runs=3, seed=1, workdir=tmp_path))
    assert report.prs == 40
    # Two languages of a real digest per PR: kilobytes each, far from the 20 MB bound.
    assert 40 * 1_000 < report.stored_bytes < 20_000_000
    targets = {t.target: t for t in report.timings}
    assert {"label view, all PRs", "API first page (50)", "label view, 304 (ETag)"} <= set(
        targets)
    assert all(t.median_ms > 0 for t in report.timings)
    # A 304 skips the store and the template. Pages are cached by ETag now, so a
    # repeated full page can be as quick as a 304: a 304 must beat the first render.
    assert targets["label view, 304 (ETag)"].min_ms < report.first_page_ms
    # A fresh process served its first page from the file the run stored.
    assert report.first_page_ms > 0
    assert report.start_ms > 0
    assert {"label view, ?sort=oldest&q=fix", "label view, ?owner=reviewer3"} <= set(targets)
