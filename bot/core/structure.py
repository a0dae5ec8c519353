"""The patch read structurally: per changed function, what kind of edit it is.

From hunk headers and the added/removed lines only (no parser: patches are fragments):
a condition changed or reordered, an `assert`/`raise` added, dropped or changed, a
decorator added or removed, a keyword argument no longer passed, a TODO left, a test's
parametrize matrix, a test isolated in its own process, a function handed to a
wrapper such as `allow_in_graph`. Each finding is one short line about one function.
Line by line, every line capped: patches are untrusted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.core.facts import ChangedFile
from bot.core.specifics import StructureKind as Kind
from bot.core.specifics import StructureNote

MAX_NOTES = 6
_MAX_PATCH_LINES = 20_000
_MAX_LINE = 300
_SNIPPET = 70
_PY_SUFFIXES = (".py", ".pyi")
_MARKERS = frozenset(" +-")  # a diff line's first character: context, added, removed
_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)")
_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
_CONDITION = re.compile(r"[ \t]*(?:if|elif|while)[ \t(].*:[ \t]*(?:#.*)?$")
_ASSERT = re.compile(r"[ \t]*assert\b")
_RAISE = re.compile(r"[ \t]*raise[ \t]+([A-Za-z_][\w.]*)")
_DECORATOR = re.compile(r"[ \t]*@([A-Za-z_][\w.]*)")
_KWARG = re.compile(r"(?<![=!<>\w])([A-Za-z_]\w{0,60})[ \t]*=(?!=)")
_TODO = re.compile(r"#[ \t]*(TODO|FIXME|XXX)\b(?:\([^)\n]{0,40}\))?[: \t]*(.*)")
_PARAMETRIZE = re.compile(r"[ \t]*@pytest\.mark\.parametrize\((.*)")
_WRAP_CALL = re.compile(r"([A-Za-z_][\w.]*\.)?([A-Za-z_]\w*)\(([A-Za-z_]\w*)\)[ \t]*$")
_ISOLATION = re.compile(r"spawn|fork|isolat|subprocess|new_process", re.IGNORECASE)

# Most telling first: what changes behaviour before what changes tests.
_RANK: dict[str, int] = {
    "reordered": 0,
    "condition": 1,
    "raise-changed": 2,
    "raise-added": 3,
    "raise-removed": 3,
    "assert-changed": 4,
    "assert-removed": 4,
    "assert-added": 5,
    "kwarg-removed": 5,
    "wrapped": 6,
    "decorator-added": 6,
    "decorator-removed": 6,
    "todo": 7,
    "isolated": 8,
    "parametrize": 9,
}
_SHOWN_ALL = max(_RANK.values()) + 1  # a `below` that asks every question


@dataclass
class _Hunk:
    file: str
    scope: str
    removed: list[str] = field(default_factory=list)
    # None: read from `_text` when asked (a `_WholeHunk`'s notes of added lines never ask).
    _added: list[str] | None = field(default_factory=list)
    # (marker, code) in patch order, for order and decorator attribution. A piece read
    # from its text (`_hunks`: its lines, each after a "\n") builds them only when
    # a note asks for them.
    _lines: list[tuple[str, str]] | None = None
    _text: str = ""
    _size: int = 0

    @property
    def added(self) -> list[str]:
        if self._added is None:
            self._added = _ADDED_CODE.findall(self._text)
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
        """(marker, `_DECORATOR` match) of the lines that are decorators, in order."""
        if self._lines is not None:
            lines: Iterable[tuple[str, str]] = self._lines
        else:
            lines = _MAY_DECORATE.findall(self._text)
        found = ((marker, _DECORATOR.match(code)) for marker, code in lines)
        return [(marker, match) for marker, match in found if match is not None]


def _diff_lines(text: str) -> list[tuple[str, str]]:
    """(marker, code) of every context, added and removed line of a piece's text."""
    out: list[tuple[str, str]] = []
    for raw in text.split("\n"):
        line = raw[:_MAX_LINE]
        marker = line[:1]
        if marker in _MARKERS and (marker == " " or not line.startswith(("+++", "---"))):
            out.append((marker, line[1:]))
    return out


