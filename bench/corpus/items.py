"""A rendered digest split into judgeable items, by the one rule the judges and the report share.

An item is one bullet, one line, one risk, one checklist entry, one CI line or one routing
line; the summary line under the headline is an item. The headline (verdict and minutes)
is judged apart; section headings, the footer and the hidden marker are not items. A
collapsed `<details>` block gives one item per line, except the CI listing (one item, its
lines joined) and the rule trace (left out). An indented line without a marker continues
the item above it. Each item's text is `quality_real.normalise`d, the key verdicts are
matched by, and each gets a kind from its section and shape, so the report can say where
noise comes from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bench.quality_real import normalise
from bot.core.render.i18n import t
from bot.core.vocabulary import Lang

LANG: Lang = "en"
KINDS = (
    "summary",
    "risk",
    "ci",
    "area",
    "structure",
    "decision",
    "routing",
    "start",
    "links",
    "context",
    "other",
)
KIND_NAMES = {
    "summary": "summary",
    "risk": "risk",
    "ci": "CI line",
    "area": "area question/focus",
    "structure": "structure note",
    "decision": "quote/decision",
    "routing": "routing",
    "start": "where to start",
    "links": "linked work",
    "context": "around the change",
    "other": "other",
}


def _title(key: str) -> str:
    return t(LANG, f"render.{key}")


_SECTIONS = {
    _title("who"): "routing",
    _title("check"): "check",
    _title("risks"): "risk",
    _title("conversation"): "decision",
    _title("start"): "start",
    _title("context"): "context",
    _title("links"): "links",
    _title("routing"): "routing",
    _title("notes"): "other",
}
_CI_DETAIL = t(LANG, "render.ci.detail")
_TRACE = re.escape(t(LANG, "render.explain", fired=0, total=0)).replace("0", r"\d+")
_CI_LEADS = (t(LANG, "render.ci"), t(LANG, "render.ci.head"), t(LANG, "render.ci.not_run"))
_DECISION = t(LANG, "render.decision.by")
_HEADING = re.compile(r"^\*\*([^*]+)\*\*$")
_SUMMARY = re.compile(r"<summary>(.*?)</summary>")
_MARKER = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}\.\s|>)")
_RISK = re.compile(r"^\*\*[a-z0-9][a-z0-9-]*\*\* · (?:🔴|🟠|🟡|🟢)")
_AREA_QUESTION = re.compile(r"^\*\*[^*]+\*\*: ")


@dataclass(frozen=True)
class Item:
    id: int
    where: str  # visible | collapsed
    kind: str
    text: str  # normalised


def _kind(section: str, text: str) -> str:
    if _RISK.match(text):
        return "risk"
    if section == "check":
        if text.startswith(_CI_LEADS):
            return "ci"
        if _DECISION in text:
            return "decision"
        if _AREA_QUESTION.match(text):
            return "area"
        return "structure"
    if section == "checklist":
        return "area"
    if section in KINDS:
        return section
    return "other"


def split_items(markdown: str) -> list[Item]:
    """The items of a posted digest, in order ("" = nothing posted = no items)."""
    items: list[tuple[str, str, str]] = []  # where, kind, text
    section = ""
    details: str | None = None  # None outside; else "ci" | "trace" | "checklist"
    ci_lines: list[str] = []
    after_headline = False
    for line in markdown.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("<!--"):
            continue
        if stripped.startswith("<details"):
            summary = _SUMMARY.search(stripped)
            title = summary.group(1) if summary else ""
            details = (
                "ci"
                if title == _CI_DETAIL
                else "trace"
                if re.fullmatch(_TRACE, title)
                else "checklist"
            )
            ci_lines = []
            continue
        if stripped.startswith("</details>"):
            if details == "ci" and ci_lines:
                items.append(("collapsed", "ci", " | ".join(ci_lines)))
            details = None
            continue
        if details is not None:
            if details == "ci":
                ci_lines.append(normalise(stripped))
            elif details == "checklist":
                _add(items, line, "collapsed", "checklist")
            continue
        if stripped.startswith("### "):
            after_headline = True
            continue
        if stripped.startswith("<sub>"):
            continue
        heading = _HEADING.match(stripped)
        if heading:
            section = _SECTIONS.get(heading.group(1), "other")
            after_headline = False
            continue
        if after_headline:
            items.append(("visible", "summary", normalise(stripped)))
            after_headline = False
            continue
        _add(items, line, "visible", section)
    return [Item(i + 1, where, kind, text) for i, (where, kind, text) in enumerate(items)]


def _add(items: list[tuple[str, str, str]], line: str, where: str, section: str) -> None:
    if not _MARKER.match(line) and line[:1].isspace() and items and items[-1][0] == where:
        last = items[-1]
        items[-1] = (last[0], last[1], f"{last[2]} {normalise(line)}")
        return
    text = normalise(line)
    if text:
        items.append((where, _kind(section, text), text))


def items_markdown(items: list[Item], judge: frozenset[int] | None = None) -> str:
    """items.md: `[id] visible|collapsed · text`, one per line. For a re-judge (`judge`
    given), each line also says `JUDGE` (new text: judge it) or `kept` (judged before)."""
    if not items:
        return "(no items: the bot posts no comment on this PR)\n"
    if judge is None:
        return "".join(f"[{item.id}] {item.where} · {item.text}\n" for item in items)
    return "".join(
        f"[{item.id}] {item.where} · {'JUDGE' if item.id in judge else 'kept'} · {item.text}\n"
        for item in items
    )
