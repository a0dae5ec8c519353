"""A repository's `.github/pr-digest.yml`, validated like the bundled rules.

    areas:            # full area rules (same schema as rules/<id>.yaml): replace or add
      - id: compile
        ...
    disable: [docs]   # bundled areas to switch off
    routing: {...}    # keys replace those of rules/routing.yaml
    risks: {...}      # keys replace those of rules/risks.yaml
    delivery: check   # comment | check | both: where this repository's digests go

The file goes through the same line-numbered YAML reader (depth-bounded, duplicate keys
and aliases refused) and strict models as rules/; every problem names the override's
own path and line, never a bundled file's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from hashlib import sha256
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.routing.config import RoutingConfig
from bot.core.rules.compiled import RuleSet, compile_rules
from bot.core.rules.parse import AreaDocument, Loc, Parser, RuleFiles
from bot.core.rules.risk_settings import RiskSettings
from bot.core.rules.schema import JSON_SCHEMA_DRAFT, AreaRule
from bot.core.rules.yaml_source import YamlSource, line_of, node_at
from bot.core.vocabulary import Delivery

OVERRIDE_PATH = ".github/pr-digest.yml"


class OverrideFile(BaseModel):
    """`.github/pr-digest.yml` on the repository's default branch (the JSON Schema's
    model; validation goes through `_Shape` and the models of each part, for lines)."""

    model_config = ConfigDict(
        extra="forbid",
        title="pr-digest repository override",
        json_schema_extra={"$schema": JSON_SCHEMA_DRAFT},
    )

    areas: list[AreaRule] = Field(
        default_factory=list,
        description="Whole area rules (the schema of rules/<id>.yaml): replace a bundled "
        "area with the same id, or add one.",
    )
    disable: list[str] = Field(default_factory=list, description="Bundled area ids to switch off.")
    routing: RoutingConfig | None = Field(
        default=None, description="Keys replace those of the bundled rules/routing.yaml."
    )
    risks: RiskSettings | None = Field(
        default=None, description="Keys replace those of the bundled rules/risks.yaml."
    )
    delivery: Delivery | None = Field(default=None, description=(
        "Where this repository's digests go: `comment` (one sticky comment), `check` (a"
        " neutral check run `pr-digest` on the head: no notification) or `both`; unset:"
        " the service's DIGEST_DELIVERY."))


class _Shape(BaseModel):
    """The top level only: each part is validated on its own so its errors keep lines."""

    model_config = ConfigDict(extra="forbid")

    areas: list[dict[str, Any]] | None = None
    disable: list[str] | None = None
    routing: dict[str, Any] | None = None
    risks: dict[str, Any] | None = None
    delivery: Delivery | None = None


@dataclass(frozen=True)
class _Parts:
    """The top level as far as `_Shape` accepts it. A part or a list item it refuses is
    reported once and left out, and the rest of the file is still checked, so one run
    lists every problem; items keep their index, which their messages and lines name."""

    areas: tuple[tuple[int, dict[str, Any]], ...]
    disable: tuple[tuple[int, str], ...]
    routing: dict[str, Any] | None
    risks: dict[str, Any] | None
    delivery: Delivery | None
    refused: frozenset[str]  # parts refused whole: unknown, so nothing is checked against them


def _parts(parser: Parser, name: str, source: YamlSource) -> _Parts:
    assert isinstance(source.data, dict)
    data: dict[Any, Any] = source.data
    try:
        _Shape.model_validate(data)
        refused: list[Loc] = []
    except ValidationError as exc:
        refused = parser.record(exc, _Shape, name, source, None)
    # An error at (key,) refuses the part (an unknown key, not a list or mapping), one at
    # (key, i, ...) the item i of a list; any error inside routing or risks, all of it.
    whole = {loc[0] for loc in refused if len(loc) == 1 or loc[0] in ("routing", "risks")}
    items = {loc[:2] for loc in refused if len(loc) > 1}

    def kept(key: str) -> tuple[tuple[int, Any], ...]:
        value = None if key in whole else data.get(key)
        return tuple((i, item) for i, item in enumerate(value or ()) if (key, i) not in items)

    return _Parts(
        areas=kept("areas"),
        disable=kept("disable"),
        routing=None if "routing" in whole else data.get("routing"),
        risks=None if "risks" in whole else data.get("risks"),
        delivery=None if "delivery" in whole else data.get("delivery"),
        refused=frozenset(str(key) for key in whole),
    )


def _sub(source: YamlSource, loc: Loc, data: object) -> YamlSource:
    return YamlSource(data, node_at(source.root, loc))


class _Override:
    def __init__(
        self, files: RuleFiles, name: str, source: YamlSource, parts: _Parts, parser: Parser
    ) -> None:
        self.files = files
        self.name = name
        self.source = source
        self.parts = parts
        self.parser = parser

    def line(self, loc: Loc) -> int:
        return line_of(self.source.root, loc)

    def disabled(self) -> set[str]:
        bundled = {rule.id for _, rule in self.files.areas}
        disabled: set[str] = set()
        for index, area_id in self.parts.disable:
            if area_id not in bundled:
                self.parser.problem(
                    self.name,
                    self.line(("disable", index)),
                    None,
                    f"disable.{index}: no bundled area {area_id!r} (bundled: "
                    f"{', '.join(sorted(bundled))})",
                )
            disabled.add(area_id)
        return disabled

    def setting(self, key: str, model: type[Any], bundled: Any, bundled_data: Any) -> Any:
        """The bundled setting with the override's keys replacing its own; None when the
        override's part is invalid (then nothing is checked against it)."""
        if key in self.parts.refused:
            return None
        given = getattr(self.parts, key)
        if given is None:
            return bundled
        merged = {**bundled_data, **given}
        part = _sub(self.source, (key,), merged)
        return self.parser.validate(model, self.name, part, None, (key,))

    def areas(
        self, routing: RoutingConfig | None, disabled: set[str]
    ) -> list[tuple[str, AreaRule]]:
        items = self.parts.areas
        documents = [
            AreaDocument(self.name, _sub(self.source, ("areas", i), item), prefix=("areas", i))
            for i, item in items
        ]
        ids = [(i, item.get("id") if isinstance(item.get("id"), str) else None)
               for i, item in items]
        for index, area_id in ids:
            if area_id in disabled:
                self.parser.problem(
                    self.name,
                    self.line(("areas", index, "id")),
                    area_id,
                    f"areas.{index}.id: area {area_id!r} is also listed under disable",
                )
        declared = {area_id for _, area_id in ids}
        kept = [(file, rule) for file, rule in self.files.areas
                if rule.id not in disabled and rule.id not in declared]
        checklist_ids = {item.id: file for file, rule in kept for item in rule.checklist}
        rules = self.parser.areas(documents, routing, checklist_ids, {})
        if routing is not None and self.parts.routing is not None:
            self.check_pools_of_kept(kept, routing)
        return [*kept, *rules]

    def check_pools_of_kept(
        self, kept: list[tuple[str, AreaRule]], routing: RoutingConfig
    ) -> None:
        for file, rule in kept:
            for label in rule.routing.labels:
                if label not in routing.pools:
                    self.parser.problem(
                        self.name,
                        self.line(("routing", "pools")),
                        None,
                        f"routing.pools: no pool for label {label!r}, which the bundled area "
                        f"{rule.id!r} ({file}) routes to",
                    )


