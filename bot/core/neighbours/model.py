"""The records the neighbours are found from, and what is found: data, never words."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

Relation = Literal["competes", "overlaps"]
# Strongest first (bot/core/neighbours/find.py ranks by this order).
Reason = Literal["same-issue", "same-title", "same-function", "same-file"]
DependencyState = Literal["open", "merged", "closed", "unknown"]
Cue = Literal["depends-on", "after", "stacked-on", "blocked-by"]


class ChangedSymbol(BaseModel):
    """A function or class a PR changes, qualified by its file (the digest's `symbols`)."""

    model_config = ConfigDict(frozen=True)

    file: str
    name: str


class OpenPr(BaseModel):
    """One open PR as the service keeps it (and `digest --open-prs` reads it). Everything
    but the numbers is untrusted text from GitHub."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    number: int
    title: str = ""
    author: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    state: str = "open"
    draft: bool = False
    approved: bool = False
    # The head's CI build as the PR's own digest read it (passed | failed | running | …;
    # "" unknown).
    ci: str = ""
    head_sha: str = ""
    files: tuple[str, ...] = ()
    symbols: tuple[ChangedSymbol, ...] = ()
    # Issues (and PRs) its title and description say it fixes, in this repository.
    fixes: tuple[int, ...] = ()
    # GitHub's `mergeable_state` (clean | dirty | behind | blocked | unstable | unknown …);
    # "" when GitHub had not computed it yet.
    mergeable_state: str = ""


class Neighbour(BaseModel):
    """Another open PR by someone else that competes with or overlaps this one."""

    model_config = ConfigDict(frozen=True)

    number: int
    relation: Relation
    reason: Reason
    # What is shared: "file::name" for functions, paths for files, "#N" for issues.
    shared: tuple[str, ...] = ()
    shared_count: int = 0
    title: str = ""
    author: str = ""
    created_at: datetime | None = None
    draft: bool = False
    approved: bool = False
    ci: str = ""


class DependencyRef(BaseModel):
    """"Depends on #N" (or after, stacked on, blocked by) in the body or the author's
    comments: `cue` is the phrase's kind, as an id."""

    model_config = ConfigDict(frozen=True)

    number: int
    cue: Cue


class Dependency(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    cue: Cue
    state: DependencyState = "unknown"


class LiveState(BaseModel):
    """The PR's own state on GitHub now: merge conflicts, behind its base, CI failing."""

    model_config = ConfigDict(frozen=True)

    mergeable_state: str = ""  # as GitHub said it; "" not computed yet
    conflicts: bool = False
    behind: bool = False
    ci_failed: bool = False
    # Commits the base branch gained since the PR's merge base (GitHub's compare
    # `ahead_by`); None when unknown (not asked, or the call failed).
    base_behind_by: int | None = None


class Neighbours(BaseModel):
    """Ranked strongest first; the digest shows the first `MAX_SHOWN` and counts the rest."""

    model_config = ConfigDict(frozen=True)

    neighbours: tuple[Neighbour, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    live: LiveState = LiveState()
    # How many other open PRs were compared (0: none were known).
    compared: int = 0
