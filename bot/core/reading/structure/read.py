"""The patch read structurally: per changed function, what kind of edit it is.

From hunk headers and the added/removed lines only (no parser: patches are fragments):
a condition changed or reordered, an `assert`/`raise` added, dropped or changed, a
decorator added or removed, a keyword argument no longer passed, a TODO left, a test's
parametrize matrix, a test isolated in its own process, a function handed to a
wrapper such as `allow_in_graph`. Each finding is one short line about one function.
Line by line, every line capped: patches are untrusted.

Here: `read_structure`, the notes kept within a line budget and a rank cut-off, and
`_read_structure_plain`, its definition. What a line means and the notes both readings
build alike: `structure_lines`. A patch cut into one piece per function, line by line (the
definition): `structure_pieces`; a piece's notes: `structure_notes`. The same pieces found
from whole hunks' text: `structure_whole`; their notes: `structure_whole_notes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from bot.core.facts import ChangedFile
from bot.core.reading.specifics import StructureNote
from bot.core.reading.structure.lines import RANK, SHOWN_ALL, is_test_file, snip
from bot.core.reading.structure.new_names import guards_only_new_names
from bot.core.reading.structure.notes import all_hunk_notes, hunk_notes
from bot.core.reading.structure.pieces import Hunk, hunks_plain
from bot.core.reading.structure.whole import WholeHunk, readings
from bot.core.reading.structure.whole_notes import whole_hunk_notes

MAX_NOTES = 6
_MAX_PATCH_LINES = 20_000
_PY_SUFFIXES = (".py", ".pyi")
# Kinds that compare a function with the base ("no longer passes ...", "condition
# changed from ...", "now raises ...; where it used to continue?"): of code the base does
# not have, a file or a function the PR adds, they say something false. A raise that
# guards only a field or parameter the PR adds rejects nothing that used to pass.
_AGAINST_BASE = frozenset({
    "reordered", "condition", "raise-added", "raise-removed", "raise-changed",
    "assert-removed", "assert-changed", "assert-added", "decorator-added",
    "decorator-removed", "kwarg-removed",
})


def _new_code(
    files: Sequence[ChangedFile], new_symbols: frozenset[tuple[str, str]],
    removed_symbols: frozenset[tuple[str, str]] = frozenset(),
) -> Callable[[StructureNote], bool]:
    """Whether a note compares with the base code the base does not have (see
    _AGAINST_BASE), or code the head no longer has: a function the PR removes (or moves
    away) "no longer raises" nothing, it is gone (judged wrong on a parser whose helper
    moved to another module). A test's call that stops passing a keyword follows the API
    it calls: the API's change is the finding (judged misdirected twice)."""
    new_files = {f.filename for f in files if f.status == "added"}
    patches = {f.filename: f.patch for f in files if f.patch}

    def about_new(note: StructureNote) -> bool:
        if note.kind not in _AGAINST_BASE:
            return False
        if note.file in new_files or (note.file, note.symbol) in new_symbols:
            return True
        if (note.file, note.symbol) in removed_symbols:
            return True
        if note.kind == "kwarg-removed" and is_test_file(note.file):
            return True
        if note.kind != "raise-added":
            return False
        return is_test_file(note.file) or guards_only_new_names(
            patches.get(note.file, ""), note.details[0] if note.details else ""
        )

    return about_new


