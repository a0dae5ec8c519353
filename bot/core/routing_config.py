"""Schema of rules/routing.yaml: reviewer pools keyed by the repository's label names."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Pool(BaseModel):
    model_config = ConfigDict(extra="forbid")

    users: list[str] = Field(default_factory=list)
    teams: list[str] = Field(default_factory=list)  # team slugs, without the org
    cap: int = Field(default=2, ge=1, le=5)  # reviewers requested per label


class RoutingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

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