def read_structure(
    files: Sequence[ChangedFile], limit: int = MAX_NOTES
) -> tuple[StructureNote, ...]:
    """Structural notes over all Python patches, most telling first, one per (function, kind)."""
    kept = _Kept(limit)
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch or not changed.filename.endswith(_PY_SUFFIXES):
            continue
        for reading in _readings(changed.filename, changed.patch, budget):
            budget -= reading.cost
            for note in _reading_notes(reading, kept.below):
                kept.add(note)
        if budget <= 0:
            break
    return kept.shown()


def _read_structure_plain(
    files: Sequence[ChangedFile], limit: int = MAX_NOTES
) -> tuple[StructureNote, ...]:
    """`read_structure`'s definition: every piece read line by line, asked everything."""
    notes: list[StructureNote] = []
    seen: set[tuple[str, str, str]] = set()
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch or not changed.filename.endswith(_PY_SUFFIXES):
            continue
        for hunk in _hunks_plain(changed.filename, changed.patch, budget):
            budget -= hunk.size + 1
            for note in _all_hunk_notes(hunk):
                key = (note.file, note.symbol, note.kind)
                if key not in seen:
                    seen.add(key)
                    notes.append(note)
        if budget <= 0:
            break
    notes.sort(key=lambda n: _RANK[n.kind])
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
        self.lines: list[set[tuple[str, ...]]] = [set() for _ in range(_SHOWN_ALL)]
        self.below = _SHOWN_ALL

    def add(self, note: StructureNote) -> None:
        key = (note.file, note.symbol, note.kind)
        rank = _RANK[note.kind]
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
        self.notes.sort(key=lambda n: _RANK[n.kind])
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


# In a hunk's text, each of its lines after a "\n". Spelled from the "\n" on, not with
# a MULTILINE `^`: a pattern starting with a literal is searched for many times faster.
# Codes are capped like `_hunks_plain`'s lines; a "+++"/"---" line is not a diff line.
_CODE = f".{{0,{_MAX_LINE - 1}}}"
_REMOVED_CODE = re.compile(rf"\n-(?!--)({_CODE})")
_ADDED_CODE = re.compile(rf"\n\+(?!\+\+)({_CODE})")
# Every line that may be a decorator: (marker, code).
_MAY_DECORATE = re.compile(rf"\n([ +-])((?=[ \t]*@){_CODE})")


def _hunks(filename: str, patch: str, budget: int) -> Iterator[_Hunk]:
    """`_hunks_plain`, the pieces of `_readings`."""
    for reading in _readings(filename, patch, budget):
        if isinstance(reading, _WholeHunk):
            yield from reading.pieces()
        else:
            yield reading


def _reading_notes(reading: _Hunk | _WholeHunk, below: int) -> Iterator[StructureNote]:
    if isinstance(reading, _WholeHunk):
        return _whole_hunk_notes(reading, below)
    return _hunk_notes(reading, below)


def _readings(filename: str, patch: str, budget: int) -> Iterator[_Hunk | _WholeHunk]:
    """`_hunks_plain`, reading whole hunks with a few scans of their text.

    A 3,000-file PR has up to `_MAX_PATCH_LINES` lines to read, and a Python loop over
    them was most of the structure notes' time. A hunk without a def line is one piece:
    its added and removed lines are one `findall` each, and its (marker, code) list is
    built only when a note asks for it. A hunk holding a def line is read whole
    (`_WholeHunk`) when every line of it is a diff line; otherwise, and for a patch
    longer than the budget (cut mid-way), line by line.
    tests/test_engine_equivalence.py checks the pieces against `_hunks_plain`."""
    lines = patch.count("\n")
    if budget <= 0 or lines >= budget:
        yield from _hunks_plain(filename, patch, budget)
        return
    defines = "def" in patch or "class" in patch
    # Every hunk starts at a line beginning "@@"; what precedes the first is not read.
    hunks = ("\n" + patch).split("\n@@")
    # A new file's one hunk: its lines are the patch's, already counted.
    one_hunk = len(hunks) == 2 and not hunks[0]
    for piece in hunks[1:]:
        cut = piece.find("\n")
        header, text = (piece, "") if cut < 0 else (piece[:cut], piece[cut:])
        scope = _hunk_scope(("@@" + header)[:_MAX_LINE])
        if not (defines and ("def" in text or "class" in text)):
            removed = _REMOVED_CODE.findall(text)
            added = _ADDED_CODE.findall(text)
            size = text.count("\n ") + len(removed) + len(added)
            yield _Hunk(filename, scope, removed, added, _text=text, _size=size)
            continue
        whole = _whole_hunk(filename, scope, text, lines if one_hunk else text.count("\n"))
        if whole is not None:
            yield whole
        else:  # a line that is not a diff line (or a "+++"/"---" one): read line by line
            yield from _hunks_plain(filename, "@@" + piece, budget)


