"""Dry-run: every read goes to GitHub, every write is recorded instead of executed."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.core.facts import ChangedFile
from bot.github.protocol import (
    CheckRun,
    CombinedStatus,
    GitHubAPI,
    IssueComment,
    IssueSummary,
    Permission,
    PullRequest,
    ReactionContent,
    Review,
    ReviewComment,
    TreeEntry,
)

log = logging.getLogger(__name__)
PREVIEW_LOG_LINES = 4


@dataclass(frozen=True)
class RecordedWrite:
    repo: str
    number: int | None
    action: str  # create_comment, update_comment, add_labels, request_reviewers, ...
    detail: str  # the comment body, the labels, the reviewers


WriteSink = Callable[[RecordedWrite], Awaitable[None]]


class DryRunGitHub:
    """Wraps a GitHubAPI; writes go to `sink` (logged and stored), never to GitHub."""

    # Negative ids cannot collide with GitHub's comment ids.
    _ids = itertools.count(-1, -1)

    def __init__(self, inner: GitHubAPI, sink: WriteSink, bot_login: str) -> None:
        self._inner = inner
        self._sink = sink
        self._bot_login = bot_login
        # update/delete name only a comment id: remember which PR listed it, so the
        # stored preview can be found by PR (`digest-bot previews --pr N`).
        self._comment_pr: dict[int, int] = {}

    async def _record(self, repo: str, number: int | None, action: str, detail: str) -> None:
        # The first lines of a would-be comment, so the log shows what it would say;
        # the whole text is stored (`digest-bot previews`).
        preview = "\n".join(detail.splitlines()[:PREVIEW_LOG_LINES])
        log.info(
            "dry-run: would %s%s%s", action,
            f" on {repo}#{number}" if number is not None else f" on {repo}",
            f":\n{preview}" if preview else "",
            extra={"repo": repo, "pr": number, "chars": len(detail)},
        )
        await self._sink(RecordedWrite(repo, number, action, detail))

    async def get_pull(self, repo: str, number: int) -> PullRequest:
        return await self._inner.get_pull(repo, number)

    async def list_files(self, repo: str, number: int) -> list[ChangedFile]:
        return await self._inner.list_files(repo, number)

    async def list_comments(self, repo: str, number: int) -> list[IssueComment]:
        comments = await self._inner.list_comments(repo, number)
        for comment in comments:
            self._comment_pr[comment.id] = number
        return comments

    async def list_reviews(self, repo: str, number: int) -> list[Review]:
        return await self._inner.list_reviews(repo, number)

    async def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        return await self._inner.list_review_comments(repo, number)

    async def get_issue(self, repo: str, number: int) -> IssueSummary:
        return await self._inner.get_issue(repo, number)

    async def commits_ahead(self, repo: str, base: str, head: str) -> int:
        return await self._inner.commits_ahead(repo, base, head)

    async def create_comment(self, repo: str, number: int, body: str) -> IssueComment:
        await self._record(repo, number, "create_comment", body)
        return IssueComment(id=next(self._ids), author=self._bot_login, body=body)

    async def update_comment(self, repo: str, comment_id: int, body: str) -> None:
        pr = self._comment_pr.get(comment_id)
        await self._record(repo, pr, f"update_comment {comment_id}", body)

    async def delete_comment(self, repo: str, comment_id: int) -> None:
        pr = self._comment_pr.get(comment_id)
        await self._record(repo, pr, f"delete_comment {comment_id}", "")

    async def add_reaction(self, repo: str, comment_id: int, content: ReactionContent) -> None:
        pr = self._comment_pr.get(comment_id)
        await self._record(repo, pr, f"add_reaction {comment_id}", content)

    async def list_check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        return await self._inner.list_check_runs(repo, sha, name)

    async def create_check_run(
        self, repo: str, sha: str, name: str, title: str, summary: str
    ) -> CheckRun:
        await self._record(repo, None, f"create_check_run {name} on {sha[:12]}", summary)
        return CheckRun(id=next(self._ids), name=name, head_sha=sha, title=title,
                        summary=summary)

    async def update_check_run(
        self, repo: str, check_run_id: int, title: str, summary: str
    ) -> None:
        await self._record(repo, None, f"update_check_run {check_run_id}", summary)

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        await self._record(repo, number, "add_labels", ", ".join(labels))

    async def remove_label(self, repo: str, number: int, label: str) -> None:
        await self._record(repo, number, "remove_label", label)

    async def request_reviewers(
        self, repo: str, number: int, users: list[str], teams: list[str]
    ) -> None:
        await self._record(repo, number, "request_reviewers", ", ".join([*users, *teams]))

    async def list_reviewers_who_reviewed(self, repo: str, number: int) -> list[str]:
        return await self._inner.list_reviewers_who_reviewed(repo, number)

    async def get_permission(self, repo: str, user: str) -> Permission:
        return await self._inner.get_permission(repo, user)

    async def get_default_branch_file(self, repo: str, path: str) -> str | None:
        return await self._inner.get_default_branch_file(repo, path)

    async def list_open_pulls(self, repo: str, limit: int = 100) -> list[PullRequest]:
        return await self._inner.list_open_pulls(repo, limit)

    async def get_tree(self, repo: str, sha: str) -> list[TreeEntry]:
        return await self._inner.get_tree(repo, sha)

    async def get_blob(self, repo: str, sha: str) -> bytes:
        return await self._inner.get_blob(repo, sha)

    async def get_combined_status(
        self, repo: str, ref: str, *, max_pages: int = 3
    ) -> CombinedStatus:
        return await self._inner.get_combined_status(repo, ref, max_pages=max_pages)

    async def list_pulls_for_commit(self, repo: str, sha: str) -> list[PullRequest]:
        return await self._inner.list_pulls_for_commit(repo, sha)
