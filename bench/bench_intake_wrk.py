"""Webhook-intake benchmark driven by wrk: pr-digest against bare starlette and Probot.

    python -m bench.bench_intake_wrk                       # 3 rounds x 10 s per target
    python -m bench.bench_intake_wrk --rounds 5 --seconds 15 --json out.json
    python -m bench.bench_intake_wrk --targets pr-digest,bare --quick
    python -m bench.bench_intake_wrk --before /tmp/old   # also an older checkout, same rounds

It installs nothing: wrk comes from your package manager (Debian/Ubuntu:
`apt-get install wrk`; macOS: `brew install wrk`); without it the bench says so and
exits 0. The Python load generator of bench/bench_intake.py cannot saturate even the
bare app (about 1 ms of client CPU per request); wrk (C, epoll, LuaJIT) needs a few
microseconds. See bench/README.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.intake.machine import describe_machine
from bench.intake.targets import (
    TARGET_NAMES,
    RunningServer,
    Target,
    TargetUnavailable,
    make_target,
    pr_digest_target,
)
from bench.payloads import build_delivery, load_template

LUA_SCRIPT = Path(__file__).resolve().parent / "intake" / "wrk_signed.lua"
WRK_HINT = ("wrk is not installed: `apt-get install wrk` (Debian/Ubuntu) or "
            "`brew install wrk` (macOS), then run this again")


def write_deliveries(directory: Path, count: int, secret: str, body_kb: int) -> int:
    """`count` distinct signed pull_request bodies of about `body_kb` KB, and the index
    the Lua script reads. Returns the body size in bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    template = load_template()
    unpadded = len(build_delivery(template, 0, secret).body)
    if body_kb * 1024 > unpadded:
        # A longer PR description, the usual reason real deliveries are bigger.
        template["pull_request"]["body"] = "x" * (body_kb * 1024 - unpadded)
    lines, size = [], 0
    for index in range(count):
        delivery = build_delivery(template, index, secret)
        body = delivery.body
        name = f"{index:05d}.json"
        (directory / name).write_bytes(body)
        lines.append(f"{name} {delivery.headers['X-Hub-Signature-256']} pull_request")
        size = len(body)
    (directory / "index.txt").write_text("\n".join(lines) + "\n")
    return size


def run_wrk(url: str, deliveries: Path, *, threads: int, connections: int, seconds: float,
            tag: str) -> dict[str, Any]:
    env = os.environ | {"WRK_DELIVERIES": str(deliveries), "WRK_RUN": tag}
    done = subprocess.run(
        ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(seconds))}s",
         "--timeout", "10s", "-s", str(LUA_SCRIPT), url],
        env=env, capture_output=True, text=True, timeout=seconds + 60, check=True,
    )
    for line in done.stdout.splitlines():
        if line.startswith("WRK_JSON "):
            result: dict[str, Any] = json.loads(line.removeprefix("WRK_JSON "))
            return result
    raise RuntimeError(f"wrk printed no result: {done.stdout[-500:]} {done.stderr[-500:]}")


def stored_deliveries(db_path: Path | None) -> int | None:
    if db_path is None or not db_path.exists():
        return None
    with sqlite3.connect(db_path) as conn:
        row = conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()
        return int(row[0])


