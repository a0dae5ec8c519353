"""Webhook-intake benchmark: pr-digest's /webhook against a bare starlette app and Probot.

    python -m bench.bench_intake                      # all targets, levels 1,4,16,64
    python -m bench.bench_intake --quick --targets bare
    python -m bench.bench_intake --url mine=http://127.0.0.1:9000/webhook --secret S

Each target runs as its own process; each load level runs in a fresh load-generator
process (bench/intake/load.py). Everything stays on 127.0.0.1. See bench/README.md.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import secrets
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.intake.machine import describe_machine
from bench.intake.targets import (
    REPO_ROOT,
    TARGET_NAMES,
    RunningServer,
    Target,
    TargetUnavailable,
    make_target,
)

Report = dict[str, Any]


def run_load_level(
    url: str, concurrency: int, requests: int, warmup: int, max_seconds: float,
    secret: str, first_index: int,
) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "bench.intake.load", "--url", url,
        "--concurrency", str(concurrency), "--requests", str(requests),
        "--warmup", str(warmup), "--max-seconds", str(max_seconds),
        "--secret", secret, "--first-index", str(first_index),
    ]
    done = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=2 * max_seconds + 120, check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def count_rows(db_path: Path) -> dict[str, int]:
    """Rows per table after the run: proof that intake really stored the deliveries."""
    if not db_path.exists():
        return {}
    with sqlite3.connect(db_path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}  # noqa: S608


def best_of_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The least-disturbed round (highest throughput), plus every round's throughput.

    Other work on a shared 2-core machine only ever slows a round down, so the fastest
    round is the best estimate of the target itself."""
    best = dict(max(rounds, key=lambda r: r["throughput_rps"]))
    best["rounds_rps"] = [r["throughput_rps"] for r in rounds]
    cpu = sorted(r["server_cpu_us"] for r in rounds if r["server_cpu_us"] is not None)
    best["server_cpu_us"] = cpu[len(cpu) // 2] if cpu else None  # median over rounds
    best["rounds_loadavg"] = [r["loadavg_1m"] for r in rounds]
    return best


def measure(
    targets: list[Target], servers: dict[str, RunningServer], args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    """Every target at one level before the next level, so slow drifts in the machine's
    other load hit all targets alike; each round repeats the whole sweep."""
    per_target: dict[str, dict[int, list[dict[str, Any]]]] = {t.name: {} for t in targets}
    span = args.requests + args.warmup
    for round_no in range(args.rounds):
        for level_no, concurrency in enumerate(args.levels):
            first_index = (round_no * len(args.levels) + level_no) * span
            for target in targets:
                server = servers.get(target.name)
                cpu_before = server.cpu_seconds() if server else None
                result = run_load_level(
                    target.webhook_url, concurrency, args.requests, args.warmup,
                    args.max_seconds, args.secret, first_index,
                )
                cpu_after = server.cpu_seconds() if server else None
                result["loadavg_1m"] = round(os.getloadavg()[0], 2)
                # The server's own CPU per request does not depend on whether the client
                # or the machine's other load was the bottleneck (warm-up included).
                result["server_cpu_us"] = (
                    round((cpu_after - cpu_before) / (result["requests"] + args.warmup) * 1e6)
                    if cpu_before is not None and cpu_after is not None else None
                )
                per_target[target.name].setdefault(concurrency, []).append(result)
    return {
        name: [best_of_rounds(levels[c]) for c in args.levels]
        for name, levels in per_target.items()
    }


def ratios(results: dict[str, Report], over: str, under: str) -> list[dict[str, Any]]:
    if over not in results or under not in results:
        return []
    rows = []
    for a, b in zip(results[over]["levels"], results[under]["levels"], strict=False):
        rows.append({
            "concurrency": a["concurrency"],
            "throughput": round(a["throughput_rps"] / b["throughput_rps"], 2)
            if b["throughput_rps"] else None,
            "p50": round(a["p50_ms"] / b["p50_ms"], 2) if b["p50_ms"] else None,
            "p99": round(a["p99_ms"] / b["p99_ms"], 2) if b["p99_ms"] else None,
            "server_cpu": round(a["server_cpu_us"] / b["server_cpu_us"], 2)
            if a["server_cpu_us"] and b["server_cpu_us"] else None,
        })
    return rows


def format_report(report: Report) -> str:
    lines = ["machine: " + ", ".join(f"{k}={v}" for k, v in report["machine"].items()), ""]
    lines.append(f"{'target':<12}{'conc':>6}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}"
                 f"{'errors':>8}{'n':>7}{'cpu us':>8}  load  req/s of each round")
    for name, result in report["results"].items():
        for lv in result["levels"]:
            lines.append(
                f"{name:<12}{lv['concurrency']:>6}{lv['throughput_rps']:>10.1f}"
                f"{lv['p50_ms']:>10.2f}{lv['p99_ms']:>10.2f}{lv['errors']:>8}{lv['requests']:>7}"
                f"{lv['server_cpu_us'] if lv['server_cpu_us'] is not None else '-':>8}"
                f"  {lv['loadavg_1m']:>4.1f}  {lv['rounds_rps']}"
            )
        if result.get("stored_rows"):
            lines.append(f"{'':<12}stored rows: {result['stored_rows']}")
    for key, rows in report["ratios"].items():
        if rows:
            lines.append("")
            lines.append(f"{key} (throughput / p50 / p99 / server CPU per request):")
            for r in rows:
                lines.append(f"  conc {r['concurrency']:>3}: {r['throughput']} / {r['p50']} / "
                             f"{r['p99']} / {r['server_cpu']}")
    for name, reason in report["unavailable"].items():
        lines.append(f"\n{name}: not run: {reason}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> Report:
    results: dict[str, Report] = {}
    unavailable: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-intake-") as tmp, ExitStack() as servers:
        workdir = Path(tmp)
        targets: list[Target] = [Target(name=n, webhook_url=u) for n, u in args.url]
        started: dict[str, RunningServer] = {}
        for name in args.targets:
            try:
                target = make_target(name, args.secret, workdir)
                server = RunningServer(target, workdir / f"{name}.log")
                server.start()
            except TargetUnavailable as exc:
                unavailable[name] = str(exc)
                continue
            servers.callback(server.stop)
            started[name] = server
            targets.append(target)
        for name, levels in measure(targets, started, args).items():
            results[name] = {"levels": levels}
        servers.close()
        for target in targets:
            results[target.name]["url"] = target.webhook_url
            if target.db_path is not None:
                results[target.name]["stored_rows"] = count_rows(target.db_path)
    return {
        "machine": describe_machine(),
        "settings": {
            k: getattr(args, k) for k in ("levels", "requests", "warmup", "max_seconds", "rounds")
        },
        "results": results,
        "ratios": {
            "pr-digest/bare": ratios(results, "pr-digest", "bare"),
            "pr-digest/probot": ratios(results, "pr-digest", "probot"),
        },
        "unavailable": unavailable,
    }


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _named_url(text: str) -> tuple[str, str]:
    # Load goes to this machine only: never point the generator at another host.
    name, sep, url = text.partition("=")
    if not sep or not name or not _is_loopback(url):
        raise argparse.ArgumentTypeError("give NAME=http://127.0.0.1:PORT/PATH (loopback only)")
    return name, url


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="pr-digest webhook-intake benchmark")
    parser.add_argument("--targets", default=",".join(TARGET_NAMES),
                        help="comma-separated: pr-digest,bare,probot (empty: only --url)")
    parser.add_argument("--url", type=_named_url, action="append", default=[],
                        help="NAME=URL of a server already running (loopback); repeatable")
    parser.add_argument("--secret", default=secrets.token_hex(16),
                        help="webhook secret (needed with --url; random otherwise)")
    parser.add_argument("--levels", default="1,4,16,64", help="concurrency levels")
    parser.add_argument("--requests", type=int, default=2000, help="timed requests per level")
    parser.add_argument("--warmup", type=int, default=100, help="untimed requests per level")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="time cap per level")
    parser.add_argument("--rounds", type=int, default=3,
                        help="sweeps over all levels; each cell keeps its fastest round")
    parser.add_argument("--quick", action="store_true", help="smoke run of a few seconds")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    args.targets = [t for t in args.targets.split(",") if t]
    args.levels = [int(n) for n in args.levels.split(",")]
    if args.quick:
        args.levels, args.requests, args.warmup, args.max_seconds = [1, 4], 200, 20, 1.0
        args.rounds = 1
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = run(args)
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
