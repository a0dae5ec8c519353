"""Webhook ack latency of the live service, and GitHub API calls per event.

Starts the fake GitHub (tests/fakes) and the real `python -m bot serve` (live mode,
App credentials, worker running) through tests/service_harness.py, then:

1. ack latency: `--deliveries` signed `pull_request.synchronize` deliveries, one at a
   time over one keep-alive connection, round-robin over `--prs` open PRs whose head
   moves before every delivery, `--interval-ms` apart, so the worker converges
   digests (reads and PATCHes the fake) while the intake is being measured. Bodies
   are built and signed before the clock starts; the clock covers send -> 202 received.
2. calls per event, from the fake's call log, by route: a first `opened` (cold: the
   App JWT and installation token), a `synchronize` with a new head on a PR that has
   a digest, and a `synchronize` that changes nothing.

    python -m bench.bench_ack                     # 300 deliveries over 30 PRs
    python -m bench.bench_ack --deliveries 1000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    REPO,
    ServiceProcess,
    count_by_route,
    e2e_state,
    pr_event,
    wait_until,
)
from tests.signing import signed_headers

FIRST_PR = 1000


def _percentile(sorted_ms: list[float], q: float) -> float:
    index = min(len(sorted_ms) - 1, max(0, round(q * (len(sorted_ms) - 1))))
    return sorted_ms[index]


def _quiet(svc: ServiceProcess, state: FakeGitHubState, seconds: float = 1.0) -> None:
    """Wait until the fake has seen no call for `seconds` (every job has finished)."""
    last = -1
    stable_since = time.monotonic()
    while time.monotonic() - stable_since < seconds:
        now = len(state.calls)
        if now != last:
            last, stable_since = now, time.monotonic()
        time.sleep(0.05)


def _routes(counter: Counter[tuple[str, str]]) -> dict[str, int]:
    return {f"{method} {route}": n for (method, route), n in sorted(counter.items())}


def measure_ack(svc: ServiceProcess, state: FakeGitHubState, deliveries: int,
                prs: int, interval_ms: float) -> dict[str, Any]:
    numbers = [FIRST_PR + i for i in range(prs)]
    for number in numbers:
        state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                       files=list(COMPILE_FILES))
    prepared = []
    for i in range(deliveries):
        number = numbers[i % prs]
        sha = f"{i + 1:040x}"
        body = json.dumps(pr_event("synchronize", number, head_sha=sha)).encode()
        prepared.append((number, sha, body, signed_headers("pull_request", body, svc.secret)))
    for warm in range(20):
        body = json.dumps(pr_event("opened", numbers[warm % prs])).encode()
        svc.post_raw(body, signed_headers("pull_request", body, svc.secret))
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    started = time.perf_counter()
    for number, sha, body, headers in prepared:
        state.pulls[(REPO, number)].head_sha = sha
        t0 = time.perf_counter()
        response = svc.post_raw(body, headers)
        latencies.append((time.perf_counter() - t0) * 1000)
        statuses[response.status_code] += 1
        if interval_ms:
            time.sleep(interval_ms / 1000)
    wall = time.perf_counter() - started
    _quiet(svc, state)
    latencies.sort()
    # The intake's own timing (read body .. response built), from its log lines: the
    # gap to the client's numbers is event-loop wait, HTTP and the client itself.
    inside = sorted(
        float(r["duration_ms"]) for r in svc.log_records()
        if r.get("logger") == "bot.intake.app" and r.get("action") == "synchronize"
        and "duration_ms" in r
    )
    return {
        "deliveries": deliveries, "prs": prs, "interval_ms": interval_ms,
        "statuses": dict(statuses),
        "p50_ms": round(statistics.median(latencies), 2),
        "p90_ms": round(_percentile(latencies, 0.90), 2),
        "p99_ms": round(_percentile(latencies, 0.99), 2),
        "max_ms": round(latencies[-1], 2),
        "server_p50_ms": round(statistics.median(inside), 2) if inside else None,
        "server_p99_ms": round(_percentile(inside, 0.99), 2) if inside else None,
        "wall_s": round(wall, 2),
        "jobs_ok": len(svc.job_records(outcome="ok")),
        "jobs_failed": len(svc.job_records(outcome="retry"))
        + len(svc.job_records(outcome="parked")),
    }


def measure_calls(svc: ServiceProcess, state: FakeGitHubState) -> dict[str, Any]:
    number = FIRST_PR - 1
    pull = state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                          files=list(COMPILE_FILES))
    results: dict[str, Any] = {}

    def one(label: str, action: str) -> None:
        _quiet(svc, state, 0.5)
        before = len(state.calls)
        jobs = len(svc.job_records(pr=number, outcome="ok"))
        svc.send("pull_request", pr_event(action, number, head_sha=pull.head_sha))
        svc.wait_for_job(number, count=jobs + 1)
        _quiet(svc, state, 0.5)
        per_event = count_by_route(state.calls[before:])
        results[label] = {"total": sum(per_event.values()), "routes": _routes(per_event)}

    one("opened (first digest of a PR)", "opened")
    pull.head_sha = "f" * 40
    one("synchronize (new head, digest exists)", "synchronize")
    one("synchronize (nothing changed)", "synchronize")
    return results


def run(deliveries: int, prs: int, interval_ms: float) -> dict[str, Any]:
    state = e2e_state()
    with tempfile.TemporaryDirectory() as workdir, FakeGitHubServer(state) as url:
        # A fresh process for the call counts, so its first event really is cold.
        with ServiceProcess(url, Path(workdir), name="calls") as svc:
            wait_until(lambda: state.count("GET", "/app") >= 1, 10)
            calls = measure_calls(svc, state)
        with ServiceProcess(url, Path(workdir), name="ack") as svc:
            ack = measure_ack(svc, state, deliveries, prs, interval_ms)
    return {"ack": ack, "calls_per_event": calls}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else "")
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--prs", type=int, default=30)
    parser.add_argument("--interval-ms", type=float, default=5.0,
                        help="pause between deliveries, so jobs run during the measurement")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report = run(args.deliveries, args.prs, args.interval_ms)
    ack = report["ack"]
    print(f"ack latency over {ack['deliveries']} signed deliveries ({ack['prs']} PRs, "
          f"{ack['interval_ms']} ms apart, worker live): p50 {ack['p50_ms']} ms, "
          f"p90 {ack['p90_ms']} ms, p99 {ack['p99_ms']} ms, max {ack['max_ms']} ms; "
          f"statuses {ack['statuses']}; inside the intake p50 {ack['server_p50_ms']} ms, "
          f"p99 {ack['server_p99_ms']} ms; "
          f"jobs ok {ack['jobs_ok']}, failed {ack['jobs_failed']}")
    for label, calls in report["calls_per_event"].items():
        print(f"{label}: {calls['total']} GitHub calls")
        for route, n in calls["routes"].items():
            print(f"    {n} x {route}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
