"""The refresh job: index the default branch's head unless that commit is indexed already.
A file whose blob an earlier generation read is not parsed again (bot/repo_index/store.py),
so a refresh after a push costs the download and the changed files.

Runs on the worker side only (a queued `index` job, debounced by the job store), never
on the webhook's ack path. The archive streams from GitHub into a size-capped temporary
file next to the database; a child process (`bot.repo_index.worker`) then decompresses
it, parses every file and writes the generation through its own connection. `tarfile`
and the parser hold the GIL for whole calls, so in the service's interpreter they would
delay webhook acks; in a child they cannot. A child that crashes or outlives its wall-time
budget is killed, its generation deleted, and the build refused: the previous generation
stays in use. One build at a time per refresher, so two repositories never double the
memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bot.github.protocol import RepositoryArchive
from bot.repo_index import store, worker
from bot.repo_index.build import DEFAULT_LIMITS, BuildLimit, Limits

log = logging.getLogger(__name__)

DEFAULT_MAX_TARBALL_BYTES = 300 * 1024 * 1024
# Past the build's own time limit (which the child enforces and reports): room for the
# interpreter to start and the last batch to commit before the child is killed.
_WORKER_GRACE_SECONDS = 60.0


@dataclass(frozen=True)
class RefreshOutcome:
    action: str  # built | current | refused
    commit: str
    files: int = 0
    skipped: tuple[tuple[str, int], ...] = ()
    reason: str = ""


class IndexRefresher:
    def __init__(
        self,
        db_path: Path | str,
        *,
        max_tarball_bytes: int = DEFAULT_MAX_TARBALL_BYTES,
        limits: Limits = DEFAULT_LIMITS,
        worker_seconds: float | None = None,
    ) -> None:
        self._db_path = str(db_path)
        self._max_tarball_bytes = max_tarball_bytes
        self._limits = limits
        self._worker_seconds = (
            limits.max_seconds + _WORKER_GRACE_SECONDS if worker_seconds is None
            else worker_seconds
        )
        self._one_at_a_time = asyncio.Lock()

    def indexed_commit(self, repo: str) -> str | None:
        with store.opened(self._db_path) as conn:
            generation = store.latest(conn, repo)
        return generation.commit if generation else None

    async def refresh(
        self, source: RepositoryArchive, repo: str, sha: str | None = None
    ) -> RefreshOutcome:
        async with self._one_at_a_time:
            commit = sha or (await source.default_branch_head(repo)).sha
            if await asyncio.to_thread(self.indexed_commit, repo) == commit:
                return RefreshOutcome("current", commit)
            spool = await asyncio.to_thread(self._spool_file)
            try:
                return await self._build(source, repo, commit, spool)
            finally:
                await asyncio.to_thread(_close_and_delete, spool)

    def _spool_file(self) -> IO[bytes]:
        # Next to the database (a real disk, unlike a tmpfs /tmp); deleted after the build.
        directory = Path(self._db_path).resolve().parent
        return tempfile.NamedTemporaryFile(
            prefix=".index-", suffix=".tar", dir=directory if directory.is_dir() else None,
            delete=False,
        )

    async def _build(
        self, source: RepositoryArchive, repo: str, commit: str, spool: IO[bytes]
    ) -> RefreshOutcome:
        try:
            await self._download(source, repo, commit, spool)
        except BuildLimit as exc:
            return _refused(repo, commit, str(exc))
        gen = await asyncio.to_thread(self._begin, repo, commit)
        try:
            result = await self._run_worker(worker.request(
                db=self._db_path, archive=spool.name, repo=repo, commit=commit, gen=gen,
                limits=self._limits,
            ))
        except BaseException:
            await asyncio.to_thread(self._discard, gen)
            raise
        if "files" not in result:
            await asyncio.to_thread(self._discard, gen)  # the child may have died midway
            return _refused(repo, commit, str(result.get("refused") or result["error"]))
        skipped = tuple(sorted((str(k), int(v)) for k, v in result["skipped"].items()))
        log.info(
            "indexed %s@%s: %d files, skipped %s", repo, commit[:12], result["files"],
            dict(skipped) or "none",
        )
        return RefreshOutcome("built", commit, int(result["files"]), skipped)

    def _begin(self, repo: str, commit: str) -> int:
        with store.opened(self._db_path) as conn:
            return store.begin(conn, repo, commit)

    def _discard(self, gen: int) -> None:
        with store.opened(self._db_path) as conn:
            store.discard(conn, gen)

    async def _download(
        self, source: RepositoryArchive, repo: str, commit: str, spool: IO[bytes]
    ) -> None:
        received = 0
        async with source.tarball(repo, commit) as chunks:
            async for chunk in chunks:
                received += len(chunk)
                if received > self._max_tarball_bytes:
                    raise BuildLimit(f"tarball larger than {self._max_tarball_bytes:,} bytes")
                await asyncio.to_thread(spool.write, chunk)
        await asyncio.to_thread(spool.flush)

    async def _run_worker(self, request: bytes) -> dict[str, Any]:
        """The child's one-line answer; a crash or a timeout becomes `{"error": ...}`."""
        # The child needs no secret: none of the service's settings reach it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.repo_index.worker",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env,
        )
        try:
            out, err = await asyncio.wait_for(
                child.communicate(request), timeout=self._worker_seconds
            )
        except TimeoutError:
            await _kill(child)
            return {"error": f"index worker ran longer than {self._worker_seconds:g} s;"
                             " killed"}
        except BaseException:
            await _kill(child)
            raise
        lines = out.decode(errors="replace").strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else None
        except ValueError:
            answer = None
        if isinstance(answer, dict) and ("files" in answer or "refused" in answer
                                         or "error" in answer):
            return answer
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return {"error": f"index worker exited with code {child.returncode}"
                         f"{': ' + tail[0][:300] if tail[0] else ''}"}


async def _kill(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
    await child.wait()


def _refused(repo: str, commit: str, reason: str) -> RefreshOutcome:
    log.warning("index of %s@%s refused: %s", repo, commit[:12], reason)
    return RefreshOutcome("refused", commit, reason=reason)


def _close_and_delete(spool: IO[bytes]) -> None:
    spool.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(spool.name)
