"""The symbol index on a vLLM-sized tree: build time on one core, peak RSS, database
growth, and what the look-ups add to a digest.

Run: python -m bench.bench_index
No vLLM checkout is available offline, so the tree is synthetic (bench/index_tree.py,
~2,500 files, ~600k lines) and served as a GitHub-shaped tarball. The build runs in a
child process pinned to one core, so its peak RSS is the build's own; it streams the
tarball through the production path (IndexRefresher -> temp file -> the worker process,
`tarfile` -> `ast` -> SQLite; the worker's CPU and RSS are counted in). The floor, in
the same run: decompressing the archive and `ast.parse` of every file with nothing
stored — what any AST index must pay.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bench.index_tree import tarball
from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.github.protocol import BranchHead
from bot.repo_index.lookup import IndexLookup
from bot.repo_index.refresh import IndexRefresher
from bot.rulebook.files import load_rules

REPO = "vllm-project/vllm"
SHA = "0123456789abcdef0123456789abcdef01234567"
RULES_DIR = Path(__file__).resolve().parent.parent / "rules"


class FileArchive:
    """The tarball from a file, in 64 kB chunks, as the adapter streams GitHub's."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def default_branch_head(self, repo: str) -> BranchHead:
        return BranchHead(branch="main", sha=SHA)

    @asynccontextmanager
    async def tarball(self, repo: str, sha: str) -> AsyncIterator[AsyncIterator[bytes]]:
        async def chunks() -> AsyncIterator[bytes]:
            with self.path.open("rb") as handle:
                while chunk := handle.read(64 * 1024):
                    yield chunk

        yield chunks()


def _db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(archive: Path, db: Path) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    before = _db_bytes(db)
    wall, cpu = time.perf_counter(), time.process_time() + _children_cpu()
    outcome = asyncio.run(IndexRefresher(db).refresh(FileArchive(archive), REPO))
    wall, cpu = time.perf_counter() - wall, time.process_time() + _children_cpu() - cpu
    print(json.dumps({
        "action": outcome.action, "files": outcome.files, "skipped": dict(outcome.skipped),
        "wall": wall, "cpu": cpu,
        # The parse runs in the worker (a child of this process): the larger peak is it.
        "rss_mb": max(resource.getrusage(who).ru_maxrss
                      for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) / 1024,
        "db_before": before, "db_after": _db_bytes(db),
    }))


def floor(data: bytes) -> tuple[float, float]:
    """(wall, CPU) seconds to gunzip the archive and `ast.parse` every file, nothing kept."""
    wall, cpu = time.perf_counter(), time.process_time()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz") as archive:
        for member in archive:
            handle = archive.extractfile(member)
            if handle is not None and member.name.endswith(".py"):
                ast.parse(handle.read())
    return time.perf_counter() - wall, time.process_time() - cpu


def _pr() -> PullRequestFacts:
    return PullRequestFacts(repo=REPO, number=1, title="[Multimodal] base processor fix", files=(
        ChangedFile(filename="vllm/multimodal/processing.py", additions=2, deletions=1,
                    patch="@@ -5,4 +5,5 @@ class BaseMultiModalProcessor:\n"
                          "     @abstractmethod\n"
                          "     def _get_prompt_updates(self, mm_items, kwargs, out):\n"
                          "-        raise NotImplementedError\n"
                          "+        # every override must handle audio in video\n"
                          "+        raise NotImplementedError\n"),
        ChangedFile(filename="vllm/utils/util7.py", additions=1, deletions=1,
                    patch="@@ -21,3 +21,3 @@\n"
                          "-def util7_helper0(inputs, scale=1, *, strict=False):\n"
                          "+def util7_helper0(inputs, scale=1, *, strict=True):\n"
                          "     value = inputs\n"),
        ChangedFile(filename="vllm/model_executor/layers/part3.py", additions=1, deletions=1,
                    patch="@@ -40,3 +40,3 @@ def _checked_op1(self, inputs, config=None):\n"
                          "     value = inputs\n-    value = 1\n+    value = 2\n"),
    ))


def main() -> None:
    started = time.perf_counter()
    data, count, lines = tarball()
    generated = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        archive, db = Path(tmp) / "vllm.tar.gz", Path(tmp) / "bench.db"
        archive.write_bytes(data)
        out = subprocess.run(
            [sys.executable, "-m", "bench.bench_index", "--child", str(archive), str(db)],
            check=True, capture_output=True, text=True,
        ).stdout
        built = json.loads(out.strip().splitlines()[-1])
        floor_wall, floor_cpu = floor(data)

        facts = _pr()
        rules = load_rules(RULES_DIR)
        lookup = IndexLookup(db)
        first = time.perf_counter()
        context = lookup.context(facts)
        first_ms = (time.perf_counter() - first) * 1000
        samples, cpu_samples = [], []
        for _ in range(200):
            t, c = time.perf_counter(), time.thread_time()
            lookup.context(facts)
            samples.append((time.perf_counter() - t) * 1000)
            cpu_samples.append((time.thread_time() - c) * 1000)
        digests = []
        for _ in range(50):
            t = time.perf_counter()
            build_digest(facts, rules, "en")
            digests.append((time.perf_counter() - t) * 1000)
        lookup.close()

    print(f"tree: {count:,} files, {lines:,} lines, tarball {len(data) / 1e6:.1f} MB "
          f"(synthetic, generated in {generated:.1f} s)")
    print(f"build (one core, child process): {built['wall']:.1f} s wall, "
          f"{built['cpu']:.1f} s CPU; {built['files']:,} files indexed, "
          f"skipped {built['skipped'] or 'none'}")
    print(f"floor (gunzip + ast.parse only, same run): {floor_wall:.1f} s wall, "
          f"{floor_cpu:.1f} s CPU -> build/floor CPU {built['cpu'] / floor_cpu:.2f}x")
    print(f"peak RSS of the build process: {built['rss_mb']:.0f} MB")
    print(f"database: {built['db_before']:,} -> {built['db_after']:,} bytes "
          f"(+{(built['db_after'] - built['db_before']) / 1e6:.1f} MB)")
    assert context is not None
    print(f"findings: {len(context.siblings)} sibling, {len(context.overrides)} override "
          f"({len(context.overrides[0].overriders) if context.overrides else 0} overriders), "
          f"{len(context.callers)} caller line(s) "
          f"({context.callers[0].call_sites if context.callers else 0} call sites)")
    q = statistics.quantiles(samples, n=100)
    print(f"index look-ups per digest: first {first_ms:.1f} ms (opens the connection); then "
          f"p50 {statistics.median(samples):.2f} ms, p99 {q[98]:.2f} ms, "
          f"max {max(samples):.2f} ms; CPU p50 {statistics.median(cpu_samples):.2f} ms")
    print(f"baseline, build_digest without the index (same run): "
          f"p50 {statistics.median(digests):.2f} ms")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
