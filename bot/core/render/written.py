"""The writer's verified text in the comment (issue 41): the summary under the headline,
its points in place of the rules' own reading lines, what need not be re-checked, the
gaps and a lesson. The model's text is outside text: escaped like a PR's body (no live
mention, link or HTML; code spans stay code)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.render.escape import escape_code, escape_text, sanitize_trusted
from bot.core.render.i18n import t
from bot.core.vocabulary import Lang
from bot.core.writer.result import Section, WriterResult

MAX_ITEM_CHARS = 600
_SPAN = re.compile(r"(`+)([^`]+)\1")


def written_text(text: str, limit: int = MAX_ITEM_CHARS) -> str:
    """One line of model text as literal Markdown: prose escaped, `code` kept as code."""
    out: list[str] = []
    used = 0
    position = 0
    for match in [*_SPAN.finditer(text), None]:
        prose = text[position:match.start()] if match else text[position:]
        if prose.strip():
            piece = escape_text(prose, max(1, limit - used))
            out.append((" " if prose[0].isspace() and out else "") + piece
                       + (" " if prose[-1].isspace() and match else ""))
            used += len(piece)
        elif prose and out:
            out.append(" ")
        if match is None or used >= limit:
            break
        code = escape_code(match.group(2).strip(), 120, keep="head")
        out.append(code)
        used += len(code)
        position = match.end()
    return "".join(out).strip()


def summary_line(result: WriterResult | None) -> str:
    if result is None or not result.written or not result.first("summary"):
        return ""
    return written_text(result.first("summary"))


def written_check_lines(result: WriterResult, lang: Lang) -> Iterator[str]:
    """What replaces the rules' reading lines under "What to check"."""
    for item in result.section("points"):
        yield f"- {written_text(item.text)}"
    # The lesson stays in the JSON (`writer.kept`), not in the comment: blind judges
    # called every posted one noise, a maxim restating a line above it.
    for section, key in (("gaps", "gap"), ("not_needed", "not_needed")):
        label = sanitize_trusted(t(lang, f"render.written.{key}"))
        for item in result.section(section):  # type: ignore[arg-type]
            yield f"- {label} {written_text(item.text)}"


# Sections whose lines stand in "What to check" as a risk's own claim; `not_needed` may
# cite a risk only to set it aside, and the risk must then stay in sight.
_SAYING: tuple[Section, ...] = ("points", "gaps")
_RISK_CITE = "risk."


def said_risks(result: WriterResult | None) -> frozenset[str]:
    """The risk ids a shown point or gap cites: its line says that risk, in this PR's
    terms, so the rules' generic line of it is collapsed rather than shown twice (judged
    "repeat" when both stood visible). From the cites the verifier kept, never from
    similar words."""
    if result is None or not result.written:
        return frozenset()
    return frozenset(
        cite.strip().strip("`[]").removeprefix(_RISK_CITE)
        for section in _SAYING for item in result.section(section)
        for cite in item.cites if cite.strip().strip("`[]").startswith(_RISK_CITE))


def written_by_line(result: WriterResult, lang: Lang) -> str:
    return sanitize_trusted(t(lang, "render.written.by", model=escape_text(result.model, 80)),
                            300)
