"""Before/after tables in the description: a value that changes for a named entity.

`| Model | max_model_len (before) | max_model_len (after) |` with a row whose two values
differ becomes one line, "`max_model_len` for TeleChat3: 131,072 → 32,768": existing
deployments of that entity may behave differently. Benchmark tables (throughput,
latency) are results, not configuration, and are left to the risk checks.
Line by line; tables are short, rows and cells are capped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.reading.prose import body_lines
from bot.core.reading.specifics import ValueChange

MAX_CHANGES = 3
_MAX_ROWS = 60
_MAX_CELL = 80
_BEFORE = ("before", "old", "previous", "current", "main", "baseline", "original", "default")
_AFTER = ("after", "new", "this pr", "proposed", "updated", "fixed", "patched")
_PERF = re.compile(
    r"throughput|latency|tok/s|tokens/s|req/s|ttft|tpot|itl|speedup|ms\b|qps|accuracy|"
    r"gsm8k|score|memory|time",
    re.IGNORECASE,
)
_WORD = re.compile(r"\b(" + "|".join(re.escape(w) for w in _BEFORE + _AFTER) + r")\b", re.I)


def find_value_changes(body: str | None, limit: int = MAX_CHANGES) -> tuple[ValueChange, ...]:
    changes: list[ValueChange] = []
    for table in _tables(body):
        changes.extend(_changes(table))
        if len(changes) >= limit:
            break
    return tuple(changes[:limit])


def _tables(body: str | None) -> Iterator[list[list[str]]]:
    rows: list[list[str]] = []
    for line in body_lines(body):
        stripped = line.text.strip()
        if not line.in_fence and stripped.startswith("|") and len(rows) < _MAX_ROWS:
            rows.append(_cells(stripped))
            continue
        if rows:
            yield rows
            rows = []
    if rows:
        yield rows


def _cells(row: str) -> list[str]:
    inner = row.strip().strip("|")
    return [cell.strip().strip("*`_ ")[:_MAX_CELL] for cell in inner.split("|")[:12]]


def _changes(rows: list[list[str]]) -> Iterator[ValueChange]:
    if len(rows) < 3 or not all(set(c) <= set(":- ") for c in rows[1] if c):
        return
    header = [cell.lower() for cell in rows[0]]
    if any(_PERF.search(cell) for cell in header):
        return
    before = _column(header, _BEFORE)
    after = _column(header, _AFTER)
    if before is None or after is None or before == after or 0 in (before, after):
        return
    field = _field(rows[0][before], rows[0][after])
    for row in rows[2:]:
        if len(row) <= max(before, after):
            continue
        old, new = row[before], row[after]
        if old and new and old != new and row[0]:
            yield ValueChange(row[0], field, old, new)


def _column(header: list[str], words: tuple[str, ...]) -> int | None:
    for index, cell in enumerate(header):
        found = _WORD.findall(cell)
        if any(word.lower() in words for word in found):
            return index
    return None


def _field(before_header: str, after_header: str) -> str:
    """What both headers name besides before/after: "max_model_len (before)" -> max_model_len."""
    old = _WORD.sub("", before_header).strip(" ()[]:-`*_")
    new = _WORD.sub("", after_header).strip(" ()[]:-`*_")
    return old if old and old == new else ""
