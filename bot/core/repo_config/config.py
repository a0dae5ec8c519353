"""The repository's config at one commit, parsed: what the digest reads from it."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.reading.template import PullRequestTemplate, parse_template
from bot.core.repo_config.codeowners import CodeOwners, parse_codeowners
from bot.core.repo_config.files import (
    CI_CONFIG_PATH,
    CODEOWNERS_PATHS,
    INTEL_CI_CONFIG_PATH,
    MERGIFY_PATHS,
    TEMPLATE_PATHS,
    ConfigFiles,
)
from bot.core.repo_config.mergify import MergifyLabels, parse_mergify
from bot.core.repo_config.pipeline import Pipeline, parse_pipeline


@dataclass(frozen=True)
class RepoConfig:
    source: str  # "base 1a2b3c4" | "checkout DIR"
    codeowners: CodeOwners | None = None
    mergify: MergifyLabels | None = None
    pipeline: Pipeline | None = None
    # Intel's pipeline (.buildkite/ci_config_intel.yaml), None where the base has none
    intel_pipeline: Pipeline | None = None
    template: PullRequestTemplate | None = None
    problems: tuple[str, ...] = ()  # "file:line: message" for what was read and refused
    unread: bool = False  # a file could not be read this time (ConfigFiles.unread)


def read_repo_config(files: ConfigFiles) -> RepoConfig:
    """Parse what was read; a file that is absent leaves its part None."""
    found = files.first(CODEOWNERS_PATHS)
    codeowners = parse_codeowners(found[1], source=found[0]) if found else None
    found = files.first(MERGIFY_PATHS)
    mergify = parse_mergify(found[1], source=found[0]) if found else None
    pipeline = parse_pipeline(files.job_files()) if CI_CONFIG_PATH in files.texts else None
    intel = (parse_pipeline(files.job_files(), INTEL_CI_CONFIG_PATH)
             if INTEL_CI_CONFIG_PATH in files.texts else None)
    found = files.first(TEMPLATE_PATHS)
    template = parse_template(found[1], source=found[0]) if found else None
    return RepoConfig(
        unread=files.unread,
        source=files.source,
        codeowners=codeowners,
        mergify=mergify,
        pipeline=pipeline,
        intel_pipeline=intel,
        template=template,
        problems=(
            *files.problems,
            *(codeowners.problems if codeowners else ()),
            *(mergify.problems if mergify else ()),
            *(pipeline.problems if pipeline else ()),
            *(intel.problems if intel else ()),
        ),
    )
