"""The author's prose in a PR description, as units a reader would quote.

A unit is a paragraph (wrapped lines joined) or one list item, with the heading it
sits under. Code fences, pasted logs, tables, quotes and HTML are not prose: the
decision harvester must never quote a traceback. Line by line, capped: bodies are
untrusted and can be megabytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.reading.body import opens_fence, strip_template
from bot.core.reading.template import strip_html_comments

MAX_BODY_CHARS = 200_000
MAX_LINES = 4_000
MAX_LINE_CHARS = 2_000
MAX_UNIT_CHARS = 4_000
_BULLETS = ("- ", "* ", "+ ")


@dataclass(frozen=True)
class ProseUnit:
    heading: str  # the nearest heading above, lower-cased, "" before the first one
    text: str  # one paragraph or list item, whitespace-folded
    bullet: bool
    index: int  # position among the body's units (for a stable order)


@dataclass(frozen=True)
class BodyLine:
    """One line of the (cleaned) description, with where it sits."""

    heading: str
    text: str
    in_fence: bool


def body_lines(body: str | None) -> Iterator[BodyLine]:
    """Lines of the description without HTML comments or the template checklist."""
    if not body:
        return
    text = strip_template(strip_html_comments(body[:MAX_BODY_CHARS].replace("\r\n", "\n")))
    heading = ""
    fence = ""
    for count, raw in enumerate(text.split("\n", MAX_LINES)):
        if count >= MAX_LINES:
            break
        line = raw[:MAX_LINE_CHARS]
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            else:
                yield BodyLine(heading, line, True)
            continue
        opened = opens_fence(line)
        if opened:
            fence = opened
            continue
        title = _heading_title(stripped)
        if title is not None:
            heading = title
            continue
        yield BodyLine(heading, line, False)


def prose_units(body: str | None) -> Iterator[ProseUnit]:
    """Paragraphs and list items outside code, tables, quotes and HTML."""
    heading = ""
    parts: list[str] = []
    bullet = False
    index = 0

    def flush() -> Iterator[ProseUnit]:
        nonlocal parts, index
        text = " ".join(" ".join(parts).split())[:MAX_UNIT_CHARS]
        parts = []
        if text:
            yield ProseUnit(heading, text, bullet, index)
            index += 1

    previous_heading = ""
    for line in body_lines(body):
        if line.heading != previous_heading:
            yield from flush()
            previous_heading = line.heading
        heading = line.heading
        if line.in_fence:
            yield from flush()
            continue
        stripped = line.text.strip()
        if not stripped or _not_prose(stripped):
            yield from flush()
            continue
        item = _bullet_text(stripped)
        if item is not None:
            yield from flush()
            bullet = True
            parts.append(item)
            continue
        if not parts:
            bullet = False
        parts.append(stripped)
    yield from flush()


def _heading_title(stripped: str) -> str | None:
    if stripped.startswith("#"):
        hashes = len(stripped) - len(stripped.lstrip("#"))
        rest = stripped[hashes:]
        if 1 <= hashes <= 6 and (not rest or rest[0] in " \t"):
            return rest.strip().strip("#*_: ").lower()[:80]
        return None
    # "**Why:**" alone on its line is a heading in many PR bodies.
    for mark in ("**", "__"):
        if stripped.startswith(mark) and stripped.rstrip(":").endswith(mark) and len(stripped) < 80:
            inner = stripped.rstrip(":")[2:-2].strip(" :")
            if inner and mark not in inner:
                return inner.lower()
    return None


def _not_prose(stripped: str) -> bool:
    first = stripped[0]
    if first in "|>< " or stripped.startswith(("[ ]", "- [ ]", "- [x]", "* [ ]", "---")):
        return True
    # Pasted logs and tracebacks: a frame line, an INFO/WARNING prefix, a prompt.
    return stripped.startswith(("$ ", 'File "', "Traceback", "INFO ", "WARNING ", "ERROR "))


def _bullet_text(stripped: str) -> str | None:
    if stripped.startswith(_BULLETS):
        return stripped[2:].strip()
    digits = len(stripped) - len(stripped.lstrip("0123456789"))
    if 0 < digits <= 2 and stripped[digits : digits + 2] in (". ", ") "):
        return stripped[digits + 2 :].strip()
    return None
