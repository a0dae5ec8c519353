"""Tarballs shaped like GitHub's (everything under OWNER-REPO-SHA/), built in memory."""

from __future__ import annotations

import io
import tarfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.github.protocol import BranchHead

TOP = "vllm-project-vllm-abc1234"


def tree_tarball(root: Path, top: str = TOP) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname=f"{top}/{path.relative_to(root).as_posix()}",
                        recursive=False)
    return buffer.getvalue()


def members_tarball(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class BytesArchive:
    """A RepositoryArchive serving one tarball from memory, in small chunks."""

    def __init__(self, data: bytes, sha: str = "a" * 40, chunk: int = 64 * 1024) -> None:
        self.data = data
        self.sha = sha
        self.chunk = chunk
        self.downloads = 0

    async def default_branch_head(self, repo: str) -> BranchHead:
        return BranchHead(branch="main", sha=self.sha)

    @asynccontextmanager
    async def tarball(self, repo: str, sha: str) -> AsyncIterator[AsyncIterator[bytes]]:
        self.downloads += 1

        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, len(self.data), self.chunk):
                yield self.data[start:start + self.chunk]

        yield chunks()
