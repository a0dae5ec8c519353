"""Which rules apply to a repository: the bundled rules/, optionally overridden by
`.github/pr-digest.yml` on the repository's default branch (never the PR head).

The override's format and validation live in bot/core/rules/override.py. Any failure
to read it (invalid, too large, too deep, or a bug of ours) leaves the bundled rules in
force, and the digest says why (docs/configuration.md, "Writing a rule").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from hashlib import sha256

from bot.core.rules import RuleFileError, RuleSet
from bot.core.rules.override import OVERRIDE_PATH, parse_override
from bot.core.rules.parse import RuleFiles, compile_rule_files, read_rule_files
from bot.core.rules.problems import RuleProblem
from bot.github.protocol import GitHubAPI

log = logging.getLogger(__name__)

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
        config_path: str = OVERRIDE_PATH,
        ttl: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._files = read_rule_files(bundled_sources)
        self.bundled = compile_rule_files(self._files)
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
        try:
            return RepoRules(apply_override(self._files, text, self._config_path))
        except RuleFileError as exc:
            return RepoRules(self.bundled, _summary(exc))


def apply_override(files: RuleFiles, text: str, path: str = OVERRIDE_PATH) -> RuleSet:
    """The bundled rule files with the override `text` (read from `path`) applied.

    The service and `digest-bot check-config` both go through here, so a file the CLI
    accepts is one the service applies. Raises RuleFileError, each problem at `path`:LINE.
    """
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise RuleFileError([RuleProblem(path, 1, None, f"larger than {MAX_CONFIG_BYTES} bytes")])
    try:
        return parse_override(files, text, path)
    except RuleFileError:
        raise
    except Exception as exc:  # whatever it is, one repository's file must not fail its jobs
        log.exception("could not apply %s", path)
        raise RuleFileError(
            [RuleProblem(path, 1, None, f"could not be read ({type(exc).__name__})")]
        ) from None


def _summary(exc: RuleFileError, shown: int = 3) -> str:
    """The first problems, each `file:line: message`, for the digest's note."""
    problems = [str(problem) for problem in exc.problems]
    more = len(problems) - shown
    return "; ".join(problems[:shown]) + (f" (and {more} more)" if more > 0 else "")
