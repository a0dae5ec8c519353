"""Smoke run of the wrk-driven intake benchmark: pr-digest against bare, one short round."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_quick_wrk_run_stores_every_acknowledged_delivery(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_intake_wrk", "--quick", "--targets",
         "pr-digest,bare", "--bodies", "20", "--json", str(report_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    if shutil.which("wrk") is None:
        assert "wrk is not installed" in done.stdout
        assert not report_path.exists()
        return
    report = json.loads(report_path.read_text())
    for name in ("pr-digest", "bare"):
        target = report["targets"][name]
        assert target["requests"] > 0
        assert target["non_2xx"] == 0
        assert target["socket_errors"] == 0
        assert 0 < target["p50_ms"] <= target["p99_ms"]
        assert target["cpu_us"] > 0
    # Every request wrk saw answered was a stored delivery (the warm-up stores more).
    assert report["pr_digest_rows"] >= report["targets"]["pr-digest"]["requests"]
    assert set(report["ratios"]) == {"rps pr-digest/bare", "cpu pr-digest/bare"}
    assert "pr-digest/bare" in done.stdout


def test_before_must_be_a_checkout_of_this_repository(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_intake_wrk", "--quick", "--before", str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert "not a checkout of this repository" in done.stderr
