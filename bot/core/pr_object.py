"""Turn GitHub's pull-request JSON (webhook payload or REST object) into PullRequestFacts.

App-owned models with extra="ignore": githubkit's webhook models reject many real
payloads and cost ~9 ms per parse (docs/architecture.md), and we need a dozen fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.facts import ChangedFile, PullRequestFacts


class _Login(BaseModel):
    model_config = ConfigDict(extra="ignore")
    login: str = ""
    type: str = "User"


class _Label(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str


class _RepoRef(BaseModel):
    model_config = ConfigDict(extra="ignore")
    full_name: str = ""


class _Ref(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ref: str = "main"
    sha: str = ""
    repo: _RepoRef | None = None


class PullRequestObject(BaseModel):
    """The fields of GitHub's pull-request object that the digest reads."""

    model_config = ConfigDict(extra="ignore")

    number: int
    title: str = ""
    body: str | None = None
    user: _Login | None = None
    labels: list[_Label] = Field(default_factory=list)
    base: _Ref = Field(default_factory=_Ref)
    head: _Ref = Field(default_factory=_Ref)
    draft: bool = False
    state: str = "open"
    changed_files: int = 0
    additions: int = 0
    deletions: int = 0
    html_url: str = ""


class NotAPullRequest(ValueError):
    """The JSON is neither a pull_request webhook payload nor a PR object."""


def pull_request_object(payload: Mapping[str, Any]) -> PullRequestObject:
    """Accept a `pull_request` webhook payload or a bare PR object."""
    raw = payload.get("pull_request", payload)
    if not isinstance(raw, Mapping) or "number" not in raw or "head" not in raw:
        raise NotAPullRequest("not a pull_request payload or PR object (no number/head)")
    try:
        return PullRequestObject.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise NotAPullRequest(f"malformed pull request: {where}: {first['msg']}") from None


def changed_files(items: Sequence[Mapping[str, Any]]) -> tuple[ChangedFile, ...]:
    """PR-file objects as the PR-files endpoint returns them."""
    try:
        return tuple(ChangedFile.model_validate(item) for item in items)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise NotAPullRequest(f"malformed file list: {where}: {first['msg']}") from None


def facts_from_pull_request(
    pr: PullRequestObject, files: Sequence[ChangedFile] = (), repo: str | None = None
) -> PullRequestFacts:
    base_repo = pr.base.repo.full_name if pr.base.repo else ""
    return PullRequestFacts(
        repo=repo or base_repo or "vllm-project/vllm",
        number=pr.number,
        title=pr.title,
        body=pr.body or "",
        author=pr.user.login if pr.user else "",
        labels=tuple(label.name for label in pr.labels),
        base_ref=pr.base.ref,
        base_sha=pr.base.sha,
        head_sha=pr.head.sha,
        draft=pr.draft,
        state=pr.state,
        changed_files=pr.changed_files,
        additions=pr.additions,
        deletions=pr.deletions,
        files=tuple(files),
    )
