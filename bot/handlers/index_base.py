"""The PR's changed Python files as they are at its base, for the symbol index: their
lines are then placed exactly, however far the indexed default branch has moved on.

Each file's blob SHA at the base comes from the base's git trees (cached by SHA with the
repository config's reads, bot/handlers/repo_config.py); a record an indexed commit
already read for that blob is taken from the database; only the others are fetched and
parsed, at most `MAX_FETCHED` per job, their blobs cached by SHA like the config's.
Anything that fails leaves that file out: the index then re-anchors its lines
(bot/core/repo_index/locate.py), never an error.
"""

from __future__ import annotations

import asyncio
import logging

from bot.core.facts import PullRequestFacts
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import DEFAULT_MAX_FILE_BYTES, parse_python
from bot.github.protocol import GitHubAPI, GitHubError, NotFound
from bot.handlers.repo_config import Entry, GitObjectCache, GitTreeSource
from bot.repo_index.lookup import IndexLookup

log = logging.getLogger(__name__)

MAX_FILES = 40  # the changed files the index reads (bot/core/repo_index/context.py)
MAX_FETCHED = 10  # blobs fetched and parsed per job; the rest are re-anchored


async def base_records(
    gh: GitHubAPI, lookup: IndexLookup, facts: PullRequestFacts, cache: GitObjectCache
) -> dict[str, FileRecord] | None:
    """path at the base -> its record there, for the changed Python files it could read;
    None when GitHub did not answer (the lines are re-anchored this time, and the part is
    read again later)."""
    if not facts.base_sha:
        return {}
    paths = list(dict.fromkeys(
        f.previous_filename or f.filename for f in facts.files
        if f.filename.endswith(".py") and f.patch and f.status not in ("added", "removed")
    ))[:MAX_FILES]
    if not paths:
        return {}
    source = GitTreeSource(gh, facts.repo, facts.base_sha, cache)
    blobs: dict[str, tuple[str, int | None]] = {}
    try:
        for path in paths:
            directory, _, name = path.rpartition("/")
            entries = await source.entries(directory)
            entry = entries.get(name) if entries else None
            if entry is not None and entry.kind == "blob":
                blobs[path] = (entry.key, entry.size)
        found = await asyncio.to_thread(
            lookup.stored, {path: sha for path, (sha, _) in blobs.items()}
        )
        missing = [p for p in blobs if p not in found][:MAX_FETCHED]
        for path in missing:
            sha, size = blobs[path]
            if size is not None and size > DEFAULT_MAX_FILE_BYTES:
                continue
            # Through the shared cache: the next job on this base fetches it no more.
            data = await source.read(Entry("blob", sha, size))
            parsed = await asyncio.to_thread(parse_python, path, data, blob=sha)
            if isinstance(parsed, FileRecord):
                found[path] = parsed
    except GitHubError as exc:
        log.info("base files for the index not read; lines are re-anchored", extra={
            "repo": facts.repo, "base": facts.base_sha[:7], "error": type(exc).__name__})
        # A base GitHub does not have stays missing; anything else may answer later.
        return {} if isinstance(exc, NotFound) else None
    return found
