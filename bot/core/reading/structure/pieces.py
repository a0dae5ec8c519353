"""A patch cut into pieces, one per function: `hunks_plain`, the line-by-line definition.

`Hunk` is a piece: its removed and added lines, and its (marker, code) lines in patch
order, which a piece read from its text (`structure_whole`) builds only when asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.core.reading.structure.lines import DECORATOR, DEF, MAX_LINE, hunk_scope

_MARKERS = frozenset(" +-")  # a diff line's first character: context, added, removed

# In a hunk's text, each of its lines after a "\n". Spelled from the "\n" on, not with
# a MULTILINE `^`: a pattern starting with a literal is searched for many times faster.
# Codes are capped like `hunks_plain`'s lines; a "+++"/"---" line is not a diff line.
_CODE = f".{{0,{MAX_LINE - 1}}}"
REMOVED_CODE = re.compile(rf"\n-(?!--)({_CODE})")
ADDED_CODE = re.compile(rf"\n\+(?!\+\+)({_CODE})")
# Every line that may be a decorator: (marker, code).
_MAY_DECORATE = re.compile(rf"\n([ +-])((?=[ \t]*@){_CODE})")


@dataclass
class Hunk:
    file: str
    scope: str
    removed: list[str] = field(default_factory=list)
    # None: read from `_text` when asked (a `WholeHunk`'s notes of added lines never ask).
    _added: list[str] | None = field(default_factory=list)
    # (marker, code) in patch order, for order and decorator attribution. A piece read
    # from its text (`structure_whole`: its lines, each after a "\n") builds them only when
    # a note asks for them.
    _lines: list[tuple[str, str]] | None = None
    _text: str = ""
    _size: int = 0

    @property
    def added(self) -> list[str]:
        if self._added is None:
            self._added = ADDED_CODE.findall(self._text)
        return self._added

    @property
    def lines(self) -> list[tuple[str, str]]:
        if self._lines is None:
            self._lines = _diff_lines(self._text)
        return self._lines

    @property
    def size(self) -> int:
        """How many diff lines (context, added, removed) the piece holds."""
        return len(self._lines) if self._lines is not None else self._size

    @property
    def cost(self) -> int:
        """What reading the piece takes from `read_structure`'s budget."""
        return self.size + 1

    def decorator_lines(self) -> list[tuple[str, re.Match[str]]]:
        """(marker, `DECORATOR` match) of the lines that are decorators, in order."""
        if self._lines is not None:
            lines: Iterable[tuple[str, str]] = self._lines
        else:
            lines = _MAY_DECORATE.findall(self._text)
        found = ((marker, DECORATOR.match(code)) for marker, code in lines)
        return [(marker, match) for marker, match in found if match is not None]


def _diff_lines(text: str) -> list[tuple[str, str]]:
    """(marker, code) of every context, added and removed line of a piece's text."""
    out: list[tuple[str, str]] = []
    for raw in text.split("\n"):
        line = raw[:MAX_LINE]
        marker = line[:1]
        if marker in _MARKERS and (marker == " " or not line.startswith(("+++", "---"))):
            out.append((marker, line[1:]))
    return out


def hunks_plain(filename: str, patch: str, budget: int) -> Iterator[Hunk]:
    """Hunks split further at each def line, so every piece belongs to one function."""
    current: Hunk | None = None
    # No line can start a def without the word: most patches skip the regex.
    defines = "def" in patch or "class" in patch
    # The first `budget` lines (the last piece of a capped split is the rest).
    for raw in patch.split("\n", max(budget, 0))[: max(budget, 0)]:
        line = raw[:MAX_LINE]
        marker = line[:1]
        if marker == "@" and line.startswith("@@"):
            if current is not None:
                yield current
            current = Hunk(filename, hunk_scope(line), _lines=[])
            continue
        if current is None or marker not in _MARKERS:
            continue
        if marker != " " and line.startswith(("+++", "---")):
            continue
        code = line[1:]
        definition = DEF.match(code) if defines and ("def" in code or "class" in code) else None
        if definition:
            # Decorators and comments just above the def belong to it, not to the
            # previous scope (a FIXME above a new helper was pinned on the function
            # the hunk header names: judged wrong).
            carried = _trailing_decorators(current, len(code) - len(code.lstrip(" \t")))
            yield current
            current = Hunk(filename, definition.group(1), _lines=carried)
            current.removed.extend(c for m, c in carried if m == "-")
            current.added.extend(c for m, c in carried if m == "+")
        current.lines.append((marker, code))
        if marker == "-":
            current.removed.append(code)
        elif marker == "+":
            current.added.append(code)
    if current is not None:
        yield current


def _comment_at(code: str, indent: int) -> bool:
    stripped = code.lstrip(" \t")
    return stripped.startswith("#") and len(code) - len(stripped) == indent


def carried_lines(codes: Sequence[str], indent: int) -> int:
    """How many of the last lines before a def line (at `indent`) belong to it: its
    decorators, a decorator call wrapped over lines included (`@support_torch_compile(`
    ... `)`: its closing lines read as the previous function's, and the note named the
    wrong class), and comments at its indent."""
    carried = pending = 0  # pending: lines of a wrapped call, until its decorator shows
    for code in reversed(codes):
        at = len(code) - len(code.lstrip(" \t"))
        if DECORATOR.match(code) and (not pending or at == indent):
            carried += pending + 1
            pending = 0
        elif not pending and _comment_at(code, indent):
            carried += 1
        elif code.strip() and (at > indent or code.lstrip()[:1] in ")]}"):
            pending += 1
        else:
            break
    return carried


def _trailing_decorators(hunk: Hunk, indent: int) -> list[tuple[str, str]]:
    """The lines that end the piece and belong to the def that follows (carried_lines)."""
    carried: list[tuple[str, str]] = []
    for _ in range(carried_lines([code for _, code in hunk.lines], indent)):
        marker, code = hunk.lines.pop()
        carried.insert(0, (marker, code))
        target = hunk.removed if marker == "-" else hunk.added if marker == "+" else None
        if target and target[-1] == code:
            target.pop()
    return carried
