"""The index build's child process: a crash or a wall-time overrun kills it, deletes its
half-built generation and refuses the build; the previous generation stays in use and
the spooled archive is deleted."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from bench.bench_index_ack import big_module
from bench.bench_index_ack import tree_tarball as big_tarball
from bot.repo_index import store, worker
from bot.repo_index.build import Limits
from bot.repo_index.refresh import IndexRefresher
from tests.repo_index_tarballs import BytesArchive, members_tarball, tree_tarball
from tests.repo_index_tree import TREE

REPO = "vllm-project/vllm"
OLD, NEW = "1" * 40, "2" * 40

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _workers() -> list[int]:
    """Our live child processes running the index worker."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        state = stat.rsplit(")", 1)[1].split()[0]
        if parent == os.getpid() and state != "Z" and b"bot.repo_index.worker" in cmdline:
            found.append(int(entry.name))
    return found


async def _indexed_then(db: Path) -> IndexRefresher:
    refresher = IndexRefresher(db)
    built = await refresher.refresh(BytesArchive(tree_tarball(TREE), sha=OLD), REPO)
    assert built.action == "built"
    return refresher


def _assert_only_the_old_generation(db: Path, tmp_path: Path) -> None:
    with store.opened(db) as conn:
        assert [(g.commit, g.state) for g in store.generations(conn, REPO)] == [(OLD, "ready")]
    assert IndexRefresher(db).indexed_commit(REPO) == OLD
    assert _workers() == []
    # The spooled archive is gone: only the database's own files remain.
    assert [n for n in os.listdir(tmp_path) if not n.startswith("index.db")] == []


async def test_a_worker_over_its_wall_time_is_killed_and_the_old_index_stays(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.db"
    await _indexed_then(db)
    data, _ = big_tarball(small=0, big=2)  # two ~1.8 MB modules: seconds of ast.parse
    slow = IndexRefresher(db, worker_seconds=0.5)
    started = time.monotonic()
    outcome = await slow.refresh(BytesArchive(data, sha=NEW), REPO)
    assert outcome.action == "refused"
    assert outcome.reason == "index worker ran longer than 0.5 s; killed"
    assert time.monotonic() - started < 30
    _assert_only_the_old_generation(db, tmp_path)


async def test_a_worker_that_dies_midway_refuses_the_build(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    refresher = await _indexed_then(db)
    data, _ = big_tarball(small=0, big=2)
    build = asyncio.create_task(refresher.refresh(BytesArchive(data, sha=NEW), REPO))
    deadline = time.monotonic() + 30
    while not (pids := _workers()):
        assert time.monotonic() < deadline, "the worker never started"
        await asyncio.sleep(0.02)
    os.kill(pids[0], signal.SIGKILL)
    outcome = await build
    assert outcome.action == "refused"
    assert outcome.reason.startswith(f"index worker exited with code {-signal.SIGKILL}")
    _assert_only_the_old_generation(db, tmp_path)


async def test_a_cancelled_build_kills_its_worker(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    refresher = await _indexed_then(db)
    data, _ = big_tarball(small=0, big=2)
    build = asyncio.create_task(refresher.refresh(BytesArchive(data, sha=NEW), REPO))
    deadline = time.monotonic() + 30
    while not _workers():
        assert time.monotonic() < deadline, "the worker never started"
        await asyncio.sleep(0.02)
    build.cancel()
    with pytest.raises(asyncio.CancelledError):
        await build
    _assert_only_the_old_generation(db, tmp_path)


def _child_build(tmp_path: Path, data: bytes, limits: Limits) -> tuple[dict[str, object], int]:
    """Run the index child on `data` as the refresher does; (its answer, its peak RSS)."""
    archive = tmp_path / "archive.tar.gz"
    archive.write_bytes(data)
    db = tmp_path / "index.db"
    with store.opened(db) as conn:
        gen = store.begin(conn, REPO, NEW)
    # Linux carries a process's peak RSS across fork and exec: a child forked straight
    # from this (by now large) test process would report the test's own peak. A small
    # launcher forks the worker instead and reports the worker's peak alone.
    launcher = subprocess.run(
        [sys.executable, "-c", _LAUNCHER],
        input=worker.request(db=str(db), archive=str(archive), repo=REPO,
                             commit=NEW, gen=gen, limits=limits),
        capture_output=True, check=True, timeout=600,
    )
    *answer_lines, peak = launcher.stdout.decode().strip().splitlines()
    return json.loads(answer_lines[-1]), int(peak)


_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, "-m", "bot.repo_index.worker"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
child.stdin.write(sys.stdin.buffer.read())
child.stdin.close()
out = child.stdout.read().decode()
_, _, usage = os.wait4(child.pid, 0)
child.returncode = 0
print(out.strip())
print(usage.ru_maxrss * 1024)
"""


def test_a_deeply_nested_file_cannot_swell_the_index_child(tmp_path: Path) -> None:
    """Issue 32, item 4: `f()()()…` a million calls deep took the child to ~667 MB of RSS
    before ast.parse gave up. Under its address-space cap the file fails its own parse
    (skipped as too deep) and the rest of the tree is indexed, a generated module just
    under the per-file cap (~330 MB to parse) included."""
    deep = ("x = f" + "()" * 1_000_000 + "\n").encode()
    members: list[tarfile.TarInfo | tuple[str, bytes]] = [
        ("vllm/deep.py", deep),
        ("vllm/ok.py", b"def fine(a, b=1):\n    return a\n"),
        ("vllm/generated/big0.py", big_module(0).encode()),
    ]
    answer, peak = _child_build(tmp_path, members_tarball(members), Limits())
    assert answer.get("files") == 2, answer
    assert answer["skipped"] == {"too-deep": 1}
    assert peak <= Limits().max_memory_bytes, peak
    with store.opened(tmp_path / "index.db") as conn:
        assert [g.state for g in store.generations(conn, REPO)] == ["ready"]
