"""The pieces of `hunks_plain`, found with a few scans of each hunk's text instead of a
Python loop over its lines: `readings`.

A hunk holding a def line is read whole (`WholeHunk`): where its pieces start and which
of its lines a question may be about. `structure_whole_notes` asks those questions.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.reading.structure.lines import DECORATOR, DEF, MAX_LINE, PARAMETRIZE, hunk_scope
from bot.core.reading.structure.pieces import (
    ADDED_CODE,
    REMOVED_CODE,
    Hunk,
    carried_lines,
    hunks_plain,
)

# Every line of a hunk a question may be about, and any line that is not a diff line
# ("other": the hunk is read line by line). Each alternative matches a line where its
# question's pattern matches the line's capped code, and maybe where it does not (a
# line over the cap), so each line found is asked again, of its capped code. "call"
# comes before "assert": "assert(x)" is both. Context lines matter only as def lines
# and decorators. The lookaheads for a first letter halve the search's time.
_HUNK_LINE = re.compile(
    r"\n(?:(?P<removed>-(?!--))|(?P<context> )(?=[ \t]*[@adc])|(?P<other>(?![ +])|\+\+\+)|\+(?:"
    r"(?P<call>(?![ \t])[^\S\n]*[A-Za-z_][\w.]*\([A-Za-z_]\w*\))"
    r"|[ \t]*(?=[@adcr])(?:(?P<def>(?:async[ \t]+)?(?:def|class)[ \t]+(?P<name>[A-Za-z_]\w*))"
    r"|(?P<parametrize>@pytest\.mark\.parametrize\()|(?P<decorator>@)"
    r"|(?P<raise>raise[ \t])|(?P<assert>assert))))"
)


def readings(filename: str, patch: str, budget: int) -> Iterator[Hunk | WholeHunk]:
    """`hunks_plain`, reading whole hunks with a few scans of their text.

    A 3,000-file PR has up to `structure._MAX_PATCH_LINES` lines to read, and a Python loop over
    them was most of the structure notes' time. A hunk without a def line is one piece:
    its added and removed lines are one `findall` each, and its (marker, code) list is
    built only when a note asks for it. A hunk holding a def line is read whole
    (`WholeHunk`) when every line of it is a diff line; otherwise, and for a patch
    longer than the budget (cut mid-way), line by line.
    tests/core/rules/test_engine_equivalence.py checks the pieces against `hunks_plain`."""
    lines = patch.count("\n")
    if budget <= 0 or lines >= budget:
        yield from hunks_plain(filename, patch, budget)
        return
    defines = "def" in patch or "class" in patch
    # Every hunk starts at a line beginning "@@"; what precedes the first is not read.
    hunks = ("\n" + patch).split("\n@@")
    # A new file's one hunk: its lines are the patch's, already counted.
    one_hunk = len(hunks) == 2 and not hunks[0]
    for piece in hunks[1:]:
        cut = piece.find("\n")
        header, text = (piece, "") if cut < 0 else (piece[:cut], piece[cut:])
        scope = hunk_scope(("@@" + header)[:MAX_LINE])
        if not (defines and ("def" in text or "class" in text)):
            removed = REMOVED_CODE.findall(text)
            added = ADDED_CODE.findall(text)
            size = text.count("\n ") + len(removed) + len(added)
            yield Hunk(filename, scope, removed, added, _text=text, _size=size)
            continue
        whole = _whole_hunk(filename, scope, text, lines if one_hunk else text.count("\n"))
        if whole is not None:
            yield whole
        else:  # a line that is not a diff line (or a "+++"/"---" one): read line by line
            yield from hunks_plain(filename, "@@" + piece, budget)


@dataclass
class WholeHunk:
    """A hunk of diff lines read whole: the lines its questions may be about, found by
    one search of its text (`_whole_hunk`). Its pieces are cut where `hunks_plain`
    cuts them: piece i is `text[starts[i]:starts[i + 1]]`, in function `scopes[i]`.
    Lines are named by where they start (their "\\n")."""

    file: str
    text: str
    lines: int
    scope: str  # the hunk header's function: the first piece's
    defs: list[tuple[int, str, bool]]  # each def line, the name it defines, if added
    decorators: list[tuple[int, bool]]  # each added decorator line, if a parametrize
    asked: list[tuple[int, str]]  # added lines that may raise, assert or wrap: their group
    # Removed lines and context decorators: their pieces are asked every question.
    held: list[int]
    _cuts: tuple[list[int], list[str]] | None = None
    _general: set[int] | None = None

    @property
    def cost(self) -> int:
        """Its pieces' `Hunk.cost`: every line, and one per piece."""
        return self.lines + len(self.defs) + 1

    @property
    def starts(self) -> list[int]:
        return self.cuts()[0]

    @property
    def scopes(self) -> list[str]:
        return self.cuts()[1]

    def cuts(self) -> tuple[list[int], list[str]]:
        if self._cuts is None:
            self._cuts = _whole_hunk_cuts(self)
        return self._cuts

    @property
    def general(self) -> set[int]:
        """The pieces read as `Hunk`s: a removed line or a context decorator in them."""
        if self._general is None:
            self._general = {self.piece_of(at) for at in self.held}
        return self._general

    def piece_of(self, at: int) -> int:
        """The piece holding the text's character `at`."""
        return bisect_right(self.starts, at) - 1

    def pieces(self) -> list[Hunk]:
        ends = [*self.starts[1:], len(self.text)]
        return [self.piece(i, end) for i, end in enumerate(ends)]

    def piece(self, i: int, end: int) -> Hunk:
        text = self.text[self.starts[i] : end]
        removed = REMOVED_CODE.findall(text) if i in self.general else []
        return Hunk(self.file, self.scopes[i], removed, None, _text=text, _size=text.count("\n"))


