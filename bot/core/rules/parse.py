"""parse_rules: rule-file texts in, a compiled RuleSet out, or every problem with its line.

Two steps, so a repository's override (override.py) can reuse the first: `read_rule_files`
validates the files into a RuleFiles (areas, routing, risks, and the raw mappings the
override's keys replace), `compile_rule_files` compiles one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from bot.core.routing.config import RoutingConfig
from bot.core.rules.compiled import RuleSet, compile_rules
from bot.core.rules.problems import RuleFileError, RuleProblem
from bot.core.rules.risk_settings import RiskSettings
from bot.core.rules.schema import AreaRule

if TYPE_CHECKING:
    import yaml

    from bot.core.rules.yaml_source import YamlSource

ROUTING_STEM = "routing"
RISKS_STEM = "risks"
_SUFFIXES = (".yaml", ".yml")
_Model = TypeVar("_Model", bound=BaseModel)
Loc = tuple[int | str, ...]


def line_of(root: yaml.Node, loc: Sequence[int | str]) -> int:
    # YAML (and its reader) is imported only when rule text is read: a digest whose
    # compiled rules come from the cache (bot/rulebook/cache.py) never needs it.
    from bot.core.rules.yaml_source import line_of as yaml_line_of

    return yaml_line_of(root, loc)


def is_rule_file(name: str) -> bool:
    """Files starting with '_' (drafts, shared snippets) and non-YAML files are ignored."""
    return not name.startswith("_") and name.endswith(_SUFFIXES)


def _stem(name: str) -> str:
    return PurePosixPath(name).stem


def _describe(error: Any, model: type[BaseModel], prefix: Loc = ()) -> tuple[Loc, str]:
    """(location of the node to blame, message) for one pydantic error; the message
    names the key path from the file's top (`prefix` + the error's own location)."""
    loc: Loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return loc, _at(prefix + loc[:-1], f"unknown key {loc[-1]!r}{_meant(model, loc)}")
    if kind == "missing":
        return loc[:-1], _at(prefix + loc[:-1], f"missing required key {loc[-1]!r}")
    message = str(error["msg"]).removeprefix("Value error, ")
    return loc, _at(prefix + loc, message)


def _meant(model: type[BaseModel], loc: Loc) -> str:
    """` (did you mean 'routing'?)` after an unknown key close to one the schema allows
    at that place; empty when none is close."""
    from bot.core.rules.suggest import allowed_keys, nearest

    key = loc[-1]
    meant = nearest(key, allowed_keys(model, loc[:-1])) if isinstance(key, str) else None
    return f" (did you mean {meant!r}?)" if meant else ""


def _at(loc: Loc, message: str) -> str:
    return f"{'.'.join(str(part) for part in loc)}: {message}" if loc else message


def dotted(loc: Loc) -> str:
    return "".join(f"{part}." for part in loc)


@dataclass(frozen=True)
class AreaDocument:
    """One area rule as written: a whole rules/<id>.yaml, or one item of an override's
    `areas` list (`prefix` is then ("areas", i): messages name the key path from the
    file's top, lines come from the item's own nodes)."""

    file: str
    source: YamlSource
    prefix: Loc = ()
    stem: str | None = None  # a rule file's id must equal its name


class Parser:
    """Collects every problem instead of stopping at the first."""

    def __init__(self) -> None:
        self.problems: list[RuleProblem] = []

    def problem(self, file: str, line: int, rule: str | None, message: str) -> None:
        self.problems.append(RuleProblem(file, line, rule, message))

    def read(self, name: str, text: str, *, allow_empty: bool = False) -> YamlSource | None:
        from bot.core.rules.yaml_source import YamlProblem, read_yaml

        try:
            return read_yaml(text, allow_empty=allow_empty)
        except YamlProblem as exc:
            self.problem(name, exc.line, None, exc.message)
            return None

    def validate(
        self,
        model: type[_Model],
        name: str,
        source: YamlSource,
        rule: str | None,
        prefix: Loc = (),
    ) -> _Model | None:
        try:
            return model.model_validate(source.data)
        except ValidationError as exc:
            self.record(exc, model, name, source, rule, prefix)
            return None

    def record(
        self,
        exc: ValidationError,
        model: type[BaseModel],
        name: str,
        source: YamlSource,
        rule: str | None,
        prefix: Loc = (),
    ) -> list[Loc]:
        """Every error of `exc` as a problem at its own line; the locations refused."""
        refused: list[Loc] = []
        for error in exc.errors():
            loc, message = _describe(error, model, prefix)
            self.problem(name, line_of(source.root, loc), rule, message)
            refused.append(tuple(error["loc"]))
        return refused

    def settings(
        self,
        model: type[_Model],
        sources: Mapping[str, str],
        stem: str,
        unreadable: Collection[str] = (),
    ) -> _Setting:
        if any(_stem(name) == stem for name in unreadable):
            return _Setting(None, {})  # its problem is recorded; nothing is checked against it
        for name in sorted(sources):
            if _stem(name) == stem and is_rule_file(name):
                source = self.read(name, sources[name])
                if source is None:
                    return _Setting(None, {})
                data = source.data if isinstance(source.data, dict) else {}
                return _Setting(self.validate(model, name, source, None), data)
        return _Setting(model(), {})

    def areas(
        self,
        documents: Sequence[AreaDocument],
        routing: RoutingConfig | None,
        checklist_ids: dict[str, str],
        area_files: dict[str, str],
    ) -> list[tuple[str, AreaRule]]:
        """Validate area documents; ids and checklist ids must be new (they are added to
        `area_files` and `checklist_ids`), routing labels must have a pool."""
        rules: list[tuple[str, AreaRule]] = []
        for doc in documents:
            data = doc.source.data
            declared = data.get("id") if isinstance(data, dict) else None
            rule_id = declared if isinstance(declared, str) else None
            id_line = line_of(doc.source.root, ("id",))
            where = dotted(doc.prefix)
            if rule_id is not None and doc.stem is not None and rule_id != doc.stem:
                message = f"id: must equal the file name {doc.stem!r}"
                self.problem(doc.file, id_line, rule_id, message)
            if rule_id is not None and rule_id in area_files:
                message = f"{where}id: already defined in {area_files[rule_id]}"
                self.problem(doc.file, id_line, rule_id, message)
            elif rule_id is not None:
                area_files[rule_id] = f"{doc.file}:{id_line}"
            _check_checklist_ids(self, doc, rule_id, checklist_ids)
            if routing is not None:
                _check_routing_labels(self, doc, rule_id, routing)
            rule = self.validate(AreaRule, doc.file, doc.source, rule_id, doc.prefix)
            if rule is not None:
                rules.append((doc.file, rule))
        return rules

    def raise_if_any(self) -> None:
        if self.problems:
            raise RuleFileError(sorted(self.problems, key=lambda p: (p.file, p.line)))


@dataclass(frozen=True)
class _Setting:
    model: Any
    data: dict[str, Any]  # the mapping as written, for an override to merge into


@dataclass(frozen=True)
class RuleFiles:
    """Validated rule files, not yet compiled."""

    areas: tuple[tuple[str, AreaRule], ...]  # (file, rule), in file-name order
    routing: RoutingConfig
    risks: RiskSettings
    routing_data: Mapping[str, Any]
    risks_data: Mapping[str, Any]
    version: str


def rules_version(sources: Mapping[str, str]) -> str:
    digest = sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return digest.hexdigest()[:12]


def read_rule_files(
    sources: Mapping[str, str], unreadable: Mapping[str, str] | None = None
) -> RuleFiles:
    """Validate rule files given as {file name: YAML text}.

    `routing.yaml` and `risks.yaml` are settings; every other `*.yaml` is one area.
    `unreadable` holds the rule files that could not be read as text, {file name: why}:
    each is one more problem, and the others are still checked.
    Raises RuleFileError listing every problem found (not just the first).
    """
    used = {name: text for name, text in sources.items() if is_rule_file(name)}
    parser = Parser()
    failed = {name: why for name, why in (unreadable or {}).items() if is_rule_file(name)}
    for name, why in failed.items():
        parser.problem(name, 1, None, why)
    routing = parser.settings(RoutingConfig, used, ROUTING_STEM, failed)
    risks = parser.settings(RiskSettings, used, RISKS_STEM, failed)
    documents: list[AreaDocument] = []
    for name in sorted(used):
        stem = _stem(name)
        if stem in (ROUTING_STEM, RISKS_STEM):
            continue
        source = parser.read(name, used[name])
        if source is not None:
            documents.append(AreaDocument(name, source, stem=stem))
    rules = parser.areas(documents, routing.model, {}, {})
    parser.raise_if_any()
    # A None always comes with a recorded problem, so both are set here.
    assert isinstance(routing.model, RoutingConfig)
    assert isinstance(risks.model, RiskSettings)
    return RuleFiles(
        areas=tuple(rules),
        routing=routing.model,
        risks=risks.model,
        routing_data=routing.data,
        risks_data=risks.data,
        version=rules_version(used),
    )


def compile_rule_files(files: RuleFiles) -> RuleSet:
    return compile_rules(files.areas, files.routing, files.risks, files.version)


def parse_rules(sources: Mapping[str, str]) -> RuleSet:
    """Validate and compile rule files given as {file name: YAML text}."""
    return compile_rule_files(read_rule_files(sources))


def _check_checklist_ids(
    parser: Parser, doc: AreaDocument, rule: str | None, seen: dict[str, str]
) -> None:
    data = doc.source.data
    items = data.get("checklist") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        item_id = item.get("id") if isinstance(item, dict) else None
        if not isinstance(item_id, str):
            continue
        line = line_of(doc.source.root, ("checklist", index, "id"))
        if item_id in seen:
            parser.problem(
                doc.file,
                line,
                rule,
                f"{dotted(doc.prefix)}checklist.{index}.id: {item_id!r} is already used at "
                f"{seen[item_id]}",
            )
        else:
            seen[item_id] = f"{doc.file}:{line}"


def _check_routing_labels(
    parser: Parser, doc: AreaDocument, rule: str | None, routing: RoutingConfig
) -> None:
    # Read from the raw data so the check runs even when the rule has other problems.
    data = doc.source.data
    section = data.get("routing") if isinstance(data, dict) else None
    labels = section.get("labels") if isinstance(section, dict) else None
    for index, label in enumerate(labels if isinstance(labels, list) else ()):
        if isinstance(label, str) and label not in routing.pools:
            parser.problem(
                doc.file,
                line_of(doc.source.root, ("routing", "labels", index)),
                rule,
                f"{dotted(doc.prefix)}routing.labels.{index}: label {label!r} has no pool "
                "in routing.yaml",
            )
