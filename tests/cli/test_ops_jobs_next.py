"""Issue 31: `digest-bot jobs list` shows no next run for a parked job (it never runs
again until `jobs retry`), and still shows when a failed or queued one runs next. The
console script in a subprocess, asserting its output."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from bot.queue.store import NewJob, SqliteJobStore, pr_key

BIN = Path(sys.executable).parent / "digest-bot"
REPO = "vllm-project/vllm"
WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


def _jobs(db: Path) -> dict[str, int]:
    """A parked job (PR 3), a failed one waiting for its retry (PR 4), a queued one (PR 5)."""
    store = SqliteJobStore(db, settle_seconds=0.0, max_attempts=5)

    async def make() -> dict[str, int]:
        ids = {}
        for name, number in (("parked", 3), ("failed", 4), ("queued", 5)):
            ids[name] = await store.enqueue(NewJob(
                kind="pr", key=pr_key(REPO, number), installation_id=1, repo=REPO,
                number=number))
        for name in ("parked", "failed"):
            job = await store.claim()
            assert job is not None
            assert job.id == ids[name]
            await store.fail(job.id, f"GitHubError: HTTP 502 ({name})", None,
                             park=name == "parked")
        return ids

    try:
        return asyncio.run(make())
    finally:
        store.close()


def _rows(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.strip().splitlines()
    names = header.split("\t")
    return {row.split("\t")[0]: dict(zip(names, row.split("\t"), strict=True))
            for row in rows}


def test_a_parked_job_shows_no_next_run(tmp_path: Path) -> None:
    db = tmp_path / "jobs.db"
    ids = _jobs(db)

    every = _rows(run("jobs", "list", "--db", str(db)))
    parked, failed, queued = (every[str(ids[name])] for name in ("parked", "failed", "queued"))
    assert (parked["state"], parked["next"]) == ("parked", "-")
    assert failed["state"] == "failed"
    assert WHEN.fullmatch(failed["next"])
    assert queued["state"] == "queued"
    assert WHEN.fullmatch(queued["next"])

    only_parked = _rows(run("jobs", "list", "--parked", "--db", str(db)))
    assert list(only_parked) == [str(ids["parked"])]
    assert only_parked[str(ids["parked"])]["next"] == "-"
    assert "HTTP 502 (parked)" in only_parked[str(ids["parked"])]["last error"]