def one_run(server: RunningServer, deliveries: Path, args: argparse.Namespace,
            tag: str) -> dict[str, Any]:
    cpu_before, faults_before = server.cpu_seconds(), server.minor_faults()
    wall = time.monotonic()
    result = run_wrk(server.target.webhook_url, deliveries, threads=args.threads,
                     connections=args.connections, seconds=args.seconds, tag=tag)
    elapsed = time.monotonic() - wall
    cpu_after, faults_after = server.cpu_seconds(), server.minor_faults()
    requests = result["requests"]
    result["rps"] = requests / (result["duration_us"] / 1e6)
    result["server_cpu_us_per_request"] = (
        None if cpu_before is None or cpu_after is None or requests == 0
        else (cpu_after - cpu_before) / requests * 1e6)
    result["server_faults_per_request"] = (
        None if faults_before is None or faults_after is None or requests == 0
        else (faults_after - faults_before) / requests)
    result["wall_seconds"] = round(elapsed, 2)
    result["loadavg_1m"] = os.getloadavg()[0]
    return result


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median over rounds of every figure (a round disturbed by other load is one of
    several, not the answer)."""
    def median(key: str) -> float:
        values = sorted(float(r[key]) for r in runs if r.get(key) is not None)
        return values[len(values) // 2] if values else float("nan")

    return {
        "rps": median("rps"), "p50_ms": median("p50_us") / 1000,
        "p99_ms": median("p99_us") / 1000, "cpu_us": median("server_cpu_us_per_request"),
        "faults": median("server_faults_per_request"),
        "non_2xx": sum(r["non_2xx"] for r in runs),
        "socket_errors": sum(r["connect_errors"] + r["read_errors"] + r["write_errors"]
                             + r["timeouts"] for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "rounds_rps": [round(r["rps"]) for r in runs],
    }


def run(args: argparse.Namespace) -> dict[str, Any] | None:
    if shutil.which("wrk") is None:
        print(WRK_HINT)
        return None
    names = [n for n in args.targets.split(",") if n]
    secret = secrets.token_hex(16)
    report: dict[str, Any] = {"machine": describe_machine(), "settings": {
        k: getattr(args, k) for k in ("rounds", "seconds", "threads", "connections",
                                      "bodies", "body_kb")}}
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        body_bytes = write_deliveries(workdir / "deliveries", args.bodies, secret, args.body_kb)
        report["settings"]["body_bytes"] = body_bytes
        servers: dict[str, RunningServer] = {}
        for name in names + (["before"] if args.before else []):
            try:
                target = (before_target(args.before, secret, workdir) if name == "before"
                          else make_target(name, secret, workdir))
                server = RunningServer(target, workdir / f"{name}.log")
                started = time.monotonic()
                server.start()
                report.setdefault("start_seconds", {})[name] = round(
                    time.monotonic() - started, 3)
            except TargetUnavailable as exc:
                print(f"skipping {name}: {exc}", file=sys.stderr)
                continue
            stack.callback(server.stop)
            servers[name] = server
            warm_up(server, workdir / "deliveries", args, name)
        alternated_rounds(servers, workdir / "deliveries", args, runs, lambda n, name, result: (
            f"round {n} {name:>9}: {result['rps']:8.0f} req/s  "
            f"p99 {result['p99_us'] / 1000:6.1f} ms  "
            f"cpu/req {result['server_cpu_us_per_request'] or 0:6.0f} us  "
            f"load {result['loadavg_1m']:.1f}"))
        time.sleep(0.5)  # the last batch commits
        for mine in ("pr-digest", "before"):
            if mine in servers:
                report[f"{mine.replace('-', '_')}_rows"] = stored_deliveries(
                    servers[mine].target.db_path)
    report["targets"] = {name: summarize(r) for name, r in runs.items()}
    report["runs"] = runs
    report["ratios"] = ratios(report["targets"])
    return report


def warm_up(server: RunningServer, deliveries: Path, args: argparse.Namespace,
            name: str) -> None:
    """A short run that is not reported: JITs, caches, SQLite file growth."""
    one_run(server, deliveries, argparse.Namespace(
        **(vars(args) | {"seconds": min(2.0, args.seconds)})), f"warm-{name}")


def alternated_rounds(
    servers: dict[str, RunningServer], deliveries: Path, args: argparse.Namespace,
    runs: dict[str, list[dict[str, Any]]],
    line: Callable[[int, str, dict[str, Any]], str],
) -> None:
    """`args.rounds` runs per server, each appended to `runs` and told on stderr as
    `line(round number, name, result)` says."""
    order = list(servers)
    for round_no in range(args.rounds):
        # Alternate the order so drift in the machine's other load hits all alike.
        for name in (order if round_no % 2 == 0 else order[::-1]):
            result = one_run(servers[name], deliveries, args, f"r{round_no}-{name}")
            runs.setdefault(name, []).append(result)
            print(line(round_no + 1, name, result), file=sys.stderr)


def before_target(checkout: Path, secret: str, workdir: Path) -> Target:
    """pr-digest served from an older checkout of this repository (same venv, same
    settings, its own database), measured in the same rounds as the current code."""
    (workdir / "before").mkdir(exist_ok=True)
    current = pr_digest_target(secret, workdir / "before")
    # `-m bot` imports from the working directory first: the old checkout's code.
    return dataclasses.replace(current, name="before", cwd=checkout.resolve())


def ratios(targets: dict[str, dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    mine = targets.get("pr-digest")
    for other in ("bare", "bare-heap", "probot", "before"):
        theirs = targets.get(other)
        if mine and theirs:
            out[f"rps pr-digest/{other}"] = round(mine["rps"] / theirs["rps"], 2)
            out[f"cpu pr-digest/{other}"] = round(mine["cpu_us"] / theirs["cpu_us"], 2)
    return out


def format_report(report: dict[str, Any]) -> str:
    lines = [f"machine: {report['machine']}", f"settings: {report['settings']}",
             f"start to first /healthz (s): {report.get('start_seconds')}", "",
             "target        req/s   p50 ms   p99 ms  cpu us/req  faults/req  non-2xx"
             "  sock-err  rounds"]
    for name, t in report["targets"].items():
        lines.append(f"{name:<10} {t['rps']:8.0f} {t['p50_ms']:8.2f} {t['p99_ms']:8.2f} "
                     f"{t['cpu_us']:11.0f} {t['faults']:11.2f} {t['non_2xx']:8d} "
                     f"{t['socket_errors']:9d}  {t['rounds_rps']}")
    lines.append("")
    lines.extend(f"{k}: {v}" for k, v in report["ratios"].items())
    for mine in ("pr-digest", "before"):
        rows = report.get(f"{mine.replace('-', '_')}_rows")
        if rows is not None:
            answered = report["targets"][mine]["requests"]
            lines.append(f"{mine}: {answered} requests answered by wrk (timed rounds), "
                         f"{rows} delivery rows stored (warm-up included)")
    return "\n".join(lines)


def add_wrk_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `one_run`, `warm_up` and `alternated_rounds` read."""
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=32,
                        help="in all (wrk -c), shared by the threads")
    parser.add_argument("--bodies", type=int, default=200, help="distinct signed bodies")
    parser.add_argument("--body-kb", type=int, default=35, help="body size (PR body padded)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(TARGET_NAMES))
    add_wrk_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s")
    parser.add_argument("--before", type=Path, default=None, help=(
        "an older checkout of this repository (e.g. `git worktree add /tmp/old REV`), "
        "served as target `before` in the same rounds"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.before is not None and not (args.before / "bot" / "__main__.py").exists():
        parser.error(f"--before {args.before}: not a checkout of this repository")
    if args.quick:
        args.rounds, args.seconds = 1, 2.0
    report = run(args)
    if report is None:
        return 0
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
