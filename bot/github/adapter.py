"""The githubkit implementation of `GitHubAPI` for one job and one installation.

Created by `bot.github.session.GitHubSessionFactory`, which hands it an entered
githubkit client (auth, retry policy and metrics hooks already configured) and the
installation's write pacer. Every githubkit failure leaves here as a protocol
exception (`NotFound`, `Unprocessable`, `RateLimited`, `GitHubError`).
"""

from __future__ import annotations

import base64
import binascii
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast, get_args
from urllib.parse import quote

from githubkit import GitHub, Response
from githubkit.exception import GitHubException
from githubkit_schemas.latest.models import CheckRun as GitHubCheckRun
from githubkit_schemas.latest.models import (
    ContentFile,
    DiffEntry,
    PullRequestReview,
    PullRequestReviewComment,
    PullRequestSimple,
    SimpleUser,
)
from githubkit_schemas.latest.models import Issue as GitHubIssue
from githubkit_schemas.latest.models import IssueComment as GitHubIssueComment
from githubkit_schemas.latest.models import (
    PullRequest as GitHubPullRequest,
)
from pydantic import BaseModel, ConfigDict, NonNegativeInt, ValidationError

from bot.core.facts import GITHUB_FILES_CAP, ChangedFile, CommitStatus
from bot.github.conditional import ConditionalCache, KeptPage
from bot.github.fence import confirm_before_write
from bot.github.pacing import WritePacer
from bot.github.protocol import (
    BranchHead,
    CheckRun,
    CombinedStatus,
    GitHubError,
    IssueComment,
    IssueSummary,
    NotFound,
    Permission,
    PullRequest,
    ReactionContent,
    ResponseMismatch,
    Review,
    ReviewComment,
    TreeEntry,
)
from bot.github.retry import translate_error

T = TypeVar("T")
M = TypeVar("M")
PER_PAGE = 100
# Pages read of one PR's conversation list: of a thread longer than this, its first page
# and its newest pages (the sticky comment is looked for among these).
MAX_COMMENT_PAGES = 50
MAX_REVIEW_PAGES = 10
_SHA = re.compile(r"[0-9a-f]{40}")
_PAGE = re.compile(r"[?&]page=(\d{1,9})(?:&|>|$)")
_PERMISSIONS: frozenset[str] = frozenset(get_args(Permission))
_TREE_TYPES = frozenset({"blob", "tree", "commit"})


def _last_page(link: str) -> int | None:
    """The page number of the Link header's `rel="last"`, if it has one."""
    for part in link.split(","):
        url, _, rel = part.partition(";")
        if rel.strip() == 'rel="last"':
            found = _PAGE.search(url)
            return int(found.group(1)) if found else None
    return None


def split_repo(repo: str) -> tuple[str, str]:
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise ValueError(f"expected OWNER/REPO, got {repo!r}")
    return owner, name


def _pull_from_github(repo: str, pr: GitHubPullRequest | PullRequestSimple) -> PullRequest:
    user = pr.user
    full = pr if isinstance(pr, GitHubPullRequest) else None
    return PullRequest(
        repo=repo,
        number=pr.number,
        title=pr.title,
        body=pr.body or "",
        author=user.login if user else "ghost",
        author_is_bot=bool(user and user.type == "Bot"),
        labels=tuple(label.name for label in pr.labels),
        base_ref=pr.base.ref,
        base_sha=pr.base.sha,
        head_sha=pr.head.sha,
        draft=bool(pr.draft),
        state=pr.state,
        merged=bool(full.merged) if full else pr.merged_at is not None,
        # The list endpoint omits counts; callers needing them use get_pull.
        changed_files=full.changed_files if full else 0,
        additions=full.additions if full else 0,
        deletions=full.deletions if full else 0,
        requested_users=tuple(u.login for u in (pr.requested_reviewers or []) if u),
        requested_teams=tuple(t.slug for t in (pr.requested_teams or []) if t),
        updated_at=pr.updated_at,
        closed_at=pr.closed_at,
        created_at=pr.created_at,
        html_url=pr.html_url,
        private=pr.base.repo.private,
        mergeable_state=_mergeable_state(full),
    )


