"""The few GitHub calls pr-digest makes, as app-owned types.

Handlers see GitHub only through `GitHubAPI`; the githubkit adapter implements it
over HTTP, and tests use one shared in-memory fake. Every method is scoped to one
installation (the adapter is created per job, per installation).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from bot.core.facts import ChangedFile, CommitStatus

Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]
ReactionContent = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]


class PullRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    repo: str
    number: int
    title: str
    body: str
    author: str
    author_is_bot: bool = False
    labels: tuple[str, ...]
    base_ref: str
    head_sha: str
    draft: bool
    state: str  # open | closed
    merged: bool = False
    changed_files: int
    additions: int
    deletions: int
    requested_users: tuple[str, ...] = ()
    requested_teams: tuple[str, ...] = ()
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    created_at: datetime | None = None
    html_url: str = ""
    # The repository's visibility: the label view shows a private one only to a token.
    private: bool = False
    # The commit the PR is compared against: the repository's config is read there.
    base_sha: str = ""
    # GitHub's merge check (`GET /pulls/N` only): dirty = conflicts, behind, clean, ...;
    # "" while GitHub has not computed it (`mergeable: null`): a later job reads it.
    mergeable_state: str = ""


class TreeEntry(BaseModel):
    """One entry of a git tree (GitHub's "get a tree", not recursive)."""

    model_config = ConfigDict(frozen=True)

    path: str  # the entry's name within its tree
    type: Literal["blob", "tree", "commit"]
    sha: str
    size: int | None = None  # blobs only


class CombinedStatus(BaseModel):
    """A ref's combined status: the newest status of each context, as far as read."""

    model_config = ConfigDict(frozen=True)

    state: str  # GitHub's roll-up: failure | pending | success
    statuses: tuple[CommitStatus, ...] = ()
    total_count: int = 0  # how many contexts the ref has; more than read: incomplete

    @property
    def complete(self) -> bool:
        return len(self.statuses) >= self.total_count


class IssueComment(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    author: str  # login, e.g. "pr-digest[bot]"
    body: str
    created_at: datetime | None = None
    author_is_bot: bool = False  # the account's type is Bot (CI bots, other review bots)


class Review(BaseModel):
    """One review of a PR: its state and its body (the summary, not its line comments)."""

    model_config = ConfigDict(frozen=True)

    id: int
    author: str
    author_is_bot: bool = False
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED | PENDING
    body: str = ""
    submitted_at: datetime | None = None
    commit_id: str = ""  # the head the review was made on


class ReviewComment(BaseModel):
    """One comment on a line of the diff (a review thread's root or a reply in it)."""

    model_config = ConfigDict(frozen=True)

    id: int
    author: str
    author_is_bot: bool = False
    body: str = ""
    created_at: datetime | None = None
    path: str = ""
    commit_id: str = ""
    in_reply_to_id: int | None = None


class IssueSummary(BaseModel):
    """An issue or PR as the issues endpoint answers for both: title, state, and for a PR
    whether it merged."""

    model_config = ConfigDict(frozen=True)

    repo: str
    number: int
    title: str
    state: str  # open | closed
    is_pull: bool = False
    merged: bool = False
    author: str = ""


class CheckRun(BaseModel):
    """One check run on a commit: the digest when it is delivered as a check."""

    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    head_sha: str
    app_slug: str = ""  # the App that created it: only our own run is ours to update
    title: str = ""
    summary: str = ""


class GitHubAPI(Protocol):
    """Installation-scoped GitHub operations. Errors raise `GitHubError` subclasses."""

    async def get_pull(self, repo: str, number: int) -> PullRequest: ...

    async def list_files(self, repo: str, number: int) -> list[ChangedFile]:
        """All files, following pagination, up to GitHub's 3,000-file cap."""
        ...

    async def list_comments(self, repo: str, number: int) -> list[IssueComment]:
        """The PR's (or issue's) comments, oldest first, all pages (conditional requests
        where the implementation keeps ETags)."""
        ...

    async def list_reviews(self, repo: str, number: int) -> list[Review]:
        """The PR's reviews, oldest first, all pages up to a cap."""
        ...

    async def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        """The PR's review (line) comments, oldest first, all pages up to a cap."""
        ...

    async def get_issue(self, repo: str, number: int) -> IssueSummary:
        """An issue or a PR by number (the issues endpoint answers for both); NotFound."""
        ...

    async def commits_ahead(self, repo: str, base: str, head: str) -> int:
        """How many commits `head` (a SHA or branch) has that `base` lacks: GitHub's
        compare `ahead_by`; NotFound when either is unknown."""
        ...

    async def create_comment(self, repo: str, number: int, body: str) -> IssueComment: ...

    async def update_comment(self, repo: str, comment_id: int, body: str) -> None: ...

    async def delete_comment(self, repo: str, comment_id: int) -> None: ...

    async def add_reaction(self, repo: str, comment_id: int, content: ReactionContent) -> None: ...

    async def list_check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        """The check runs named `name` on commit `sha` (one page of 100, newest first)."""
        ...

    async def create_check_run(
        self, repo: str, sha: str, name: str, title: str, summary: str
    ) -> CheckRun:
        """A completed, neutral check run on `sha` with this output."""
        ...

    async def update_check_run(
        self, repo: str, check_run_id: int, title: str, summary: str
    ) -> None: ...

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> None: ...

    async def remove_label(self, repo: str, number: int, label: str) -> None: ...

    async def request_reviewers(
        self, repo: str, number: int, users: list[str], teams: list[str]
    ) -> None: ...

    async def list_reviewers_who_reviewed(self, repo: str, number: int) -> list[str]: ...

    async def get_permission(self, repo: str, user: str) -> Permission:
        """Collaborator permission; "none" for a non-collaborator (GitHub's 404)."""
        ...

    async def get_default_branch_file(self, repo: str, path: str) -> str | None:
        """A file's text on the default branch (never the PR head); None if absent."""
        ...

    async def list_open_pulls(self, repo: str, limit: int = 100) -> list[PullRequest]:
        """Open PRs, most recently updated first (for the reconcile sweep and load counts)."""
        ...

    async def get_tree(self, repo: str, sha: str) -> list[TreeEntry]:
        """The entries of one tree, named by its own SHA or a commit's; NotFound if absent."""
        ...

    async def get_blob(self, repo: str, sha: str) -> bytes:
        """A blob's bytes by SHA (git objects are immutable: cacheable forever)."""
        ...

    async def get_combined_status(
        self, repo: str, ref: str, *, max_pages: int = 3
    ) -> CombinedStatus:
        """The ref's combined status, 100 contexts a page, at most `max_pages` pages."""
        ...

    async def list_pulls_for_commit(self, repo: str, sha: str) -> list[PullRequest]:
        """The PRs GitHub associates with commit `sha` (one page of 100; the open PRs
        whose branch holds it, while it is not merged)."""
        ...


class BranchHead(BaseModel):
    model_config = ConfigDict(frozen=True)

    branch: str
    sha: str


@runtime_checkable
class RepositoryArchive(Protocol):
    """The default branch's head and its source archive (for the symbol index)."""

    async def default_branch_head(self, repo: str) -> BranchHead: ...

    def tarball(self, repo: str, sha: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """The gzipped tarball of `sha`, streamed in chunks: one request, never buffered."""
        ...


class GitHubError(Exception):
    """A GitHub call failed. `retry_after` is set when GitHub said when to come back.

    `permanent` failures are parked at once by the worker: retrying cannot help.
    """

    permanent = False

    def __init__(self, message: str, *, status: int = 0, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def is_refusal(exc: GitHubError) -> bool:
    """GitHub answered and refused this one request for good: a 4xx other than rejected
    credentials and rate limits. Anything else (no answer, 5xx, 429, 401) is worth
    failing the job for: it is retried, or parked with its reason."""
    return (400 <= exc.status < 500 and exc.status != 401
            and not isinstance(exc, RateLimited | UncertainWrite))


class BadCredentials(GitHubError):
    """401: GitHub rejected the credentials (revoked token, wrong key or App id).

    Not transient: the job is parked with this reason instead of retried for hours.
    """

    permanent = True


class NotFound(GitHubError):
    pass


class ResponseMismatch(GitHubError):
    """GitHub answered with a body that does not fit the schema githubkit parses it with.

    Not transient: the same object gets the same answer, so the job is parked at once
    with the field named, instead of being retried for twenty minutes.
    """

    permanent = True


class RateLimited(GitHubError):
    """403/429 rate limit (primary or secondary): retry after `retry_after` seconds."""


class Unprocessable(GitHubError):
    """422: GitHub rejected the request's content (e.g. an over-long comment)."""


class UncertainWrite(GitHubError):
    """A create whose answer never came (timeout, 5xx): GitHub may still apply it.

    Retrying at once could create a second comment, so the job retries only after
    `retry_after` seconds, when a re-listing will see the write if it happened.
    """
