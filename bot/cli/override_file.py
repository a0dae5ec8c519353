"""A repository's override (`.github/pr-digest.yml`) read from disk for the offline
commands (`digest --repo-dir`, `simulate`), applied through `apply_override`: the one
function the service applies the default branch's copy with (bot/handlers/repo_rules.py),
so what a preview shows is what the service would post."""

from __future__ import annotations

from pathlib import Path

from bot.cli.problems import BadOverride
from bot.core.rules import RuleFileError, RuleSet
from bot.core.rules.parse import RuleFiles, read_rule_files
from bot.handlers.repo_rules import MAX_CONFIG_BYTES, apply_override
from bot.rulebook.files import read_rule_sources


def bundled_rule_files(rules_dir: Path) -> RuleFiles:
    try:
        return read_rule_files(read_rule_sources(rules_dir))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadOverride([f"{rules_dir}: cannot read the bundled rules: {exc}"]) from None
    except RuleFileError as exc:
        raise BadOverride([str(problem) for problem in exc.problems]) from None


def read_override_text(file: Path) -> str:
    """The override's text, read no further than the service would accept it."""
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise BadOverride([f"{file}: no such file"]) from None
    except IsADirectoryError:
        raise BadOverride([f"{file}: is a directory"]) from None
    except OSError as exc:
        raise BadOverride([f"{file}: cannot read: {exc.strerror}"]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) > MAX_CONFIG_BYTES:  # cut inside a character: the size is the problem
            return data.decode("utf-8", "replace")
        raise BadOverride([f"{file}:1: not UTF-8 text (byte {exc.start})"]) from None


def checkout_override(repo_dir: Path, config_path: str) -> Path | None:
    """`repo_dir`/`config_path` when the checkout has it (a symlink out of the checkout
    does not count, as the service reads only the repository's own files)."""
    root = repo_dir.resolve()
    candidate = (root / config_path).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return repo_dir / config_path


def rules_with_override(files: RuleFiles, text: str, name: str) -> RuleSet:
    """The bundled rules with the override applied, as the service applies it; a bad
    override raises BadOverride rather than falling back to the bundled rules (the
    service's fallback, with a note on the digest), since here someone is looking."""
    try:
        return apply_override(files, text, name)
    except RuleFileError as exc:
        raise BadOverride([str(problem) for problem in exc.problems]) from None