def _mergeable_state(full: GitHubPullRequest | None) -> str:
    # `mergeable` null: GitHub computes the merge in the background; "unknown" until then.
    if full is None or full.mergeable is None:
        return ""
    return full.mergeable_state or ""


def _check_run_from_github(run: GitHubCheckRun) -> CheckRun:
    return CheckRun(
        id=run.id, name=run.name, head_sha=run.head_sha,
        app_slug=(run.app.slug or "") if run.app else "",
        title=run.output.title or "", summary=run.output.summary or "",
    )


def _is_bot(user: SimpleUser | None) -> bool:
    return user is not None and (user.type == "Bot" or user.login.endswith("[bot]"))


def _comment_from_github(comment: GitHubIssueComment) -> IssueComment:
    return IssueComment(
        id=comment.id,
        author=comment.user.login if comment.user else "ghost",
        body=comment.body or "",
        created_at=comment.created_at,
        author_is_bot=_is_bot(comment.user),
    )


def _review_from_github(review: PullRequestReview) -> Review:
    return Review(
        id=review.id,
        author=review.user.login if review.user else "ghost",
        author_is_bot=_is_bot(review.user),
        state=review.state,
        body=review.body or "",
        submitted_at=review.submitted_at or None,
        commit_id=review.commit_id or "",
    )


def _review_comment_from_github(comment: PullRequestReviewComment) -> ReviewComment:
    reply_to = comment.in_reply_to_id
    return ReviewComment(
        id=comment.id,
        author=comment.user.login if comment.user else "ghost",
        author_is_bot=_is_bot(comment.user),
        body=comment.body or "",
        created_at=comment.created_at,
        path=comment.path,
        commit_id=comment.commit_id or "",
        in_reply_to_id=reply_to if isinstance(reply_to, int) else None,
    )


def encodable(body: str) -> str:
    """`body` with any lone surrogate replaced: JSON from GitHub may carry one, and
    UTF-8 cannot encode it, so the write would fail on every retry (issue 8, item 10)."""
    try:
        body.encode("utf-8")
    except UnicodeEncodeError:
        return body.encode("utf-8", "replace").decode("utf-8")  # '?' for each one
    return body


@asynccontextmanager
async def translated() -> AsyncIterator[None]:
    """Protocol exceptions out of githubkit failures and unparseable responses."""
    try:
        yield
    except GitHubException as exc:
        raise translate_error(exc) from exc
    except ValidationError as exc:
        raise ResponseMismatch(schema_mismatch(exc)) from None


