"""Evaluate compiled conditions against one PR, keeping the evidence and near misses."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.core.facts import PullRequestFacts
from bot.core.reading.mentions import body_names
from bot.core.reading.template import strip_html_comments
from bot.core.rules.compiled import CompiledCondition, RuleSet
from bot.core.rules.patterns import MAX_TEXT_BYTES, LinePattern
from bot.core.vocabulary import Evidence, EvidenceKind

SUBJECT_CHARS = 80
# Weighted bytes (patterns.cost_weight) of title, body, mention and base searches per PR.
# Each distinct (pattern, text) is searched once; the bundled rules search well under
# 8 MB on a 65,536-character body. The budget is for an override's costly patterns.
TEXT_SCAN_BUDGET_BYTES = 32 * 1024 * 1024
# Evidence items a rule's digest entry or trace line shows (match._capped).
MAX_REASONS = 30


def _short(text: str) -> str:
    # Called for every added-line hit (tens of thousands on a big PR): most phrases are
    # one printable line with single spaces, which `split`/`join` would return unchanged
    # (the only whitespace a printable string can hold is the ASCII space).
    if not (text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "):
        text = " ".join(text.split())
    return text if len(text) <= SUBJECT_CHARS else text[: SUBJECT_CHARS - 1] + "…"


class Reason(NamedTuple):
    """An Evidence not yet built: a big PR yields thousands per rule, and only the few
    that reach a digest or trace are worth a validated model. Equal exactly when the
    Evidence would be, so de-duplicating reasons de-duplicates evidence."""

    rule: str
    kind: EvidenceKind
    subject: str

    def evidence(self) -> Evidence:
        return Evidence(rule=self.rule, kind=self.kind, subject=self.subject)


class PullRequestScan:
    """What every condition reads from one PR, computed once for all rules."""

    # Path reasons a condition keeps: its files are distinct and in PR order, and a rule's
    # digest entry and trace line show only the first match.MAX_FILES_PER_AREA (< this)
    # distinct path reasons of all its conditions' evidence, first come first
    # (match._capped), so a 3,000-file condition need not build 3,000 of them. None
    # keeps them all: the definition (tests/core/rules/test_engine_equivalence.py).
    path_reasons: int | None = MAX_REASONS

    def __init__(self, facts: PullRequestFacts, rules: RuleSet) -> None:
        self.facts = facts
        names = [f.filename for f in facts.files]
        self.order = {name: i for i, name in enumerate(names)}
        self.glob_files = rules.path_index.match(names)
        self.added = rules.added_scanner.index(
            [(f.filename, f.patch) for f in facts.files if f.patch]
        )
        self.added_complete = self.added.complete
        # GitHub hides HTML comments when rendering; the template's guidance lives in
        # them, so phrases there are not the author's words.
        self.body = strip_html_comments(facts.body)
        self.mentions = "\n".join(body_names(facts.body))
        self.labels = frozenset(facts.labels)
        self.author = facts.author.lower()
        self._subjects: dict[tuple[str, str], str] = {}
        self._files_of: dict[tuple[int, ...], list[str]] = {}
        self._texts_left = TEXT_SCAN_BUDGET_BYTES
        self._text_hits: dict[tuple[str, bool, str], str | None] = {}
        self.texts_complete = True

    def search_text(self, kind: str, regex: LinePattern, text: str) -> str | None:
        """`regex.search(text)`, once per (pattern, kind) and within the text budget:
        past it, a pattern finds nothing and the scan says it was partial."""
        key = (regex.source, regex.ignore_case, kind)
        if key in self._text_hits:
            return self._text_hits[key]
        size = len(text) if text.isascii() else len(text) * 4  # UTF-8's most per character
        cost = min(size, MAX_TEXT_BYTES) * regex.cost_weight
        if cost > self._texts_left:
            self.texts_complete = False
            return None
        self._texts_left -= cost
        found = self._text_hits[key] = regex.search(text)
        return found

    def added_hits(self, added_id: int, allowed: AbstractSet[str] | None) -> tuple[list[str], bool]:
        """Evidence subjects of the first MAX_REASONS hits of one added pattern in files
        of `allowed` (None: any file), and whether the pattern hits any file at all.
        More could never be shown: match._capped keeps MAX_REASONS, and a hit's subject
        names its file, so one pattern's subjects are all distinct."""
        hits, anywhere = self.added.first_hits(added_id, allowed, MAX_REASONS)
        subjects = self._subjects
        out = []
        for hit in hits:
            subject = subjects.get(hit)
            if subject is None:
                subject = subjects[hit] = f"{hit[0]}: {_short(hit[1])}"
            out.append(subject)
        return out, anywhere

    def files_of(self, glob_ids: Iterable[int]) -> list[str]:
        """The files any of the globs matches, in PR order (a new list: callers extend it).
        An area's condition is evaluated again for its focus lines and checklist: its
        files are gathered and sorted once."""
        key = tuple(glob_ids)
        known = self._files_of.get(key)
        if known is None:
            found = {name for glob_id in key for name in self.glob_files.get(glob_id, ())}
            known = self._files_of[key] = sorted(found, key=self.order.__getitem__)
        return list(known)


