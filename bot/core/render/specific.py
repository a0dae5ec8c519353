"""The digest's PR-specific sections: what to check (the author's decisions, the patch's
structure, values the description changes) and the linked work.

An area's questions are not shown here: read blind on real vLLM PRs, every area
question shown in "What to check" was judged noise (11 of 11, standing and triggered
alike: "names nothing of this PR"). They stay in the digest's JSON (`areas[].focus`).

Everything here quotes the PR: quotes keep their inline code as code spans, every
other character goes through `escape_text`, so a quote can neither mention, link nor
open HTML. Phrasing comes from the catalogue (bot/core/render/i18n.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.findings import Digest
from bot.core.reading.decisions import decision_kind
from bot.core.reading.specifics import Decision, Link, StructureNote, ValueChange
from bot.core.render.escape import escape_code, escape_text
from bot.core.render.i18n import t
from bot.core.render.zh_text import has_han
from bot.core.vocabulary import Lang

MAX_DECISIONS_SHOWN = 3
MAX_STRUCTURE_SHOWN = 4
MAX_VALUES_SHOWN = 2
MAX_LINKS_SHOWN = 3
# "What to check" stays a short list a reviewer reads whole; the digest's JSON has all.
MAX_CHECK_LINES = 5
_QUOTE_CHARS = 240


def escape_quote(text: str, limit: int = _QUOTE_CHARS) -> str:
    """The author's words with their `code` kept as code spans, everything else escaped."""
    out: list[str] = []
    used = 0
    for index, segment in enumerate(text.split("`")):
        if used >= limit:
            break
        room = limit - used
        if index % 2:  # inside backticks
            if segment:
                out.append(escape_code(segment, min(room, 120), keep="head"))
                used += len(segment)
            continue
        if not segment.strip():
            out.append(" " if segment else "")
            continue
        lead = " " if segment[:1].isspace() and index else ""
        trail = " " if segment[-1:].isspace() else ""
        out.append(lead + escape_text(segment, room) + trail)
        used += len(segment)
    return "".join(out).strip()


def _code(text: str, limit: int = 90) -> str:
    return escape_code(text, limit, keep="head")


def _subject(note: StructureNote) -> str:
    return _code(note.symbol, 80) if note.symbol else escape_code(note.file, 100)


def structure_line(note: StructureNote, lang: Lang) -> str:
    details = [_code(d) for d in note.details]
    subject = _subject(note)
    if note.kind == "parametrize":
        total, shape, before = (*note.details, "", "")[:3]
        if before and before != total:
            return t(lang, "structure.parametrize.grew", symbol=subject, before=before, n=total)
        return t(lang, "structure.parametrize", symbol=subject, n=total, shape=shape)
    if note.kind == "todo":
        return t(lang, "structure.todo", symbol=subject, a=escape_text(note.details[0], 90))
    a, b = (*details, "", "")[:2]
    return t(lang, f"structure.{note.kind}", symbol=subject, a=a, b=b)


def decision_line(decision: Decision, lang: Lang) -> str:
    quote = t(lang, "render.quote", quote=escape_quote(decision.quote))
    if lang == "zh" and not has_han(decision.quote):
        # An English quote in a Chinese digest: a one-line gist of what it states.
        kind = t(lang, f"decision.kind.{decision_kind(decision.quote)}")
        quote = t(lang, "render.decision.gist", kind=kind) + quote
    by = t(lang, "render.decision.by")
    if decision.concerns and not decision.quote.startswith(f"`{decision.concerns}"):
        head = _code(decision.concerns, 80) + t(lang, "render.colon")
        return f"{head}{quote} {by}"
    return f"{quote} {by}"


def value_line(change: ValueChange, lang: Lang) -> str:
    entity = escape_text(change.entity, 60)
    before, after = escape_text(change.before, 40), escape_text(change.after, 40)
    if change.field:
        return t(
            lang, "value.change.field", field=_code(change.field, 60), entity=entity,
            before=before, after=after,
        )  # fmt: skip
    return t(lang, "value.change", entity=entity, before=before, after=after)


def _distinct(notes: tuple[StructureNote, ...]) -> list[StructureNote]:
    """At most MAX_STRUCTURE_SHOWN; a sweep's replacement said again for another
    function (the same `ValueError` → `VLLMValidationError` in four) left out: judged a
    repeat. The same error newly raised in two functions is two rejections to check."""
    shown: list[StructureNote] = []
    said: set[tuple[str, tuple[str, ...]]] = set()
    for note in notes:
        if note.kind.endswith("-changed") and (note.kind, note.details) in said:
            continue
        said.add((note.kind, note.details))
        shown.append(note)
    return shown[:MAX_STRUCTURE_SHOWN]


def check_lines(digest: Digest) -> Iterator[str]:
    """At most MAX_CHECK_LINES: decisions, structure, changed values, in that order.
    When more apply, the cap keeps the most PR-specific ones (`_specificity`), not the
    first kinds: a third quote that names nothing of the change does not push out a
    note on a changed function."""
    lang = digest.lang
    ranked = [
        *((_specificity(d), f"- {decision_line(d, lang)}")
          for d in digest.decisions[:MAX_DECISIONS_SHOWN]),
        *((_SPECIFIC, f"- {structure_line(n, lang)}") for n in _distinct(digest.structure)),
        *((_VALUE, f"- {value_line(c, lang)}")
          for c in digest.value_changes[:MAX_VALUES_SHOWN]),
    ]
    order = sorted(range(len(ranked)), key=lambda i: (ranked[i][0], i))
    kept = sorted(order[:MAX_CHECK_LINES])
    yield from (ranked[i][1] for i in kept)


# How specific a "What to check" line is, most first: it names a function or file of the
# change (a structure note, a decision tied to a changed symbol); a changed value; a
# quote that names nothing of the patch.
_SPECIFIC, _VALUE, _UNANCHORED = 0, 1, 2


def _specificity(decision: Decision) -> int:
    return _SPECIFIC if decision.concerns else _UNANCHORED


def _link_text(link: Link, lang: Lang) -> str:
    ref = f"{link.repo}#{link.number}" if link.repo else f"#{link.number}"
    text = f"{t(lang, f'link.{link.kind}')} {escape_text(ref, 120)}"
    if link.title:
        text += f" ({escape_text(link.title, 90)})"
    return text


def _link_state(link: Link, lang: Lang) -> str:
    """" — closed unmerged · @who: “objection”" for a link whose state was read."""
    if not link.state:
        return ""
    key = "closed_issue" if link.state == "closed" and not link.is_pull else link.state
    text = f" — {t(lang, f'link.state.{key}')}"
    if link.objection:
        who = escape_text(f"@{link.objection_by}", 60) if link.objection_by else ""
        quote = t(lang, "render.quote", quote=escape_quote(link.objection, 160))
        text += " · " + (f"{who}{t(lang, 'render.colon')}{quote}" if who else quote)
    return text


def link_lines(digest: Digest) -> Iterator[str]:
    links = digest.links[:MAX_LINKS_SHOWN]
    if any(link.state for link in links):
        # What the linked work became: one line each.
        for link in links:
            yield f"- {_link_text(link, digest.lang)}{_link_state(link, digest.lang)}"
        return
    if links:
        yield "- " + t(digest.lang, "render.list_sep").join(
            _link_text(link, digest.lang) for link in links
        )
