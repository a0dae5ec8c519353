"""Schema of rules/routing.yaml: reviewer pools keyed by the repository's label names."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

# One malformed name makes GitHub reject a whole review request with 422, so a
# "@login" or "org/team" typo must fail when the config loads, not on a PR.
_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}")
_TEAM_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


# Bot accounts whose PRs (dependency bumps, CI housekeeping) need no reading guide.
DEFAULT_SKIP_AUTHORS = (
    "dependabot[bot]", "renovate[bot]", "pre-commit-ci[bot]", "github-actions[bot]",
)


def _check_names(names: list[str], pattern: re.Pattern[str], what: str) -> list[str]:
    for name in names:
        if not pattern.fullmatch(name):
            raise ValueError(f"{name!r} is not a GitHub {what} (no '@', no 'org/')")
    return names


def _check_logins(names: list[str]) -> list[str]:
    return _check_names(names, _LOGIN, "login")


# defer_build (both models): built when routing.yaml is first parsed, not at import:
# a digest from cached rules never validates it.
class Pool(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    users: list[str] = Field(default_factory=list)
    teams: list[str] = Field(default_factory=list)  # team slugs, without the org
    cap: int = Field(default=2, ge=1, le=5)  # reviewers requested per label

    _users_are_logins = field_validator("users")(_check_logins)

    @field_validator("teams")
    @classmethod
    def _teams_are_slugs(cls, teams: list[str]) -> list[str]:
        return _check_names(teams, _TEAM_SLUG, "team slug")


class RoutingConfig(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    # Keyed by real label names on the repo (vLLM: torch.compile, multi-modality, ...).
    pools: dict[str, Pool] = Field(default_factory=dict)
    away: list[str] = Field(default_factory=list)  # never requested while listed
    trusted: list[str] = Field(default_factory=list)  # may run every /digest command
    # GitHub accepts at most 15 requested reviewers; stay well under it.
    max_reviewers_per_pr: int = Field(default=4, ge=1, le=10)
    # Add the matched areas' labels to the PR (only labels the bot added are removed).
    apply_area_labels: bool = False
    # Request reviews automatically when a routed label appears (else only on /digest route).
    request_on_label: bool = True
    # /digest commands accepted per PR per minute (bot/core/permissions.CommandBudget).
    commands_per_minute: int = Field(default=6, ge=1, le=60)
    # No digest for these authors (the bot itself never gets one either) or for PRs with
    # any of these labels; a digest already posted is reduced like a quiet one's.
    skip_authors: list[str] = Field(default_factory=lambda: list(DEFAULT_SKIP_AUTHORS))
    skip_labels: list[str] = Field(default_factory=list)

    def skip_reason(self, author: str, labels: tuple[str, ...] | list[str],
                    bot_login: str) -> str | None:
        """Why this PR gets no digest (an author or label to skip), or None."""
        who = author.lower()
        if who == bot_login.lower() or who in {a.lower() for a in self.skip_authors}:
            return f"author {author}"
        skip = {label.lower() for label in self.skip_labels}
        for label in labels:
            if label.lower() in skip:
                return f"label {label}"
        return None

    _people_are_logins = field_validator("away", "trusted")(_check_logins)
