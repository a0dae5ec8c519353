"""The notes of a hunk read whole (`WholeHunk`): its pieces' `all_hunk_notes`.

Each question is asked only of the lines `structure_whole` found for it, except in the
pieces holding a removed line or a context decorator, which are read as `Hunk`s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.reading.specifics import StructureNote
from bot.core.reading.structure.lines import (
    DECORATOR,
    MAX_LINE,
    RAISE,
    RANK,
    SHOWN_ALL,
    TODO,
    decorations,
    snip,
    todo_said,
    wrap_call,
    wrapped_note,
)
from bot.core.reading.structure.notes import hunk_notes
from bot.core.reading.structure.whole import WholeHunk

# Where `TODO` may match, the line capped or not (it ends with `\b`).
_MAY_TODO = re.compile(r"#[ \t]*(?:TODO|FIXME|XXX)")


def whole_hunk_notes(hunk: WholeHunk, below: int = SHOWN_ALL) -> Iterator[StructureNote]:
    """`all_hunk_notes` of each piece of a hunk read whole, of the kinds ranked before
    `below`. A piece with a removed line or a context decorator is read as a `Hunk`;
    in the others no line moved and only the added kinds can be found, so each of
    their questions is asked only of the lines `structure_whole._whole_hunk` found for
    it, its findings put in their pieces.

    The vendored 3,000-file PR is mostly new files, each cut into many pieces: building
    each piece's lists and asking it every question was most of the notes' time."""
    found: dict[int, list[StructureNote]] = {}
    for piece, note in _added_findings(hunk, below):
        if RANK[note.kind] < below:
            found.setdefault(piece, []).append(note)
    ends = [*hunk.starts[1:], len(hunk.text)] if hunk.held else []
    for piece in hunk.general:  # what was found in them above is read again, all of it
        found[piece] = list(hunk_notes(hunk.piece(piece, ends[piece]), below))
    for piece in sorted(found):
        yield from found[piece]


def _added_findings(hunk: WholeHunk, below: int) -> Iterator[tuple[int, StructureNote]]:
    """(piece, note) as if every piece held only added and plain context lines, each
    kind in `structure_notes._notes_of`'s order, its pieces in order."""
    file, text = hunk.file, hunk.text
    for piece, at in _first_per_piece(hunk, RAISE) if RANK["raise-added"] < below else ():
        name = RAISE.match(_capped(text, at))
        yield piece, StructureNote(file, hunk.scopes[piece], "raise-added", _groups(name))
    # No "assert-added": without a removed line no assert replaces a fallback
    # (`structure_notes._replaces_fallback`).
    if hunk.decorators and RANK["decorator-added"] < below:
        yield from _added_decorations(hunk, parametrize=RANK["parametrize"] < below)
    if RANK["todo"] < below and "#" in text:
        yield from _added_todos(hunk)
    if RANK["wrapped"] < below:
        yield from _added_wrapped(hunk)


def _groups(match: re.Match[str] | None) -> tuple[str, ...]:
    return (match.group(1),) if match else ()


def _first_per_piece(hunk: WholeHunk, pattern: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """(piece, line) of the first line of each piece whose capped code `pattern`
    matches, among the added lines `structure_whole._whole_hunk` found may raise, assert or wrap."""
    done = -1
    for at, _ in hunk.asked:
        if pattern.match(hunk.text, at + 2, at + 1 + MAX_LINE) is None:
            continue
        piece = hunk.piece_of(at)
        if piece != done:
            yield piece, at
            done = piece


def _added_decorations(
    hunk: WholeHunk, *, parametrize: bool
) -> Iterator[tuple[int, StructureNote]]:
    """`structure_notes._decorator_notes` of each piece; without the parametrize lines
    when their note is not asked for (they give no other)."""
    lines: dict[int, list[tuple[str, re.Match[str]]]] = {}
    for at, is_parametrize in hunk.decorators:
        if parametrize or not is_parametrize:
            decorator = DECORATOR.match(_capped(hunk.text, at))
            if decorator is not None:
                lines.setdefault(hunk.piece_of(at), []).append(("+", decorator))
    for piece, decorators in lines.items():
        for note in decorations(hunk.file, hunk.scopes[piece], decorators, set()):
            yield piece, note


def _added_todos(hunk: WholeHunk) -> Iterator[tuple[int, StructureNote]]:
    text = hunk.text
    near = _MAY_TODO.search(text)
    while near is not None:
        at = text.rfind("\n", 0, near.start())
        todo = TODO.search(_capped(text, at)) if text[at + 1] == "+" else None
        said = todo_said(todo) if todo is not None else ""
        if not said:
            end = text.find("\n", near.end())
            near = _MAY_TODO.search(text, end) if end >= 0 else None
            continue
        piece = hunk.piece_of(at)
        yield piece, StructureNote(hunk.file, hunk.scopes[piece], "todo", (snip(said),))
        starts = hunk.starts
        near = _MAY_TODO.search(text, starts[piece + 1]) if piece + 1 < len(starts) else None


def _added_wrapped(hunk: WholeHunk) -> Iterator[tuple[int, StructureNote]]:
    """`structure_notes._wrapped` of each piece, asked of the lines that may be
    "wrapper(name)" calls."""
    done = -1
    for at, group in hunk.asked:
        call = wrap_call(_capped(hunk.text, at)) if group == "call" else None
        piece = hunk.piece_of(at) if call is not None else done
        if call is None or piece == done:
            continue
        defined = {
            name for where, name, added in hunk.defs if added and hunk.piece_of(where) == piece
        }
        if call.group(3) in defined | {hunk.scopes[piece]}:
            yield piece, wrapped_note(hunk.file, call)
            done = piece


def _capped(text: str, at: int) -> str:
    """The code of the line starting at `at`, capped like `hunks_plain` caps it."""
    end = text.find("\n", at + 1)
    return text[at + 2 : min(at + 1 + MAX_LINE, len(text) if end < 0 else end)]
