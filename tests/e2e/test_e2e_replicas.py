"""Two `digest-bot serve` replicas on one PostgreSQL database, against the fake GitHub
(issue 30): deliveries round-robin, some delivery ids sent to both replicas at once, one
replica SIGKILLed right after acking a burst (one of its jobs mid-run) and not restarted.
The survivor finishes everything: every PR ends with exactly one digest comment, and a
delivery sent twice is one job."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.repo_index_tarballs import tree_tarball
from tests.repo_index_tree import TREE
from tests.service_harness import (
    BOT,
    INSTALLATION_ID,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)

pytestmark = pytest.mark.slow

LEASE = 2.0  # seconds: how long the dead replica's running job stays claimed
BURST = range(901, 921)  # twenty PRs
MID_RUN = 900  # the PR whose job the killed replica is running when it dies


def _replica(url: str, workdir: Path, name: str, database_url: str, *,
             settle_seconds: float = 1.0) -> ServiceProcess:
    return ServiceProcess(url, workdir, name=name, settle_seconds=settle_seconds, extra_env={
        "DIGEST_DATABASE_URL": database_url, "DIGEST_LEASE_SECONDS": str(LEASE),
        "DIGEST_INDEX_ENABLED": "0"})


def test_a_replica_killed_after_acking_a_burst_loses_nothing_and_doubles_nothing(
    pg_url: str, tmp_path: Path,
) -> None:
    state = e2e_state()
    for number in [MID_RUN, *BURST]:
        state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                       files=list(COMPILE_FILES), author="alice")
    # The job A starts first hangs in GitHub's answer: A dies in the middle of it.
    state.slow_next("GET", f"*/pulls/{MID_RUN}/files", 10.0, times=1)
    with FakeGitHubServer(state) as url:
        # a's settle window outlasts the burst: none of what it acks runs before it dies,
        # however slow the machine.
        a = _replica(url, tmp_path, "a", pg_url, settle_seconds=4.0)
        b = _replica(url, tmp_path, "b", pg_url)
        a.start()
        try:
            assert a.send("pull_request", pr_event("opened", MID_RUN),
                          delivery="d-mid").status_code == 202
            # The slow answer has begun (its fault taken): replica a is mid-job.
            wait_until(lambda: not state.faults, 15, message="replica a runs the first job")
            b.start()  # a heartbeats its lease meanwhile: b leaves that job alone

            replies: list[tuple[str, int, str]] = []
            for i, number in enumerate(BURST):
                delivery = f"d-{number}"
                payload = pr_event("opened", number)
                if i % 4 == 0:
                    # The same delivery at both replicas at once (a redelivery racing).
                    with concurrent.futures.ThreadPoolExecutor(2) as pool:
                        both = list(pool.map(
                            lambda svc, d=delivery, p=payload: svc.send(
                                "pull_request", p, delivery=d), (a, b)))
                    replies += [(delivery, r.status_code, r.text) for r in both]
                else:
                    svc = a if i % 2 else b
                    reply = svc.send("pull_request", payload, delivery=delivery)
                    replies.append((delivery, reply.status_code, reply.text))
            a.kill()  # right after its last 202: no drain, its acked jobs still settling
            assert all(status == 202 for _, status, _ in replies), replies
            sent_twice = [f"d-{n}" for i, n in enumerate(BURST) if i % 4 == 0]
            for delivery in sent_twice:
                texts = [text for d, _, text in replies if d == delivery]
                # One replica stored it; the other found it stored: the same job id.
                assert sum('"duplicate":true' in t for t in texts) == 1, texts

            for number in [MID_RUN, *BURST]:
                wait_until(lambda n=number: len(state.bot_comments(REPO, n, BOT)) >= 1,  # type: ignore[misc]
                           30, message=f"a digest on PR {number}")
            time.sleep(LEASE + 1.5)  # anything doubled would have posted by now
            for number in [MID_RUN, *BURST]:
                assert len(state.bot_comments(REPO, number, BOT)) == 1, number
        finally:
            a.kill()
            b.stop()

    with psycopg.connect(pg_url) as conn:
        jobs = conn.execute("SELECT number, delivery_id, state, attempts FROM jobs"
                            " ORDER BY number").fetchall()
        delivery_jobs: dict[str, int] = dict(
            conn.execute("SELECT delivery_id, job_id FROM deliveries"))
        viewed = [row[0] for row in conn.execute(
            "SELECT number FROM view_prs ORDER BY number")]
    # The label view's digests are in the shared database too: any replica serves them.
    assert viewed == [MID_RUN, *BURST]
    # One job per PR, including those whose delivery reached both replicas.
    assert [row[0] for row in jobs] == [MID_RUN, *BURST]
    assert {row[2] for row in jobs} == {"done"}
    assert set(delivery_jobs) == {"d-mid", *(f"d-{n}" for n in BURST)}
    # The dead replica's running job ran again once its lease ran out (one attempt lost).
    assert [row[3] for row in jobs if row[0] == MID_RUN] == [1]
    # Everything after the kill was done by the survivor.
    finished_by_b = {record.get("pr") for record in b.job_records(outcome="ok")}
    assert finished_by_b >= {MID_RUN, *BURST[1::2]}


def test_a_bad_database_url_is_one_line_at_start_with_the_password_hidden(
    pg_url: str, tmp_path: Path,
) -> None:
    bad = pg_url.replace("digest@", "nobody:Sup3rSecretPw@")
    svc = ServiceProcess("http://127.0.0.1:9", tmp_path, extra_env={"DIGEST_DATABASE_URL": bad})
    proc = subprocess.run([sys.executable, "-m", "bot", "serve", "--port", "0"],
                          env=svc.env(), capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Sup3rSecretPw" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr
    problem = [line for line in lines if "DIGEST_DATABASE_URL=" in line]
    assert len(problem) == 1, proc.stderr
    assert "nobody:***@" in problem[0]
    assert "cannot connect" in problem[0]


def test_readyz_fails_while_the_database_is_unreachable(pg_url: str, tmp_path: Path) -> None:
    state = e2e_state()
    with FakeGitHubServer(state) as url, _replica(url, tmp_path, "r", pg_url) as svc:
        wait_until(lambda: svc.get("/readyz").status_code == 200, 10, message="ready")
        name = urlsplit(pg_url).path.lstrip("/")
        admin = pg_url.replace(f"/{name}?", "/postgres?")
        # The database goes away under the running replica (its connections cut, new
        # ones refused).
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         " WHERE datname = %s", (name,))
        reply = svc.get("/readyz")
        assert reply.status_code == 503, reply.text
        assert reply.json()["ready"] is False
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        wait_until(lambda: svc.get("/readyz").status_code == 200, 10, message="ready again")


def test_a_push_indexed_by_one_replica_is_indexed_by_the_other_too(
    pg_url: str, tmp_path: Path,
) -> None:
    # The symbol index is each replica's own cache; the push's one index job runs on
    # one of them, and the other brings its own index to the same commit.
    head = "f" * 40
    state = e2e_state()
    repo = state.repos[REPO]
    repo.head_sha = head
    repo.tarball = tree_tarball(TREE)
    env = {"DIGEST_DATABASE_URL": pg_url, "DIGEST_INDEX_SETTLE_SECONDS": "0.2",
           "DIGEST_INDEX_SYNC_SECONDS": "0.5"}
    push = {"ref": "refs/heads/main", "before": "0" * 40, "after": head, "created": False,
            "deleted": False, "commits": [],
            "repository": {"full_name": REPO, "default_branch": "main"},
            "installation": {"id": INSTALLATION_ID},
            "sender": {"login": "merger", "type": "User"}}
    with FakeGitHubServer(state) as url, \
            ServiceProcess(url, tmp_path, name="a", extra_env=env) as a, \
            ServiceProcess(url, tmp_path, name="b", extra_env=env) as b:
        assert a.send("push", push).status_code == 202

        def built(svc: ServiceProcess) -> list[str]:
            return [str(r.get("commit")) for r in svc.log_records()
                    if r.get("msg") == "index built"]

        wait_until(lambda: built(a) and built(b), 60, interval=0.1,
                   message="both replicas indexed the push")
        assert built(a) == built(b) == [head[:12]]
        # One index job for the push, whichever replica ran it.
        assert len(a.job_records(kind="index") + b.job_records(kind="index")) == 1
