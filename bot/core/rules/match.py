"""match_areas: which area rules a PR touches, with reasons and a trace of every rule."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.core.facts import PullRequestFacts, is_test_path
from bot.core.rules.added import added_lines
from bot.core.rules.compiled import CompiledArea, CompiledCondition, RuleSet
from bot.core.rules.evaluate import MAX_REASONS, Outcome, PullRequestScan, Reason, evaluate
from bot.core.rules.schema import CRITICALITY_ORDER, LocalizedText
from bot.core.vocabulary import AreaMatch, ChecklistItem, Evidence, RuleText, TraceEntry

MAX_FILES_PER_AREA = 20  # files beyond this are counted, not listed, in the reasons
MAX_NOTES = 3
# An added line that only imports a name, or one in a test, says the PR *uses* an area's
# name, not that it changes the area: alone it never opens one (issue 27).
_IMPORT_LINE = re.compile(r"\s*(?:from\s+[\w.]+\s+import\b|import\s+\w|#\s*include\b)")
# A checklist item that asks for a test to *exist* under a tests/ path ("A test under
# tests/entrypoints ...", "A tests/kernels test ...", "tests/models/registry.py has an
# entry ...") is already met when the PR adds lines there: the file list answers it.
_ASKS_FOR_TEST = re.compile(
    r"^(?:A\s+test\s+(?:under|in)\s+`?(tests/[\w./-]+?)`?[\s,.]"
    r"|A\s+`?(tests/[\w./-]+?)`?\s+test\b"
    r"|`?(tests/[\w./-]+\.py)`?\s+has\s+an?\s+entry\b)"
)
_WEAK_ADDED = "only added lines in tests or imports matched: not enough to open the area"


@dataclass(frozen=True)
class AreaMatchResult:
    areas: tuple[AreaMatch, ...]
    trace: tuple[TraceEntry, ...]  # one entry per rule, fired or not
    # False when the added lines were too large to scan in full (added.SCAN_BUDGET_BYTES)
    added_complete: bool = True
    texts_complete: bool = True  # title, body, mention and base searches all ran


def _capped(reasons: list[Reason]) -> tuple[Evidence, ...]:
    unique = list(dict.fromkeys(reasons))
    paths = [e for e in unique if e.kind == "path"][:MAX_FILES_PER_AREA]
    others = [e for e in unique if e.kind != "path"]
    # Non-path reasons first: a title or label is rarer and says more than file #17.
    return tuple(reason.evidence() for reason in (others + paths)[:MAX_REASONS])


def _weak_added(reason: Reason, patches: Mapping[str, str]) -> bool:
    """An added-line reason (subject `file: phrase`) on a test file, or whose phrase is
    found on the file's added lines only where they import it."""
    path, _, phrase = reason.subject.partition(": ")
    if is_test_path(path):
        return True
    phrase = phrase.removesuffix("…")
    lines = [line for line in added_lines(patches.get(path) or "") if phrase in line]
    return bool(lines) and all(_IMPORT_LINE.match(line) for line in lines)


def _opens(outcome: Outcome, facts: PullRequestFacts) -> bool:
    """A path, a title, a label, the body... opens an area; added lines only when one
    of them is neither in a test nor an import."""
    if all(r.kind != "added" for r in outcome.evidence):
        return True
    patches = {f.filename: f.patch or "" for f in facts.files}
    return any(r.kind != "added" or not _weak_added(r, patches) for r in outcome.evidence)


def _met_by_files(item_en: str, facts: PullRequestFacts) -> bool:
    asked = _ASKS_FOR_TEST.match(item_en)
    if asked is None:
        return False
    where = next(group for group in asked.groups() if group).rstrip("/")
    return any(
        f.additions > 0 and (f.filename == where or f.filename.startswith(where + "/"))
        for f in facts.files
    )


def _applies(when: CompiledCondition | None, scan: PullRequestScan, rule: str) -> bool:
    return when is None or evaluate(when, scan, rule).ok


def _text(text: LocalizedText) -> RuleText:
    return RuleText(en=text.en, zh=text.zh)


def _area_match(area: CompiledArea, outcome: Outcome, scan: PullRequestScan) -> AreaMatch:
    files = sorted(set(outcome.files), key=scan.order.__getitem__)
    return AreaMatch(
        id=area.id,
        title=_text(area.title),
        audience=_text(area.audience),
        criticality=area.criticality,
        numerics=area.numerics,
        files=tuple(files),
        reasons=_capped(outcome.evidence),
        focus=tuple(_text(f.text) for f in area.focus if _applies(f.when, scan, area.id)),
        focus_triggered=tuple(
            _text(f.text)
            for f in area.focus
            if f.when is not None and _applies(f.when, scan, area.id)
        ),
        checklist=tuple(
            ChecklistItem(id=c.id, text=_text(c.text))
            for c in area.checklist
            if _applies(c.when, scan, area.id) and not _met_by_files(c.text.en, scan.facts)
        ),
        ci_areas=area.ci_areas,
        labels=area.labels,
        quiet=area.quiet,
    )


def _trace(area: CompiledArea, outcome: Outcome, files: int) -> TraceEntry:
    if outcome.ok:
        return TraceEntry(rule=area.id, fired=True, evidence=_capped(outcome.evidence),
                          files=files)
    notes = list(dict.fromkeys(outcome.notes))[:MAX_NOTES]
    if not notes and outcome.evidence:
        notes = ["partly matched"]
    return TraceEntry(
        rule=area.id, fired=False, evidence=_capped(outcome.evidence), note="; ".join(notes)
    )


def match_areas(facts: PullRequestFacts, rules: RuleSet) -> AreaMatchResult:
    scan = PullRequestScan(facts, rules)
    matches: list[AreaMatch] = []
    trace: list[TraceEntry] = []
    for area in rules.areas:
        outcome = evaluate(area.match, scan, area.id)
        if outcome.ok and not _opens(outcome, facts):
            outcome = Outcome(ok=False, evidence=outcome.evidence, notes=[_WEAK_ADDED])
        if outcome.ok:
            matches.append(_area_match(area, outcome, scan))
        trace.append(_trace(area, outcome, len(set(outcome.files))))
    matches.sort(key=lambda m: (CRITICALITY_ORDER[m.criticality], -len(m.files), m.id))
    return AreaMatchResult(
        areas=tuple(matches), trace=tuple(trace), added_complete=scan.added_complete,
        texts_complete=scan.texts_complete,
    )


def match_condition(cond: CompiledCondition, facts: PullRequestFacts, rules: RuleSet) -> bool:
    """Whether one compiled condition of `rules` holds for `facts` (for previews and tests)."""
    return evaluate(cond, PullRequestScan(facts, rules), "").ok