@dataclass
class _WholeHunk:
    """A hunk of diff lines read whole: the lines its questions may be about, found by
    one search of its text (`_whole_hunk`). Its pieces are cut where `_hunks_plain`
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
    held_decorators: list[int]  # the decorators among them
    _cuts: tuple[list[int], list[str]] | None = None
    _general: set[int] | None = None

    @property
    def cost(self) -> int:
        """Its pieces' `_Hunk.cost`: every line, and one per piece."""
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
        """The pieces read as `_Hunk`s: a removed line or a context decorator in them."""
        if self._general is None:
            self._general = {self.piece_of(at) for at in self.held}
        return self._general

    def piece_of(self, at: int) -> int:
        """The piece holding the text's character `at`."""
        return bisect_right(self.starts, at) - 1

    def pieces(self) -> list[_Hunk]:
        ends = [*self.starts[1:], len(self.text)]
        return [self.piece(i, end) for i, end in enumerate(ends)]

    def piece(self, i: int, end: int) -> _Hunk:
        text = self.text[self.starts[i] : end]
        removed = _REMOVED_CODE.findall(text) if i in self.general else []
        return _Hunk(self.file, self.scopes[i], removed, None, _text=text, _size=text.count("\n"))


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
# Where a line of capped codes joined by "\n" ends in a one-name call, as one that
# `_wrap_call` reads must.
_MAY_WRAP = re.compile(r"\([A-Za-z_]\w*\)[^\S\n]*(?:\n|\Z)")
# Where `_TODO` may match, the line capped or not (it ends with `\b`).
_MAY_TODO = re.compile(r"#[ \t]*(?:TODO|FIXME|XXX)")


def _whole_hunk(filename: str, scope: str, text: str, lines: int) -> _WholeHunk | None:
    """A hunk's text (`lines` lines) read whole; None if a line is not a diff line."""
    hunk = _WholeHunk(filename, text, lines, scope, [], [], [], [], [])
    for line in _HUNK_LINE.finditer(text):
        group, at = line.lastgroup, line.start()
        if group == "other":
            return None
        if group in ("removed", "context"):
            _read_kept_line(hunk, at, group)
        elif group == "def" and line.end() <= at + 1 + _MAX_LINE:
            hunk.defs.append((at, line.group("name"), True))  # `_DEF`'s match: within the cap
        elif group == "def":
            definition = _DEF.match(text, at + 2, at + 1 + _MAX_LINE)
            if definition is not None:
                hunk.defs.append((at, definition.group(1), True))
        elif group == "parametrize" and _PARAMETRIZE.match(text, at + 2, at + 1 + _MAX_LINE):
            hunk.decorators.append((at, True))
        elif group in ("parametrize", "decorator"):
            if _DECORATOR.match(text, at + 2, at + 1 + _MAX_LINE):
                hunk.decorators.append((at, False))
        else:
            hunk.asked.append((at, group or ""))
    return hunk


def _read_kept_line(hunk: _WholeHunk, at: int, group: str) -> None:
    """A removed line, or a context line that may be a def line or a decorator."""
    definition = _DEF.match(hunk.text, at + 2, at + 1 + _MAX_LINE)
    if definition is not None:
        hunk.defs.append((at, definition.group(1), False))
    elif _DECORATOR.match(hunk.text, at + 2, at + 1 + _MAX_LINE):
        hunk.held_decorators.append(at)
        hunk.held.append(at)
    if group == "removed":
        hunk.held.append(at)


