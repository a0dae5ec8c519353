"""The symbol index on the real vLLM tree: a full build against a bare `ast.parse` of the
same files, the database per generation, a refresh after a push, and what the look-ups
find and cost for real changed functions.

Run: python -m bench.bench_index [--sdists DIR] [--before CHECKOUT] [--push 50]
Needs the vLLM 0.33.0 and 0.34.0 sdists in DIR, else $PR_DIGEST_SDISTS, else the corpus
cache (`python -m bench corpus releases 0.33.0 0.34.0` fetches them; bench/sdists.py);
without them it says so and exits 0.

Every timed step runs in a child process pinned to one core, through the production
path: `IndexRefresher` -> temporary file -> the worker process (`tarfile` -> parser ->
SQLite); the CPU is the child's and its worker's. In the same run:
- the floors: gunzip + untar + `ast.parse` of every `.py` file, and a bare `ast.parse`
  (and tree-sitter's parse) of the same files already in memory;
- `--before CHECKOUT`: the same full build with an older checkout's code;
- a push: 0.33.0 indexed, then a tarball of 0.33.0 with `--push` changed `.py` files
  taken from 0.34.0 (seeded), refreshed;
- look-ups: the changed functions of tests/fixtures/repo_index/vllm/cases.json (PRs
  against 0.33.0) on the 0.34.0 index with their files' base records (as the service
  asks), and the time of the same look-ups re-anchored.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import sdists

REPO = "vllm-project/vllm"
ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "fixtures" / "repo_index" / "vllm" / "cases.json"

# The child: only IndexRefresher's public API, so an older checkout runs it too.
_BUILD = """
import asyncio, json, os, resource, sys, time
from contextlib import asynccontextmanager
from pathlib import Path
from bot.repo_index.refresh import IndexRefresher

archive, db, sha, repo = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]

