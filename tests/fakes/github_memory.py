"""`MemoryGitHub`: the shared in-memory `GitHubAPI` for handler tests.

It acts directly on a `FakeGitHubState`, honours the same injected faults and
limits as the HTTP fake, and raises the protocol's exceptions. It sits below any
retry policy: a fault injected here reaches the caller, which is the point.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any, TypeVar, cast

from bot.core.facts import ChangedFile, CommitStatus
from bot.github.protocol import (
    CheckRun,
    CombinedStatus,
    GitHubError,
    IssueComment,
    IssueSummary,
    NotFound,
    Permission,
    PullRequest,
    RateLimited,
    ReactionContent,
    Review,
    ReviewComment,
    TreeEntry,
    Unprocessable,
)
from tests.fakes.github_state import (
    FakeCheckRun,
    FakeComment,
    FakeGitHubState,
    FakeHTTPError,
    FakePull,
    FakeReview,
    FakeReviewComment,
)

T = TypeVar("T")


def pull_to_protocol(pull: FakePull, *, private: bool = False) -> PullRequest:
    return PullRequest(
        repo=pull.repo, number=pull.number, title=pull.title, body=pull.body,
        author=pull.author, author_is_bot=pull.author_type == "Bot",
        labels=tuple(pull.labels), base_ref=pull.base, head_sha=pull.head_sha,
        base_sha=pull.base_sha,
        draft=pull.draft, state=pull.state, merged=pull.merged,
        changed_files=len(pull.files), additions=pull.additions, deletions=pull.deletions,
        requested_users=tuple(pull.requested_users),
        requested_teams=tuple(pull.requested_teams), updated_at=pull.updated_at,
        created_at=pull.created_at,
        html_url=f"https://github.com/{pull.repo}/pull/{pull.number}", private=private,
        mergeable_state=pull.mergeable_state,
    )


def check_run_to_protocol(run: FakeCheckRun) -> CheckRun:
    return CheckRun(id=run.id, name=run.name, head_sha=run.head_sha, app_slug=run.app_slug,
                    title=run.title, summary=run.summary)


def _is_bot(login: str, user_type: str) -> bool:
    return user_type == "Bot" or login.endswith("[bot]")


def comment_to_protocol(comment: FakeComment) -> IssueComment:
    return IssueComment(id=comment.id, author=comment.author, body=comment.body,
                        created_at=comment.created_at,
                        author_is_bot=_is_bot(comment.author, comment.author_type))


def review_to_protocol(review: FakeReview) -> Review:
    return Review(id=review.id, author=review.login,
                  author_is_bot=_is_bot(review.login, review.author_type), state=review.state,
                  body=review.body, submitted_at=review.submitted_at,
                  commit_id=review.commit_id)


def review_comment_to_protocol(comment: FakeReviewComment) -> ReviewComment:
    return ReviewComment(id=comment.id, author=comment.author,
                         author_is_bot=_is_bot(comment.author, comment.author_type),
                         body=comment.body, created_at=comment.created_at, path=comment.path,
                         commit_id=comment.commit_id, in_reply_to_id=comment.in_reply_to)


def error_for(status: int, message: str, headers: dict[str, str]) -> GitHubError:
    """The exception the real adapter raises for this response (after its retries)."""
    lower = {k.lower(): v for k, v in headers.items()}
    text = f"HTTP {status} ({message})"
    if status in (403, 429) and ("retry-after" in lower or lower.get("x-ratelimit-remaining")
                                 == "0"):
        retry_after = float(lower.get("retry-after", "60"))
        return RateLimited(text, status=status, retry_after=retry_after)
    if status == 404:
        return NotFound(text, status=status)
    if status == 422:
        return Unprocessable(text, status=status)
    return GitHubError(text, status=status)


class MemoryGitHub:
    """`GitHubAPI` over a `FakeGitHubState`, acting as `actor` (the bot's login)."""

    def __init__(self, state: FakeGitHubState, actor: str = "pr-digest[bot]",
                 *, timeout: float = 10.0) -> None:
        self.state = state
        self.actor = actor
        self.timeout = timeout

    async def _run(self, method: str, route: str, path: str, action: Callable[[], T]) -> T:
        state = self.state
        if state.latency:
            await asyncio.sleep(state.latency)
        status = 200
        try:
            headers = state.consume_rate_limit()
            fault = state.take_fault(method, route, path)
            if fault is not None and fault.delay:
                if fault.delay >= self.timeout:
                    status = 0
                    raise GitHubError(f"{method} {route}: timed out")
                await asyncio.sleep(fault.delay)
                fault = None
            if fault is not None:
                if fault.applied:
                    action()
                status = fault.status
                body = fault.body if isinstance(fault.body, dict) else {}
                message = str(body.get("message", "injected fault"))
                raise error_for(fault.status, message, {**headers, **fault.headers})
            return action()
        except FakeHTTPError as exc:
            status = exc.status
            raise error_for(exc.status, exc.message, exc.headers) from None
        finally:
            state.record(method, route, path, status)

    # --- reads -------------------------------------------------------------

    async def get_pull(self, repo: str, number: int) -> PullRequest:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/pulls/{number}", f"/repos/{repo}/pulls/{number}",
            lambda: pull_to_protocol(self.state.pull(repo, number),
                                     private=self.state.repos[repo].private))

    async def list_files(self, repo: str, number: int) -> list[ChangedFile]:
        def files() -> list[ChangedFile]:
            return [ChangedFile(filename=f.filename, status=f.status, additions=f.additions,
                                deletions=f.deletions, patch=f.patch,
                                previous_filename=f.previous_filename)
                    for f in self.state.list_files(repo, number)[:3000]]
        return await self._run("GET", "/repos/{owner}/{repo}/pulls/{number}/files",
                               f"/repos/{repo}/pulls/{number}/files", files)

    async def list_comments(self, repo: str, number: int) -> list[IssueComment]:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/issues/{number}/comments",
            f"/repos/{repo}/issues/{number}/comments",
            lambda: [comment_to_protocol(c) for c in self.state.list_comments(repo, number)])

    async def list_reviewers_who_reviewed(self, repo: str, number: int) -> list[str]:
        def logins() -> list[str]:
            return list(dict.fromkeys(r.login for r in self.state.pull(repo, number).reviews))
        return await self._run("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews",
                               f"/repos/{repo}/pulls/{number}/reviews", logins)

    async def list_reviews(self, repo: str, number: int) -> list[Review]:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/pulls/{number}/reviews",
            f"/repos/{repo}/pulls/{number}/reviews",
            lambda: [review_to_protocol(r) for r in self.state.pull(repo, number).reviews])

    async def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/pulls/{number}/comments",
            f"/repos/{repo}/pulls/{number}/comments",
            lambda: [review_comment_to_protocol(c)
                     for c in self.state.list_review_comments(repo, number)])

    async def get_issue(self, repo: str, number: int) -> IssueSummary:
        def summary() -> IssueSummary:
            found = self.state.issue(repo, number)
            if isinstance(found, FakePull):
                return IssueSummary(repo=repo, number=number, title=found.title,
                                    state=found.state, is_pull=True, merged=found.merged,
                                    author=found.author)
            return IssueSummary(repo=repo, number=number, title=found.title, state=found.state,
                                author=found.author)
        return await self._run("GET", "/repos/{owner}/{repo}/issues/{number}",
                               f"/repos/{repo}/issues/{number}", summary)

    async def commits_ahead(self, repo: str, base: str, head: str) -> int:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/compare/{basehead}",
            f"/repos/{repo}/compare/{base}...{head}",
            lambda: self.state.compare(repo, base, head)[1])

    async def get_permission(self, repo: str, user: str) -> Permission:
        def permission() -> Permission:
            level, role = self.state.permission(repo, user)
            chosen = role if role in {"admin", "maintain", "write", "triage", "read"} else level
            return cast(Permission, chosen)
        try:
            return await self._run(
                "GET", "/repos/{owner}/{repo}/collaborators/{username}/permission",
                f"/repos/{repo}/collaborators/{user}/permission", permission)
        except NotFound:
            return "none"

    async def get_default_branch_file(self, repo: str, path: str) -> str | None:
        def text() -> str:
            raw = self.state.default_branch_file(repo, path)
            # Round-trip like the contents API, so odd bytes fail here as they would there.
            return base64.b64decode(base64.b64encode(raw.encode())).decode()
        try:
            return await self._run("GET", "/repos/{owner}/{repo}/contents/{path}",
                                   f"/repos/{repo}/contents/{path}", text)
        except NotFound:
            return None

    async def get_tree(self, repo: str, sha: str) -> list[TreeEntry]:
        def entries() -> list[TreeEntry]:
            return [TreeEntry(path=name, type=cast(Any, kind), sha=entry_sha, size=size)
                    for name, kind, entry_sha, size in self.state.tree(repo, sha)]
        return await self._run("GET", "/repos/{owner}/{repo}/git/trees/{sha}",
                               f"/repos/{repo}/git/trees/{sha}", entries)

    async def get_blob(self, repo: str, sha: str) -> bytes:
        return await self._run("GET", "/repos/{owner}/{repo}/git/blobs/{sha}",
                               f"/repos/{repo}/git/blobs/{sha}",
                               lambda: self.state.blob(repo, sha))

    async def get_combined_status(
        self, repo: str, ref: str, *, max_pages: int = 3
    ) -> CombinedStatus:
        # One call per page of 100, as the adapter makes them.
        rollup, statuses = "pending", list[CommitStatus]()
        total = 0
        for page in range(max(1, max_pages)):
            def read(page: int = page) -> tuple[str, list[CommitStatus], int]:
                state, found = self.state.combined_status(repo, ref)
                chunk = found[page * 100:(page + 1) * 100]
                return state, [CommitStatus(context=s.context, state=s.state,
                                            description=s.description or "")
                               for s in chunk], len(found)
            rollup, chunk, total = await self._run(
                "GET", "/repos/{owner}/{repo}/commits/{ref}/status",
                f"/repos/{repo}/commits/{ref}/status", read)
            statuses += chunk
            if len(chunk) < 100 or len(statuses) >= total:
                break
        return CombinedStatus(state=rollup, statuses=tuple(statuses), total_count=total)

    async def list_pulls_for_commit(self, repo: str, sha: str) -> list[PullRequest]:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls",
            f"/repos/{repo}/commits/{sha}/pulls",
            lambda: [pull_to_protocol(p) for p in self.state.pulls_for_commit(repo, sha)])

    async def list_open_pulls(self, repo: str, limit: int = 100) -> list[PullRequest]:
        def pulls() -> list[PullRequest]:
            found = [pull_to_protocol(p) for p in self.state.open_pulls(repo)[:max(0, limit)]]
            # The list endpoint carries no counts or merge flag; mirror the adapter.
            return [p.model_copy(update={"changed_files": 0, "additions": 0, "deletions": 0})
                    for p in found]
        return await self._run("GET", "/repos/{owner}/{repo}/pulls", f"/repos/{repo}/pulls",
                               pulls)

    # --- writes ------------------------------------------------------------

    async def create_comment(self, repo: str, number: int, body: str) -> IssueComment:
        return await self._run(
            "POST", "/repos/{owner}/{repo}/issues/{number}/comments",
            f"/repos/{repo}/issues/{number}/comments",
            lambda: comment_to_protocol(
                self.state.create_comment(repo, number, self.actor, body)))

    async def update_comment(self, repo: str, comment_id: int, body: str) -> None:
        await self._run("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}",
                        f"/repos/{repo}/issues/comments/{comment_id}",
                        lambda: self.state.update_comment(repo, comment_id, body))

    async def delete_comment(self, repo: str, comment_id: int) -> None:
        await self._run("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}",
                        f"/repos/{repo}/issues/comments/{comment_id}",
                        lambda: self.state.delete_comment(repo, comment_id))

    async def add_reaction(self, repo: str, comment_id: int, content: ReactionContent) -> None:
        await self._run("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
                        f"/repos/{repo}/issues/comments/{comment_id}/reactions",
                        lambda: self.state.add_reaction(repo, comment_id, self.actor, content))

    @property
    def _app_slug(self) -> str:
        return self.actor.removesuffix("[bot]")

    async def list_check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        return await self._run(
            "GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs",
            f"/repos/{repo}/commits/{sha}/check-runs",
            lambda: [check_run_to_protocol(r)
                     for r in self.state.check_runs_for(repo, sha, name)[:100]])

    async def create_check_run(
        self, repo: str, sha: str, name: str, title: str, summary: str
    ) -> CheckRun:
        body = {"name": name, "head_sha": sha, "status": "completed",
                "conclusion": "neutral", "output": {"title": title, "summary": summary}}
        return await self._run(
            "POST", "/repos/{owner}/{repo}/check-runs", f"/repos/{repo}/check-runs",
            lambda: check_run_to_protocol(
                self.state.create_check_run(repo, self._app_slug, body)))

    async def update_check_run(
        self, repo: str, check_run_id: int, title: str, summary: str
    ) -> None:
        body = {"status": "completed", "conclusion": "neutral",
                "output": {"title": title, "summary": summary}}
        await self._run(
            "PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}",
            f"/repos/{repo}/check-runs/{check_run_id}",
            lambda: self.state.update_check_run(repo, check_run_id, self._app_slug, body))

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        if not labels:
            return
        await self._run("POST", "/repos/{owner}/{repo}/issues/{number}/labels",
                        f"/repos/{repo}/issues/{number}/labels",
                        lambda: self.state.add_labels(repo, number, labels))

    async def remove_label(self, repo: str, number: int, label: str) -> None:
        try:
            await self._run("DELETE", "/repos/{owner}/{repo}/issues/{number}/labels/{name}",
                            f"/repos/{repo}/issues/{number}/labels/{label}",
                            lambda: self.state.remove_label(repo, number, label))
        except NotFound:
            return

    async def request_reviewers(self, repo: str, number: int, users: list[str],
                                teams: list[str]) -> None:
        if not users and not teams:
            return
        await self._run("POST", "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
                        f"/repos/{repo}/pulls/{number}/requested_reviewers",
                        lambda: self.state.request_reviewers(repo, number, users, teams))
