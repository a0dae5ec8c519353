"""Read the rules directory (the only I/O of the rules engine) and write its JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

from bot.core.rules import RuleFileError, RuleSet, is_rule_file, parse_rules, rules_json_schema


def read_rule_sources(directory: Path) -> dict[str, str]:
    """{file name: text} for every rule file directly in `directory` (sorted by name)."""
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(directory.iterdir())
        if path.is_file() and is_rule_file(path.name)
    }


def load_rules(directory: Path) -> RuleSet:
    """Parse and compile the rules in `directory`; raises RuleFileError or OSError."""
    return parse_rules(read_rule_sources(directory))


def check_rules(directory: Path) -> list[str]:
    """Human-readable problems ("file:line: rule 'id': message"); empty when valid."""
    if not directory.is_dir():
        return [f"{directory}: not a directory"]
    try:
        load_rules(directory)
    except RuleFileError as exc:
        return [str(problem) for problem in exc.problems]
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{directory}: cannot read rules: {exc}"]
    return []


def write_schema(path: Path) -> None:
    path.write_text(
        json.dumps(rules_json_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
