"""Smoke run of the start-up benchmark: one start each of pr-digest and bare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_one_start_each_reports_healthz_and_readyz(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_startup", "--runs", "1", "--json",
         str(report_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())
    mine, bare = report["targets"]["pr-digest"], report["targets"]["bare"]
    assert set(mine) == {"healthz", "readyz"}
    assert set(bare) == {"healthz"}
    assert 0 < mine["healthz"]["median"] <= mine["readyz"]["median"]
    assert bare["healthz"]["median"] > 0
    assert "pr-digest/bare healthz" in report["ratios"]
    assert "pr-digest   /healthz" in done.stdout
