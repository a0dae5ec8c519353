"""Issue 43, item 5: `serve` reads `.env` from its working directory (the environment
wins), names its database at start (never a password), and a SQLite path in a missing
folder is one line naming DIGEST_DB_PATH, exit 2, with no folder created. Each case runs
the real `python -m bot serve` process in its own working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.service.wiring import database_line
from bot.settings.model import Settings
from tests.service_harness import ServiceProcess, free_port, wait_until

pytestmark = pytest.mark.slow


def _serve(cwd: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update({"PYTHONUNBUFFERED": "1", **settings})
    return subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port",
         str(free_port())], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)


def test_a_missing_folder_from_dot_env_is_one_line_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "not-mounted" / "digest.db"
    (tmp_path / ".env").write_text(f"DIGEST_DB_PATH={missing}\n", encoding="utf-8")
    done = _serve(tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2
    assert len(lines) == 1, done.stderr
    assert f"DIGEST_DB_PATH={missing}" in lines[0]
    assert "does not exist" in lines[0]
    assert "Traceback" not in done.stderr
    assert not missing.parent.exists()


def test_the_environment_wins_over_dot_env(tmp_path: Path) -> None:
    # The file's invalid value would be its own error line; the environment's replaces it.
    (tmp_path / ".env").write_text("DIGEST_WORKERS=0\n", encoding="utf-8")
    missing = tmp_path / "gone" / "x.db"
    done = _serve(tmp_path, DIGEST_WORKERS="2", DIGEST_DB_PATH=str(missing))
    assert done.returncode == 2
    assert "DIGEST_WORKERS" not in done.stderr
    assert "DIGEST_DB_PATH" in done.stderr
    file_only = _serve(tmp_path, DIGEST_DB_PATH=str(missing))
    assert "DIGEST_WORKERS" in file_only.stderr


def test_the_start_line_names_the_sqlite_database(tmp_path: Path) -> None:
    db = tmp_path / "named.db"
    with ServiceProcess("http://127.0.0.1:9", tmp_path, db_path=db,
                        wait_for_worker=False) as svc:
        wait_until(lambda: "listening" in svc.log_path.read_text(errors="replace"), 10,
                   message="start line")
        text = svc.log_path.read_text(errors="replace")
    start = next(line for line in text.splitlines() if "listening" in line)
    assert f"database: SQLite {db.resolve()}" in start


def test_the_database_line_hides_a_postgres_password(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "index.db",
                        database_url="postgresql://digest:s3cr3t-pw@db.internal:5432/digest")
    line = database_line(settings)
    assert "PostgreSQL postgresql://digest:***@db.internal:5432/digest" in line
    assert "s3cr3t-pw" not in line
    assert str(tmp_path / "index.db") in line
