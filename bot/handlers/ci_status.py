"""Read the PR head's commit statuses for the CI pipeline's context, never fatally.

One call per 100 contexts (GitHub's combined status, the newest status per context):
vLLM's PR build posts one per job that runs, ~100, so one or two calls per job. Check
runs are not read: vLLM's Buildkite reports through commit statuses, and its check
runs are GitHub Actions (pre-commit, labelling), which are not pipeline steps.
A failed call is a problem in the result (the digest says the statuses could not be
read); the rest of the digest goes on, like the repository's config
(bot/handlers/repo_config.py).
"""

from __future__ import annotations

import logging

from bot.core.facts import HeadStatuses
from bot.core.repo_config.config import RepoConfig
from bot.github.protocol import GitHubAPI, GitHubError, NotFound

log = logging.getLogger(__name__)
NOT_FOUND = "not found"  # the head GitHub does not have: re-reading will not help
MAX_PAGES = 3  # 300 contexts; beyond that, what was not read is "unknown", never "not run"


def wants_statuses(config: RepoConfig | None, context: str) -> bool:
    """Only a base with a CI pipeline gives the statuses a meaning: elsewhere no call."""
    return bool(context) and config is not None and config.pipeline is not None and bool(
        config.pipeline.steps)


async def head_statuses(gh: GitHubAPI, repo: str, head_sha: str,
                        context: str) -> HeadStatuses | None:
    """The head's statuses for `context`; None without a head. Never raises for
    GitHub's answers: a failed read is `problem` ("HTTP 502")."""
    if not head_sha or not context:
        return None
    try:
        combined = await gh.get_combined_status(repo, head_sha, max_pages=MAX_PAGES)
    except GitHubError as exc:
        why = NOT_FOUND if isinstance(exc, NotFound) else (
            f"HTTP {exc.status}" if exc.status else "no answer")
        log.info("head statuses unavailable: %s", exc,
                 extra={"repo": repo, "head": head_sha[:7], "status": exc.status})
        return HeadStatuses(context=context, problem=why)
    return HeadStatuses(context=context, statuses=combined.statuses,
                        complete=combined.complete)