def read_structure(
    files: Sequence[ChangedFile], limit: int = MAX_NOTES,
    new_symbols: frozenset[tuple[str, str]] = frozenset(),
    removed_symbols: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[StructureNote, ...]:
    """Structural notes over all Python patches, most telling first, one per (function,
    kind); none comparing with the base about code the PR adds (`new_symbols`: (file,
    name) of the functions and classes it adds)."""
    kept = _Kept(limit)
    about_new = _new_code(files, new_symbols, removed_symbols)
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch or not changed.filename.endswith(_PY_SUFFIXES):
            continue
        for reading in readings(changed.filename, changed.patch, budget):
            budget -= reading.cost
            for note in _reading_notes(reading, kept.below):
                if not about_new(note):
                    kept.add(note)
        if budget <= 0:
            break
    return kept.shown()


def _reading_notes(reading: Hunk | WholeHunk, below: int) -> Iterator[StructureNote]:
    if isinstance(reading, WholeHunk):
        return whole_hunk_notes(reading, below)
    return hunk_notes(reading, below)


def _read_structure_plain(
    files: Sequence[ChangedFile], limit: int = MAX_NOTES,
    new_symbols: frozenset[tuple[str, str]] = frozenset(),
    removed_symbols: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[StructureNote, ...]:
    """`read_structure`'s definition: every piece read line by line, asked everything."""
    about_new = _new_code(files, new_symbols, removed_symbols)
    notes: list[StructureNote] = []
    seen: set[tuple[str, str, str]] = set()
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch or not changed.filename.endswith(_PY_SUFFIXES):
            continue
        for hunk in hunks_plain(changed.filename, changed.patch, budget):
            budget -= hunk.size + 1
            for note in all_hunk_notes(hunk):
                if about_new(note):
                    continue
                key = (note.file, note.symbol, note.kind)
                if key not in seen:
                    seen.add(key)
                    notes.append(note)
        if budget <= 0:
            break
    notes.sort(key=lambda n: RANK[n.kind])
    return tuple(_one_per_symbol(notes, limit))


class _Kept:
    """The notes found so far, one per (file, symbol, kind), and `below`: the rank from
    which no note found later can be shown, so those questions need not be asked.

    Once the notes ranked up to r show `limit` lines, a later note ranked r or after
    sorts after all of them (the sort is stable), so `_one_per_symbol` stops before it:
    the vendored 3,000-file PR finds ~1,700 parametrize notes and shows 6."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 1)  # `_one_per_symbol` shows one note even at 0
        self.notes: list[StructureNote] = []
        self.seen: set[tuple[str, str, str]] = set()
        # The lines the notes ranked up to r would show: one per symbol, each module-level one.
        self.lines: list[set[tuple[str, ...]]] = [set() for _ in range(SHOWN_ALL)]
        self.below = SHOWN_ALL

    def add(self, note: StructureNote) -> None:
        key = (note.file, note.symbol, note.kind)
        rank = RANK[note.kind]
        if rank >= self.below or key in self.seen:
            return
        self.seen.add(key)
        self.notes.append(note)
        line = (note.file, note.symbol) if note.symbol else key
        for at_most in range(rank, self.below):
            self.lines[at_most].add(line)
            if len(self.lines[at_most]) >= self.limit:
                self.below = at_most
                return

    def shown(self) -> tuple[StructureNote, ...]:
        self.notes.sort(key=lambda n: RANK[n.kind])
        return tuple(_one_per_symbol(self.notes, self.limit))


def _one_per_symbol(notes: list[StructureNote], limit: int) -> Iterator[StructureNote]:
    """A function yields at most one line; its most telling one."""
    taken: set[tuple[str, str]] = set()
    count = 0
    for note in notes:
        key = (note.file, note.symbol)
        if note.symbol and key in taken:
            continue
        taken.add(key)
        yield note
        count += 1
        if count >= limit:
            return


# A title that says the PR rejects some input ("Reject non-finite temperature",
# "Validate tool names"): an error raised where the code used to continue is its stated
# purpose, so "an explicit error where it used to continue?" asks what the title answers.
_REJECTING_TITLE = re.compile(
    r"\b(?:reject(?:s|ed|ing)?|disallow(?:s|ed|ing)?|forbid(?:s|den|ding)?|refuse(?:s|d)?"
    r"|validat(?:e|es|ed|ing|ion))\b",
    re.IGNORECASE,
)


def unanswered(notes: Sequence[StructureNote], title: str) -> tuple[StructureNote, ...]:
    """The notes whose question the PR's title does not already answer: a new raise in a
    PR whose title says it rejects input is what the PR is for (blind judges: answered)."""
    if _REJECTING_TITLE.search(title[:300]) is None:
        return tuple(notes)
    return tuple(n for n in notes if n.kind != "raise-added")


_MAX_MOVED_LINES = 20_000


def not_moved(notes: Sequence[StructureNote], files: Sequence[ChangedFile]
              ) -> tuple[StructureNote, ...]:
    """The notes less those about a check that moved or stayed:
    - "condition changed from A to B" where A's test is added again in the same file,
      alone or inside a longer condition: the check moved (into a new function, say) or
      gained a clause, and B is a new check beside it, not A's replacement (blind judges:
      a diff artifact; wrong where `if x.y is not None` became `if x is not None and
      x.y is not None`);
    - the same, where another new condition tests A's own names or strings: A stayed,
      reworded below a new branch that position paired it with;
    - "no longer raises E" where the PR adds the same raise, message and all, elsewhere:
      it moved into a helper the function now calls (judged wrong)."""
    if not any(n.kind in ("condition", "raise-removed") and n.details for n in notes):
        return tuple(notes)
    added: dict[str, list[str]] = {}
    raised: dict[str, list[str]] = {}  # file -> the messages of the raises it removes
    budget = _MAX_MOVED_LINES
    for changed in files:
        if not changed.patch or is_test_file(changed.filename):
            continue
        lines = changed.patch.split("\n", budget)[:budget]
        budget -= len(lines)
        added[changed.filename] = [
            line[1:].strip()[:400] for line in lines if line.startswith("+")
        ]
        raised[changed.filename] = _removed_raise_messages(lines)
        if budget <= 0:
            break
    everywhere = "\n".join(line for lines in added.values() for line in lines)

    def stayed(note: StructureNote) -> bool:
        if note.kind == "condition" and note.details:
            test = _CONDITION_TEST.sub("", note.details[0].strip())
            paired = note.details[-1].strip()
            lines = added.get(note.file, ())
            if bool(test) and test not in paired and any(test in line for line in lines):
                return True
            # (`if "X" in cfg.arch` -> `if "X" in architectures`: judged wrong twice)
            names = _names_of(note.details[0]) - _names_of(paired)
            return bool(names) and any(
                _CONDITION.match(line) and snip(line) != paired and names & _names_of(line)
                for line in lines)
        if note.kind == "raise-removed":
            return any(message in everywhere for message in raised.get(note.file, ()))
        return False

    return tuple(n for n in notes if not stayed(n))


_CONDITION = re.compile(r"(?:el)?if\b|while\b")
# A name or a string a condition tests: long enough to be its own (`num_redundant_experts`,
# "LiLiCorrDraftModel"), not `self`, `None` or `cfg`.
_NAME = re.compile(r"""["'][\w.-]{6,}["']|[A-Za-z_]\w{7,}""")


def _names_of(code: str) -> set[str]:
    """The names and strings of a condition; a word a snippet cut (`arch…`) is not one."""
    text = code.strip()
    if text.endswith("…"):
        text = re.sub(r"[\w.]*…$", "", text)
    return {name.strip("\"'") for name in _NAME.findall(text)}


# `if`/`elif`/`while` and the trailing colon: what is left is the test itself.
_CONDITION_TEST = re.compile(r"^(?:el)?if[ \t]+|^while[ \t]+|[ \t]*:[ \t]*$")
# The first words of a raise's message: `raise ValueError("No valid backend found.")`.
_RAISE_MESSAGE = re.compile(r"""\braise[ \t]+[\w.]+\((?:[ \t]*)(?:[rbfu]{0,2})["']([^"'{}]{16,})""")


def _removed_raise_messages(lines: Sequence[str]) -> list[str]:
    """The first words (up to a placeholder) of each message a removed raise carries,
    read from the raise line and the two removed lines after it (a wrapped call)."""
    removed = [line[1:] for line in lines if line.startswith("-")]
    messages = []
    for i, code in enumerate(removed):
        if "raise" not in code:
            continue
        match = _RAISE_MESSAGE.search(" ".join(x.strip() for x in removed[i:i + 3]))
        if match:
            messages.append(match.group(1)[:60])
    return messages
