"""What we know about a pull request: the input to every pure decision."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# GitHub's PR-files endpoint returns at most this many files (REST docs, "List pull
# requests files"); a PR with more reports the true count in `changed_files`.
GITHUB_FILES_CAP = 3000


class ChangedFile(BaseModel):
    """One entry of the PR-files endpoint, trimmed to what the digest reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    filename: str
    status: str = "modified"  # added | removed | modified | renamed | copied | changed | unchanged
    additions: int = 0
    deletions: int = 0
    patch: str | None = None
    previous_filename: str | None = None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


# Files that are pages of prose, not code: a docs page, a README, notes.
PROSE_PAGE_SUFFIXES = (".md", ".rst", ".txt")


def is_prose_page(path: str) -> bool:
    """A page of prose (PROSE_PAGE_SUFFIXES), not a pip requirements file: a `.txt` pin
    (`requirements/common.txt`, `requirements-dev.txt`) changes what runs."""
    name = path.rsplit("/", 1)[-1]
    return (path.endswith(PROSE_PAGE_SUFFIXES) and not name.startswith("requirements")
            and not path.startswith("requirements/") and "/requirements/" not in path)


def is_test_path(path: str) -> bool:
    """A test or a test helper: under a tests/ folder, or a test_*.py or conftest file."""
    if path.startswith("tests/") or "/tests/" in path:
        return True
    return path.rsplit("/", 1)[-1].startswith(("test_", "conftest"))


# The digest asks for the totals a dozen times: summed without a Python step per file.
_ADDITIONS: Callable[[ChangedFile], int] = attrgetter("additions")
_DELETIONS: Callable[[ChangedFile], int] = attrgetter("deletions")


class PullRequestFacts(BaseModel):
    """Everything the digest is a function of (besides rules and language)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    repo: str = "vllm-project/vllm"
    number: int = 0
    title: str = ""
    body: str = ""
    author: str = ""
    labels: tuple[str, ...] = ()
    base_ref: str = "main"
    # The base commit: the repository's own config (CI, owners, labels) is read there.
    base_sha: str = ""
    head_sha: str = ""
    draft: bool = False
    state: str = "open"
    # The counts GitHub reports for the whole PR; `files` may be shorter (API cap,
    # or an offline run with a partial list).
    changed_files: int = 0
    additions: int = 0
    deletions: int = 0
    files: tuple[ChangedFile, ...] = Field(default_factory=tuple)
    # The parts whose read failed this time (`Part` ids, bot/core/vocabulary.py): the
    # digest marks them unavailable; an id it does not know is ignored.
    unavailable: tuple[str, ...] = ()

    @property
    def total_changed_files(self) -> int:
        return max(self.changed_files, len(self.files))

    @property
    def total_additions(self) -> int:
        return max(self.additions, sum(map(_ADDITIONS, self.files)))

    @property
    def total_deletions(self) -> int:
        return max(self.deletions, sum(map(_DELETIONS, self.files)))

    @property
    def files_truncated(self) -> bool:
        """GitHub listed some but not all files. No list at all (an offline run without
        the files) is not truncation: the digest says the file list is unknown."""
        return 0 < len(self.files) < self.changed_files


RemarkKind = Literal["comment", "review", "review_comment"]
LinkedState = Literal["open", "merged", "closed", "unknown"]


class Remark(BaseModel):
    """One piece of the PR's conversation: an issue comment, a review's body, or a review
    (line) comment. Bodies and logins are untrusted; `url` is built by us from the
    repository, the PR and the id, never taken from a payload."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    kind: RemarkKind
    id: int
    author: str
    author_is_bot: bool = False
    body: str = ""
    created_at: datetime | None = None
    url: str = ""
    commit_id: str = ""  # the head it was made on (reviews and review comments)
    in_reply_to: int | None = None  # a review comment's thread: the comment it answers
    path: str = ""  # a review comment's file
    review_state: str = ""  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED
    # The author may write to the repository (the collaborator-permission endpoint, or
    # offline the REST payload's author_association): their evidence counts, and only
    # their remarks move the label view's queue.
    maintainer: bool = False
    # The permission endpoint said the author may not write (triage, read, none). Neither
    # flag: not asked (over the job's budget, offline, or the read failed).
    outsider: bool = False


class LinkedItem(BaseModel):
    """What a linked PR or issue is now: its title and state, and for a closed-unmerged
    PR this one supersedes, the first sentence of its last maintainer review or comment.
    Everything but the numbers is untrusted."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    repo: str  # "" for this repository
    number: int
    title: str = ""
    state: LinkedState = "unknown"  # closed: a PR closed unmerged, or a closed issue
    is_pull: bool = False
    objection: str = ""
    objection_by: str = ""


class Conversation(BaseModel):
    """What was said on the PR after it opened, and what its linked work became."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    remarks: tuple[Remark, ...] = ()
    linked: tuple[LinkedItem, ...] = ()


class CommitStatus(BaseModel):
    """One context of a commit's combined status (GitHub keeps the newest per context)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    context: str
    state: str  # error | failure | pending | success
    description: str = ""


class HeadStatuses(BaseModel):
    """The commit statuses on the PR's head, as read for the CI pipeline's context.

    `context` is the pipeline build's own status (vLLM's Buildkite: `buildkite/ci/pr`);
    its steps report as `<context>/<step>`. `complete` is False when more statuses
    exist than were read; `problem` says why nothing could be read (then `statuses`
    is empty and nothing about the head's CI is claimed)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    context: str
    statuses: tuple[CommitStatus, ...] = ()
    complete: bool = True
    problem: str = ""
