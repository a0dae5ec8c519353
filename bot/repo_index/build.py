"""Fill one index generation from a tarball stream or a local directory.

Each file's git blob SHA is computed from its bytes; a file an earlier generation
already read with the same blob is pointed at, not parsed (bot/repo_index/store.py).

Nothing is ever extracted: tar members are read into memory one at a time, and only
regular `.py` files under the cap are. Symlinks, links, devices, absolute paths and
`..` components are skipped and counted, as is every file the parser refuses. A build
that outgrows its limits (archive bytes, members, time) raises `BuildLimit`; the caller
aborts the generation, so a half-built index is never read.
"""

from __future__ import annotations

import os
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from bot.core.repo_index.parse import (
    DEFAULT_MAX_FILE_BYTES,
    Skipped,
    blob_sha,
    parse_python,
)
from bot.repo_index.store import IndexWriter

_CORRUPT = (tarfile.TarError, zlib.error, EOFError, TypeError, ValueError)
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


class BuildLimit(Exception):
    """The archive or the build exceeded a limit; nothing of it is kept."""


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_unpacked_bytes: int = 2 * 1024**3  # sum of member sizes: a gzip bomb stops here
    max_members: int = 300_000
    max_seconds: float = 600.0
    # The child's address space (RLIMIT_AS, bot/repo_index/worker.py). The real vLLM tree
    # builds in ~70 MB; `f()()()…` a million calls deep would take tree-sitter ~300 MB,
    # so text that dense is skipped as too deep before it is parsed
    # (bot/core/repo_index/parse.py).
    max_memory_bytes: int = 512 * 1024**2


@dataclass
class _Budget:
    limits: Limits
    started: float = field(default_factory=time.monotonic)
    unpacked: int = 0
    members: int = 0

    def charge(self, size: int) -> None:
        self.members += 1
        self.unpacked += max(size, 0)
        if self.members > self.limits.max_members:
            raise BuildLimit(f"more than {self.limits.max_members:,} archive members")
        if self.unpacked > self.limits.max_unpacked_bytes:
            raise BuildLimit(f"more than {self.limits.max_unpacked_bytes:,} bytes unpacked")
        if time.monotonic() - self.started > self.limits.max_seconds:
            raise BuildLimit(f"build took longer than {self.limits.max_seconds:.0f} s")


DEFAULT_LIMITS = Limits()


def safe_member_path(name: str, *, strip_top: bool) -> str | None:
    """The repository path of an archive member, or None when it could point anywhere
    else (absolute, `..`, NUL, backslash tricks)."""
    if not name or "\x00" in name or "\\" in name or len(name) > 1024:
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        return None
    parts = [p for p in path.parts if p != "."]
    if strip_top:
        parts = parts[1:]  # GitHub's archives put everything under OWNER-REPO-SHA/
    return "/".join(parts) or None


def _add(writer: IndexWriter, path: str, data: bytes, limits: Limits) -> None:
    # A file whose blob an earlier generation read is not parsed again: a refresh after
    # a push parses only what the push changed.
    blob = blob_sha(data)
    if writer.reuse(path, blob):
        return
    parsed = parse_python(path, data, max_bytes=limits.max_file_bytes, blob=blob)
    if isinstance(parsed, Skipped):
        writer.skip(parsed.reason)
    else:
        writer.add(parsed)


def index_tarball(stream: IO[bytes], writer: IndexWriter, limits: Limits = DEFAULT_LIMITS) -> None:
    """Read a (gzipped) tarball front to back, once; never seeks, never writes a file."""
    budget = _Budget(limits)
    try:
        archive = tarfile.open(fileobj=stream, mode="r|*")  # noqa: SIM115 - closed below
        with archive:
            for member in archive:
                budget.charge(member.size)
                _index_member(archive, member, writer, limits)
    except _CORRUPT as exc:
        # tarfile reports a truncated gzip header as TypeError, bad data as zlib.error.
        raise BuildLimit(f"archive is corrupt: {type(exc).__name__}: {exc}") from None


def _index_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, writer: IndexWriter, limits: Limits
) -> None:
    if not member.name.endswith(".py"):
        return
    path = safe_member_path(member.name, strip_top=True)
    if path is None:
        writer.skip("unsafe-path")
        return
    if member.issym() or member.islnk():
        writer.skip("symlink")
        return
    if not member.isfile():
        writer.skip("not-a-file")
        return
    if member.size > limits.max_file_bytes:
        writer.skip("too-large")  # never read: the stream skips past it
        return
    handle = archive.extractfile(member)
    if handle is None:
        writer.skip("not-a-file")
        return
    _add(writer, path, handle.read(limits.max_file_bytes + 1), limits)


def index_directory(root: Path, writer: IndexWriter, limits: Limits = DEFAULT_LIMITS) -> None:
    """A local checkout: every `.py` file below `root`, symlinks and hidden dirs left out."""
    budget = _Budget(limits)
    for path in python_files(root, writer.skip):
        size = path.stat().st_size
        budget.charge(size)
        relative = path.relative_to(root).as_posix()
        if size > limits.max_file_bytes:
            writer.skip("too-large")
            continue
        try:
            data = path.read_bytes()
        except OSError:
            writer.skip("unreadable")
            continue
        _add(writer, relative, data, limits)


def python_files(root: Path, skip: Callable[[str], None]) -> Iterator[Path]:
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(directory, name)
            if path.is_symlink():
                skip("symlink")
            elif path.is_file():
                yield path
            else:
                skip("not-a-file")
