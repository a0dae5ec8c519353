"""Digest -> the sticky comment's Markdown, always within GitHub's size limit.

The comment adds what the PR description lacks (who should read it, where to look,
what is still open); it never restates the PR. Every PR-derived string goes through
`escape_text`/`escape_code`, every catalogue or rule string through
`sanitize_trusted`, so the only HTML comment in the output is the marker.

Checklist items carry their id as a small visible bold token (`- [ ] **id** · …`)
instead of a hidden comment: ticks made in GitHub's UI are read back by id
(`ticked_ids`) and survive every re-render.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from bot.core.escape import escape_code, escape_text, sanitize_trusted
from bot.core.findings import Digest, Evidence, Lang, Symbol, TraceEntry
from bot.core.i18n import t
from bot.core.marker import SHA_PATTERN, Marker, RiskLevel, render_marker

# GitHub rejects comment bodies over 65,536 characters (422); keep headroom.
DEFAULT_BUDGET = 60_000
MIN_BUDGET = 2_000

_ID_FORBIDDEN = re.compile(r"[^A-Za-z0-9._/-]")
_TICKED_LINE = re.compile(r"^- \[[xX]\] \*\*([A-Za-z0-9._/-]{1,80})\*\* · ")
_RULES_FORBIDDEN = re.compile(r"[^0-9A-Za-z._+]")
_SEVERITY_RANK: dict[str, int] = {"low": 1, "medium": 2, "high": 3}
_RISK_LEVEL: dict[int, RiskLevel] = {0: "none", 1: "low", 2: "medium", 3: "high"}

TraceMode = Literal["full", "fired", "none"]
T = TypeVar("T")


@dataclass(frozen=True)
class _Detail:
    """How much to show; `_LADDER` lowers it step by step until the comment fits."""

    evidence_max: int | None = None  # items per evidence list
    symbols_per_file: int | None = None
    symbol_counts: bool = False  # "`file` — 12 symbols" instead of the names
    trace: TraceMode = "full"
    files_max: int | None = None  # files listed in "Where to start"
    max_chars: int = DEFAULT_BUDGET  # a list longer than this cannot fit: stop drawing it


_LADDER: tuple[_Detail, ...] = (
    _Detail(),
    _Detail(evidence_max=3, symbols_per_file=12),
    _Detail(evidence_max=3, symbol_counts=True),
    _Detail(evidence_max=3, symbol_counts=True, trace="fired"),
    _Detail(evidence_max=3, symbol_counts=True, trace="fired", files_max=200),
    _Detail(evidence_max=1, symbol_counts=True, trace="fired", files_max=50),
    _Detail(evidence_max=1, symbol_counts=True, trace="none", files_max=10),
)
# Last resort, lowest value first: whole sections go before any line is cut.
_DROP_ORDER = ("trace", "routing", "start", "footer", "notes", "focus", "who")


@dataclass(frozen=True)
class _Section:
    key: str
    lines: tuple[str, ...]


def item_id(raw: str) -> str:
    """A checklist id as it appears in the comment (and in `ticked_ids`)."""
    return _ID_FORBIDDEN.sub("-", raw)[:80] or "item"


def ticked_ids(body: str) -> frozenset[str]:
    """Ids of the checklist items ticked in an existing comment body."""
    found = (_TICKED_LINE.match(line) for line in body.splitlines())
    return frozenset(m.group(1) for m in found if m is not None)


def risk_level(digest: Digest) -> RiskLevel:
    return _RISK_LEVEL[max((_SEVERITY_RANK[r.severity] for r in digest.risks), default=0)]


def digest_marker(digest: Digest) -> Marker:
    """The marker for this digest; odd SHAs or rules versions are normalized, never fatal."""
    sha = digest.head_sha.lower()
    if not re.fullmatch(SHA_PATTERN, sha):
        sha = ""
    rules = _RULES_FORBIDDEN.sub("", digest.rules_version)[:64] or "unknown"
    return Marker(
        head_sha=sha,
        rules_version=rules,
        lang=digest.lang,
        verdict=digest.verdict,
        risk_level=risk_level(digest),
        explain=digest.explain,
        muted=digest.muted,
        routed=digest.routed,
        owned_labels=digest.owned_labels,
    )


def render_digest(
    digest: Digest, *, ticked: frozenset[str] = frozenset(), budget: int = DEFAULT_BUDGET
) -> str:
    """The whole comment body, at most `budget` characters whatever the digest holds."""
    if budget < MIN_BUDGET:
        raise ValueError(f"budget must be at least {MIN_BUDGET} characters")
    if digest.verdict == "quiet":
        quiet = _materialize([("head", _head(digest)), ("footer", _footer(digest))], None)
        return _fit(quiet or [], budget, digest.lang)
    for detail in _LADDER[:-1]:
        # Abandon a level as soon as it overflows: a 3,000-file digest at full
        # detail would otherwise escape megabytes of text only to throw it away.
        sections = _materialize(_parts(digest, ticked, replace(detail, max_chars=budget)), budget)
        if sections is not None:
            text = _join(sections)
            if len(text) <= budget:
                return text
    last = _materialize(_parts(digest, ticked, replace(_LADDER[-1], max_chars=budget)), None)
    return _fit(last or [], budget, digest.lang)


def _materialize(
    parts: Iterable[tuple[str, Iterator[str]]], budget: int | None
) -> list[_Section] | None:
    """Draw the lines of each section; None once they exceed `budget`."""
    sections: list[_Section] = []
    used = 0
    for key, lines in parts:
        kept: list[str] = []
        for line in lines:
            used += len(line) + 1
            if budget is not None and used > budget + 2:
                return None
            kept.append(line)
        used += 1 if kept else 0
        sections.append(_Section(key, tuple(kept)))
    return sections


def _join(sections: Iterable[_Section]) -> str:
    return "\n\n".join("\n".join(s.lines) for s in sections if s.lines)


def _fit(sections: list[_Section], budget: int, lang: Lang) -> str:
    text = _join(sections)
    if len(text) <= budget:
        return text
    notice = f"_{sanitize_trusted(t(lang, 'render.truncated'))}_"
    room = budget - len(notice) - 2
    for key in _DROP_ORDER:
        sections = [s for s in sections if s.key != key]
        text = _join(sections)
        if len(text) <= room:
            return text + "\n\n" + notice
    # Only the head and the risk checklist are left, neither holds a multi-line
    # construct, so cutting between lines cannot leave a tag or the marker open.
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept).rstrip() + "\n\n" + notice


def _parts(digest: Digest, ticked: frozenset[str], d: _Detail) -> list[tuple[str, Iterator[str]]]:
    lang = digest.lang
    notes = list(digest.notes)
    if d.trace == "fired" and digest.trace:
        notes.append(t(lang, "render.trace_trimmed"))
    elif d.trace == "none" and digest.trace:
        notes.append(t(lang, "render.trace_omitted"))
    return [
        ("head", _head(digest)),
        ("who", _titled("who", lang, _who(digest))),
        ("focus", _titled("focus", lang, _focus(digest))),
        ("risks", _titled("risks", lang, _risks(digest, ticked, d))),
        ("start", _titled("start", lang, _start(digest, d))),
        ("routing", _titled("routing", lang, _routing(digest))),
        ("trace", _trace(digest, d)),
        ("notes", _titled("notes", lang, (f"- {sanitize_trusted(n, 400)}" for n in notes))),
        ("footer", _footer(digest)),
    ]


def _titled(key: str, lang: Lang, lines: Iterator[str]) -> Iterator[str]:
    """The section's bold title, then its lines; nothing at all when it has none."""
    first = next(lines, None)
    if first is None:
        return
    yield f"**{t(lang, f'render.{key}')}**"
    yield first
    yield from lines


