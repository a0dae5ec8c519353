"""Which rules apply to a repository: the bundled rules/, optionally overridden by
`.github/pr-digest.yml` on the repository's default branch (never the PR head).

The override file:

    areas:            # full area rules (same schema as rules/<id>.yaml): replace or add
      - id: compile
        ...
    disable: [docs]   # bundled areas to switch off
    routing: {...}    # keys replace those of rules/routing.yaml
    risks: {...}      # keys replace those of rules/risks.yaml

An invalid override leaves the bundled rules in force and is reported in the digest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

import yaml

from bot.core.rules import RuleFileError, RuleSet, parse_rules
from bot.github.protocol import GitHubAPI

MAX_CONFIG_BYTES = 256 * 1024


@dataclass(frozen=True)
class RepoRules:
    rules: RuleSet
    problem: str | None = None  # why the repo's override was not applied


class RulesProvider:
    """Caches each repository's effective rules for `ttl` seconds (one contents call)."""

    def __init__(
        self,
        bundled_sources: Mapping[str, str],
        config_path: str = ".github/pr-digest.yml",
        ttl: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sources = dict(bundled_sources)
        self.bundled = parse_rules(self._sources)
        self._config_path = config_path
        self._ttl = ttl
        self._clock = clock
        self._fetched: dict[str, tuple[float, str | None]] = {}
        self._parsed: dict[str, RepoRules] = {}

    async def rules_for(self, gh: GitHubAPI, repo: str) -> RepoRules:
        now = self._clock()
        cached = self._fetched.get(repo)
        if cached is None or now - cached[0] > self._ttl:
            text = await gh.get_default_branch_file(repo, self._config_path)
            cached = (now, text)
            self._fetched[repo] = cached
        return self.rules_from_text(cached[1])

    def rules_from_text(self, text: str | None) -> RepoRules:
        if text is None or not text.strip():
            return RepoRules(self.bundled)
        key = sha256(text.encode()).hexdigest()
        if key not in self._parsed:
            self._parsed[key] = self._apply_override(text)
        return self._parsed[key]

    def _apply_override(self, text: str) -> RepoRules:
        path = self._config_path
        if len(text.encode()) > MAX_CONFIG_BYTES:
            return RepoRules(self.bundled, f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            return RepoRules(self.bundled, f"{path}{line}: not valid YAML")
        if not isinstance(data, dict):
            return RepoRules(self.bundled, f"{path}: expected a mapping at the top level")
        unknown = set(data) - {"areas", "disable", "routing", "risks"}
        if unknown:
            return RepoRules(self.bundled, f"{path}: unknown key(s) {sorted(unknown)}")
        try:
            sources = self._merged_sources(data)
        except ValueError as exc:
            return RepoRules(self.bundled, f"{path}: {exc}")
        try:
            return RepoRules(parse_rules(sources))
        except RuleFileError as exc:
            return RepoRules(self.bundled, f"{path}: {exc}")

    def _merged_sources(self, data: dict[str, Any]) -> dict[str, str]:
        sources = dict(self._sources)
        disable = data.get("disable") or []
        if not isinstance(disable, list):
            raise ValueError("disable: expected a list of area ids")
        for area_id in disable:
            sources.pop(f"{area_id}.yaml", None)
        areas = data.get("areas") or []
        if not isinstance(areas, list):
            raise ValueError("areas: expected a list of area rules")
        for index, area in enumerate(areas):
            if not isinstance(area, dict) or not isinstance(area.get("id"), str):
                raise ValueError(f"areas.{index}: an area rule needs an id")
            sources[f"{area['id']}.yaml"] = yaml.safe_dump(area, sort_keys=False)
        for section in ("routing", "risks"):
            override = data.get(section)
            if override is None:
                continue
            if not isinstance(override, dict):
                raise ValueError(f"{section}: expected a mapping")
            base = yaml.safe_load(sources.get(f"{section}.yaml", "")) or {}
            sources[f"{section}.yaml"] = yaml.safe_dump({**base, **override}, sort_keys=False)
        return sources
