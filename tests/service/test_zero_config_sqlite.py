"""The zero-config path is what it was (issue 30): without DIGEST_DATABASE_URL the
service keeps everything in the one SQLite file and never loads the PostgreSQL driver;
the settings and commands that belong to PostgreSQL say so in one line."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env.update(extra)
    return env


def test_without_a_database_url_everything_is_in_the_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "zero.db"
    script = (
        "import json, sys\n"
        "from bot.service.wiring import build_service\n"
        "from bot.settings.errors import load_settings\n"
        f"service = build_service(load_settings(db_path={str(db)!r}))\n"
        "backend = service.stores.backend\n"
        "service.close()\n"
        "print(json.dumps([backend, [m for m in ('psycopg', 'psycopg_pool') "
        "if m in sys.modules]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=_env(),
                          capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ["sqlite", []]
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"jobs", "deliveries", "pr_state", "previews", "view_prs"} <= tables


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=REPO_ROOT,
                          env=_env(**env), capture_output=True, text=True, timeout=60,
                          check=False)


def test_db_commands_without_a_database_url_say_sqlite_needs_none() -> None:
    done = _cli("db", "status")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "DIGEST_DATABASE_URL is not set" in done.stderr


def test_a_database_url_that_is_not_postgresql_is_one_settings_line() -> None:
    done = _cli("db", "status", DIGEST_DATABASE_URL="mysql://root:Hidden1Password@db/x")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "Hidden1Password" not in done.stderr
    assert "DIGEST_DATABASE_URL" in done.stderr
    assert "postgresql://" in done.stderr