def _head(digest: Digest) -> Iterator[str]:
    lang = digest.lang
    headline = t(lang, f"render.verdict.{digest.verdict}")
    if digest.verdict != "quiet":
        minutes = t(lang, "render.minutes", minutes=max(1, digest.reading_minutes))
        headline = f"{headline} · {minutes}"
    reason = digest.verdict_reason or (
        t(lang, "render.quiet_reason") if digest.verdict == "quiet" else ""
    )
    yield render_marker(digest_marker(digest))
    yield f"### {sanitize_trusted(headline, 120)}"
    if reason:
        yield sanitize_trusted(reason, 300)


def _footer(digest: Digest) -> Iterator[str]:
    sha = digest_marker(digest).head_sha[:7]
    text = t(digest.lang, "render.footer", sha=f"`{sha}`" if sha else "—")
    yield f"<sub>{sanitize_trusted(text, 300)}</sub>"


def _count(lang: Lang, key: str, count: int) -> str:
    return t(lang, f"{key}.one") if count == 1 else t(lang, key, count=count)


def _label(lang: Lang, key: str) -> str:
    """A list item's lead-in, e.g. "Labels: " (full-width colon in Chinese)."""
    return t(lang, key) + t(lang, "render.colon")


def _limited(
    items: Sequence[T], show: Callable[[T], str], limit: int | None, d: _Detail, lang: Lang
) -> str:
    """Up to `limit` items, then "+N more". Stops early past `d.max_chars`: such a
    line cannot fit anyway, and the next ladder level will set a limit."""
    shown: list[str] = []
    used = 0
    for value in items if limit is None else items[:limit]:
        if used > d.max_chars:
            break
        text = show(value)
        shown.append(text)
        used += len(text) + 2
    text = ", ".join(shown)
    if len(shown) < len(items):
        text += " " + t(lang, "render.more", count=len(items) - len(shown))
    return text


