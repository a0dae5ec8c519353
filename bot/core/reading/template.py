"""The repository's pull request template: which lines are boilerplate, which headings
are the body's sections, which checklist boxes an author can tick.

A body is compared with the template's own text, line by line, instead of with phrases
that drift every time the project rewrites its template (vLLM replaced its template in
0.32.0: Overview / Claims / Validation / Details and a "Pull Request Checklist" block).
Pure and linear: the template is read once per base, a body once per digest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A template is a page of Markdown; anything larger is not one.
MAX_TEMPLATE_LINES = 400
_MAX_LINE_CHARS = 400
_BOX_PREFIXES = ("- [ ]", "* [ ]", "+ [ ]")
_TICKED = ("- [x]", "* [x]", "+ [x]")


def normalise(line: str) -> str:
    """A line as compared with the template: case, spacing and emphasis do not count."""
    return " ".join(line.replace("**", "").replace("__", "").split()).lower()[:_MAX_LINE_CHARS]


def box_text(line: str) -> tuple[str, bool] | None:
    """(the box's normalised text, ticked) for a Markdown checklist line, else None."""
    stripped = normalise(line)
    for prefix in _BOX_PREFIXES:
        if stripped.startswith(prefix):
            return stripped[len(prefix):].strip(), False
    for prefix in _TICKED:
        if stripped.startswith(prefix):
            return stripped[len(prefix):].strip(), True
    return None


@dataclass(frozen=True)
class PullRequestTemplate:
    source: str  # the file it was read from
    headings: tuple[str, ...] = ()  # as written: "Overview", "Validation", ...
    boilerplate: frozenset[str] = frozenset()  # normalised lines that are never the author's
    boxes: tuple[tuple[str, str], ...] = ()  # (normalised text, text as written)

    def box(self, line: str) -> tuple[str, bool] | None:
        """(the template's wording, ticked) when `line` is one of its checklist boxes."""
        found = box_text(line)
        if found is None:
            return None
        for key, written in self.boxes:
            if key == found[0] or _same_opening(key, found[0]):
                return written, found[1]
        return None


# A box whose first words are the template box's is that box with its end edited or cut
# ("…, or e2e [...]"): an unticked copy is the template's, never the author's admission.
_OPENING_CHARS = 40


def _same_opening(template_box: str, box: str) -> bool:
    return (len(template_box) >= _OPENING_CHARS and len(box) >= _OPENING_CHARS
            and template_box[:_OPENING_CHARS] == box[:_OPENING_CHARS])


def parse_template(text: str, *, source: str) -> PullRequestTemplate:
    """The template's headings, boilerplate lines and checklist boxes."""
    headings: list[str] = []
    boilerplate: set[str] = set()
    boxes: list[tuple[str, str]] = []
    lines = strip_html_comments(text.replace("\r\n", "\n")).split("\n")
    for raw in lines[:MAX_TEMPLATE_LINES]:
        line = raw.strip()[:_MAX_LINE_CHARS]
        if not line:
            continue
        if line.startswith("#"):
            title = line.lstrip("#").strip().rstrip("#").strip()
            if title:
                headings.append(title)
            continue
        found = box_text(line)
        if found is not None:
            written = line.split("]", 1)[1].strip()
            boxes.append((found[0], written))
            continue
        if line.startswith("<") and line.endswith(">") and line.count("<") == 1:
            # `<details>`, `</details>`: structure that the author's own text uses too;
            # the known checklist blocks are dropped whole by the body's reader.
            continue
        boilerplate.add(normalise(line))
    return PullRequestTemplate(
        source=source,
        headings=tuple(dict.fromkeys(headings)),
        boilerplate=frozenset(boilerplate),
        boxes=tuple(boxes),
    )


# The one box a reviewer triages by: the author says an AI assistant helped write it.
_AI_BOX = re.compile(r"\bai\b|\bllm\b|copilot|chatgpt|\bclaude\b|\bcodex\b")


def is_ai_assistance_box(text: str) -> bool:
    return _AI_BOX.search(text[:_MAX_LINE_CHARS].lower()) is not None


def strip_against(body: str, template: PullRequestTemplate) -> tuple[str, tuple[str, ...]]:
    """`body` without the template's boilerplate lines and checklist boxes, and the boxes
    the author ticked (in the template's wording). Headings stay: they are the sections.
    Linear: one pass over the lines, a set look-up each."""
    kept: list[str] = []
    ticked: list[str] = []
    for line in body.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or len(stripped) > _MAX_LINE_CHARS:
            kept.append(line)
            continue
        box = template.box(stripped)
        if box is not None:
            if box[1]:
                ticked.append(box[0])
            continue
        if normalise(stripped) in template.boilerplate:
            continue
        kept.append(line)
    return "\n".join(kept), tuple(dict.fromkeys(ticked))


def strip_html_comments(text: str) -> str:
    """Drop `<!-- ... -->`; an unterminated comment hides the rest (as GitHub renders it)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        end = text.find("-->", start + 4)
        if end < 0:
            break
        pos = end + 3
    return "".join(out)