def _capped(text: str, at: int) -> str:
    """The code of the line starting at `at`, capped like `_hunks_plain` caps it."""
    end = text.find("\n", at + 1)
    return text[at + 2 : min(at + 1 + _MAX_LINE, len(text) if end < 0 else end)]


def _whole_hunk_cuts(hunk: _WholeHunk) -> tuple[list[int], list[str]]:
    """Where `_hunks_plain` cuts a hunk into pieces, and each piece's scope."""
    text = hunk.text
    starts, scopes = [0], [hunk.scope]
    decorated = {at for at, _ in hunk.decorators} | set(hunk.held_decorators)
    for at, name, _ in hunk.defs:
        # Decorators just above the def line belong to it (`_trailing_decorators`).
        end = at
        while end > starts[-1]:
            above = text.rfind("\n", starts[-1], end)
            if above not in decorated:
                break
            end = above
        starts.append(end)
        scopes.append(name)
    return starts, scopes


def _hunk_scope(header: str) -> str:
    if "def" not in header and "class" not in header:
        return ""  # no def line to match: most headers
    match = _HUNK.match(header)
    definition = _DEF.match(match.group(1)) if match else None
    return definition.group(1) if definition else ""


def _hunks_plain(filename: str, patch: str, budget: int) -> Iterator[_Hunk]:
    """Hunks split further at each def line, so every piece belongs to one function."""
    current: _Hunk | None = None
    # No line can start a def without the word: most patches skip the regex.
    defines = "def" in patch or "class" in patch
    # The first `budget` lines (the last piece of a capped split is the rest).
    for raw in patch.split("\n", max(budget, 0))[: max(budget, 0)]:
        line = raw[:_MAX_LINE]
        marker = line[:1]
        if marker == "@" and line.startswith("@@"):
            if current is not None:
                yield current
            current = _Hunk(filename, _hunk_scope(line), _lines=[])
            continue
        if current is None or marker not in _MARKERS:
            continue
        if marker != " " and line.startswith(("+++", "---")):
            continue
        code = line[1:]
        definition = _DEF.match(code) if defines and ("def" in code or "class" in code) else None
        if definition:
            # Decorators just above the def belong to it, not to the previous scope.
            carried = _trailing_decorators(current)
            yield current
            current = _Hunk(filename, definition.group(1), _lines=carried)
            current.removed.extend(c for m, c in carried if m == "-")
            current.added.extend(c for m, c in carried if m == "+")
        current.lines.append((marker, code))
        if marker == "-":
            current.removed.append(code)
        elif marker == "+":
            current.added.append(code)
    if current is not None:
        yield current


def _trailing_decorators(hunk: _Hunk) -> list[tuple[str, str]]:
    carried: list[tuple[str, str]] = []
    while hunk.lines and _DECORATOR.match(hunk.lines[-1][1]):
        marker, code = hunk.lines.pop()
        carried.insert(0, (marker, code))
        target = hunk.removed if marker == "-" else hunk.added if marker == "+" else None
        if target and target[-1] == code:
            target.pop()
    return carried


def _hunk_notes(hunk: _Hunk, below: int = _SHOWN_ALL) -> Iterator[StructureNote]:
    """`_all_hunk_notes` of the kinds ranked before `below`."""
    notes = _asked_notes(hunk, below)
    return notes if below == _SHOWN_ALL else (n for n in notes if _RANK[n.kind] < below)