def _who(digest: Digest) -> Iterator[str]:
    for area in digest.areas:
        line = f"- **{sanitize_trusted(area.title, 120)}**"
        if area.files:
            line += f" ({_count(digest.lang, 'render.files_count', len(area.files))})"
        if area.audience:
            line += f" — {sanitize_trusted(area.audience, 200)}"
        yield line


def _ci_path(name: str) -> str:
    if "/" in name or name.endswith(".yaml"):
        return escape_code(name, 120)
    return escape_code(f".buildkite/test_areas/{name}.yaml", 120)


def _focus(digest: Digest) -> Iterator[str]:
    lang = digest.lang
    covered: set[str] = set()
    for area in digest.areas:
        if not area.focus and not area.ci_areas:
            continue
        yield f"- **{sanitize_trusted(area.title, 120)}**"
        yield from (f"  - {sanitize_trusted(q, 300)}" for q in area.focus)
        if area.ci_areas:
            yield f"  - {_label(lang, 'render.ci')}" + ", ".join(map(_ci_path, area.ci_areas))
        covered.update(area.ci_areas)
    rest = [c for c in digest.ci_areas if c not in covered]
    if rest:
        yield f"- {_label(lang, 'render.ci')}" + ", ".join(map(_ci_path, rest))


def _item_line(ident: str, ticked: frozenset[str], text: str, tail: str) -> str:
    box = "[x]" if ident in ticked else "[ ]"
    return f"- {box} **{ident}** · {text}" + (f" — {tail}" if tail else "")


def _evidence_code(snippet: str) -> str:
    # Evidence is a file name (its end matters) or a phrase from the PR (its start does).
    looks_like_path = "/" in snippet and " " not in snippet.strip()
    return escape_code(snippet, 120, keep="tail" if looks_like_path else "head")


def _risks(digest: Digest, ticked: frozenset[str], d: _Detail) -> Iterator[str]:
    lang = digest.lang
    seen: set[str] = set()
    for risk in digest.risks:
        ident = item_id(risk.id)
        if ident in seen:
            continue
        seen.add(ident)
        text = f"{t(lang, f'render.severity.{risk.severity}')} {sanitize_trusted(risk.text, 300)}"
        evidence = _limited(risk.evidence, _evidence_code, d.evidence_max, d, lang)
        yield _item_line(ident, ticked, text, evidence)
    for area in digest.areas:
        title = sanitize_trusted(area.title, 120)
        for check in area.checklist:
            ident = item_id(check.id)
            if ident in seen:
                continue
            seen.add(ident)
            yield _item_line(ident, ticked, sanitize_trusted(check.text, 300), title)


def _symbol_line(file: str, symbols: list[Symbol], lang: Lang, d: _Detail) -> str:
    head = f"- {escape_code(file, 160)}"
    if d.symbol_counts:
        return f"{head} — {_count(lang, 'render.symbols_count', len(symbols))}"
    parts: list[str] = []
    for change in ("modified", "added", "removed"):
        names = [s.name for s in symbols if s.change == change]
        if not names:
            continue
        text = _limited(names, _symbol_code, d.symbols_per_file, d, lang)
        parts.append(
            text if change == "modified" else _label(lang, f"render.symbol.{change}") + text
        )
    return f"{head}{t(lang, 'render.colon')}" + " · ".join(parts)


