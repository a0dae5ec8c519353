"""`digest-bot db migrate` and `db status` on a real PostgreSQL database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.db.migrations import MIGRATIONS

REPO_ROOT = Path(__file__).resolve().parents[2]


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["DIGEST_DATABASE_URL"] = url
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_status_then_migrate_then_status(pg_url: str) -> None:
    before = _cli(pg_url, "db", "status")
    assert before.returncode == 0, before.stderr
    assert "schema version: 0" in before.stdout
    assert before.stdout.count("pending ") == len(MIGRATIONS)

    migrated = _cli(pg_url, "db", "migrate")
    assert migrated.returncode == 0, migrated.stderr
    assert [line.split(":")[0] for line in migrated.stdout.splitlines()] == [
        f"applied {m.version}" for m in MIGRATIONS]

    again = _cli(pg_url, "db", "migrate")
    assert "nothing to apply" in again.stdout
    after = _cli(pg_url, "db", "status")
    assert f"schema version: {MIGRATIONS[-1].version}" in after.stdout
    assert "pending" not in after.stdout

    jobs = _cli(pg_url, "jobs", "list")
    assert jobs.returncode == 0, jobs.stderr
    assert "no pending jobs" in jobs.stderr


def test_an_unreachable_database_is_one_line() -> None:
    done = _cli("postgresql://digest:Pw0rdPw0rd@127.0.0.1:1/none", "db", "status")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "Pw0rdPw0rd" not in done.stderr
    assert "digest:***@127.0.0.1:1" in done.stderr
