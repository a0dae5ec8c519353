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


@dataclass
class _Hunk:
    file: str
    scope: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    # (marker, code) in patch order, for order and decorator attribution. A piece read
    # from its text (`_hunks`: its lines, each after a "\n") builds them only when
    # a note asks for them.
    _lines: list[tuple[str, str]] | None = None
    _text: str = ""
    _size: int = 0
    _marked: list[str] | None = None  # the lines, each its marker and code

    @property
    def lines(self) -> list[tuple[str, str]]:
        if self._lines is None:
            if self._marked is not None:
                self._lines = [(line[0], line[1:]) for line in self._marked]
            else:
                self._lines = _diff_lines(self._text)
        return self._lines

    @property
    def size(self) -> int:
        """How many diff lines (context, added, removed) the piece holds."""
        if self._lines is not None:
            return len(self._lines)
        return len(self._marked) if self._marked is not None else self._size

    def decorator_lines(self) -> list[tuple[str, re.Match[str]]]:
        """(marker, `_DECORATOR` match) of the lines that are decorators, in order."""
        if self._lines is not None:
            lines: Iterable[tuple[str, str]] = self._lines
        elif self._marked is not None:
            lines = ((line[0], line[1:]) for line in self._marked if "@" in line)
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
    notes: list[StructureNote] = []
    seen: set[tuple[str, str, str]] = set()
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch or not changed.filename.endswith(_PY_SUFFIXES):
            continue
        for hunk in _hunks(changed.filename, changed.patch, budget):
            budget -= hunk.size + 1
            for note in _hunk_notes(hunk):
                key = (note.file, note.symbol, note.kind)
                if key not in seen:
                    seen.add(key)
                    notes.append(note)
        if budget <= 0:
            break
    notes.sort(key=lambda n: _RANK[n.kind])
    return tuple(_one_per_symbol(notes, limit))


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
# Every diff line: its marker and code.
_MARKED_LINE = re.compile(rf"\n((?!\+\+\+|---)[ +-]{_CODE})")
# Every line that may be a decorator: (marker, code).
_MAY_DECORATE = re.compile(rf"\n([ +-])((?=[ \t]*@){_CODE})")


def _hunks(filename: str, patch: str, budget: int) -> Iterator[_Hunk]:
    """`_hunks_plain`, reading whole hunks with a few scans of their text.

    A 3,000-file PR has up to `_MAX_PATCH_LINES` lines to read, and a Python loop over
    them was most of the structure notes' time. A hunk without a def line is one piece:
    its added and removed lines are one `findall` each, and its (marker, code) list is
    built only when a note asks for it. A hunk of added lines only (a new file) is cut
    at its def lines by index. Other hunks holding a def line, and a patch longer than
    the budget (cut mid-way), are read line by line.
    tests/test_engine_equivalence.py checks the pieces against `_hunks_plain`."""
    if budget <= 0 or patch.count("\n") >= budget:
        yield from _hunks_plain(filename, patch, budget)
        return
    defines = "def" in patch or "class" in patch
    # Every hunk starts at a line beginning "@@"; what precedes the first is not read.
    for piece in ("\n" + patch).split("\n@@")[1:]:
        cut = piece.find("\n")
        header, text = (piece, "") if cut < 0 else (piece[:cut], piece[cut:])
        scope = _hunk_scope(("@@" + header)[:_MAX_LINE])
        if not (defines and ("def" in text or "class" in text)):
            removed = _REMOVED_CODE.findall(text)
            added = _ADDED_CODE.findall(text)
            size = text.count("\n ") + len(removed) + len(added)
            yield _Hunk(filename, scope, removed, added, _text=text, _size=size)
            continue
        marked = _MARKED_LINE.findall(text)
        if len(marked) == text.count("\n"):
            yield from _marked_pieces(filename, scope, text, marked)
        else:  # a line that is not a diff line (or a "+++"/"---" one): read line by line
            yield from _hunks_plain(filename, "@@" + piece, budget)


