"""Schema of an area rule file (rules/<id>.yaml): a closed vocabulary, validated strictly.

Only shape and per-value checks live here (regexes compile, globs are gitignore globs);
checks that span files (unique checklist ids, routing labels with a pool) live in parse.py.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.core.rules.globs import glob_problem
from bot.core.rules.patterns import pattern_problem
from bot.core.vocabulary import Criticality

_ID = r"^[a-z0-9][a-z0-9-]*$"
# The JSON Schema dialect of every schema we write for editors (rules/*.schema.json).
JSON_SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _anyof_string(schema: dict[str, Any]) -> None:
    # Editors should accept the plain-string shorthand that the validator accepts.
    as_object = dict(schema)
    schema.clear()
    schema["anyOf"] = [{"type": "string"}, as_object]


# Rules carry both languages as written (vocabulary.RuleText); rendering picks one.
class LocalizedText(BaseModel):
    """A plain string (English) or `{en: ..., zh: ...}`; Chinese falls back to English."""

    # defer_build (here and below): a digest from cached rules (bot/rulebook/cache.py) never
    # validates a rule file, so the validators are built when one is first parsed.
    model_config = ConfigDict(
        defer_build=True, extra="forbid", frozen=True, json_schema_extra=_anyof_string
    )

    en: str = Field(min_length=1)
    zh: str | None = Field(default=None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_plain_string(cls, value: object) -> object:
        return {"en": value} if isinstance(value, str) else value


def _check_regex(value: str | None) -> str | None:
    problem = pattern_problem(value) if value is not None else None
    if problem is not None:
        raise ValueError(f"invalid regex {value!r}: {problem}")
    return value


def _check_globs(values: list[str] | None) -> list[str] | None:
    for glob in values or ():
        problem = glob_problem(glob)
        if problem is not None:
            raise ValueError(f"invalid glob {glob!r}: {problem}")
    return values


class Condition(BaseModel):
    """Every key given must hold (AND). `any`/`all`/`not` nest conditions."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    paths: list[str] | None = Field(default=None, min_length=1)
    exclude: list[str] | None = Field(default=None, min_length=1)
    labels: list[str] | None = Field(default=None, min_length=1)
    title: str | None = None
    body: str | None = None
    added: str | None = None
    # A regex over the names the description mentions in prose (backticked identifiers,
    # dotted and file paths, one per line): bot/core/reading/mentions.py `body_names`.
    mentions: str | None = None
    base: str | None = None
    author: list[str] | None = Field(default=None, min_length=1)
    any_: list[Condition] | None = Field(default=None, alias="any", min_length=1)
    all_: list[Condition] | None = Field(default=None, alias="all", min_length=1)
    not_: Condition | None = Field(default=None, alias="not")

    _regexes = field_validator("title", "body", "added", "mentions", "base")(_check_regex)
    _globs = field_validator("paths", "exclude")(_check_globs)

    @model_validator(mode="after")
    def _meaningful(self) -> Condition:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError("a condition needs at least one key")
        if self.exclude is not None and self.paths is None:
            raise ValueError("exclude only works together with paths")
        return self


class FocusItem(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    text: LocalizedText
    when: Condition | None = None


class ChecklistEntry(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    id: str = Field(pattern=_ID)
    text: LocalizedText
    when: Condition | None = None


class AreaRouting(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    labels: list[str] = Field(default_factory=list)


class AreaRule(BaseModel):
    """One rules/<id>.yaml file."""

    model_config = ConfigDict(
        defer_build=True,
        extra="forbid",
        frozen=True,
        title="pr-digest area rule",
        json_schema_extra={"$schema": JSON_SCHEMA_DRAFT},
    )

    id: str = Field(pattern=_ID)
    title: LocalizedText
    audience: LocalizedText
    criticality: Criticality
    numerics: bool = False
    quiet: bool = False
    catch_all: bool = Field(
        default=False,
        description="A broad area that more specific ones refine (every model file, every "
                    "kernel): its routing line is left out when other shown areas route "
                    "all its files.",
    )
    # Only a fallback for a repository whose Buildkite config cannot be read at the PR's
    # base: the pipeline's own selection (bot/core/repo_config/pipeline.py) replaces it.
    ci_areas: list[str] = Field(
        default_factory=list,
        description="Buildkite test-area files; used only when the base's .buildkite/ "
                    "config cannot be read (it states which steps a path reaches).",
    )
    match: Condition
    focus: list[FocusItem] = Field(default_factory=list)
    checklist: list[ChecklistEntry] = Field(default_factory=list)
    routing: AreaRouting = Field(default_factory=AreaRouting)

    @field_validator("ci_areas")
    @classmethod
    def _ci_area_names(cls, values: list[str]) -> list[str]:
        for name in values:
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
                raise ValueError(f"{name!r} is not a Buildkite test-area file name")
        return values


Condition.model_rebuild()


def rules_json_schema() -> dict[str, Any]:
    """JSON Schema of an area rule file, for editors (written to rules/schema.json)."""
    return AreaRule.model_json_schema(by_alias=True)


CRITICALITY_ORDER: dict[Criticality, int] = {"critical": 0, "high": 1, "medium": 2, "low": 3}