def parse_override(files: RuleFiles, text: str, name: str = OVERRIDE_PATH) -> RuleSet:
    """The bundled rule files with a repository's override applied, compiled.

    Raises RuleFileError listing every problem, each at `name`:LINE: an unknown key or a
    part of the wrong kind is one of them, and the rest of the file is still checked.
    """
    parser = Parser()
    source = parser.read(name, text, allow_empty=True)
    if source is None:
        parser.raise_if_any()
        raise AssertionError("unreachable: a failed read records a problem")
    if not isinstance(source.data, dict):
        parser.problem(name, line_of(source.root, ()), None,
                       "expected a mapping with areas, disable, routing, risks or delivery")
        parser.raise_if_any()
    override = _Override(files, name, source, _parts(parser, name, source), parser)
    disabled = override.disabled()
    routing = override.setting("routing", RoutingConfig, files.routing, files.routing_data)
    risks = override.setting("risks", RiskSettings, files.risks, files.risks_data)
    areas = override.areas(routing, disabled)
    parser.raise_if_any()
    version = sha256(f"{files.version}\0{name}\0{text}".encode()).hexdigest()[:12]
    return replace(compile_rules(areas, routing, risks, version),
                   delivery=override.parts.delivery)


def override_json_schema() -> dict[str, Any]:
    """JSON Schema of `.github/pr-digest.yml`, for editors."""
    return OverrideFile.model_json_schema(by_alias=True)
