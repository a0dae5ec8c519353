"""The repository's config at one commit, parsed: what the digest reads from it."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.repo_config.codeowners import CodeOwners, parse_codeowners
from bot.core.repo_config.files import CODEOWNERS_PATHS, ConfigFiles


@dataclass(frozen=True)
class RepoConfig:
    source: str  # "base 1a2b3c4" | "checkout DIR"
    codeowners: CodeOwners | None = None
    problems: tuple[str, ...] = ()  # "file:line: message" for what was read and refused


def read_repo_config(files: ConfigFiles) -> RepoConfig:
    """Parse what was read; a file that is absent leaves its part None."""
    found = files.first(CODEOWNERS_PATHS)
    codeowners = parse_codeowners(found[1], source=found[0]) if found else None
    return RepoConfig(
        source=files.source,
        codeowners=codeowners,
        problems=(*files.problems, *(codeowners.problems if codeowners else ())),
    )