def _asked_notes(hunk: _Hunk, below: int) -> Iterator[StructureNote]:
    """`_all_hunk_notes`, asking only the questions the hunk's text can answer yes to,
    and of those only the ones that may find a kind ranked before `below`.

    A 3,000-file PR has thousands of hunks and most yield nothing: each kind of note
    needs a word (`if`, `raise`, `assert`, `@`, `=`, `#`, `(`) in the lines it reads,
    so one substring test over those lines skips the kind's regexes when the word is
    absent. Skipping a question that finds nothing leaves the notes and their order
    as they were (tests/test_engine_equivalence.py)."""
    if not hunk.removed and not hunk.added:
        return  # context only: every kind needs a changed line
    removed = [c for c in hunk.removed if c.strip()]
    added = [c for c in hunk.added if c.strip()]
    old_text = "\n".join(removed)
    new_text = "\n".join(added)
    # A line in both is in the added text: most hunks build no sets.
    old_lines = [c.strip() for c in removed] if added else []
    moved: set[str] = (
        set(old_lines) & {c.strip() for c in added}
        if any(line in new_text for line in old_lines)
        else set()
    )
    yield from _notes_of(
        hunk,
        removed,
        added,
        moved,
        reordered=len(moved) >= 2 and _RANK["reordered"] < below,
        condition=("if" in old_text or "while" in old_text)
        and ("if" in new_text or "while" in new_text)
        and _RANK["condition"] < below,
        raises=("raise" in old_text or "raise" in new_text) and _RANK["raise-changed"] < below,
        asserts=("assert" in old_text or "assert" in new_text)
        and _RANK["assert-changed"] < below,
        # The changed lines among `hunk.lines` are `hunk.removed` and `hunk.added`.
        decorators=("@" in old_text or "@" in new_text) and _RANK["decorator-added"] < below,
        kwargs=bool(added) and "=" in old_text and _RANK["kwarg-removed"] < below,
        todo="#" in new_text
        and ("TODO" in new_text or "FIXME" in new_text or "XXX" in new_text)
        and _RANK["todo"] < below,
        wrapped="(" in new_text
        and _MAY_WRAP.search(new_text) is not None
        and _RANK["wrapped"] < below,
    )


def _whole_hunk_notes(hunk: _WholeHunk, below: int = _SHOWN_ALL) -> Iterator[StructureNote]:
    """`_all_hunk_notes` of each piece of a hunk read whole, of the kinds ranked before
    `below`. A piece with a removed line or a context decorator is read as a `_Hunk`;
    in the others no line moved and only the added kinds can be found, so each of
    their questions is asked only of the lines `_whole_hunk` found for it, its findings
    put in their pieces.

    The vendored 3,000-file PR is mostly new files, each cut into many pieces: building
    each piece's lists and asking it every question was most of the notes' time."""
    found: dict[int, list[StructureNote]] = {}
    for piece, note in _added_findings(hunk, below):
        if _RANK[note.kind] < below:
            found.setdefault(piece, []).append(note)
    ends = [*hunk.starts[1:], len(hunk.text)] if hunk.held else []
    for piece in hunk.general:  # what was found in them above is read again, all of it
        found[piece] = list(_hunk_notes(hunk.piece(piece, ends[piece]), below))
    for piece in sorted(found):
        yield from found[piece]


def _added_findings(hunk: _WholeHunk, below: int) -> Iterator[tuple[int, StructureNote]]:
    """(piece, note) as if every piece held only added and plain context lines, each
    kind in `_notes_of`'s order, its pieces in order."""
    file, text = hunk.file, hunk.text
    for piece, at in _first_per_piece(hunk, _RAISE) if _RANK["raise-added"] < below else ():
        name = _RAISE.match(_capped(text, at))
        yield piece, StructureNote(file, hunk.scopes[piece], "raise-added", _groups(name))
    asserts = _RANK["assert-added"] < below and not _is_test_file(file)
    for piece, at in _first_per_piece(hunk, _ASSERT) if asserts else ():
        snippet = _snip(_capped(text, at))
        yield piece, StructureNote(file, hunk.scopes[piece], "assert-added", (snippet,))
    if hunk.decorators and _RANK["decorator-added"] < below:
        yield from _added_decorations(hunk, parametrize=_RANK["parametrize"] < below)
    if _RANK["todo"] < below and "#" in text:
        yield from _added_todos(hunk)
    if _RANK["wrapped"] < below:
        yield from _added_wrapped(hunk)


def _groups(match: re.Match[str] | None) -> tuple[str, ...]:
    return (match.group(1),) if match else ()


