"""Read the repository's own config files at a PR's base commit, cheaply and never fatally.

One walk (`read_config_files`) over two sources: the git trees and blobs of a commit
through GitHub (`GitTreeSource`), or a checkout on disk (`DirectorySource`, for
`digest-bot digest --repo-dir`). Git objects are immutable, so trees and blobs are
cached by SHA across jobs: on a warm cache a new base commit costs one call (its root
tree); an unchanged `.github/` or `.buildkite/` folder keeps its tree SHA and costs
nothing more. A call that fails degrades that file to a problem note; the digest goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from cachetools import LRUCache, TTLCache

from bot.core.repo_config.config import RepoConfig, read_repo_config
from bot.core.repo_config.files import (
    CI_CONFIG_PATHS,
    CODEOWNERS_PATHS,
    JOB_FILE_SUFFIXES,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_JOB_DEPTH,
    MAX_TOTAL_BYTES,
    MERGIFY_PATHS,
    TEMPLATE_PATHS,
    ConfigFiles,
    decode,
    job_dirs,
)
from bot.github.protocol import GitHubAPI, GitHubError, NotFound

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Entry:
    kind: str  # "blob" | "tree"
    key: str  # the object's SHA, or its path on disk
    size: int | None = None


class TreeSource(Protocol):
    async def entries(self, directory: str) -> dict[str, Entry] | None:
        """name -> entry of one directory ("" is the root); None when it is absent."""
        ...

    async def read(self, entry: Entry) -> bytes: ...


@dataclass
class GitObjectCache:
    """Trees and blobs by SHA, shared by every job of the process (bounded)."""

    trees: LRUCache[str, dict[str, Entry]] = field(
        default_factory=lambda: LRUCache(maxsize=2_000))
    blobs: LRUCache[str, bytes] = field(
        default_factory=lambda: LRUCache(maxsize=64 * 1024 * 1024, getsizeof=len))
    # A SHA GitHub said it does not have. Kept briefly, not for good: a base pushed a
    # moment ago can 404 until GitHub's replicas catch up, but a test repository or a
    # fork without the commit must not cost a call on every job of the PR.
    missing: TTLCache[tuple[str, str], bool] = field(
        default_factory=lambda: TTLCache(maxsize=1_000, ttl=600))


class GitTreeSource:
    """A commit's files through the trees and blobs API, cached by object SHA."""

    def __init__(self, gh: GitHubAPI, repo: str, commit: str, cache: GitObjectCache) -> None:
        self._gh, self._repo, self._commit, self._cache = gh, repo, commit, cache
        self.calls = 0

    async def _tree(self, sha: str) -> dict[str, Entry]:
        cached = self._cache.trees.get(sha)
        if cached is not None:
            return cached
        if (self._repo, sha) in self._cache.missing:
            raise NotFound(f"tree {sha} not found (remembered)", status=404)
        self.calls += 1
        try:
            listed = await self._gh.get_tree(self._repo, sha)
        except NotFound:
            self._cache.missing[(self._repo, sha)] = True
            raise
        tree = {e.path: Entry(e.type, e.sha, e.size) for e in listed}
        self._cache.trees[sha] = tree
        return tree

    async def entries(self, directory: str) -> dict[str, Entry] | None:
        tree = await self._tree(self._commit)
        for part in filter(None, directory.split("/")):
            entry = tree.get(part)
            if entry is None or entry.kind != "tree":
                return None
            tree = await self._tree(entry.key)
        return tree

    async def read(self, entry: Entry) -> bytes:
        cached = self._cache.blobs.get(entry.key)
        if cached is not None:
            return cached
        self.calls += 1
        data = await self._gh.get_blob(self._repo, entry.key)
        if len(data) <= MAX_FILE_BYTES:
            self._cache.blobs[entry.key] = data
        return data


