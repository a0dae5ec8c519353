"""parse_rules: rule-file texts in, a compiled RuleSet out, or every problem with its line."""

from __future__ import annotations

from collections.abc import Mapping
from hashlib import sha256
from pathlib import PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bot.core.risk_settings import RiskSettings
from bot.core.routing_config import RoutingConfig
from bot.core.rules.compiled import RuleSet, compile_rules
from bot.core.rules.problems import RuleFileError, RuleProblem
from bot.core.rules.schema import AreaRule
from bot.core.rules.yaml_source import YamlProblem, YamlSource, line_of, read_yaml

ROUTING_STEM = "routing"
RISKS_STEM = "risks"
_SUFFIXES = (".yaml", ".yml")
_Model = TypeVar("_Model", bound=BaseModel)


def is_rule_file(name: str) -> bool:
    """Files starting with '_' (drafts, shared snippets) and non-YAML files are ignored."""
    return not name.startswith("_") and name.endswith(_SUFFIXES)


def _stem(name: str) -> str:
    return PurePosixPath(name).stem


def _describe(error: Any) -> tuple[tuple[int | str, ...], str]:
    """(location of the node to blame, message) for one pydantic error."""
    loc: tuple[int | str, ...] = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return loc, _at(loc[:-1], f"unknown key {loc[-1]!r}")
    if kind == "missing":
        return loc[:-1], _at(loc[:-1], f"missing required key {loc[-1]!r}")
    message = str(error["msg"]).removeprefix("Value error, ")
    return loc, _at(loc, message)


def _at(loc: tuple[int | str, ...], message: str) -> str:
    return f"{'.'.join(str(part) for part in loc)}: {message}" if loc else message


class _Parser:
    def __init__(self) -> None:
        self.problems: list[RuleProblem] = []

    def problem(self, file: str, line: int, rule: str | None, message: str) -> None:
        self.problems.append(RuleProblem(file, line, rule, message))

    def read(self, name: str, text: str) -> YamlSource | None:
        try:
            return read_yaml(text)
        except YamlProblem as exc:
            self.problem(name, exc.line, None, exc.message)
            return None

    def validate(
        self, model: type[_Model], name: str, source: YamlSource, rule: str | None
    ) -> _Model | None:
        try:
            return model.model_validate(source.data)
        except ValidationError as exc:
            for error in exc.errors():
                loc, message = _describe(error)
                self.problem(name, line_of(source.root, loc), rule, message)
            return None

    def settings(self, model: type[_Model], sources: Mapping[str, str], stem: str) -> _Model | None:
        for name in sorted(sources):
            if _stem(name) == stem and is_rule_file(name):
                source = self.read(name, sources[name])
                return None if source is None else self.validate(model, name, source, None)
        return model()


def _rules_version(sources: Mapping[str, str]) -> str:
    digest = sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return digest.hexdigest()[:12]


def parse_rules(sources: Mapping[str, str]) -> RuleSet:
    """Validate and compile rule files given as {file name: YAML text}.

    `routing.yaml` and `risks.yaml` are settings; every other `*.yaml` is one area.
    Raises RuleFileError listing every problem found (not just the first).
    """
    used = {name: text for name, text in sources.items() if is_rule_file(name)}
    parser = _Parser()
    routing = parser.settings(RoutingConfig, used, ROUTING_STEM)
    risks = parser.settings(RiskSettings, used, RISKS_STEM)

    rules: list[tuple[str, AreaRule]] = []
    area_files: dict[str, str] = {}
    checklist_ids: dict[str, str] = {}
    for name in sorted(used):
        stem = _stem(name)
        if stem in (ROUTING_STEM, RISKS_STEM):
            continue
        source = parser.read(name, used[name])
        if source is None:
            continue
        data = source.data
        declared = data.get("id") if isinstance(data, dict) else None
        rule_id = declared if isinstance(declared, str) else None
        if rule_id is not None and rule_id != stem:
            parser.problem(
                name,
                line_of(source.root, ("id",)),
                rule_id,
                f"id: must equal the file name {stem!r}",
            )
        if rule_id is not None and rule_id in area_files:
            parser.problem(
                name,
                line_of(source.root, ("id",)),
                rule_id,
                f"id: already defined in {area_files[rule_id]}",
            )
        elif rule_id is not None:
            area_files[rule_id] = name
        _check_checklist_ids(parser, name, source, rule_id, checklist_ids)
        if routing is not None:
            _check_routing_labels(parser, name, source, rule_id, routing)
        rule = parser.validate(AreaRule, name, source, rule_id)
        if rule is None:
            continue
        rules.append((name, rule))

    if parser.problems:
        raise RuleFileError(sorted(parser.problems, key=lambda p: (p.file, p.line)))
    # A None always comes with a recorded problem, so both are set here.
    assert routing is not None
    assert risks is not None
    return compile_rules(rules, routing, risks, _rules_version(used))


def _check_checklist_ids(
    parser: _Parser, name: str, source: YamlSource, rule: str | None, seen: dict[str, str]
) -> None:
    data = source.data
    items = data.get("checklist") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        item_id = item.get("id") if isinstance(item, dict) else None
        if not isinstance(item_id, str):
            continue
        line = line_of(source.root, ("checklist", index, "id"))
        if item_id in seen:
            parser.problem(
                name,
                line,
                rule,
                f"checklist.{index}.id: {item_id!r} is already used at {seen[item_id]}",
            )
        else:
            seen[item_id] = f"{name}:{line}"


def _check_routing_labels(
    parser: _Parser, name: str, source: YamlSource, rule: str | None, routing: RoutingConfig
) -> None:
    # Read from the raw data so the check runs even when the rule has other problems.
    data = source.data
    section = data.get("routing") if isinstance(data, dict) else None
    labels = section.get("labels") if isinstance(section, dict) else None
    for index, label in enumerate(labels if isinstance(labels, list) else ()):
        if isinstance(label, str) and label not in routing.pools:
            parser.problem(
                name,
                line_of(source.root, ("routing", "labels", index)),
                rule,
                f"routing.labels.{index}: label {label!r} has no pool in routing.yaml",
            )
