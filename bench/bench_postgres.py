"""The PostgreSQL backend against SQLite, in one run (issue 30):

1. ack throughput and latency under wrk: the same pr-digest, dry-run, once on the SQLite
   file and once on DIGEST_DATABASE_URL (a local PostgreSQL cluster with fsync on, so
   each ack's commit is a durable write), rounds alternated;
2. failover: two replicas on one database against the fake GitHub; replica A acks a
   burst and starts working it, is SIGKILLed, and the time until replica B has finished
   every one of A's jobs (each PR's one comment posted) is measured.

    python -m bench.bench_postgres                       # 3 rounds x 10 s, 60 PRs, 5 s lease
    python -m bench.bench_postgres --rounds 1 --seconds 5 --prs 30 --lease 3

Needs wrk (as bench/bench_intake_wrk.py; without it part 1 is skipped) and PostgreSQL's
binaries (Debian's `postgresql`; the cluster is started as tests/pg_cluster.py does).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg

from bench.bench_intake_wrk import (
    WRK_HINT,
    add_wrk_arguments,
    alternated_rounds,
    stored_deliveries,
    summarize,
    warm_up,
    write_deliveries,
)
from bench.intake.machine import describe_machine
from bench.intake.targets import RunningServer, pr_digest_target
from tests.fakes.github_http import FakeGitHubServer
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.pg_cluster import Cluster, running_cluster
from tests.service_harness import BOT, REPO, ServiceProcess, e2e_state, pr_event, wait_until


def ack_rounds(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any] | None:
    if shutil.which("wrk") is None:
        print(WRK_HINT, file=sys.stderr)
        return None
    secret = secrets.token_hex(16)
    url = cluster.create_database()
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-pg-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        write_deliveries(workdir / "deliveries", args.bodies, secret, args.body_kb)
        sqlite_target = pr_digest_target(secret, workdir)
        (workdir / "pg").mkdir()
        pg_base = pr_digest_target(secret, workdir / "pg")
        pg_target = dataclasses.replace(pg_base, name="postgresql",
                                        env=pg_base.env | {"DIGEST_DATABASE_URL": url})
        servers: dict[str, RunningServer] = {}
        for name, target in (("sqlite", sqlite_target), ("postgresql", pg_target)):
            server = RunningServer(target, workdir / f"{name}.log")
            server.start()
            stack.callback(server.stop)
            servers[name] = server
            warm_up(server, workdir / "deliveries", args, name)
        alternated_rounds(servers, workdir / "deliveries", args, runs, lambda n, name, result: (
            f"round {n} {name:>10}: {result['rps']:7.0f} req/s  "
            f"p99 {result['p99_us'] / 1000:6.1f} ms  "
            f"cpu/req {result['server_cpu_us_per_request'] or 0:5.0f} us"))
        time.sleep(0.5)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()
        rows = {"sqlite": stored_deliveries(sqlite_target.db_path),
                "postgresql": int(row[0]) if row else 0}
    return {"targets": {name: summarize(r) for name, r in runs.items()}, "rows": rows}


def failover(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    url = cluster.create_database()
    numbers = list(range(1000, 1000 + args.prs))
    state = e2e_state()
    # A real GitHub answers in tens of milliseconds: jobs take long enough that the
    # killed replica has some mid-run (they wait out their lease) and some queued.
    state.latency = args.github_latency_ms / 1000
    for number in numbers:
        state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                       files=list(COMPILE_FILES), author="alice")
    with tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp, \
            FakeGitHubServer(state) as github:
        env = {"DIGEST_DATABASE_URL": url, "DIGEST_LEASE_SECONDS": str(args.lease),
               "DIGEST_INDEX_ENABLED": "0", "DIGEST_WORKERS": "4"}
        a = ServiceProcess(github, Path(tmp), name="a", settle_seconds=0.2, extra_env=env)
        b = ServiceProcess(github, Path(tmp), name="b", settle_seconds=0.2, extra_env=env)
        a.start()
        b.start()
        try:
            # Both work the queue; a acks everything, and dies with jobs mid-run.
            for number in numbers:
                assert a.send("pull_request", pr_event("opened", number)).status_code == 202
            wait_until(lambda: sum(len(state.bot_comments(REPO, n, BOT)) for n in numbers)
                       >= args.prs // 4, 60, message="replica a at work")
            a.kill()
            killed = time.monotonic()
            with psycopg.connect(url) as conn:
                counts: dict[str, int] = dict(
                    conn.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"))
                # a's and b's: b finishes its own within a job's time, a's wait out
                # their lease.
                running = [row[0] for row in conn.execute(
                    "SELECT id FROM jobs WHERE state = 'running'")]
            done_at_kill = sum(1 for n in numbers if state.bot_comments(REPO, n, BOT))

            def all_done(ids: list[int]) -> bool:
                with psycopg.connect(url) as conn:
                    row = conn.execute("SELECT COUNT(*) FROM jobs WHERE id = ANY(%s)"
                                       " AND state != 'done'", (ids,)).fetchone()
                return row is not None and row[0] == 0

            wait_until(lambda: all_done(running), args.lease * 4 + 120, interval=0.05,
                       message="the jobs running at the kill are done")
            orphans_done = time.monotonic() - killed
            wait_until(lambda: all(state.bot_comments(REPO, n, BOT) for n in numbers),
                       args.lease * 4 + 120, interval=0.05, message="replica b finishes")
            finished = time.monotonic() - killed
            doubled = [n for n in numbers if len(state.bot_comments(REPO, n, BOT)) != 1]
        finally:
            a.kill()
            b.stop()
    return {"prs": args.prs, "lease_seconds": args.lease,
            "github_latency_ms": args.github_latency_ms,
            "at_kill": {"commented": done_at_kill, "running": int(counts.get("running", 0)),
                        "queued": int(counts.get("queued", 0))},
            "seconds_to_finish_after_kill": round(finished, 2),
            "seconds_until_running_at_kill_done": round(orphans_done, 2),
            "not_exactly_one": doubled}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"machine: {report['machine']}", f"settings: {report['settings']}", ""]
    ack = report.get("ack")
    if ack:
        lines.append("backend       req/s   p50 ms   p99 ms  cpu us/req  non-2xx  rounds")
        for name, t in ack["targets"].items():
            lines.append(f"{name:<11} {t['rps']:7.0f} {t['p50_ms']:8.2f} {t['p99_ms']:8.2f} "
                         f"{t['cpu_us']:11.0f} {t['non_2xx']:8d}  {t['rounds_rps']}")
        lines.append(f"deliveries stored: {ack['rows']}")
        mine, base = ack["targets"].get("postgresql"), ack["targets"].get("sqlite")
        if mine and base:
            lines.append(f"postgresql/sqlite: req/s {mine['rps'] / base['rps']:.2f}x, "
                         f"p99 {mine['p99_ms'] / base['p99_ms']:.2f}x")
    fail = report["failover"]
    lines += ["", f"failover: {fail['prs']} PRs acked by replica a, lease "
              f"{fail['lease_seconds']} s, GitHub latency {fail['github_latency_ms']} ms",
              f"  at SIGKILL: {fail['at_kill']}",
              f"  the jobs running at the kill (a's wait out their lease) done "
              f"{fail['seconds_until_running_at_kill_done']} s after it",
              f"  replica b finished every PR {fail['seconds_to_finish_after_kill']} s after"
              f" the kill; PRs without exactly one comment: {fail['not_exactly_one']}"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_wrk_arguments(parser)
    parser.add_argument("--prs", type=int, default=60, help="failover: PRs in the burst")
    parser.add_argument("--lease", type=float, default=5.0, help="failover: lease seconds")
    parser.add_argument("--github-latency-ms", type=float, default=30.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"machine": describe_machine(), "settings": {
        k: getattr(args, k) for k in ("rounds", "seconds", "threads", "connections",
                                      "bodies", "body_kb", "prs", "lease",
                                      "github_latency_ms")}}
    with running_cluster(durable=True) as cluster:
        if cluster is None:
            print("PostgreSQL not found (install Debian's `postgresql`)", file=sys.stderr)
            return 0
        report["ack"] = ack_rounds(cluster, args)
        report["failover"] = failover(cluster, args)
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