class DirectorySource:
    """A checkout (or an unpacked sdist) on disk. Symlinks are not followed out of it."""

    def __init__(self, root: Path) -> None:
        self._root = root.resolve()

    async def entries(self, directory: str) -> dict[str, Entry] | None:
        return await asyncio.to_thread(self._entries, directory)

    async def read(self, entry: Entry) -> bytes:
        return await asyncio.to_thread(self._read, entry)

    def _entries(self, directory: str) -> dict[str, Entry] | None:
        path = (self._root / directory).resolve()
        if not path.is_relative_to(self._root) or not path.is_dir():
            return None
        found: dict[str, Entry] = {}
        with os.scandir(path) as listing:
            for item in listing:
                real = Path(item.path).resolve()
                if not real.is_relative_to(self._root):
                    continue
                if real.is_dir():
                    found[item.name] = Entry("tree", str(real))
                elif real.is_file():
                    found[item.name] = Entry("blob", str(real), real.stat().st_size)
        return found

    def _read(self, entry: Entry) -> bytes:
        with Path(entry.key).open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)


class _ReadFailed(Exception):
    def __init__(self, path: str, cause: Exception) -> None:
        super().__init__(path)
        self.path, self.cause = path, cause


@dataclass
class _Walk:
    source: TreeSource
    texts: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    total: int = 0

    async def read_file(self, path: str) -> bool:
        try:
            return await self._read_file(path)
        except (GitHubError, OSError) as exc:
            raise _ReadFailed(path, exc) from exc

    async def _read_file(self, path: str) -> bool:
        if path in self.texts:  # two pipelines may share a job dir
            return True
        directory, _, name = path.rpartition("/")
        listing = await self.source.entries(directory)
        entry = listing.get(name) if listing else None
        if entry is None or entry.kind != "blob":
            return False
        if len(self.texts) >= MAX_FILES or self.total >= MAX_TOTAL_BYTES:
            self.problems.append(f"{path}: over the {MAX_FILES}-file config budget; skipped")
            return True
        if entry.size is not None and entry.size > MAX_FILE_BYTES:
            self.problems.append(
                f"{path}: {entry.size:,} bytes, over the {MAX_FILE_BYTES:,}-byte cap; skipped")
            return True
        text, problem = decode(path, await self.source.read(entry))
        if text is None:
            self.problems.append(problem)
        else:
            self.texts[path] = text
            self.total += len(text)
        return True

    async def first_of(self, paths: tuple[str, ...]) -> None:
        for path in paths:
            if await self.read_file(path):
                return

    async def job_files(self, config: str) -> None:
        """A CI config and the job files of its `job_dirs`; an absent config reads nothing."""
        if not await self.read_file(config) or config not in self.texts:
            return
        problem, dirs = job_dirs(self.texts[config], config)
        if problem:
            self.problems.append(problem)
        for directory in dirs:
            if await self.source.entries(directory) is None:
                self.problems.append(f"{config}: job dir {directory} is missing")
                continue
            await self._job_dir(directory, 0)

    async def _job_dir(self, directory: str, depth: int) -> None:
        """The job files under `directory` at any depth, as the generator's os.walk
        finds them; bounded by MAX_JOB_DEPTH and the file budget."""
        listing = await self.source.entries(directory) or {}
        for name in sorted(listing):
            path = f"{directory}/{name}"
            if listing[name].kind == "blob" and name.endswith(JOB_FILE_SUFFIXES):
                await self.read_file(path)
            elif listing[name].kind == "tree":
                if depth + 1 > MAX_JOB_DEPTH:
                    self.problems.append(f"{path}: deeper than {MAX_JOB_DEPTH} levels; skipped")
                else:
                    await self._job_dir(path, depth + 1)


