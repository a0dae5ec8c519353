"""Smoke run of the webhook-intake benchmark against its bare baseline (a few seconds)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _can_bind_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
    except OSError:
        return False
    return True


def test_quick_run_against_bare_target_reports_every_level(tmp_path: Path) -> None:
    if not _can_bind_loopback():
        pytest.skip("cannot bind a port on 127.0.0.1 here")
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_intake", "--quick", "--targets", "bare",
         "--json", str(report_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())

    assert report["unavailable"] == {}
    assert report["machine"]["nproc"].isdigit()
    levels = report["results"]["bare"]["levels"]
    assert [lv["concurrency"] for lv in levels] == report["settings"]["levels"]
    for level in levels:
        assert level["throughput_rps"] > 0
        assert level["requests"] > 0
        assert level["errors"] == 0
        assert set(level["statuses"]) == {"202"}
        assert 0 < level["p50_ms"] <= level["p99_ms"]
    # The table printed for people names the target at every level.
    assert done.stdout.count("bare ") >= len(levels)
