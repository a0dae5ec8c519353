"""A replica paused inside a job must not write after it lost the job's lease (issue 38,
item 1): two `digest-bot serve` replicas on one PostgreSQL database, a short lease,
replica A SIGSTOPped while the fake GitHub holds one of its reads, B takes the jobs over
once the lease ran out and posts, then A is SIGCONTed. Before fencing, A then created a
second digest on one PR and put its older head's digest over B's newer one on another."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import BOT, REPO, ServiceProcess, e2e_state, pr_event, wait_until

pytestmark = pytest.mark.slow

LEASE = 3.0  # seconds
FRESH = 1001  # no digest yet when A's job starts: A would create a second one
PUSHED = 1002  # A's job is for head Y; B's for the newer head Z
HEAD_X, HEAD_Y, HEAD_Z = "a" * 40, "b" * 40, "c" * 40
HELD = 9.0  # seconds the fake holds A's read of each PR's files
_SHA = re.compile(r"sha=([0-9a-f]{40})")


def _replica(url: str, workdir: Path, name: str, database_url: str) -> ServiceProcess:
    return ServiceProcess(url, workdir, name=name, settle_seconds=0.2, extra_env={
        "DIGEST_DATABASE_URL": database_url, "DIGEST_LEASE_SECONDS": str(LEASE),
        "DIGEST_INDEX_ENABLED": "0"})


def _head_shown(body: str) -> str:
    found = _SHA.search(body.split("\n", 1)[0])
    return found.group(1) if found else ""


def test_a_paused_replica_that_lost_its_lease_writes_nothing(
    pg_url: str, tmp_path: Path,
) -> None:
    state = e2e_state()
    for number, head in ((FRESH, HEAD_Y), (PUSHED, HEAD_X)):
        state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                       files=list(COMPILE_FILES), author="alice", head_sha=head)
    with FakeGitHubServer(state) as url:
        a = _replica(url, tmp_path, "a", pg_url)
        b = _replica(url, tmp_path, "b", pg_url)
        a.start()
        try:
            # PUSHED has a digest for head X, written by A.
            assert a.send("pull_request", pr_event("opened", PUSHED, head_sha=HEAD_X)
                          ).status_code == 202
            wait_until(lambda: len(state.bot_comments(REPO, PUSHED, BOT)) == 1, 20,
                       message="the first digest")
            # Head Y: A's jobs for both PRs hang in GitHub's answer for their files.
            pushed = state.pull(REPO, PUSHED)
            pushed.head_sha, pushed.updated_at = HEAD_Y, state.now()
            for number in (FRESH, PUSHED):
                state.slow_next("GET", f"*/pulls/{number}/files", HELD, times=1)
            assert a.send("pull_request", pr_event("opened", FRESH, head_sha=HEAD_Y)
                          ).status_code == 202
            assert a.send("pull_request", pr_event("synchronize", PUSHED, head_sha=HEAD_Y)
                          ).status_code == 202
            wait_until(lambda: not state.faults, 15, message="A is inside both jobs")
            pid = a.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            paused_at = time.monotonic()

            # Head Z while A sleeps; B takes both jobs once A's lease ran out.
            pushed.head_sha, pushed.updated_at = HEAD_Z, state.now()
            b.start()
            assert b.send("pull_request", pr_event("synchronize", PUSHED, head_sha=HEAD_Z)
                          ).status_code == 202
            wait_until(lambda: len(state.bot_comments(REPO, FRESH, BOT)) == 1, 30,
                       message="B posts the first digest")
            wait_until(lambda: [_head_shown(c) for c in state.bot_comments(REPO, PUSHED, BOT)]
                       == [HEAD_Z], 30, message="B shows head Z")
            b.wait_for_job(pr=PUSHED, count=1, timeout=10)

            # A wakes up after its held answers came: it reads them and goes on.
            time.sleep(max(0.0, HELD + 0.5 - (time.monotonic() - paused_at)))
            os.kill(pid, signal.SIGCONT)
            wait_until(lambda: len(a.job_records(pr=FRESH)) + len(a.job_records(pr=PUSHED))
                       >= 3, 20, message="A finished its two paused jobs")
            time.sleep(1.0)  # a write A still made would have landed by now
            duplicates = len(state.bot_comments(REPO, FRESH, BOT)) - 1
            shown = [_head_shown(c) for c in state.bot_comments(REPO, PUSHED, BOT)]
            stale = sum(head != HEAD_Z for head in shown)
            print(f"duplicates {duplicates}, stale overwrites {stale}")
            assert (duplicates, stale) == (0, 0), shown
            assert len(shown) == 1
            # A stopped each job with one line, and recorded no outcome for them.
            lost = a.job_records(outcome="lost")
            assert sorted(int(r["pr"]) for r in lost) == [FRESH, PUSHED]
            assert not a.job_records(pr=FRESH, outcome="ok")
            assert all("Traceback" not in str(r) for r in a.log_records())
        finally:
            if a.pid is not None:
                os.kill(a.pid, signal.SIGCONT)
            a.kill()
            b.stop()