def _first_per_piece(hunk: _WholeHunk, pattern: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """(piece, line) of the first line of each piece whose capped code `pattern`
    matches, among the added lines `_whole_hunk` found may raise, assert or wrap."""
    done = -1
    for at, _ in hunk.asked:
        if pattern.match(hunk.text, at + 2, at + 1 + _MAX_LINE) is None:
            continue
        piece = hunk.piece_of(at)
        if piece != done:
            yield piece, at
            done = piece


def _added_decorations(
    hunk: _WholeHunk, *, parametrize: bool
) -> Iterator[tuple[int, StructureNote]]:
    """`_decorator_notes` of each piece; without the parametrize lines when their note
    is not asked for (they give no other)."""
    lines: dict[int, list[tuple[str, re.Match[str]]]] = {}
    for at, is_parametrize in hunk.decorators:
        if parametrize or not is_parametrize:
            decorator = _DECORATOR.match(_capped(hunk.text, at))
            if decorator is not None:
                lines.setdefault(hunk.piece_of(at), []).append(("+", decorator))
    for piece, decorators in lines.items():
        for note in _decorations(hunk.file, hunk.scopes[piece], decorators, set()):
            yield piece, note


def _added_todos(hunk: _WholeHunk) -> Iterator[tuple[int, StructureNote]]:
    text = hunk.text
    near = _MAY_TODO.search(text)
    while near is not None:
        at = text.rfind("\n", 0, near.start())
        todo = _TODO.search(_capped(text, at)) if text[at + 1] == "+" else None
        if todo is None:
            end = text.find("\n", near.end())
            near = _MAY_TODO.search(text, end) if end >= 0 else None
            continue
        piece = hunk.piece_of(at)
        said = _snip(todo.group(2) or todo.group(1))
        yield piece, StructureNote(hunk.file, hunk.scopes[piece], "todo", (said,))
        starts = hunk.starts
        near = _MAY_TODO.search(text, starts[piece + 1]) if piece + 1 < len(starts) else None


def _added_wrapped(hunk: _WholeHunk) -> Iterator[tuple[int, StructureNote]]:
    """`_wrapped` of each piece, asked of the lines that may be "wrapper(name)" calls."""
    done = -1
    for at, group in hunk.asked:
        call = _wrap_call(_capped(hunk.text, at)) if group == "call" else None
        piece = hunk.piece_of(at) if call is not None else done
        if call is None or piece == done:
            continue
        defined = {
            name for where, name, added in hunk.defs if added and hunk.piece_of(where) == piece
        }
        if call.group(3) in defined | {hunk.scopes[piece]}:
            yield piece, _wrapped_note(hunk.file, call)
            done = piece


def _all_hunk_notes(hunk: _Hunk) -> Iterator[StructureNote]:
    """Every note of one hunk: the plain definition `_hunk_notes` answers like."""
    removed = [c for c in hunk.removed if c.strip()]
    added = [c for c in hunk.added if c.strip()]
    moved = {c.strip() for c in removed} & {c.strip() for c in added}
    yield from _notes_of(hunk, removed, added, moved)


def _notes_of(
    hunk: _Hunk,
    removed: list[str],
    added: list[str],
    moved: set[str],
    *,
    reordered: bool = True,
    condition: bool = True,
    raises: bool = True,
    asserts: bool = True,
    decorators: bool = True,
    kwargs: bool = True,
    todo: bool = True,
    wrapped: bool = True,
) -> Iterator[StructureNote]:
    symbol = hunk.scope
    reorder = _reordered(hunk, moved) if reordered else None
    if reorder is not None:
        yield StructureNote(hunk.file, symbol, "reordered", reorder)
    if condition:
        old_conditions = [
            c.strip() for c in removed if _CONDITION.match(c) and c.strip() not in moved
        ]
        new_conditions = [
            c.strip() for c in added if _CONDITION.match(c) and c.strip() not in moved
        ]
        if old_conditions and new_conditions:
            yield StructureNote(
                hunk.file, symbol, "condition",
                (_snip(old_conditions[0]), _snip(new_conditions[0])),
            )
    if raises:
        yield from _raise_notes(hunk, removed, added, moved)
    if asserts:
        yield from _assert_notes(hunk, removed, added, moved)
    if decorators:
        yield from _decorator_notes(hunk, moved)
    dropped = _dropped_kwargs(removed, added) if kwargs else []
    if dropped:
        yield StructureNote(hunk.file, symbol, "kwarg-removed", tuple(dropped[:3]))
    for code in added if todo else ():
        found = _TODO.search(code)
        if found:
            yield StructureNote(
                hunk.file, symbol, "todo", (_snip(found.group(2) or found.group(1)),)
            )
            break
    if wrapped:
        yield from _wrapped(hunk, added)


def _reordered(hunk: _Hunk, moved: set[str]) -> tuple[str, str] | None:
    """Two statements that swapped places: (now first, now second)."""
    meaningful = {m for m in moved if len(m) >= 6 and m not in {"return", "pass", "else:"}}
    if len(meaningful) < 2:
        return None
    old = _dedup([c.strip() for m, c in hunk.lines if m == "-" and c.strip() in meaningful])
    new = _dedup([c.strip() for m, c in hunk.lines if m == "+" and c.strip() in meaningful])
    position = {code: i for i, code in enumerate(old)}
    for i, first in enumerate(new):
        for second in new[i + 1 :]:
            if position.get(first, -1) > position.get(second, -1) >= 0:
                return _snip(first), _snip(second)
    return None


def _raise_notes(
    hunk: _Hunk, removed: list[str], added: list[str], moved: set[str]
) -> Iterator[StructureNote]:
    old = _names(_RAISE, removed, moved)
    new = _names(_RAISE, added, moved)
    if old and new and set(old) != set(new):
        gone = [n for n in old if n not in new] or old
        came = [n for n in new if n not in old] or new
        yield StructureNote(hunk.file, hunk.scope, "raise-changed", (gone[0], came[0]))
    elif new and not old:
        yield StructureNote(hunk.file, hunk.scope, "raise-added", (new[0],))
    elif old and not new:
        yield StructureNote(hunk.file, hunk.scope, "raise-removed", (old[0],))


def _assert_notes(
    hunk: _Hunk, removed: list[str], added: list[str], moved: set[str]
) -> Iterator[StructureNote]:
    old = [c.strip() for c in removed if _ASSERT.match(c) and c.strip() not in moved]
    new = [c.strip() for c in added if _ASSERT.match(c) and c.strip() not in moved]
    if _is_test_file(hunk.file):
        return  # a test's asserts are its checks, not a relaxed invariant
    if old and new:
        yield StructureNote(hunk.file, hunk.scope, "assert-changed", (_snip(old[0]), _snip(new[0])))
    elif new:
        yield StructureNote(hunk.file, hunk.scope, "assert-added", (_snip(new[0]),))
    elif old:
        yield StructureNote(hunk.file, hunk.scope, "assert-removed", (_snip(old[0]),))


def _is_test_file(filename: str) -> bool:
    return filename.rsplit("/", 1)[-1].startswith("test")


def _decorator_notes(hunk: _Hunk, moved: set[str]) -> Iterator[StructureNote]:
    return _decorations(hunk.file, hunk.scope, hunk.decorator_lines(), moved)


def _decorations(
    file: str, scope: str, decorators: list[tuple[str, re.Match[str]]], moved: set[str]
) -> Iterator[StructureNote]:
    """The notes of a piece's decorator lines: (marker, `_DECORATOR` match) in order."""
    matrix: list[int] = []
    old_matrix: list[int] = []
    parametrize_changed = False
    for marker, decorator in decorators:
        code = decorator.string
        name = decorator.group(1)
        parametrize = _PARAMETRIZE.match(code)
        if parametrize:
            cases = _case_count(parametrize.group(1))
            if marker != "+":
                old_matrix.append(cases)
            if marker != "-":
                matrix.append(cases)
            parametrize_changed = parametrize_changed or marker != " "
            continue
        if marker == " " or code.strip() in moved:
            continue
        if _ISOLATION.search(name) and marker == "+":
            yield StructureNote(file, scope, "isolated", (name,))
        elif not name.startswith("pytest.mark.parametrize"):
            kind: Kind = "decorator-added" if marker == "+" else "decorator-removed"
            yield StructureNote(file, scope, kind, (name,))
    if parametrize_changed and matrix and all(matrix):
        shape = "×".join(str(size) for size in matrix)
        before = str(_product(old_matrix)) if old_matrix and all(old_matrix) else ""
        yield StructureNote(
            file, scope, "parametrize", (str(_product(matrix)), shape, before)
        )


def _product(sizes: list[int]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total


def _case_count(arguments: str) -> int:
    """`_case_count_plain` without its walk over every character when the list holds
    no bracket: then its cases are its commas plus one (none if it holds only commas
    and spaces)."""
    start = arguments.find("[")
    if start < 0:
        return 0
    end = arguments.find("]", start)
    inner = arguments[start + 1 : end]
    if end < 0 or any(bracket in inner for bracket in "[({)}"):
        return _case_count_plain(arguments)
    return inner.count(",") + 1 if inner.replace(",", "").strip() else 0


def _case_count_plain(arguments: str) -> int:
    """Cases of a one-line `parametrize("x", [a, b, c])`; 0 when it cannot be told."""
    start = arguments.find("[")
    if start < 0:
        return 0
    depth = 0
    count = 1
    empty = True
    for char in arguments[start:]:
        if char in "[({":
            depth += 1
        elif char in "])}":
            depth -= 1
            if depth == 0:
                return 0 if empty else count
        elif char == "," and depth == 1:
            count += 1
        elif not char.isspace() and depth >= 1:
            empty = False
    return 0  # the list continues on the next lines


def _dropped_kwargs(removed: list[str], added: list[str]) -> list[str]:
    """Keyword arguments that removed lines passed and their replacements no longer do."""
    if not added or not removed:
        return []
    old = _kwargs(removed)
    new = set(_kwargs(added))
    return [name for name in old if name not in new]


def _kwargs(lines: list[str]) -> list[str]:
    found: list[str] = []
    for code in lines:
        stripped = code.strip()
        is_call = "(" in stripped and not stripped.startswith(("#", "def ", "async def ", "class "))
        # A line inside a multi-line call: "    layer_name=name,".
        if not is_call and (not stripped.endswith(",") or "=" not in stripped):
            continue
        for match in _KWARG.finditer(stripped.split("#", 1)[0]):
            before = stripped[: match.start()].rstrip()
            # "x = 1" is an assignment; "f(x=1" and "    x=1," inside a call are keywords.
            if before == "" and not stripped.endswith(","):
                continue
            if match.group(1) not in found:
                found.append(match.group(1))
    return found


def _wrapped(hunk: _Hunk, added: list[str]) -> Iterator[StructureNote]:
    """`allow_in_graph(fn)` at module level: `fn` is handed to a wrapper by call, not @."""
    defined: set[str] | None = None  # read only when a line looks like such a call
    for code in added:
        call = _wrap_call(code)
        if call is None:
            continue
        if defined is None:
            defined = {m.group(1) for m in (_DEF.match(c) for c in added) if m} | {hunk.scope}
        if call.group(3) in defined:
            yield _wrapped_note(hunk.file, call)
            return


def _wrap_call(code: str) -> re.Match[str] | None:
    """A column-0 line that is one call with one name: "allow_in_graph(fn)"."""
    if code[:1] in " \t":
        return None
    stripped = code.strip()
    if not stripped.endswith(")"):
        return None  # the pattern ends with the call's ")"
    return _WRAP_CALL.match(stripped)


def _wrapped_note(file: str, call: re.Match[str]) -> StructureNote:
    wrapper = (call.group(1) or "") + call.group(2)
    return StructureNote(file, call.group(3), "wrapped", (wrapper,))


def _names(pattern: re.Pattern[str], lines: list[str], moved: set[str]) -> list[str]:
    found: list[str] = []
    for code in lines:
        if code.strip() in moved:
            continue
        match = pattern.match(code)
        if match and match.group(1) not in found:
            found.append(match.group(1))
    return found


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _snip(code: str) -> str:
    text = " ".join(code.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"
