"""Which of the repository's own files the digest reads at a PR's base, and their bounds.

The files are the repository's statement of how it works: its CI pipelines
(`.buildkite/ci_config.yaml`, Intel's `.buildkite/ci_config_intel.yaml` where the base
has one, and the job directories each names), its code owners, its
Mergify label rules and its PR template. Each is looked up where GitHub (or Mergify,
or Buildkite's generator) looks for it, first found wins. They come from the base
commit, never from the PR head: a PR cannot rewrite the rules it is judged by.

Pure: the caller lists directories and reads blobs; this module says what to ask for
and keeps what came back within bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.core.repo_config.codeowners import CODEOWNERS_PATHS
from bot.core.repo_config.mergify import MERGIFY_PATHS

__all__ = [
    "CI_CONFIG_PATHS", "CODEOWNERS_PATHS", "INTEL_CI_CONFIG_PATH", "MERGIFY_PATHS",
    "ConfigFiles", "decode", "job_dirs",
]
# GitHub's PR template locations; the name is case-insensitive there, these are the two
# spellings repositories use.
TEMPLATE_PATHS: tuple[str, ...] = (
    ".github/PULL_REQUEST_TEMPLATE.md", ".github/pull_request_template.md",
    "PULL_REQUEST_TEMPLATE.md", "pull_request_template.md",
    "docs/PULL_REQUEST_TEMPLATE.md", "docs/pull_request_template.md",
)
CI_CONFIG_PATH = ".buildkite/ci_config.yaml"
# Intel's pipeline (ci-infra's bootstrap-intel.sh): same generator, its own config and
# job dirs. Older bases have none, and nothing else depends on it.
INTEL_CI_CONFIG_PATH = ".buildkite/ci_config_intel.yaml"
CI_CONFIG_PATHS = (CI_CONFIG_PATH, INTEL_CI_CONFIG_PATH)
JOB_FILE_SUFFIXES = (".yaml", ".yml")

# vLLM's largest config file (mergify.yml) is ~20 KB and the whole set ~600 KB.
MAX_FILE_BYTES = 512 * 1024
MAX_FILES = 200
MAX_TOTAL_BYTES = 8 * 1024 * 1024
MAX_JOB_DIRS = 20
MAX_JOB_DEPTH = 4  # ci_config job dirs: vLLM nests one level (hardware_tests/intel_xpu_ci)


@dataclass(frozen=True)
class ConfigFiles:
    """The config files as read at one commit: path -> text, and what could not be read."""

    source: str  # "base 1a2b3c4" or "checkout DIR": where they were read
    texts: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    # GitHub did not answer for one of them (not: a file is absent or refused).
    unread: bool = False

    def first(self, paths: tuple[str, ...]) -> tuple[str, str] | None:
        """(path, text) of the first of `paths` that exists, in lookup order."""
        for path in paths:
            if path in self.texts:
                return path, self.texts[path]
        return None

    def job_files(self) -> dict[str, str]:
        """The CI configs and every job file read with them."""
        return {path: text for path, text in self.texts.items()
                if path.startswith(".buildkite/")}


def job_dirs(ci_config_text: str, path: str = CI_CONFIG_PATH) -> tuple[str, tuple[str, ...]]:
    """A CI config's `job_dirs` (normalised, at most MAX_JOB_DIRS), and a problem or ""."""
    from bot.core.rules.yaml_source import YamlProblem, read_yaml

    try:
        data = read_yaml(ci_config_text).data
    except YamlProblem as exc:
        return f"{path}:{exc.line}: {exc.message}", ()
    listed = data.get("job_dirs") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return f"{path}:1: no `job_dirs` list", ()
    dirs = tuple(dict.fromkeys(
        d.strip().strip("/") for d in listed
        if isinstance(d, str) and d.strip().strip("/") and ".." not in d.split("/")
    ))
    problem = ""
    if len(dirs) > MAX_JOB_DIRS:
        problem = f"{path}:1: {len(dirs)} job_dirs, read the first {MAX_JOB_DIRS}"
    return problem, dirs[:MAX_JOB_DIRS]


def decode(path: str, data: bytes) -> tuple[str | None, str]:
    """A config file's text, or None and why: too big, or not UTF-8."""
    if len(data) > MAX_FILE_BYTES:
        return None, f"{path}: {len(data):,} bytes, over the {MAX_FILE_BYTES:,}-byte cap; skipped"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, f"{path}: not UTF-8 text; skipped"
