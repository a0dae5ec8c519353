"""Digest -> the sticky comment's Markdown, always within GitHub's size limit.

The comment adds what the PR description lacks (who should read it, where to look,
what is still open); it never restates the PR. Every PR-derived string goes through
`escape_text`/`escape_code`, every catalogue or rule string through
`sanitize_trusted`, so the only HTML comment in the output is the marker.

This module owns the marker, the head and footer, and the budget: it walks a ladder
of ever less detail until the sections (bot/core/render/sections.py) fit, then drops
whole sections before cutting any line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import chain

from bot.core.findings import Digest
from bot.core.render.ci import ci_detail_lines, ci_lines
from bot.core.render.conversation import conversation_lines
from bot.core.render.escape import sanitize_trusted
from bot.core.render.i18n import t
from bot.core.render.marker import SHA_PATTERN, Marker, RiskLevel, render_marker
from bot.core.render.neighbours import neighbour_lines
from bot.core.render.repo_context import repo_context_lines
from bot.core.render.sections import (
    Detail,
    area_checklist_lines,
    item_id,
    note_lines,
    risk_lines,
    routing_lines,
    start_lines,
    ticked_ids,
    titled,
    trace_lines,
    who_lines,
)
from bot.core.render.specific import check_lines, link_lines
from bot.core.render.unavailable import unavailable_lines
from bot.core.render.words import verdict_reason, verdict_size
from bot.core.render.written import (
    said_risks,
    summary_line,
    written_by_line,
    written_check_lines,
)
from bot.core.vocabulary import Lang
from bot.core.writer.result import WriterResult

__all__ = [
    "DEFAULT_BUDGET",
    "MIN_BUDGET",
    "digest_marker",
    "item_id",
    "render_digest",
    "risk_level",
    "ticked_ids",
]

# GitHub rejects comment bodies over 65,536 characters (422); keep headroom.
DEFAULT_BUDGET = 60_000
MIN_BUDGET = 2_000
_RULES_FORBIDDEN = re.compile(r"[^0-9A-Za-z._+]")
_SEVERITY_RANK: dict[str, int] = {"low": 1, "medium": 2, "high": 3}
_RISK_LEVEL: dict[int, RiskLevel] = {0: "none", 1: "low", 2: "medium", 3: "high"}

_LADDER: tuple[Detail, ...] = (
    Detail(),
    Detail(evidence_max=3, symbols_per_file=12),
    Detail(evidence_max=3, symbol_counts=True),
    Detail(evidence_max=3, symbol_counts=True, trace="fired"),
    Detail(evidence_max=3, symbol_counts=True, trace="fired", files_max=200),
    Detail(evidence_max=1, symbol_counts=True, trace="fired", files_max=50),
    Detail(evidence_max=1, symbol_counts=True, trace="none", files_max=10),
)
# Last resort, lowest value first: whole sections go before any line is cut.
_DROP_ORDER = (
    "trace", "ci", "links", "neighbours", "context", "checklist", "routing", "start",
    "conversation", "footer", "notes", "check", "who",
)  # fmt: skip


@dataclass(frozen=True)
class _Section:
    key: str
    lines: tuple[str, ...]


def risk_level(digest: Digest) -> RiskLevel:
    # An ask keeps the weight of the item it stands in for while that item still fires.
    severities = [r.severity for r in digest.risks] + [
        a.severity for a in digest.asks if a.severity is not None
    ]
    return _RISK_LEVEL[max((_SEVERITY_RANK[s] for s in severities), default=0)]


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
    digest: Digest, *, ticked: frozenset[str] = frozenset(), budget: int = DEFAULT_BUDGET,
    written: WriterResult | None = None,
) -> str:
    """The whole comment body, at most `budget` characters whatever the digest holds.

    `written`: the writer's verified text (issue 41); when it holds any, its summary goes
    under the headline and its points replace the rules' reading lines."""
    if written is not None and not written.written:
        written = None
    if budget < MIN_BUDGET:
        raise ValueError(f"budget must be at least {MIN_BUDGET} characters")
    if digest.verdict == "quiet":
        # No verdict hides what the symbol index found around the change.
        context = titled("context", digest.lang, repo_context_lines(digest))
        quiet = _materialize(
            [("head", _head(digest)), ("context", context), ("footer", _footer(digest))], None
        )
        return _fit(quiet or [], budget, digest.lang)
    for detail in _LADDER[:-1]:
        # Abandon a level as soon as it overflows: a 3,000-file digest at full
        # detail would otherwise escape megabytes of text only to throw it away.
        sections = _materialize(
            _parts(digest, ticked, replace(detail, max_chars=budget), written), budget)
        if sections is not None:
            text = _join(sections)
            if len(text) <= budget:
                return text
    last = _materialize(
        _parts(digest, ticked, replace(_LADDER[-1], max_chars=budget), written), None)
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