class FileArchive:
    async def default_branch_head(self, repo):
        from bot.github.protocol import BranchHead
        return BranchHead(branch="main", sha=sha)

    @asynccontextmanager
    async def tarball(self, repo, commit):
        async def chunks():
            with archive.open("rb") as handle:
                while chunk := handle.read(1 << 16):
                    yield chunk
        yield chunks()

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
wall, started = time.perf_counter(), cpu()
outcome = asyncio.run(IndexRefresher(db).refresh(FileArchive(), repo, sha))
print(json.dumps({
    "action": outcome.action, "files": outcome.files, "reason": outcome.reason,
    "cpu": cpu() - started, "wall": time.perf_counter() - wall,
    "rss_mb": max(resource.getrusage(w).ru_maxrss
                  for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024,
}))
"""

_FLOOR = """
import ast, io, json, os, sys, tarfile, time, warnings
warnings.simplefilter("ignore")
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
started = time.process_time()
texts = []
with tarfile.open(sys.argv[1], mode="r|*") as archive:
    for member in archive:
        if member.isfile() and member.name.endswith(".py"):
            texts.append(archive.extractfile(member).read())
read = time.process_time() - started
started = time.process_time()
for text in texts:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        pass
parse = time.process_time() - started
out = {"files": len(texts), "read": read, "ast": parse}
try:
    import tree_sitter, tree_sitter_python
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    started = time.process_time()
    for text in texts:
        parser.parse(text)
    out["tree_sitter"] = time.process_time() - started
except ImportError:
    pass
print(json.dumps(out))
"""


def _child(code: str, *args: str, pythonpath: Path = ROOT) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    if code is _BUILD:
        args = (*args, REPO)
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, env=env, cwd=pythonpath, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child failed: {done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def _db_mb(db: Path) -> float:
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6


def _push_tarball(old: Path, new_root: Path, count: int, out: Path) -> list[str]:
    """`old` with `count` changed `.py` files swapped for their new version (seeded)."""
    top = None
    changed: list[str] = []
    with tarfile.open(old, mode="r|*") as archive:
        members = [(m, archive.extractfile(m).read() if m.isfile() else None)  # type: ignore[union-attr]
                   for m in archive]
    for member, data in members:
        if top is None:
            top = member.name.split("/", 1)[0]
        path = member.name.split("/", 1)[-1]
        if data is not None and path.endswith(".py") and path.startswith("vllm/"):
            new = new_root / path
            if new.is_file() and new.read_bytes() != data:
                changed.append(path)
    picked = set(random.Random(26).sample(sorted(changed), min(count, len(changed))))
    with gzip.open(out, "wb", compresslevel=1) as raw, tarfile.open(fileobj=raw, mode="w") as tar:
        for member, data in members:
            path = member.name.split("/", 1)[-1]
            if path in picked:
                data = (new_root / path).read_bytes()
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return sorted(picked)


def _lookups(db: Path, old_root: Path) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from bot.core.facts import ChangedFile, PullRequestFacts
    from bot.core.repo_index.model import FileRecord
    from bot.core.repo_index.parse import parse_python
    from bot.repo_index.lookup import IndexLookup

    lines = []
    lookup = IndexLookup(db)
    for case in json.loads(CASES.read_text()):
        facts = PullRequestFacts(repo=REPO, number=1, base_sha="0.33.0", files=(ChangedFile(
            filename=case["filename"], additions=case["additions"],
            deletions=case["deletions"], patch=case["patch"]),))
        parsed = parse_python(case["filename"], (old_root / case["filename"]).read_bytes())
        assert isinstance(parsed, FileRecord)
        answers = {}
        for how, base in (("re-anchored", None), ("at base", {case["filename"]: parsed})):
            samples = []
            for _ in range(30):
                started = time.perf_counter()
                context = lookup.context(facts, base=base)
                samples.append((time.perf_counter() - started) * 1000)
            assert context is not None
            answers[how] = (context, statistics.median(samples))
        context, ms = answers["at base"]
        found = [f"{len(o.overriders)} overriders of {o.class_name}.{o.method}"
                 for o in context.overrides]
        found += [f"look-alikes {', '.join(s.siblings)}" for s in context.siblings]
        found += [f"{c.function}() {c.call_sites} call sites in {len(c.files)} files, "
                  f"{'breaking: ' + '; '.join(c.reasons) if c.breaking else 'unaffected'}"
                  for c in context.callers]
        # Re-anchored only for its time: the 0.34.0 index already holds each PR's own
        # change, so its answers are not a PR's (tests/core/repo_index/ check those).
        lines.append(f"  {case['name']}: {'; '.join(found) or 'nothing'}; "
                     f"p50 {ms:.1f} ms at base, {answers['re-anchored'][1]:.1f} ms re-anchored")
    lookup.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sdists", type=Path, default=None,
                        help=f"folder of vLLM source releases (default ${sdists.ENV}, else "
                        "the corpus cache's sdists/)")
    parser.add_argument("--before", type=Path, help="an older checkout to build with too")
    parser.add_argument("--push", type=int, default=50, help="changed .py files in the push")
    args = parser.parse_args()
    folder = args.sdists or sdists.sdists_dir()
    old_tar, new_tar = sdists.tarball("0.33.0", folder), sdists.tarball("0.34.0", folder)
    old_root = sdists.release_tree("0.33.0", folder) if old_tar.is_file() else None
    new_root = sdists.release_tree("0.34.0", folder) if new_tar.is_file() else None
    if old_root is None or new_root is None:
        print("bench_index skipped: "
              + sdists.missing_message("0.33.0", "0.34.0", folder=folder))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # Floors around each build: on a shared machine CPU seconds drift with the load,
        # so each build is compared with the floors measured just before and after it.
        floors = [_child(_FLOOR, str(new_tar))]
        builds: list[tuple[str, dict[str, Any]]] = []
        for name, checkout in (("after", ROOT), ("before", args.before)):
            if checkout is None:
                continue
            db = work / f"{name}.db"
            run = _child(_BUILD, str(new_tar), str(db), "3" * 40,
                         pythonpath=checkout.resolve())
            run["db_mb"] = _db_mb(db)
            floors.append(_child(_FLOOR, str(new_tar)))
            run["floor"] = floors[-2:]
            builds.append((name, run))
        first = _child(_BUILD, str(old_tar), str(work / "push.db"), "1" * 40)
        one_gen_mb = _db_mb(work / "push.db")
        picked = _push_tarball(old_tar, new_root, args.push, work / "push.tar.gz")
        pushed = _child(_BUILD, str(work / "push.tar.gz"), str(work / "push.db"), "2" * 40)
        two_gen_mb = _db_mb(work / "push.db")
        lookups = _lookups(work / "after.db", old_root)

    floor = floors[0]
    print(f"tree: vLLM 0.34.0 sdist, {floor['files']:,} .py files; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; every step on one core")
    print("floors (read the tarball / bare ast.parse / tree-sitter parse, s CPU): " + "; ".join(
        f"{f['read']:.1f} / {f['ast']:.1f} / {f.get('tree_sitter', 0):.1f}" for f in floors))
    for name, run in builds:
        ast_s = statistics.mean(f["ast"] for f in run["floor"])
        read_s = statistics.mean(f["read"] for f in run["floor"])
        print(f"full build ({name}): {run['cpu']:.1f} s CPU, {run['wall']:.1f} s wall, "
              f"{run['files']:,} files, peak RSS {run['rss_mb']:.0f} MB, database "
              f"{run['db_mb']:.1f} MB; CPU / ast.parse {run['cpu'] / ast_s:.2f}x, "
              f"/ (read + ast.parse) {run['cpu'] / (read_s + ast_s):.2f}x "
              f"(floors just before and after it)")
    print(f"push: 0.33.0 built in {first['cpu']:.1f} s CPU ({one_gen_mb:.1f} MB); "
          f"{len(picked)} changed .py files -> refresh {pushed['cpu']:.2f} s CPU, "
          f"{pushed['wall']:.1f} s wall; database {one_gen_mb:.1f} -> {two_gen_mb:.1f} MB "
          f"for two generations")
    print("look-ups (0.34.0 index, PRs against 0.33.0):")
    print("\n".join(lookups))


if __name__ == "__main__":
    main()
