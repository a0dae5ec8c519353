"""Rules compiled once at load: regexes compiled, globs and added-line patterns indexed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from bot.core.routing.config import RoutingConfig
from bot.core.rules.added import AddedScanner
from bot.core.rules.globs import PathIndex
from bot.core.rules.patterns import LinePattern
from bot.core.rules.risk_settings import RiskSettings
from bot.core.rules.schema import AreaRule, Condition, LocalizedText
from bot.core.vocabulary import Criticality, Delivery


@dataclass(frozen=True)
class CompiledCondition:
    path_ids: tuple[int, ...] = ()
    exclude_ids: tuple[int, ...] = ()
    labels: frozenset[str] | None = None
    title: LinePattern | None = None
    body: LinePattern | None = None
    added_id: int | None = None
    mentions: LinePattern | None = None
    base: LinePattern | None = None
    authors: frozenset[str] | None = None  # lower-cased: GitHub logins ignore case
    any_: tuple[CompiledCondition, ...] = ()
    all_: tuple[CompiledCondition, ...] = ()
    not_: CompiledCondition | None = None


@dataclass(frozen=True)
class CompiledFocus:
    text: LocalizedText
    when: CompiledCondition | None


@dataclass(frozen=True)
class CompiledChecklistItem:
    id: str
    text: LocalizedText
    when: CompiledCondition | None


@dataclass(frozen=True)
class CompiledArea:
    id: str
    source: str  # the file it came from
    title: LocalizedText
    audience: LocalizedText
    criticality: Criticality
    numerics: bool
    quiet: bool
    catch_all: bool
    ci_areas: tuple[str, ...]
    labels: tuple[str, ...]
    match: CompiledCondition
    focus: tuple[CompiledFocus, ...]
    checklist: tuple[CompiledChecklistItem, ...]


@dataclass(frozen=True)
class RuleSet:
    areas: tuple[CompiledArea, ...]
    routing: RoutingConfig
    risks: RiskSettings
    version: str
    # Shared by every condition of every area: one pass over files and patches per PR.
    path_index: PathIndex = field(default_factory=lambda: PathIndex(()), repr=False)
    added_scanner: AddedScanner = field(default_factory=lambda: AddedScanner(()), repr=False)
    # A repository's override may choose where its digests go; None: the service's setting.
    delivery: Delivery | None = None


def _conditions(rule: AreaRule) -> Iterator[Condition]:
    pending: list[Condition] = [rule.match]
    pending += [item.when for item in rule.focus if item.when is not None]
    pending += [item.when for item in rule.checklist if item.when is not None]
    while pending:
        condition = pending.pop()
        yield condition
        pending += condition.any_ or ()
        pending += condition.all_ or ()
        if condition.not_ is not None:
            pending.append(condition.not_)


def _pattern(source: str | None, *, multiline: bool = False) -> LinePattern | None:
    return LinePattern(source, multiline=multiline) if source is not None else None


class _Compiler:
    def __init__(self, rules: Sequence[AreaRule]) -> None:
        conditions = [c for rule in rules for c in _conditions(rule)]
        self.paths = PathIndex(
            g for c in conditions for g in (*(c.paths or ()), *(c.exclude or ()))
        )
        self.added = AddedScanner(c.added for c in conditions if c.added is not None)

    def condition(self, c: Condition) -> CompiledCondition:
        return CompiledCondition(
            path_ids=tuple(self.paths.ids[g] for g in c.paths or ()),
            exclude_ids=tuple(self.paths.ids[g] for g in c.exclude or ()),
            labels=frozenset(c.labels) if c.labels is not None else None,
            title=_pattern(c.title),
            body=_pattern(c.body),
            added_id=self.added.ids[c.added] if c.added is not None else None,
            mentions=_pattern(c.mentions, multiline=True),
            base=_pattern(c.base),
            authors=frozenset(a.lower() for a in c.author) if c.author is not None else None,
            any_=tuple(self.condition(x) for x in c.any_ or ()),
            all_=tuple(self.condition(x) for x in c.all_ or ()),
            not_=self.condition(c.not_) if c.not_ is not None else None,
        )

    def optional(self, c: Condition | None) -> CompiledCondition | None:
        return self.condition(c) if c is not None else None

    def area(self, rule: AreaRule, source: str) -> CompiledArea:
        return CompiledArea(
            id=rule.id,
            source=source,
            title=rule.title,
            audience=rule.audience,
            criticality=rule.criticality,
            numerics=rule.numerics,
            quiet=rule.quiet,
            catch_all=rule.catch_all,
            ci_areas=tuple(rule.ci_areas),
            labels=tuple(rule.routing.labels),
            match=self.condition(rule.match),
            focus=tuple(CompiledFocus(f.text, self.optional(f.when)) for f in rule.focus),
            checklist=tuple(
                CompiledChecklistItem(c.id, c.text, self.optional(c.when)) for c in rule.checklist
            ),
        )


def compile_rules(
    rules: Sequence[tuple[str, AreaRule]],
    routing: RoutingConfig,
    risks: RiskSettings,
    version: str,
) -> RuleSet:
    """Compile validated rules (source file name, rule) into a RuleSet."""
    compiler = _Compiler([rule for _, rule in rules])
    return RuleSet(
        areas=tuple(compiler.area(rule, source) for source, rule in rules),
        routing=routing,
        risks=risks,
        version=version,
        path_index=compiler.paths,
        added_scanner=compiler.added,
    )
