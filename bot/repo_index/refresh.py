"""The refresh job: index the default branch's head unless that commit is indexed already.

Runs on the worker side only (a queued `index` job, debounced by the job store), never
on the webhook's ack path. The archive streams from GitHub into `tarfile` on a worker
thread; one build at a time per process, so two repositories never double the memory.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from bot.github.protocol import RepositoryArchive
from bot.repo_index import store
from bot.repo_index.build import DEFAULT_LIMITS, BuildLimit, Limits, index_tarball
from bot.repo_index.pipe import ChunkPipe, ReaderGone

log = logging.getLogger(__name__)

DEFAULT_MAX_TARBALL_BYTES = 300 * 1024 * 1024


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
    ) -> None:
        self._db_path = str(db_path)
        self._max_tarball_bytes = max_tarball_bytes
        self._limits = limits
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
            conn = await asyncio.to_thread(store.connect, self._db_path)
            try:
                return await self._build(source, conn, repo, commit)
            finally:
                conn.close()

    async def _build(
        self, source: RepositoryArchive, conn: sqlite3.Connection, repo: str, commit: str
    ) -> RefreshOutcome:
        writer = await asyncio.to_thread(store.IndexWriter, conn, repo, commit)
        pipe = ChunkPipe()

        def build() -> None:
            try:
                index_tarball(io.BufferedReader(pipe, 1024 * 1024), writer, self._limits)
            finally:
                pipe.abandon()

        builder = asyncio.create_task(asyncio.to_thread(build))
        try:
            await self._download(source, repo, commit, pipe)
            await builder
        except BaseException as exc:
            pipe.fail(exc if isinstance(exc, Exception) else BuildLimit("cancelled"))
            await asyncio.gather(builder, return_exceptions=True)
            await asyncio.to_thread(writer.abort)
            if isinstance(exc, BuildLimit):
                log.warning("index of %s@%s refused: %s", repo, commit[:12], exc)
                return RefreshOutcome("refused", commit, reason=str(exc))
            raise
        generation = await asyncio.to_thread(writer.finish)
        skipped = tuple(sorted(generation.skipped.items()))
        log.info(
            "indexed %s@%s: %d files, skipped %s", repo, commit[:12], generation.files,
            dict(skipped) or "none",
        )
        return RefreshOutcome("built", commit, generation.files, skipped)

    async def _download(
        self, source: RepositoryArchive, repo: str, commit: str, pipe: ChunkPipe
    ) -> None:
        received = 0
        try:
            async with source.tarball(repo, commit) as chunks:
                async for chunk in chunks:
                    received += len(chunk)
                    if received > self._max_tarball_bytes:
                        raise BuildLimit(
                            f"tarball larger than {self._max_tarball_bytes:,} bytes"
                        )
                    await asyncio.to_thread(pipe.feed, chunk)
        except ReaderGone:
            return  # the builder stopped early; awaiting it says why
        pipe.finish()