def schema_mismatch(exc: ValidationError) -> str:
    """What did not fit, e.g. "GitHub's PullRequest did not match its schema at
    `head.sha`: Input should be a valid string". Only the model, the place and pydantic's
    message: the error's own text quotes the response's values, which may hold a token."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return f"GitHub's {exc.title} did not match its schema"
    first = errors[0]
    where = "".join(
        f"[{part}]" if isinstance(part, int) else f".{str(part)[:40]}" for part in first["loc"]
    ).lstrip(".")
    text = f"GitHub's {exc.title} did not match its schema at `{where}`: {first['msg'][:200]}"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return text


class _Comparison(BaseModel):
    """The one field of GitHub's commit comparison we read; its commits and files (up to
    250 and 300) are not modelled, so never validated."""

    model_config = ConfigDict(extra="ignore")

    ahead_by: NonNegativeInt


class GitHubKitAdapter:
    """`GitHubAPI` over an entered githubkit client."""

    def __init__(self, client: GitHub[Any], pacer: WritePacer, *,
                 pages: ConditionalCache | None = None, identity: str = "") -> None:
        self._gh = client
        self._pacer = pacer
        # ETags of list pages read before, kept per credentials (`identity`).
        self._kept = pages
        self._identity = identity

    async def _call(self, request: Awaitable[T]) -> T:
        async with translated():
            return await request

    async def _write(self, request: Awaitable[T]) -> T:
        try:
            # The store round trip before the pacer's wait, so the pacer's spacing is the
            # spacing GitHub sees (a round trip after it shortened the next gap); the
            # session's request hook checks the lease's deadline right before sending,
            # which a long wait in the pacer cannot outlast unnoticed.
            await confirm_before_write()
            await self._pacer.acquire()
        except BaseException:
            if inspect.iscoroutine(request):
                request.close()  # never sent: not a "never awaited" warning either
            raise
        return await self._call(request)

    # --- reads -------------------------------------------------------------

    async def get_pull(self, repo: str, number: int) -> PullRequest:
        owner, name = split_repo(repo)
        async with translated():
            response = await self._gh.rest.pulls.async_get(owner, name, number)
            return _pull_from_github(repo, response.parsed_data)

    async def list_files(self, repo: str, number: int) -> list[ChangedFile]:
        owner, name = split_repo(repo)
        files: list[ChangedFile] = []
        entry: DiffEntry
        async with translated():
            async for entry in self._gh.rest.paginate(
                self._gh.rest.pulls.async_list_files,
                owner=owner, repo=name, pull_number=number, per_page=PER_PAGE,
            ):
                files.append(ChangedFile(
                    filename=entry.filename,
                    status=entry.status,
                    additions=entry.additions,
                    deletions=entry.deletions,
                    patch=entry.patch or None,
                    previous_filename=entry.previous_filename or None,
                ))
                # GitHub never lists more than 3,000; don't page past it if it did.
                if len(files) >= GITHUB_FILES_CAP:
                    break
        return files

    async def list_comments(self, repo: str, number: int) -> list[IssueComment]:
        owner, name = split_repo(repo)

        def page(number_: int, headers: Mapping[str, str] | None) -> Awaitable[Response[Any]]:
            return self._gh.rest.issues.async_list_comments(
                owner, name, number, per_page=PER_PAGE, page=number_, headers=headers)

        return await self._conditional_pages(
            f"/repos/{repo}/issues/{number}/comments", page, _comment_from_github,
            MAX_COMMENT_PAGES)

    async def list_reviews(self, repo: str, number: int) -> list[Review]:
        owner, name = split_repo(repo)

        def page(number_: int, headers: Mapping[str, str] | None) -> Awaitable[Response[Any]]:
            return self._gh.rest.pulls.async_list_reviews(
                owner, name, number, per_page=PER_PAGE, page=number_, headers=headers)

        return await self._conditional_pages(
            f"/repos/{repo}/pulls/{number}/reviews", page, _review_from_github,
            MAX_REVIEW_PAGES)

    async def list_review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        owner, name = split_repo(repo)

        def page(number_: int, headers: Mapping[str, str] | None) -> Awaitable[Response[Any]]:
            return self._gh.rest.pulls.async_list_review_comments(
                owner, name, number, per_page=PER_PAGE, page=number_, headers=headers)

        return await self._conditional_pages(
            f"/repos/{repo}/pulls/{number}/comments", page, _review_comment_from_github,
            MAX_REVIEW_PAGES)

    async def _conditional_pages(
        self,
        route: str,
        fetch: Callable[[int, Mapping[str, str] | None], Awaitable[Response[Any]]],
        convert: Callable[[M], T],
        max_pages: int,
    ) -> list[T]:
        """A list, oldest first, of at most `max_pages` pages: the first page and then
        the newest ones, read from the last page back (the Link header's `last`). On a
        thread longer than that the middle goes unread, never its newest words nor a
        comment posted late (issue 38, item 3). Each page is asked with the ETag it had
        when it was last read: a 304 (not charged to the rate limit) serves the kept one."""
        first = await self._page(route, 1, fetch, convert)
        pages = {1: first}
        last = first.last
        if last is None:  # more pages, but no `last` link: read on until the budget
            number = 1
            while pages[number].has_next and number < max_pages:
                number += 1
                pages[number] = await self._page(route, number, fetch, convert)
            return [item for n in sorted(pages) for item in pages[n].items]
        # The newest page first. Its Link header may show the thread grew since page 1
        # was kept; a full last page may have a next one a kept page cannot show.
        while last > 1 and last not in pages and len(pages) < max_pages:
            page = pages[last] = await self._page(route, last, fetch, convert)
            if page.has_next and (page.last or last + 1) > last:
                last = page.last or last + 1
        newest = max(pages)
        number = newest - 1
        while number > 1 and len(pages) < max_pages:
            if number not in pages:
                pages[number] = await self._page(route, number, fetch, convert)
            number -= 1
        return [item for n in sorted(pages) for item in pages[n].items]

    async def _page(
        self,
        route: str,
        number: int,
        fetch: Callable[[int, Mapping[str, str] | None], Awaitable[Response[Any]]],
        convert: Callable[[M], T],
    ) -> KeptPage:
        key = f"{self._identity} {route}?page={number}"
        kept = self._kept.get(key) if self._kept is not None else None
        headers = {"If-None-Match": kept.etag} if kept is not None else None
        async with translated():
            response = await fetch(number, headers)
            raw = response.raw_response
            if raw.status_code == 304 and kept is not None:
                self._kept.hits += 1  # type: ignore[union-attr]
                return kept
            if raw.status_code == 304:
                raise GitHubError(f"GET {route}: 304 for a page never read", status=304)
            items = tuple(convert(item) for item in response.parsed_data)
            link = raw.headers.get("link", "")
            has_next = 'rel="next"' in link
            last = _last_page(link)
            page = KeptPage(raw.headers.get("etag") or "", items, has_next, len(raw.content),
                            last=last if last is not None else (None if has_next else number))
            if self._kept is not None and page.etag:
                self._kept.put(key, page)
            return page

    async def get_issue(self, repo: str, number: int) -> IssueSummary:
        owner, name = split_repo(repo)
        async with translated():
            response = await self._gh.rest.issues.async_get(owner, name, number)
            issue: GitHubIssue = response.parsed_data
        pull = issue.pull_request if issue.pull_request else None
        return IssueSummary(
            repo=repo, number=issue.number, title=issue.title, state=issue.state,
            is_pull=pull is not None,
            merged=pull is not None and bool(pull.merged_at),
            author=issue.user.login if issue.user else "",
        )

    async def commits_ahead(self, repo: str, base: str, head: str) -> int:
        owner, name = split_repo(repo)
        basehead = f"{quote(base, safe='')}...{quote(head, safe='')}"
        async with translated():
            # One commit per page: the count is all we read, the page keeps the body small.
            response = await self._gh.arequest(
                "GET", f"/repos/{quote(owner)}/{quote(name)}/compare/{basehead}",
                params={"per_page": 1}, response_model=_Comparison,
            )
            return response.parsed_data.ahead_by

    async def list_reviewers_who_reviewed(self, repo: str, number: int) -> list[str]:
        owner, name = split_repo(repo)
        logins: dict[str, None] = {}
        review: PullRequestReview
        async with translated():
            async for review in self._gh.rest.paginate(
                self._gh.rest.pulls.async_list_reviews,
                owner=owner, repo=name, pull_number=number, per_page=PER_PAGE,
            ):
                if review.user is not None:
                    logins[review.user.login] = None
        return list(logins)

    async def get_permission(self, repo: str, user: str) -> Permission:
        owner, name = split_repo(repo)
        try:
            async with translated():
                response = await self._gh.rest.repos.async_get_collaborator_permission_level(
                    owner, name, user
                )
                data = response.parsed_data
        except NotFound:
            return "none"
        # `permission` folds maintain->write and triage->read; `role_name` keeps them
        # (custom roles show up there too, so fall back to `permission`).
        role = data.role_name
        if role in _PERMISSIONS:
            return cast(Permission, role)
        return cast(Permission, data.permission if data.permission in _PERMISSIONS else "none")

    async def get_default_branch_file(self, repo: str, path: str) -> str | None:
        owner, name = split_repo(repo)
        try:
            # No `ref`: the contents API then reads the default branch, never a PR head.
            async with translated():
                response = await self._gh.rest.repos.async_get_content(owner, name, path)
                content = response.parsed_data
        except NotFound:
            return None
        if not isinstance(content, ContentFile) or content.encoding != "base64":
            return None
        try:
            return base64.b64decode(content.content).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None

    async def get_tree(self, repo: str, sha: str) -> list[TreeEntry]:
        owner, name = split_repo(repo)
        async with translated():
            response = await self._gh.rest.git.async_get_tree(owner, name, sha)
            tree = response.parsed_data
        return [
            TreeEntry(path=item.path, type=cast(Any, item.type), sha=item.sha,
                      size=item.size if isinstance(item.size, int) else None)
            for item in tree.tree
            if item.type in _TREE_TYPES and isinstance(item.path, str)
            and isinstance(item.sha, str)
        ]

    async def get_blob(self, repo: str, sha: str) -> bytes:
        owner, name = split_repo(repo)
        async with translated():
            response = await self._gh.rest.git.async_get_blob(owner, name, sha)
            blob = response.parsed_data
        if blob.encoding != "base64":
            return blob.content.encode("utf-8")
        try:
            return base64.b64decode(blob.content)
        except binascii.Error as exc:
            raise GitHubError(f"blob {sha} of {repo}: undecodable content") from exc

    async def get_combined_status(
        self, repo: str, ref: str, *, max_pages: int = 3
    ) -> CombinedStatus:
        owner, name = split_repo(repo)
        statuses: list[CommitStatus] = []
        state, total = "pending", 0
        async with translated():
            for page in range(1, max(1, max_pages) + 1):
                response = await self._gh.rest.repos.async_get_combined_status_for_ref(
                    owner, name, quote(ref, safe=""), per_page=PER_PAGE, page=page)
                data = response.parsed_data
                state, total = data.state, data.total_count
                statuses += [
                    CommitStatus(context=item.context, state=item.state,
                                 description=item.description or "")
                    for item in data.statuses
                ]
                if len(data.statuses) < PER_PAGE or len(statuses) >= total:
                    break
        return CombinedStatus(state=state, statuses=tuple(statuses), total_count=total)

    async def list_pulls_for_commit(self, repo: str, sha: str) -> list[PullRequest]:
        owner, name = split_repo(repo)
        async with translated():
            response = await self._gh.rest.repos.async_list_pull_requests_associated_with_commit(
                owner, name, sha, per_page=PER_PAGE)
            return [_pull_from_github(repo, pr) for pr in response.parsed_data]

    async def list_open_pulls(self, repo: str, limit: int = 100) -> list[PullRequest]:
        owner, name = split_repo(repo)
        pulls: list[PullRequest] = []
        if limit <= 0:
            return pulls
        pr: PullRequestSimple
        async with translated():
            async for pr in self._gh.rest.paginate(
                self._gh.rest.pulls.async_list,
                owner=owner, repo=name, state="open", sort="updated", direction="desc",
                per_page=min(PER_PAGE, limit),
            ):
                pulls.append(_pull_from_github(repo, pr))
                if len(pulls) >= limit:
                    break
        return pulls

    async def default_branch_head(self, repo: str) -> BranchHead:
        owner, name = split_repo(repo)
        async with translated():
            branch = (await self._gh.rest.repos.async_get(owner, name)).parsed_data.default_branch
            # The `sha` media type answers with the bare 40-hex SHA: no commit payload.
            head = await self._gh.arequest(
                "GET", f"/repos/{quote(owner)}/{quote(name)}/commits/{quote(branch, safe='')}",
                headers={"Accept": "application/vnd.github.sha"},
            )
        sha = head.text.strip()
        if not _SHA.fullmatch(sha):
            raise GitHubError(f"GitHub answered no commit SHA for {repo}@{branch}")
        return BranchHead(branch=branch, sha=sha)

    @asynccontextmanager
    async def tarball(self, repo: str, sha: str) -> AsyncIterator[AsyncIterator[bytes]]:
        owner, name = split_repo(repo)
        # One request; GitHub answers with a redirect to codeload, which httpx follows
        # (and drops the Authorization header crossing hosts). Streamed, never buffered.
        async with translated():
            response = await self._gh.arequest(
                "GET", f"/repos/{quote(owner)}/{quote(name)}/tarball/{quote(sha)}", stream=True
            )
        raw = response.raw_response
        try:
            yield raw.aiter_bytes()
        finally:
            await raw.aclose()

    # --- writes (paced; never auto-retried on 5xx, see bot.github.retry) ---------

    async def create_comment(self, repo: str, number: int, body: str) -> IssueComment:
        owner, name = split_repo(repo)
        await confirm_before_write()  # before the pacer's wait: see _write
        await self._pacer.acquire()
        async with translated():
            response = await self._gh.rest.issues.async_create_comment(
                owner, name, number, body=encodable(body)
            )
            return _comment_from_github(response.parsed_data)

    async def update_comment(self, repo: str, comment_id: int, body: str) -> None:
        owner, name = split_repo(repo)
        await self._write(
            self._gh.rest.issues.async_update_comment(
                owner, name, comment_id, body=encodable(body)
            )
        )

    async def delete_comment(self, repo: str, comment_id: int) -> None:
        owner, name = split_repo(repo)
        await self._write(self._gh.rest.issues.async_delete_comment(owner, name, comment_id))

    async def add_reaction(self, repo: str, comment_id: int, content: ReactionContent) -> None:
        owner, name = split_repo(repo)
        await self._write(
            self._gh.rest.reactions.async_create_for_issue_comment(
                owner, name, comment_id, content=content
            )
        )

    async def list_check_runs(self, repo: str, sha: str, name: str) -> list[CheckRun]:
        owner, name_ = split_repo(repo)
        async with translated():
            response = await self._gh.rest.checks.async_list_for_ref(
                owner, name_, quote(sha, safe=""), check_name=name, filter_="latest",
                per_page=PER_PAGE)
            return [_check_run_from_github(run) for run in response.parsed_data.check_runs]

    async def create_check_run(
        self, repo: str, sha: str, name: str, title: str, summary: str
    ) -> CheckRun:
        owner, name_ = split_repo(repo)
        response = await self._write(self._gh.rest.checks.async_create(
            owner, name_, name=name, head_sha=sha, status="completed", conclusion="neutral",
            output={"title": encodable(title), "summary": encodable(summary)},
        ))
        return _check_run_from_github(response.parsed_data)

    async def update_check_run(
        self, repo: str, check_run_id: int, title: str, summary: str
    ) -> None:
        owner, name_ = split_repo(repo)
        await self._write(self._gh.rest.checks.async_update(
            owner, name_, check_run_id, status="completed", conclusion="neutral",
            output={"title": encodable(title), "summary": encodable(summary)},
        ))

    async def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        if not labels:
            return
        owner, name = split_repo(repo)
        await self._write(
            self._gh.rest.issues.async_add_labels(owner, name, number, labels=labels)
        )

    async def remove_label(self, repo: str, number: int, label: str) -> None:
        owner, name = split_repo(repo)
        try:
            # githubkit puts the name into the path as is; "ci/build" must be escaped.
            await self._write(
                self._gh.rest.issues.async_remove_label(
                    owner, name, number, quote(label, safe="")
                )
            )
        except NotFound:
            # Already gone (someone removed it first): the desired state holds.
            return

    async def request_reviewers(
        self, repo: str, number: int, users: list[str], teams: list[str]
    ) -> None:
        if not users and not teams:
            return
        owner, name = split_repo(repo)
        await self._write(
            self._gh.rest.pulls.async_request_reviewers(
                owner, name, number, reviewers=users, team_reviewers=teams
            )
        )