async def read_config_files(source: TreeSource, label: str) -> ConfigFiles:
    """Every config file the digest reads, from `source`. Never raises for GitHub's
    errors: what could not be read is a problem line, and the rest is kept."""
    walk = _Walk(source)
    try:
        if await source.entries("") is None:
            return ConfigFiles(source=label, problems=(f"{label}: no such commit or folder",))
    except (GitHubError, OSError) as exc:
        return ConfigFiles(source=label, problems=(f"{label}: could not be read ({_why(exc)})",),
                           unread=_transient(exc))
    unread = False
    for paths in (CODEOWNERS_PATHS, MERGIFY_PATHS, TEMPLATE_PATHS):
        try:
            await walk.first_of(paths)
        except _ReadFailed as failed:
            walk.problems.append(f"{failed.path}: could not be read ({_why(failed.cause)})")
            unread = unread or _transient(failed.cause)
    for config in CI_CONFIG_PATHS:  # each pipeline apart: one failing keeps the other
        try:
            await walk.job_files(config)
        except _ReadFailed as failed:
            walk.problems.append(f"{failed.path}: could not be read ({_why(failed.cause)})")
            unread = unread or _transient(failed.cause)
    return ConfigFiles(source=label, texts=walk.texts, problems=tuple(walk.problems),
                       unread=unread)


def _transient(exc: Exception) -> bool:
    """GitHub failed to answer: a later read may succeed. Not a 404 (a commit GitHub
    does not have stays missing; `GitObjectCache.missing` remembers it) nor a disk error."""
    return isinstance(exc, GitHubError) and not isinstance(exc, NotFound)


def _why(exc: Exception) -> str:
    if isinstance(exc, NotFound):
        return "not found"
    status = getattr(exc, "status", 0)
    return f"HTTP {status}" if status else type(exc).__name__


async def config_at_base(
    gh: GitHubAPI, repo: str, base_sha: str, cache: GitObjectCache
) -> tuple[ConfigFiles | None, int]:
    """The config files at `base_sha` and the GitHub calls it took; None without a base."""
    if not base_sha:
        return None, 0
    source = GitTreeSource(gh, repo, base_sha, cache)
    files = await read_config_files(source, f"base {base_sha[:7]}")
    if files.problems:
        log.info("repository config read with problems", extra={
            "repo": repo, "base": base_sha[:7], "problems": len(files.problems)})
    return files, source.calls


@dataclass
class RepoConfigCache:
    """Per process: git objects by SHA, and parsed configs by their files' content, so a
    new base whose config files did not change costs neither a read nor a parse."""

    objects: GitObjectCache = field(default_factory=GitObjectCache)
    parsed: LRUCache[str, RepoConfig] = field(default_factory=lambda: LRUCache(maxsize=32))
    # (repo, CODEOWNERS rules) whose routing pools were already checked: warn once each.
    pools_checked: LRUCache[tuple[str, int], bool] = field(
        default_factory=lambda: LRUCache(maxsize=256))


def _content_key(files: ConfigFiles) -> str:
    digest = hashlib.sha256()
    for path in sorted(files.texts):
        for part in (path, files.texts[path]):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
    for problem in files.problems:
        digest.update(problem.encode("utf-8", "surrogatepass") + b"\1")
    return digest.hexdigest()


async def parsed_config(files: ConfigFiles, cache: RepoConfigCache) -> RepoConfig:
    """`files` parsed (off the event loop: the pipeline's YAML takes ~0.1 s), or the
    parse of the same content kept from an earlier base."""
    key = _content_key(files)
    found = cache.parsed.get(key)
    if found is None:
        found = await asyncio.to_thread(read_repo_config, files)
        cache.parsed[key] = found
    return replace(found, source=files.source)


async def repo_config_at_base(
    gh: GitHubAPI, repo: str, base_sha: str, cache: RepoConfigCache
) -> RepoConfig | None:
    """The repository's config at the PR's base; None without a base. Never raises for
    GitHub's answers: a file that could not be read is a problem line in the result."""
    files, _ = await config_at_base(gh, repo, base_sha, cache.objects)
    if files is None:
        return None
    return await parsed_config(files, cache)