def _parts(
    digest: Digest, ticked: frozenset[str], d: Detail, written: WriterResult | None = None
) -> list[tuple[str, Iterator[str]]]:
    lang = digest.lang
    reading = written_check_lines(written, lang) if written else check_lines(digest)
    said = said_risks(written)
    return [
        ("head", _head(digest, written)),
        ("who", titled("who", lang, who_lines(digest))),
        ("check", titled("check", lang, chain(
            reading, ci_lines(digest), unavailable_lines(digest, "repo_config"),
            unavailable_lines(digest, "ci")))),
        ("risks", titled("risks", lang, risk_lines(digest, ticked, d, said))),
        ("conversation", titled("conversation", lang, chain(
            unavailable_lines(digest, "conversation"), conversation_lines(digest)))),
        ("start", titled("start", lang, start_lines(digest, d))),
        ("context", titled("context", lang, chain(
            unavailable_lines(digest, "index"), repo_context_lines(digest)))),
        ("links", titled("links", lang, chain(
            unavailable_lines(digest, "linked"), link_lines(digest)))),
        ("neighbours", titled("neighbours", lang, neighbour_lines(digest))),
        ("routing", titled("routing", lang, routing_lines(digest))),
        ("checklist", area_checklist_lines(digest, ticked, d, said)),
        ("ci", ci_detail_lines(digest)),
        ("trace", trace_lines(digest, d)),
        ("notes", titled("notes", lang, note_lines(digest, d))),
        ("footer", _footer(digest, written)),
    ]


def _head(digest: Digest, written: WriterResult | None = None) -> Iterator[str]:
    lang = digest.lang
    headline = t(lang, f"render.verdict.{digest.verdict}")
    if digest.verdict != "quiet":
        minutes = t(lang, "render.minutes", minutes=max(1, digest.reading_minutes))
        headline = f"{headline} · {minutes}"
    grounds = digest.verdict_grounds
    if grounds is not None and grounds.lead and digest.verdict != "quiet":
        # A lead area's reason line only named the area and the functions the sections
        # below name again: the heading keeps what the minutes rest on.
        headline = f"{headline} · {verdict_size(grounds, lang)}"
        reason = ""
    else:
        worded = verdict_reason(grounds, digest.areas, lang) if grounds else ""
        reason = worded or (
            t(lang, "render.quiet_reason") if digest.verdict == "quiet" else ""
        )
    yield render_marker(digest_marker(digest))
    yield f"### {sanitize_trusted(headline, 200)}"
    if digest.ai_assisted:
        # Where a reviewer triages: the author ticked the template's AI-assistance box.
        reason = f"{reason} · {t(lang, 'render.ai_assisted')}" if reason else t(
            lang, "render.ai_assisted")
    if reason:
        yield sanitize_trusted(reason, 300)
    summary = summary_line(written)
    if summary:
        yield ""
        yield summary


def _footer(digest: Digest, written: WriterResult | None = None) -> Iterator[str]:
    sha = digest_marker(digest).head_sha[:7]
    text = sanitize_trusted(t(digest.lang, "render.footer", sha=f"`{sha}`" if sha else "—"), 300)
    # Who worded the reading lines is provenance, in the footer's small print: not a line
    # a reviewer reads (judged noise on every written digest when it stood as a line).
    by = f" · {written_by_line(written, digest.lang)}" if written is not None else ""
    yield f"<sub>{text}{by}</sub>"
