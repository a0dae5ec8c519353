"""The one GitHub world every test fake reads and writes.

`MemoryGitHub` (the protocol, in process) and the fake HTTP server both act on a
`FakeGitHubState`, so a handler test and an adapter test see the same GitHub rules:
the 65,536-character comment limit, 404s, rate-limit headers, injected faults.
Semantic operations raise `FakeHTTPError(status, message)`; each front end turns
that into its own failure (an exception or an HTTP response).
"""

from __future__ import annotations

import fnmatch
import hashlib
import random
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

COMMENT_MAX_CHARS = 65_536
# A check run's output.summary and output.text: GitHub answers 422 above this.
CHECK_OUTPUT_MAX_CHARS = 65_535
FILES_CAP = 3000
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


class FakeHTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass
class FakeFile:
    filename: str
    status: str = "modified"
    additions: int = 1
    deletions: int = 0
    patch: str | None = "@@ -1 +1 @@\n-old\n+new"
    previous_filename: str | None = None


@dataclass
class FakeComment:
    id: int
    repo: str
    number: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    author_type: str = "User"
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (login, content)


@dataclass
class FakeReview:
    id: int
    login: str
    state: str = "APPROVED"
    body: str = ""
    commit_id: str = ""
    submitted_at: datetime | None = None
    author_type: str = "User"


@dataclass
class FakeReviewComment:
    id: int
    repo: str
    number: int
    author: str
    body: str
    path: str
    line: int
    commit_id: str
    created_at: datetime
    in_reply_to: int | None = None
    review_id: int = 0
    author_type: str = "User"


@dataclass
class FakeIssue:
    """A plain issue (not a PR), for linked-work reads."""

    repo: str
    number: int
    title: str
    state: str = "open"
    author: str = "someone"


@dataclass
class FakePull:
    repo: str
    number: int
    title: str
    body: str
    author: str
    author_type: str
    labels: list[str]
    base: str
    head_sha: str
    draft: bool
    state: str
    merged: bool
    files: list[FakeFile]
    created_at: datetime
    updated_at: datetime
    requested_users: list[str] = field(default_factory=list)
    requested_teams: list[str] = field(default_factory=list)
    reviews: list[FakeReview] = field(default_factory=list)
    base_sha: str = "b" * 40
    mergeable_state: str = ""  # "" : GitHub has not computed it (`mergeable: null`)

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)


@dataclass
class FakeRepo:
    full_name: str
    id: int
    default_branch: str = "main"
    files: dict[str, str] = field(default_factory=dict)  # default-branch contents
    # login -> (permission, role_name); a login not here is not a collaborator.
    permissions: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Logins and teams that lost access: a review request naming any of them is a 422.
    no_access: set[str] = field(default_factory=set)
    archived: bool = False  # GET /installation/repositories still lists archived repos
    private: bool = False
    head_sha: str = "c" * 40  # the default branch's head commit
    tarball: bytes | None = None  # its source archive (GET .../tarball/{ref}); None: 404
    # Git objects, hashed as git does: commit SHA -> root tree SHA, tree SHA -> entries
    # (name, type, sha, size), blob SHA -> bytes. Filled by FakeGitHubState.add_commit.
    commits: dict[str, str] = field(default_factory=dict)
    trees: dict[str, list[tuple[str, str, str, int | None]]] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    # Commits the default branch gained after a base SHA (GET .../compare/{sha}...{branch}
    # `ahead_by`); a SHA not here is taken to be the branch's head (0 ahead).
    base_moved: dict[str, int] = field(default_factory=dict)


@dataclass
class FakeCheckRun:
    """One check run (`POST /repos/{o}/{r}/check-runs`), as an App creates it."""

    id: int
    repo: str
    head_sha: str
    name: str
    app_slug: str
    status: str
    conclusion: str | None
    title: str
    summary: str
    started_at: datetime
    completed_at: datetime | None


@dataclass
class FakeStatus:
    """One commit status (`POST /repos/{o}/{r}/statuses/{sha}`), as a CI posts it."""

    id: int
    context: str
    state: str  # error | failure | pending | success
    description: str | None
    target_url: str | None
    created_at: datetime
    updated_at: datetime