@dataclass
class Outcome:
    """`evidence` holds what matched; when `ok` is False it is what *nearly* matched."""

    ok: bool
    evidence: list[Reason] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Key:
    name: str
    ok: bool
    evidence: list[Reason]


def _regex_key(
    rule: str, kind: EvidenceKind, regex: LinePattern | None, text: str, scan: PullRequestScan
) -> _Key | None:
    if regex is None:
        return None
    found = scan.search_text(kind, regex, text)
    if found is None:
        return _Key(kind, False, [])
    return _Key(kind, True, [Reason(rule, kind, _short(found or text))])


def evaluate(cond: CompiledCondition, scan: PullRequestScan, rule: str) -> Outcome:
    keys: list[_Key] = []
    notes: list[str] = []
    files: list[str] = []
    if cond.path_ids:
        matched = scan.files_of(cond.path_ids)
        files = matched
        if cond.exclude_ids and matched:
            excluded = set(scan.files_of(cond.exclude_ids))
            files = [name for name in matched if name not in excluded]
            if not files:
                notes.append(f"paths matched {len(matched)} file(s) but every one was excluded")
        keys.append(
            _Key(
                "paths",
                bool(files),
                [Reason(rule, "path", name) for name in files[: scan.path_reasons]],
            )
        )
    if cond.labels is not None:
        hit = sorted(cond.labels & scan.labels)
        keys.append(
            _Key(
                "labels",
                bool(hit),
                [Reason(rule, "label", _short(x)) for x in hit],
            )
        )
    texts: tuple[tuple[EvidenceKind, LinePattern | None, str], ...] = (
        ("title", cond.title, scan.facts.title),
        ("body", cond.body, scan.body),
        ("mention", cond.mentions, scan.mentions),
        ("base", cond.base, scan.facts.base_ref),
    )
    for kind, regex, text in texts:
        key = _regex_key(rule, kind, regex, text, scan)
        if key is not None:
            keys.append(key)
    if cond.added_id is not None:
        allowed = set(files) if cond.path_ids else None
        subjects, anywhere = scan.added_hits(cond.added_id, allowed)
        if allowed is not None and anywhere and not subjects:
            notes.append("added pattern matched only in files outside this condition's paths")
        keys.append(
            _Key(
                "added",
                bool(subjects),
                [Reason(rule, "added", subject) for subject in subjects],
            )
        )
    if cond.authors is not None:
        ok = scan.author in cond.authors
        keys.append(
            _Key(
                "author",
                ok,
                [Reason(rule, "author", scan.facts.author)] if ok else [],
            )
        )
    if cond.any_:
        keys.append(
            _combine(
                "any",
                [evaluate(c, scan, rule) for c in cond.any_],
                all_needed=False,
                files=files,
                notes=notes,
            )
        )
    if cond.all_:
        keys.append(
            _combine(
                "all",
                [evaluate(c, scan, rule) for c in cond.all_],
                all_needed=True,
                files=files,
                notes=notes,
            )
        )
    if cond.not_ is not None:
        inner = evaluate(cond.not_, scan, rule)
        if inner.ok:
            notes.append("blocked by not: " + ", ".join(sorted({e.kind for e in inner.evidence})))
        keys.append(_Key("not", not inner.ok, []))

    ok = all(key.ok for key in keys)
    held = [key.name for key in keys if key.ok]
    failed = [key.name for key in keys if not key.ok]
    if held and failed:
        notes.append(f"{', '.join(held)} matched but {', '.join(failed)} did not")
    evidence = [e for key in keys for e in key.evidence]
    return Outcome(ok=ok, evidence=evidence, files=files if ok else [], notes=notes)


def _combine(
    name: str, outcomes: list[Outcome], *, all_needed: bool, files: list[str], notes: list[str]
) -> _Key:
    held = [o for o in outcomes if o.ok]
    ok = len(held) == len(outcomes) if all_needed else bool(held)
    for outcome in outcomes:
        notes.extend(outcome.notes)
    if all_needed and held and not ok:
        notes.append(f"all: {len(held)} of {len(outcomes)} conditions held")
    source = held if ok else outcomes
    # A set beside the list: `x not in files` was quadratic in an area's files (3,000).
    seen = set(files) if ok else set()
    for outcome in held if ok else ():
        for name in outcome.files:
            if name not in seen:
                seen.add(name)
                files.append(name)
    return _Key(name, ok, [e for o in source for e in o.evidence])
