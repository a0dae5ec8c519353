"""What we know about a pull request: the input to every pure decision."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

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
