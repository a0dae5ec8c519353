"""The changed Python files' text at a PR's base, for the writer's packet (issue 41): the
model then reads each changed function whole, not only its hunk.

Blobs come through the repository config's git-object cache (bot/handlers/repo_config.py),
shared with the index's base reads, so a PR's later runs cost no call. A file that cannot
be read is left out: the packet says less, never fails.
"""

from __future__ import annotations

import logging

from bot.core.facts import PullRequestFacts
from bot.core.findings import Digest
from bot.core.writer.packet import MAX_PATCH_FILES, read_first
from bot.github.protocol import GitHubAPI, GitHubError
from bot.handlers.repo_config import GitObjectCache, GitTreeSource

log = logging.getLogger(__name__)

MAX_BASE_BYTES = 512 * 1024  # one file; vLLM's largest Python modules are ~200 kB


async def base_texts(
    gh: GitHubAPI, facts: PullRequestFacts, digest: Digest, cache: GitObjectCache
) -> dict[str, str]:
    """path at the base -> its text, for the read-first files the packet shows patches of."""
    wanted = [f.previous_filename or f.filename
              for f in read_first(digest, facts.files)[:MAX_PATCH_FILES]
              if f.filename.endswith(".py") and f.patch and f.status not in ("added", "removed")]
    if not wanted or not facts.base_sha:
        return {}
    source = GitTreeSource(gh, facts.repo, facts.base_sha, cache)
    texts: dict[str, str] = {}
    try:
        for path in wanted:
            directory, _, name = path.rpartition("/")
            entries = await source.entries(directory)
            entry = entries.get(name) if entries else None
            if entry is None or entry.kind != "blob" or (entry.size or 0) > MAX_BASE_BYTES:
                continue
            texts[path] = (await source.read(entry)).decode("utf-8", "replace")
    except GitHubError as exc:
        # The packet is then the one without (some) base source: another key, still cached.
        log.info("base files for the writer not read", extra={
            "repo": facts.repo, "base": facts.base_sha[:7], "error": type(exc).__name__})
    return texts
