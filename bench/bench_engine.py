"""Digest a 3,000-file PR: the pure pipeline in-process, and `digest-bot digest` end to end.

Run: python -m bench.bench_engine [--runs 7] [--cli-runs 5] [--json out.json]

Two PRs of 3,000 files each (bench/bench_match.py): `synthetic` (every file a 30-line
patch whose added lines hit the rules' added-line patterns: the worst case for the
matcher, ~32,000 pattern hits) and `vendored` (a vendored kernel library as such PRs
come: mostly new files of 5-80 lines, 20% renames without a patch, a few removals,
small edits). For each: build_digest + render_digest in-process (median of --runs,
rules already loaded), and the CLI as a user runs it (`python -m bot digest --format
json` in a fresh interpreter: median wall time of --cli-runs, with the compiled-rules
cache warm, plus the one cold run that fills it). Baselines from the same run, so
ratios hold on a noisy machine when absolute times do not: `json.loads` of the same
files JSON, and an interpreter that only starts (`python -c pass`). The import cost of
the digest path is measured in a fresh interpreter too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.bench_match import synthetic_pr, timings, vendored_pr
from bot.core.digest import build_digest
from bot.core.facts import PullRequestFacts
from bot.core.pr_object import changed_files
from bot.core.render.comment import render_digest
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
FILES = 3000
# What `digest-bot digest` imports before it reads its input (bot/cli/main.py's digest path);
# a module the checkout does not have (an older one, for a before/after) is skipped.
_DIGEST_IMPORTS = (
    "bot.cli.main", "bot.core.digest", "bot.core.render.comment", "bot.core.pr_object",
    "bot.rulebook.files", "bot.rulebook.cache", "bot.settings.errors",
)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def _median(times: list[float]) -> float:
    return statistics.median(times)


def _wall(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - start


def _write_fixture(facts: PullRequestFacts, directory: Path) -> tuple[Path, Path]:
    event = directory / "event.json"
    files = directory / "files.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 1, "title": facts.title, "body": facts.body,
        "head": {"sha": "0" * 40, "ref": "topic"},
        "base": {"ref": "main", "repo": {"full_name": "vllm-project/vllm"}},
        "user": {"login": "someone"}, "changed_files": len(facts.files),
    }}))
    files.write_text(json.dumps([f.model_dump(exclude_none=True) for f in facts.files]))
    return event, files


def _import_time(env: dict[str, str], runs: int) -> float:
    code = (
        "import importlib, importlib.util, time\n"
        "t = time.perf_counter()\n"
        f"for name in {_DIGEST_IMPORTS!r}:\n"
        "    spec = importlib.util.find_spec(name)\n"
        f"    if spec is not None and (spec.origin or '').startswith({str(ROOT)!r}):\n"
        "        importlib.import_module(name)\n"
        "print(time.perf_counter() - t)"
    )
    samples = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True, env=env, cwd=ROOT)
        samples.append(float(done.stdout.strip()))
    return _median(samples)


def measure_pr(name: str, facts: PullRequestFacts, args: argparse.Namespace,
               work: Path, env: dict[str, str]) -> dict[str, Any]:
    rules = load_rules(RULES_DIR)
    patch_bytes = sum(len(f.patch or "") for f in facts.files)
    files_json = json.dumps([f.model_dump() for f in facts.files])
    parse = timings(args.runs, lambda: json.loads(files_json))
    models = timings(args.runs, lambda: changed_files(json.loads(files_json)))
    digest = build_digest(facts, rules, "en")
    build = timings(args.runs, lambda: build_digest(facts, rules, "en"))
    total = timings(args.runs, lambda: render_digest(build_digest(facts, rules, "en")))

    fixture = work / name
    fixture.mkdir()
    event, files = _write_fixture(facts, fixture)
    cache = fixture / "cache"
    cli_env = {**env, "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, "-m", "bot", "digest", "--event", str(event),
               "--files", str(files), "--format", "json"]
    cold = _wall(command, cli_env)  # parses the rules and fills the cache
    warm = [_wall(command, cli_env) for _ in range(args.cli_runs)]
    return {
        "pr": name, "files": len(facts.files), "patch_mb": round(patch_bytes / 1e6, 2),
        "areas": len(digest.areas), "risks": len(digest.risks), "symbols": len(digest.symbols),
        "json_loads_ms": _median(parse) * 1000, "json_to_models_ms": _median(models) * 1000,
        "build_ms": _median(build) * 1000, "build_render_ms": _median(total) * 1000,
        "build_render_best_ms": min(total) * 1000,
        "cli_cold_ms": cold * 1000, "cli_warm_ms": _median(warm) * 1000,
        "cli_warm_runs_ms": [round(t * 1000, 1) for t in warm],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7, help="in-process repetitions")
    parser.add_argument("--cli-runs", type=int, default=5, help="CLI runs (warm cache)")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.cli_runs < 1:
        # Every figure is a median of runs: zero runs would have nothing to report.
        parser.error("--runs and --cli-runs must be at least 1")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    env["PYTHONPATH"] = str(ROOT)
    # A checkout has its modules' bytecode after its first run, as a user's does; a shell
    # that forbids writing it would time the compiling of every module on every run
    # (~90 ms of the CLI's 0.3 s). The first run of each measurement writes it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    results: dict[str, Any] = {"load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as temp:
        work = Path(temp)
        results["python_start_ms"] = _median(
            [_wall([sys.executable, "-c", "pass"], env) for _ in range(args.cli_runs)]
        ) * 1000
        results["digest_imports_ms"] = _import_time(env, args.cli_runs) * 1000
        results["prs"] = [
            measure_pr("synthetic", synthetic_pr(FILES), args, work, env),
            measure_pr("vendored", vendored_pr(FILES), args, work, env),
        ]

    tracemalloc.start()
    render_digest(build_digest(synthetic_pr(FILES), load_rules(RULES_DIR), "zh"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    results["peak_alloc_mb"] = peak / 1e6
    results["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    load = ", ".join(f"{x:.1f}" for x in results["load_average"])
    print(f"load average {load}; medians; in-process runs {args.runs}, CLI runs {args.cli_runs}")
    print(f"interpreter start (python -c pass):     {_ms(results['python_start_ms'] / 1000)}")
    print(f"digest path imports (fresh process):    {_ms(results['digest_imports_ms'] / 1000)}")
    for pr in results["prs"]:
        print(f"\n{pr['pr']} PR: {pr['files']} files, {pr['patch_mb']} MB of patches -> "
              f"{pr['areas']} areas, {pr['risks']} risks, {pr['symbols']} symbols")
        floor = pr["json_loads_ms"]
        rows = [
            ("floor: json.loads(files JSON)", floor),
            ("json -> ChangedFile models", pr["json_to_models_ms"]),
            ("build_digest", pr["build_ms"]),
            ("build_digest + render_digest", pr["build_render_ms"]),
            ("CLI digest --format json (warm)", pr["cli_warm_ms"]),
            ("CLI, cold rules cache (1 run)", pr["cli_cold_ms"]),
        ]
        for label, value in rows:
            print(f"  {label:<34}{_ms(value / 1000)}   {value / floor:6.1f}x floor")
    print(f"\npeak Python allocations during one digest: {results['peak_alloc_mb']:.1f} MB; "
          f"process max RSS: {results['max_rss_mb']:.0f} MB")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