@dataclass
class Fault:
    method: str
    path_pattern: str
    status: int
    times: int
    headers: dict[str, str]
    body: dict[str, Any] | list[Any] | None  # a 200 with a body that breaks the schema
    applied: bool  # the write happens, then the failure is returned ("response lost")
    delay: float = 0.0  # slow_next: seconds before answering instead of a status


@dataclass(frozen=True)
class CallRecord:
    method: str
    route: str  # templated, e.g. "/repos/{owner}/{repo}/pulls/{number}/files"
    path: str
    status: int
    # When the fake answered (time.monotonic()), for pacing assertions.
    at: float = field(default_factory=time.monotonic)
    query: str = ""  # the request's query string, e.g. "per_page=100&page=3"


@dataclass
class FakeGitHubState:
    app_id: int = 4242
    app_slug: str = "pr-digest"
    app_public_key_pem: str | None = None  # the HTTP fake verifies JWTs with it
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    latency: float = 0.0
    files_cap: int | None = FILES_CAP  # None: list every file (to test client caps)
    rate_limit: int = 5000
    rate_limit_remaining: int = 5000
    seed: int = 0

    repos: dict[str, FakeRepo] = field(default_factory=dict)
    pulls: dict[tuple[str, int], FakePull] = field(default_factory=dict)
    comments: dict[int, FakeComment] = field(default_factory=dict)
    review_comments: dict[int, FakeReviewComment] = field(default_factory=dict)
    issues: dict[tuple[str, int], FakeIssue] = field(default_factory=dict)
    installations: dict[int, str] = field(default_factory=lambda: {1: "vllm-project"})
    tokens: dict[str, tuple[int, datetime]] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    # (repo, sha) -> context -> the newest status of that context (GitHub keeps the
    # history; the combined status shows the newest, which is all the bot reads).
    statuses: dict[tuple[str, str], dict[str, FakeStatus]] = field(default_factory=dict)
    check_runs: dict[int, FakeCheckRun] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._next_id = 1000
        self._rng = random.Random(self.seed)
        self._fail_every: tuple[int, int, frozenset[str]] | None = None
        self._fail_probability: tuple[float, int, frozenset[str]] | None = None
        self._call_counter = 0

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # --- seeding -----------------------------------------------------------

    def add_repo(self, repo: str, *, default_branch: str = "main",
                 files: dict[str, str] | None = None) -> FakeRepo:
        if repo not in self.repos:
            self.repos[repo] = FakeRepo(repo, self._new_id(), default_branch, dict(files or {}))
        elif files:
            self.repos[repo].files.update(files)
        return self.repos[repo]

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        title: str = "A change",
        body: str = "",
        author: str = "contributor",
        author_type: str = "User",
        files: Iterable[FakeFile | str] = (),
        labels: Iterable[str] = (),
        base: str = "main",
        head_sha: str | None = None,
        draft: bool = False,
        state: str = "open",
        requested_users: Iterable[str] = (),
        requested_teams: Iterable[str] = (),
        updated_at: datetime | None = None,
    ) -> FakePull:
        self.add_repo(repo)
        now = self.now()
        pull = FakePull(
            repo=repo, number=number, title=title, body=body, author=author,
            author_type=author_type, labels=list(labels), base=base,
            head_sha=head_sha or f"{number:040x}", draft=draft, state=state, merged=False,
            # A copy of each file: a test that edits its PR's files must not edit the
            # module-level lists other tests share (a renamed COMPILE_FILES entry once
            # reached a later test in the same worker).
            files=[replace(f) if isinstance(f, FakeFile) else FakeFile(f) for f in files],
            created_at=now, updated_at=updated_at or now,
            requested_users=list(requested_users), requested_teams=list(requested_teams),
        )
        self.pulls[(repo, number)] = pull
        return pull

    def add_commit(self, repo: str, files: Mapping[str, str | bytes], *,
                   sha: str | None = None) -> str:
        """A commit holding exactly `files` (path -> content); returns its SHA. Trees and
        blobs get git's own object SHAs, so an unchanged folder keeps its tree SHA."""
        self.add_repo(repo)
        found = self.repos[repo]
        nested: dict[str, Any] = {}
        for path, content in files.items():
            *dirs, name = path.split("/")
            node = nested
            for part in dirs:
                node = node.setdefault(part, {})
            node[name] = content.encode() if isinstance(content, str) else content
        root = _store_tree(found, nested)
        seed = f"commit {root} {len(found.commits)}".encode()
        commit = sha or hashlib.sha1(seed, usedforsecurity=False).hexdigest()
        found.commits[commit] = root
        return commit

    def tree(self, repo: str, sha: str) -> list[tuple[str, str, str, int | None]]:
        found = self.repos.get(repo)
        if found is None:
            raise FakeHTTPError(404, "Not Found")
        sha = found.commits.get(sha, sha)
        if sha not in found.trees:
            raise FakeHTTPError(404, "Not Found")
        return found.trees[sha]

    def blob(self, repo: str, sha: str) -> bytes:
        found = self.repos.get(repo)
        if found is None or sha not in found.blobs:
            raise FakeHTTPError(404, "Not Found")
        return found.blobs[sha]

    def set_status(self, repo: str, sha: str, context: str, state: str,
                   description: str | None = None, target_url: str | None = None,
                   ) -> FakeStatus:
        """A CI posting a status on `sha`: the newest one per context wins."""
        self.add_repo(repo)
        now = self.now()
        found = self.statuses.setdefault((repo, sha), {})
        old = found.get(context)
        status = FakeStatus(self._new_id(), context, state, description, target_url,
                            old.created_at if old else now, now)
        found[context] = status
        return status

    def add_comment(self, repo: str, number: int, author: str, body: str,
                    *, author_type: str = "User") -> FakeComment:
        self.pull(repo, number)
        now = self.now()
        comment = FakeComment(self._new_id(), repo, number, author, body, now, now, author_type)
        self.comments[comment.id] = comment
        return comment

    def add_review(self, repo: str, number: int, login: str, state: str = "APPROVED",
                   *, body: str = "", commit_id: str | None = None,
                   author_type: str = "User") -> FakeReview:
        pull = self.pull(repo, number)
        review = FakeReview(self._new_id(), login, state, body, commit_id or pull.head_sha,
                            self.now(), author_type)
        pull.reviews.append(review)
        return review

    def add_review_comment(self, repo: str, number: int, author: str, body: str, *,
                           path: str = "vllm/model.py", line: int = 1,
                           in_reply_to: int | None = None, commit_id: str | None = None,
                           author_type: str = "User") -> FakeReviewComment:
        pull = self.pull(repo, number)
        comment = FakeReviewComment(
            self._new_id(), repo, number, author, body, path, line,
            commit_id or pull.head_sha, self.now(), in_reply_to, author_type=author_type)
        self.review_comments[comment.id] = comment
        return comment

    def add_issue(self, repo: str, number: int, title: str, *, state: str = "open",
                  author: str = "someone") -> FakeIssue:
        self.add_repo(repo)
        issue = FakeIssue(repo, number, title, state, author)
        self.issues[(repo, number)] = issue
        return issue

    def set_permission(self, repo: str, login: str, permission: str,
                       role_name: str | None = None) -> None:
        self.add_repo(repo).permissions[login] = (permission, role_name or permission)

    # --- queries for tests -------------------------------------------------

    def pull(self, repo: str, number: int) -> FakePull:
        try:
            return self.pulls[(repo, number)]
        except KeyError:
            raise FakeHTTPError(404, "Not Found") from None

    def comments_on(self, repo: str, number: int) -> list[FakeComment]:
        return sorted((c for c in self.comments.values()
                       if c.repo == repo and c.number == number), key=lambda c: c.id)

    def bot_comments(self, repo: str, number: int, login: str = "pr-digest[bot]") -> list[str]:
        return [c.body for c in self.comments_on(repo, number) if c.author == login]

    def count(self, method: str, route: str) -> int:
        return sum(1 for c in self.calls if c.method == method and c.route == route)

    def open_review_requests(self, login: str) -> int:
        return sum(1 for p in self.pulls.values()
                   if p.state == "open" and login in p.requested_users)

    # --- fault injection ---------------------------------------------------

    def fail_next(self, method: str, path_pattern: str, status: int, *, times: int = 1,
                  headers: dict[str, str] | None = None,
                  body: dict[str, Any] | list[Any] | None = None,
                  applied: bool = False) -> None:
        """Fail the next `times` matching calls. `path_pattern` is a glob matched
        against the templated route and the concrete path. `applied=True` performs
        the write first (GitHub created the comment, the response was lost)."""
        self.faults.append(Fault(method.upper(), path_pattern, status, times,
                                 dict(headers or {}), body, applied))

    def slow_next(self, method: str, path_pattern: str, seconds: float, *,
                  times: int = 1) -> None:
        self.faults.append(Fault(method.upper(), path_pattern, 0, times, {}, None, False,
                                 delay=seconds))

    def secondary_rate_limit_next(self, method: str, path_pattern: str, *,
                                  retry_after: int = 60, times: int = 1) -> None:
        self.fail_next(method, path_pattern, 403, times=times,
                       headers={"Retry-After": str(retry_after)},
                       body={"message": SECONDARY_RATE_LIMIT_MESSAGE})

    def fail_every(self, n: int, status: int = 502, methods: Iterable[str] = ("GET",)) -> None:
        """Every `n`th call (counting calls with these methods) fails with `status`."""
        self._fail_every = (n, status, frozenset(m.upper() for m in methods))

    def fail_randomly(self, probability: float, status: int = 502,
                      methods: Iterable[str] = ("GET",)) -> None:
        """Fail calls at random, from the state's seeded RNG (reproducible)."""
        self._fail_probability = (probability, status, frozenset(m.upper() for m in methods))

    def take_fault(self, method: str, route: str, path: str) -> Fault | None:
        """Called once per request by each front end; consumes a matching fault."""
        for fault in self.faults:
            if fault.method == method and (fnmatch.fnmatchcase(route, fault.path_pattern)
                                           or fnmatch.fnmatchcase(path, fault.path_pattern)):
                fault.times -= 1
                if fault.times <= 0:
                    self.faults.remove(fault)
                return fault
        if self._fail_every and method in self._fail_every[2]:
            self._call_counter += 1
            if self._call_counter % self._fail_every[0] == 0:
                return Fault(method, path, self._fail_every[1], 1, {}, None, False)
        if (self._fail_probability and method in self._fail_probability[2]
                and self._rng.random() < self._fail_probability[0]):
            return Fault(method, path, self._fail_probability[1], 1, {}, None, False)
        return None

    # --- rate limit --------------------------------------------------------

    def rate_limit_reset(self) -> int:
        return int((self.now() + timedelta(hours=1)).timestamp())

    def consume_rate_limit(self) -> dict[str, str]:
        """Headers for one response; raises 403 (primary limit) when exhausted."""
        exhausted = self.rate_limit_remaining <= 0
        self.rate_limit_remaining = max(0, self.rate_limit_remaining - 1)
        headers = {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(self.rate_limit_remaining),
            "X-RateLimit-Reset": str(self.rate_limit_reset()),
            "X-RateLimit-Used": str(self.rate_limit - self.rate_limit_remaining),
            "X-RateLimit-Resource": "core",
        }
        if exhausted:
            raise FakeHTTPError(403, "API rate limit exceeded for installation.", headers)
        return headers

    def record(self, method: str, route: str, path: str, status: int,
               query: str = "") -> None:
        self.calls.append(CallRecord(method, route, path, status, query=query))

    # --- auth --------------------------------------------------------------

    def issue_token(self, installation_id: int) -> tuple[str, datetime]:
        if installation_id not in self.installations:
            raise FakeHTTPError(404, "Not Found")
        token = "ghs_" + secrets.token_hex(18)
        expires_at = (self.now() + timedelta(hours=1)).replace(microsecond=0)
        self.tokens[token] = (installation_id, expires_at)
        return token, expires_at

    def token_is_valid(self, token: str) -> bool:
        issued = self.tokens.get(token)
        return issued is not None and self.now() < issued[1]

    # --- GitHub semantics (both front ends call these) ---------------------

    def list_files(self, repo: str, number: int) -> list[FakeFile]:
        files = self.pull(repo, number).files
        return files if self.files_cap is None else files[: self.files_cap]

    def list_comments(self, repo: str, number: int) -> list[FakeComment]:
        self.pull(repo, number)
        return self.comments_on(repo, number)

    def list_review_comments(self, repo: str, number: int) -> list[FakeReviewComment]:
        self.pull(repo, number)
        return sorted((c for c in self.review_comments.values()
                       if c.repo == repo and c.number == number), key=lambda c: c.id)

    def compare(self, repo: str, base: str, head: str) -> tuple[FakeRepo, int]:
        """The repository and how many commits `head` (its default branch or head SHA)
        has past `base`; 404 for another head, as GitHub answers for an unknown ref."""
        found = self.repos.get(repo)
        if found is None or head not in (found.default_branch, found.head_sha):
            raise FakeHTTPError(404, "Not Found")
        return found, found.base_moved.get(base, 0)

    def issue(self, repo: str, number: int) -> FakePull | FakeIssue:
        """What the issues endpoint answers for: a PR (GitHub lists PRs as issues too)
        or a plain issue."""
        pull = self.pulls.get((repo, number))
        if pull is not None:
            return pull
        found = self.issues.get((repo, number))
        if found is None:
            raise FakeHTTPError(404, "Not Found")
        return found

    def _check_body(self, body: str) -> None:
        if len(body) > COMMENT_MAX_CHARS:
            raise FakeHTTPError(422, "Validation Failed: body is too long "
                                     f"(maximum is {COMMENT_MAX_CHARS} characters)")

    def create_comment(self, repo: str, number: int, author: str, body: str,
                       *, author_type: str = "Bot") -> FakeComment:
        self._check_body(body)
        return self.add_comment(repo, number, author, body, author_type=author_type)

    def comment(self, repo: str, comment_id: int) -> FakeComment:
        found = self.comments.get(comment_id)
        if found is None or found.repo != repo:
            raise FakeHTTPError(404, "Not Found")
        return found

    def update_comment(self, repo: str, comment_id: int, body: str) -> FakeComment:
        comment = self.comment(repo, comment_id)
        self._check_body(body)
        comment.body = body
        comment.updated_at = self.now()
        return comment

    def delete_comment(self, repo: str, comment_id: int) -> None:
        self.comment(repo, comment_id)
        del self.comments[comment_id]

    def _check_output(self, output: Mapping[str, Any] | None) -> tuple[str, str]:
        if output is None:
            return "", ""
        title, summary = output.get("title"), output.get("summary")
        if not isinstance(title, str) or not isinstance(summary, str):
            raise FakeHTTPError(422, "Invalid request: output needs title and summary")
        if len(summary) > CHECK_OUTPUT_MAX_CHARS:
            raise FakeHTTPError(422, "Invalid request: output.summary is too long "
                                     f"(maximum is {CHECK_OUTPUT_MAX_CHARS} characters)")
        return title, summary

    def create_check_run(self, repo: str, app_slug: str, body: Mapping[str, Any]
                         ) -> FakeCheckRun:
        if repo not in self.repos:
            raise FakeHTTPError(404, "Not Found")
        name, sha = body.get("name"), body.get("head_sha")
        if not isinstance(name, str) or not isinstance(sha, str) or not name:
            raise FakeHTTPError(422, "Invalid request: name and head_sha are required")
        title, summary = self._check_output(body.get("output"))
        now = self.now()
        run = FakeCheckRun(
            id=self._new_id(), repo=repo, head_sha=sha, name=name, app_slug=app_slug,
            status=str(body.get("status", "queued")), conclusion=body.get("conclusion"),
            title=title, summary=summary, started_at=now,
            completed_at=now if body.get("status") == "completed" else None)
        self.check_runs[run.id] = run
        return run

    def update_check_run(self, repo: str, check_run_id: int, app_slug: str,
                         body: Mapping[str, Any]) -> FakeCheckRun:
        run = self.check_runs.get(check_run_id)
        if run is None or run.repo != repo:
            raise FakeHTTPError(404, "Not Found")
        if run.app_slug != app_slug:
            raise FakeHTTPError(403, "Invalid app_id `other` - check run can only be "
                                     "modified by the GitHub App that created it.")
        if "output" in body:
            run.title, run.summary = self._check_output(body["output"])
        if "status" in body:
            run.status = str(body["status"])
        if "conclusion" in body:
            run.conclusion = body["conclusion"]
            run.status, run.completed_at = "completed", self.now()
        return run

    def check_runs_for(self, repo: str, sha: str, name: str | None = None
                       ) -> list[FakeCheckRun]:
        """Newest first, as GitHub lists them."""
        return sorted((r for r in self.check_runs.values()
                       if r.repo == repo and r.head_sha == sha
                       and (name is None or r.name == name)),
                      key=lambda r: r.id, reverse=True)

    def add_reaction(self, repo: str, comment_id: int, login: str, content: str) -> None:
        comment = self.comment(repo, comment_id)
        if (login, content) not in comment.reactions:
            comment.reactions.append((login, content))

    def add_labels(self, repo: str, number: int, labels: Iterable[str]) -> list[str]:
        pull = self.pull(repo, number)
        for label in labels:
            if label not in pull.labels:
                pull.labels.append(label)
        return pull.labels

    def remove_label(self, repo: str, number: int, label: str) -> list[str]:
        pull = self.pull(repo, number)
        if label not in pull.labels:
            raise FakeHTTPError(404, "Label does not exist")
        pull.labels.remove(label)
        return pull.labels

    def request_reviewers(self, repo: str, number: int, users: Iterable[str],
                          teams: Iterable[str]) -> FakePull:
        pull = self.pull(repo, number)
        users, teams = list(users), list(teams)
        if pull.author in users:
            raise FakeHTTPError(422, "Review cannot be requested from pull request author.")
        found = self.repos.get(repo)
        if found is not None and found.no_access & {*users, *teams}:
            # GitHub's words, which do not say who: the whole request is refused.
            raise FakeHTTPError(422, "Reviews may only be requested from collaborators. One "
                                f"or more of the users or teams you specified is not a "
                                f"collaborator of the {repo} repository.")
        for user in users:
            if user not in pull.requested_users:
                pull.requested_users.append(user)
        for team in teams:
            if team not in pull.requested_teams:
                pull.requested_teams.append(team)
        return pull

    def permission(self, repo: str, login: str) -> tuple[str, str]:
        found = self.repos.get(repo)
        if found is None or login not in found.permissions:
            raise FakeHTTPError(404, f"{login} is not a user")
        return found.permissions[login]

    def default_branch_file(self, repo: str, path: str) -> str:
        found = self.repos.get(repo)
        if found is None or path not in found.files:
            raise FakeHTTPError(404, "Not Found")
        return found.files[path]

    def combined_status(self, repo: str, sha: str) -> tuple[str, list[FakeStatus]]:
        """GitHub's roll-up state and the newest status per context, newest first."""
        if repo not in self.repos:
            raise FakeHTTPError(404, "Not Found")
        found = sorted(self.statuses.get((repo, sha), {}).values(),
                       key=lambda s: (s.updated_at, s.id), reverse=True)
        states = {s.state for s in found}
        if states & {"error", "failure"}:
            rollup = "failure"
        elif not found or "pending" in states:
            rollup = "pending"
        else:
            rollup = "success"
        return rollup, found

    def pulls_for_commit(self, repo: str, sha: str) -> list[FakePull]:
        """The open PRs whose head is `sha` (what GitHub lists for an unmerged commit)."""
        if repo not in self.repos:
            raise FakeHTTPError(404, "Not Found")
        return [p for p in self.pulls.values()
                if p.repo == repo and p.state == "open" and p.head_sha == sha]

    def open_pulls(self, repo: str) -> list[FakePull]:
        if repo not in self.repos:
            raise FakeHTTPError(404, "Not Found")
        pulls = [p for p in self.pulls.values() if p.repo == repo and p.state == "open"]
        return sorted(pulls, key=lambda p: (p.updated_at, p.number), reverse=True)


def _git_sha(kind: str, data: bytes) -> str:
    header = f"{kind} {len(data)}".encode() + b"\0"
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()


def _store_tree(repo: FakeRepo, nested: dict[str, Any]) -> str:
    entries: list[tuple[str, str, str, int | None]] = []
    raw = b""
    for name in sorted(nested):
        value = nested[name]
        if isinstance(value, dict):
            sha, mode, kind, size = _store_tree(repo, value), b"40000", "tree", None
        else:
            sha, mode, kind, size = _git_sha("blob", value), b"100644", "blob", len(value)
            repo.blobs[sha] = value
        entries.append((name, kind, sha, size))
        raw += mode + b" " + name.encode() + b"\0" + bytes.fromhex(sha)
    tree_sha = _git_sha("tree", raw)
    repo.trees[tree_sha] = entries
    return tree_sha