def _whole_hunk(filename: str, scope: str, text: str, lines: int) -> WholeHunk | None:
    """A hunk's text (`lines` lines) read whole; None if a line is not a diff line."""
    hunk = WholeHunk(filename, text, lines, scope, [], [], [], [])
    for line in _HUNK_LINE.finditer(text):
        group, at = line.lastgroup, line.start()
        if group == "other":
            return None
        if group in ("removed", "context"):
            _read_kept_line(hunk, at, group)
        elif group == "def" and line.end() <= at + 1 + MAX_LINE:
            hunk.defs.append((at, line.group("name"), True))  # `DEF`'s match: within the cap
        elif group == "def":
            definition = DEF.match(text, at + 2, at + 1 + MAX_LINE)
            if definition is not None:
                hunk.defs.append((at, definition.group(1), True))
        elif group == "parametrize" and PARAMETRIZE.match(text, at + 2, at + 1 + MAX_LINE):
            hunk.decorators.append((at, True))
        elif group in ("parametrize", "decorator"):
            if DECORATOR.match(text, at + 2, at + 1 + MAX_LINE):
                hunk.decorators.append((at, False))
        else:
            hunk.asked.append((at, group or ""))
    return hunk


def _read_kept_line(hunk: WholeHunk, at: int, group: str) -> None:
    """A removed line, or a context line that may be a def line or a decorator."""
    definition = DEF.match(hunk.text, at + 2, at + 1 + MAX_LINE)
    if definition is not None:
        hunk.defs.append((at, definition.group(1), False))
    elif DECORATOR.match(hunk.text, at + 2, at + 1 + MAX_LINE):
        hunk.held.append(at)
    if group == "removed":
        hunk.held.append(at)


def _indent(text: str, at: int) -> int:
    """How many spaces and tabs start the code at `at` (capped at a line's length)."""
    end = at
    limit = min(len(text), at + MAX_LINE)
    while end < limit and text[end] in " \t":
        end += 1
    return end - at


def _whole_hunk_cuts(hunk: WholeHunk) -> tuple[list[int], list[str]]:
    """Where `hunks_plain` cuts a hunk into pieces, and each piece's scope."""
    text = hunk.text
    starts, scopes = [0], [hunk.scope]
    for at, name, _ in hunk.defs:
        # The lines that belong to the def above it (`structure_pieces.carried_lines`).
        indent = _indent(text, at + 2)
        codes = [line[1:MAX_LINE] for line in text[starts[-1]:at].split("\n")[1:]]
        end = at
        for _ in range(carried_lines(codes, indent)):
            end = text.rfind("\n", starts[-1], end)
        starts.append(end)
        scopes.append(name)
    return starts, scopes