def _symbol_code(name: str) -> str:
    return escape_code(name, 80)


def _file_code(path: str) -> str:
    return escape_code(path, 160)


def _start(digest: Digest, d: _Detail) -> Iterator[str]:
    lang = digest.lang
    by_file: dict[str, list[Symbol]] = {}
    for symbol in digest.symbols:
        by_file.setdefault(symbol.file, []).append(symbol)
    files = list(by_file)
    shown = files if d.files_max is None else files[: d.files_max]
    yield from (_symbol_line(f, by_file[f], lang, d) for f in shown)
    if len(shown) < len(files):
        yield f"- … {_count(lang, 'render.more_files', len(files) - len(shown))}"
    removed = digest.removed_files
    if removed:
        limit = d.files_max
        text = ", ".join(_file_code(f) for f in (removed if limit is None else removed[:limit]))
        if limit is not None and len(removed) > limit:
            text += " " + _count(lang, "render.more_files", len(removed) - limit)
        yield f"- {_label(lang, 'render.removed_files')}{text}"


def _routing(digest: Digest) -> Iterator[str]:
    lang = digest.lang

    def names(values: Iterable[str]) -> str:
        return ", ".join(escape_text(v, 80) for v in values)

    if digest.reviewers.users:
        yield f"- {_label(lang, 'render.suggested_users')}{names(digest.reviewers.users)}"
    if digest.reviewers.teams:
        yield f"- {_label(lang, 'render.suggested_teams')}{names(digest.reviewers.teams)}"
    if digest.labels:
        labels = ", ".join(escape_code(label, 80) for label in digest.labels)
        yield f"- {_label(lang, 'render.labels')}{labels}"
    routing = digest.routing
    if routing is None:
        return
    because = dict(routing.because)
    requested = [
        escape_text(who, 80) + (f" ({escape_code(because[who], 80)})" if who in because else "")
        for who in (*routing.requested_users, *routing.requested_teams)
    ]
    if requested:
        yield f"- {_label(lang, 'render.requested')}" + ", ".join(requested)
    if routing.skipped:
        skipped = "; ".join(
            f"{escape_text(who, 80)} — {sanitize_trusted(why, 160)}" for who, why in routing.skipped
        )
        yield f"- {_label(lang, 'render.skipped')}{skipped}"


def _trace_line(entry: TraceEntry, lang: Lang, limit: int | None, d: _Detail) -> str:
    mark = "✅" if entry.fired else "▫️"
    status = t(lang, "render.fired" if entry.fired else "render.near_miss")
    line = f"- {mark} {escape_code(entry.rule, 80)} · {status}"
    if entry.note:
        line += f" — {sanitize_trusted(entry.note, 200)}"
    elif not entry.fired and not entry.evidence:
        line += f" — {t(lang, 'render.nothing_matched')}"
    if entry.evidence:

        def show(e: Evidence) -> str:
            return f"{t(lang, f'render.evidence.{e.kind}')} {escape_code(e.subject, 120)}"

        line += f" — {_limited(entry.evidence, show, limit, d, lang)}"
    return line


def _trace(digest: Digest, d: _Detail) -> Iterator[str]:
    if not digest.trace or d.trace == "none":
        return
    lang = digest.lang
    limit = d.evidence_max if d.trace == "full" else 1
    fired = sum(1 for e in digest.trace if e.fired)
    summary = sanitize_trusted(t(lang, "render.explain", fired=fired, total=len(digest.trace)))
    opening = "<details open>" if digest.explain else "<details>"
    yield f"{opening}<summary>{summary}</summary>"
    yield ""
    for entry in digest.trace:
        # Rules that saw nothing at all are noise unless a maintainer asked why.
        near_miss = bool(entry.note or entry.evidence)
        if entry.fired or (d.trace == "full" and (near_miss or digest.explain)):
            yield _trace_line(entry, lang, limit, d)
    yield ""
    yield "</details>"
