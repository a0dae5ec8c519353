"""The digest's findings as citable facts: each an id the model cites and its data.

Data, never the digest's sentences: the model words them itself. Ids are stable for the
same findings (a kind and the finding's own key, or its rank in the digest's order), so
the same facts give a byte-identical request."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from bot.core.findings import Digest

# Lists inside one fact are bounded: a 3,000-file area would otherwise fill the budget.
MAX_LIST = 20


@dataclass(frozen=True)
class Fact:
    id: str
    data: dict[str, Any]

    def line(self) -> str:
        return f"[{self.id}] {canonical_json(self.data)}"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _bounded(items: tuple[str, ...] | list[str]) -> list[str] | dict[str, Any]:
    items = list(items)
    if len(items) <= MAX_LIST:
        return items
    return {"first": items[:MAX_LIST], "more": len(items) - MAX_LIST}


def digest_facts(digest: Digest) -> tuple[Fact, ...]:
    facts: list[Fact] = [
        Fact("verdict", {
            "verdict": digest.verdict, "reading_minutes": digest.reading_minutes,
            "grounds": digest.verdict_grounds.model_dump() if digest.verdict_grounds else None,
        }),
        Fact("size", {"files": digest.files_total, "additions": digest.additions,
                      "deletions": digest.deletions}),
    ]
    for area in digest.areas:
        facts.append(Fact(f"area.{area.id}", {
            "area": area.title.en, "files": _bounded(area.files),
            "criticality": area.criticality, "numerics": area.numerics,
            "labels": list(area.labels),
        }))
    for risk in digest.risks:
        facts.append(Fact(f"risk.{risk.id}", {
            "severity": risk.severity,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in risk.params},
            "evidence": [clue.model_dump(exclude_defaults=True) for clue in risk.evidence],
        }))
    for ask in digest.asks:
        facts.append(Fact(f"ask.{ask.kind}", ask.model_dump(
            include={"kind", "by", "quote", "status", "answered_by", "access"})))
    for later in digest.later_evidence:
        facts.append(Fact(f"evidence.{later.risk}", later.model_dump(
            include={"risk", "outcome", "by", "evidence"})))
    facts += _numbered("symbol", [s.model_dump() for s in digest.symbols])
    facts += _numbered("decision", [
        {"quote": d.quote, "concerns": d.concerns, "file": d.concerns_file}
        for d in digest.decisions])
    facts += _numbered("structure", [asdict(s) for s in digest.structure])
    facts += _numbered("value", [asdict(v) for v in digest.value_changes])
    facts += _numbered("link", [
        {k: v for k, v in asdict(link).items() if v not in ("", False)} for link in digest.links])
    facts += _numbered("mention", [asdict(m) for m in digest.mentions])
    if digest.repo_context is not None:
        context = digest.repo_context
        facts += _numbered("siblings", [s.model_dump() for s in context.siblings])
        facts += _numbered("overrides", [o.model_dump() for o in context.overrides])
        facts += _numbered("callers", [c.model_dump() for c in context.callers])
    for note in digest.notes:
        facts.append(Fact(f"note.{note.id}", note.model_dump(exclude_defaults=True)))
    if digest.removed_files:
        facts.append(Fact("removed-files", {"files": _bounded(digest.removed_files)}))
    if digest.ticked:
        facts.append(Fact("template-ticked", {"boxes": list(digest.ticked)}))
    return tuple(facts)


def _numbered(kind: str, items: list[dict[str, Any]]) -> list[Fact]:
    return [Fact(f"{kind}.{n}", item) for n, item in enumerate(items, 1)]