def _marked_pieces(filename: str, scope: str, text: str, marked: list[str]) -> Iterator[_Hunk]:
    """The pieces of a hunk whose every line is a diff line: `marked`, its lines (marker
    and code) from `text`."""
    # A new file's hunk: every line added (no "\n-", no "\n "), none to sort.
    added_only = "\n-" not in text and "\n " not in text
    start = 0
    for at in _lines_holding(text, ("def", "class")):
        line = marked[at]
        definition = _DEF.match(line, 1) if "def" in line or "class" in line else None
        if definition is None:
            continue
        # Decorators just above the def line belong to it (`_trailing_decorators`).
        end = at
        while end > start and "@" in marked[end - 1] and _DECORATOR.match(marked[end - 1], 1):
            end -= 1
        yield _marked_piece(filename, scope, marked[start:end], added_only)
        scope, start = definition.group(1), end
    yield _marked_piece(filename, scope, marked[start:], added_only)


def _marked_piece(filename: str, scope: str, marked: list[str], added_only: bool) -> _Hunk:
    if added_only:
        return _Hunk(filename, scope, [], [line[1:] for line in marked], _marked=marked)
    return _Hunk(
        filename, scope,
        [line[1:] for line in marked if line[0] == "-"],
        [line[1:] for line in marked if line[0] == "+"],
        _marked=marked,
    )


def _lines_holding(text: str, words: tuple[str, ...]) -> list[int]:
    """Which lines of `text` (each after a "\n", counted from 0) hold one of `words`."""
    places: list[int] = []
    for word in words:
        at = text.find(word)
        while at >= 0:
            places.append(at)
            at = text.find(word, at + 1)
    lines: list[int] = []
    line, counted = -1, 0
    for at in sorted(places):
        line += text.count("\n", counted, at)
        counted = at
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _hunk_scope(header: str) -> str:
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


def _hunk_notes(hunk: _Hunk) -> Iterator[StructureNote]:
    """`_all_hunk_notes`, asking only the questions the hunk's text can answer yes to.

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
    moved: set[str] = (
        {c.strip() for c in removed} & {c.strip() for c in added} if removed and added else set()
    )
    yield from _notes_of(
        hunk,
        removed,
        added,
        moved,
        reordered=len(moved) >= 2,
        condition=("if" in old_text or "while" in old_text)
        and ("if" in new_text or "while" in new_text),
        raises="raise" in old_text or "raise" in new_text,
        asserts="assert" in old_text or "assert" in new_text,
        # The changed lines among `hunk.lines` are `hunk.removed` and `hunk.added`.
        decorators="@" in old_text or "@" in new_text,
        kwargs=bool(added) and "=" in old_text,
        todo="#" in new_text and ("TODO" in new_text or "FIXME" in new_text or "XXX" in new_text),
        wrapped="(" in new_text,
    )


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
    if hunk.file.rsplit("/", 1)[-1].startswith("test"):
        return  # a test's asserts are its checks, not a relaxed invariant
    if old and new:
        yield StructureNote(hunk.file, hunk.scope, "assert-changed", (_snip(old[0]), _snip(new[0])))
    elif new:
        yield StructureNote(hunk.file, hunk.scope, "assert-added", (_snip(new[0]),))
    elif old:
        yield StructureNote(hunk.file, hunk.scope, "assert-removed", (_snip(old[0]),))


def _decorator_notes(hunk: _Hunk, moved: set[str]) -> Iterator[StructureNote]:
    matrix: list[int] = []
    old_matrix: list[int] = []
    parametrize_changed = False
    for marker, decorator in hunk.decorator_lines():
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
            yield StructureNote(hunk.file, hunk.scope, "isolated", (name,))
        elif not name.startswith("pytest.mark.parametrize"):
            kind: Kind = "decorator-added" if marker == "+" else "decorator-removed"
            yield StructureNote(hunk.file, hunk.scope, kind, (name,))
    if parametrize_changed and matrix and all(matrix):
        shape = "×".join(str(size) for size in matrix)
        before = str(_product(old_matrix)) if old_matrix and all(old_matrix) else ""
        yield StructureNote(
            hunk.file, hunk.scope, "parametrize", (str(_product(matrix)), shape, before)
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
        if code[:1] in " \t":
            continue
        stripped = code.strip()
        if not stripped.endswith(")"):
            continue  # the pattern ends with the call's ")"
        call = _WRAP_CALL.match(stripped)
        if call is None:
            continue
        if defined is None:
            defined = {m.group(1) for m in (_DEF.match(c) for c in added) if m} | {hunk.scope}
        if call.group(3) in defined:
            wrapper = (call.group(1) or "") + call.group(2)
            yield StructureNote(hunk.file, call.group(3), "wrapped", (wrapper,))
            return


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
