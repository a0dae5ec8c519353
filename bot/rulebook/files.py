"""Read the rules directory (the only I/O of the rules engine) and write its JSON Schemas.

`load_rules_cached` keeps the compiled RuleSet of a rules version in a user cache file,
so a CLI run does not re-read YAML and re-validate every rule (~85 ms). See
`bot/rulebook/cache.py`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.core.routing.config import RoutingConfig
from bot.core.rules import RuleFileError, RuleSet, is_rule_file, parse_rules, rules_json_schema
from bot.core.rules.parse import compile_rule_files, read_rule_files
from bot.core.rules.risk_settings import RiskSettings
from bot.core.rules.schema import JSON_SCHEMA_DRAFT


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


def load_rules_cached(directory: Path, cache_dir: Path | None = None) -> RuleSet:
    """`load_rules`, answered from the compiled-rules cache when it holds this exact
    rules version (same file bytes, same code); built and stored otherwise. A cache that
    is missing, stale, corrupt or not ours is ignored, never trusted."""
    from bot.rulebook.cache import RulesCache, default_cache_dir

    sources = read_rule_sources(directory)
    cache = RulesCache(cache_dir if cache_dir is not None else default_cache_dir())
    cached = cache.load(sources)
    if cached is not None:
        return cached
    rules = parse_rules(sources)
    cache.store(sources, rules)
    return rules


def check_rules(directory: Path) -> list[str]:
    """Human-readable problems ("file:line: rule 'id': message"), every one found; empty
    when valid. A file that cannot be read is one of them; a directory without a single
    area rule is one too (a service loading it would digest every PR as matching nothing)."""
    if not directory.is_dir():
        return [f"{directory}: not a directory"]
    try:
        sources, unreadable = _read_each(directory)
        files = read_rule_files(sources, unreadable)
        compile_rule_files(files)
    except RuleFileError as exc:
        return [str(problem) for problem in exc.problems]
    except OSError as exc:
        return [f"{directory}: cannot read rules: {exc}"]
    if not files.areas:
        return [f"{directory}: no area rules (one <area>.yaml per area, besides routing.yaml "
                "and risks.yaml)"]
    return []


def _read_each(directory: Path) -> tuple[dict[str, str], dict[str, str]]:
    """`read_rule_sources`, going on past a file it cannot read: ({name: text}, {name: why})."""
    sources: dict[str, str] = {}
    unreadable: dict[str, str] = {}
    for path in sorted(directory.iterdir()):
        if not (path.is_file() and is_rule_file(path.name)):
            continue
        try:
            sources[path.name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            unreadable[path.name] = f"not UTF-8 text (byte {exc.start})"
        except OSError as exc:
            unreadable[path.name] = f"cannot read: {exc.strerror or exc}"
    return sources, unreadable


def override_json_schema() -> dict[str, Any]:
    """JSON Schema of a repository's .github/pr-digest.yml, for editors."""
    from bot.core.rules.override import override_json_schema as schema

    return schema()


def routing_json_schema() -> dict[str, Any]:
    """JSON Schema of rules/routing.yaml, for editors."""
    return {"$schema": JSON_SCHEMA_DRAFT, **RoutingConfig.model_json_schema(by_alias=True),
            "title": "pr-digest routing.yaml"}


def risks_json_schema() -> dict[str, Any]:
    """JSON Schema of rules/risks.yaml, for editors."""
    return {"$schema": JSON_SCHEMA_DRAFT, **RiskSettings.model_json_schema(by_alias=True),
            "title": "pr-digest risks.yaml"}


# File name in rules/ -> its schema; `digest-bot export-schema` writes them all and
# tests/core/rules/test_rules_schema.py checks the committed ones are current.
SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "schema.json": rules_json_schema,
    "override.schema.json": override_json_schema,
    "routing.schema.json": routing_json_schema,
    "risks.schema.json": risks_json_schema,
}


def schema_text(name: str) -> str:
    return json.dumps(SCHEMAS[name](), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path) -> None:
    """The area rule schema only, to `path`."""
    path.write_text(schema_text("schema.json"), encoding="utf-8")


def write_schemas(directory: Path) -> list[Path]:
    """Every schema in SCHEMAS into `directory`; the paths written."""
    written = []
    for name in SCHEMAS:
        target = directory / name
        target.write_text(schema_text(name), encoding="utf-8")
        written.append(target)
    return written
