"""Start-up time: from spawning the process to its first `200` on `/healthz` (the port is
open and the app answers), for pr-digest and bare starlette, started alternately; for
pr-digest also to its first `200` on `/readyz` (the worker side built and running).

    python -m bench.bench_startup                      # 7 starts each
    python -m bench.bench_startup --runs 11 --json out.json
    python -m bench.bench_startup --before /tmp/old    # also an older checkout of the repo

`--before DIR` starts `python -m bot serve` from DIR (e.g. `git worktree add /tmp/old
<commit>`) with this venv, in the same rounds, so old and new are compared under the
same load. Each target is started `--runs` times; the order rotates every round so drift
in the machine's other load hits all alike. Reported: median, min and max per target,
and the ratios of the medians. The probe is a raw HTTP/1.1 request on a fresh loopback
connection every 5 ms (no HTTP client to import or warm up).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.intake.machine import describe_machine
from bench.intake.targets import Target, bare_target, pr_digest_target

_PROBE_INTERVAL_S = 0.005


def _answers_200(port: int, path: str) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         "Connection: close\r\n\r\n".encode())
            return sock.recv(16).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def _port(target: Target) -> int:
    assert target.health_url is not None
    return int(target.health_url.rsplit(":", 1)[1].split("/", 1)[0])


def time_start(target: Target, *, ready_path: str | None, timeout_s: float = 60.0
               ) -> dict[str, float]:
    """Seconds from spawn to the first 200 of /healthz (and of `ready_path`)."""
    port = _port(target)
    started = time.monotonic()
    process = subprocess.Popen(target.command, cwd=target.cwd, env=target.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out: dict[str, float] = {}
    try:
        for key, path in (("healthz", "/healthz"), ("readyz", ready_path)):
            if path is None:
                continue
            while not _answers_200(port, path):
                if process.poll() is not None:
                    raise RuntimeError(f"{target.name} exited with {process.returncode}")
                if time.monotonic() - started > timeout_s:
                    raise RuntimeError(f"{target.name}: no 200 on {path} in {timeout_s}s")
                time.sleep(_PROBE_INTERVAL_S)
            out[key] = time.monotonic() - started
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return out


def _targets(workdir: Path, before: Path | None) -> list[tuple[Target, str | None]]:
    secret = secrets.token_hex(16)
    targets: list[tuple[Target, str | None]] = [
        (pr_digest_target(secret, workdir / "pr-digest"), "/readyz"),
        (bare_target(), None),
    ]
    if before is not None:
        old = pr_digest_target(secret, workdir / "before")
        # `-m bot` imports from the working directory first: the old checkout's code.
        targets.append((replace(old, name="before", cwd=before), "/readyz"))
    return targets


def run(args: argparse.Namespace) -> dict[str, Any]:
    samples: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        for round_no in range(args.runs):
            workdir = Path(tmp) / f"round-{round_no}"
            targets = _targets(workdir, args.before)
            shift = round_no % len(targets)
            for target, ready_path in targets[shift:] + targets[:shift]:
                (workdir / target.name).mkdir(parents=True, exist_ok=True)
                if target.db_path is not None:
                    target = replace(target, db_path=workdir / target.name / "db.sqlite",
                                     env=target.env | {"DIGEST_DB_PATH": str(
                                         workdir / target.name / "db.sqlite")})
                timings = time_start(target, ready_path=ready_path)
                for key, seconds in timings.items():
                    samples.setdefault(target.name, {}).setdefault(key, []).append(seconds)
                print(f"round {round_no + 1} {target.name:>9}: " + "  ".join(
                    f"{k} {v:.3f} s" for k, v in timings.items()), file=sys.stderr)
    summary: dict[str, dict[str, dict[str, Any]]] = {
        name: {key: {"median": round(statistics.median(values), 3),
                     "min": round(min(values), 3), "max": round(max(values), 3),
                     "runs": [round(v, 3) for v in values]}
               for key, values in by_key.items()}
        for name, by_key in samples.items()
    }
    bare: float = summary["bare"]["healthz"]["median"]
    ratios = {f"{name}/bare healthz": round(s["healthz"]["median"] / bare, 2)
              for name, s in summary.items() if name != "bare"}
    if "before" in summary:
        mine, old = summary["pr-digest"], summary["before"]
        ratios["pr-digest/before healthz"] = round(
            mine["healthz"]["median"] / old["healthz"]["median"], 2)
        ratios["pr-digest/before readyz"] = round(
            mine["readyz"]["median"] / old["readyz"]["median"], 2)
    return {"machine": describe_machine(), "loadavg": os.getloadavg(), "runs": args.runs,
            "targets": summary, "ratios": ratios}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"machine: {report['machine']}", f"starts per target: {report['runs']}",
             "", "target      first 200 of   median s   min s   max s"]
    for name, by_key in report["targets"].items():
        for key, stats in by_key.items():
            lines.append(f"{name:<10}  /{key:<12} {stats['median']:9.3f} {stats['min']:7.3f} "
                         f"{stats['max']:7.3f}")
    lines.append("")
    lines.extend(f"{k}: {v}" for k, v in report["ratios"].items())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="starts per target")
    parser.add_argument("--before", type=Path, default=None,
                        help="an older checkout of this repository, timed in the same rounds")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.before is not None and not (args.before / "bot" / "__main__.py").is_file():
        parser.error(f"--before {args.before}: not a checkout of this repository")
    report = run(args)
    print(format_report(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
