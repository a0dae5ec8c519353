"""What a line of a Python patch means, and the notes both readings build alike.

The line-level patterns (a def line, a decorator, a raise, an assert, a TODO...), each
note kind's rank, a hunk header's function, and the note builders the plain reading
(`structure_notes`) and the whole-hunk one (`structure_whole_notes`) share: a piece's
decorator notes with their parametrize case counts, a call handing a function to a
wrapper, a code snippet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.facts import is_test_path
from bot.core.reading.specifics import StructureKind as Kind
from bot.core.reading.specifics import StructureNote

MAX_LINE = 300
_SNIPPET = 70
_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)")
DEF = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
ASSERT = re.compile(r"[ \t]*assert\b")
RAISE = re.compile(r"[ \t]*raise[ \t]+([A-Za-z_][\w.]*)")
DECORATOR = re.compile(r"[ \t]*@([A-Za-z_][\w.]*)")
TODO = re.compile(r"#[ \t]*(TODO|FIXME|XXX)\b(?:\([^)\n]{0,40}\))?[: \t]*(.*)")
PARAMETRIZE = re.compile(r"[ \t]*@pytest\.mark\.parametrize\((.*)")
_WRAP_CALL = re.compile(r"([A-Za-z_][\w.]*\.)?([A-Za-z_]\w*)\(([A-Za-z_]\w*)\)[ \t]*$")
_ISOLATION = re.compile(r"spawn|fork|isolat|subprocess|new_process", re.IGNORECASE)
# Decorators that declare what a definition is, not what it does: a reviewer learns
# nothing from "staticmethod removed" or "dataclass added" that the code does not say.
_DECLARATIVE = frozenset({
    "staticmethod", "classmethod", "property", "override", "typing.override",
    "typing_extensions.override", "abstractmethod", "abc.abstractmethod", "dataclass",
    "dataclasses.dataclass", "functools.wraps", "wraps", "final", "typing.final",
    "overload", "typing.overload",
})

# Most telling first: what changes behaviour before what changes tests.
RANK: dict[str, int] = {
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
SHOWN_ALL = max(RANK.values()) + 1  # a `below` that asks every question


def hunk_scope(header: str) -> str:
    if "def" not in header and "class" not in header:
        return ""  # no def line to match: most headers
    match = _HUNK.match(header)
    definition = DEF.match(match.group(1)) if match else None
    return definition.group(1) if definition else ""


def is_test_file(filename: str) -> bool:
    return filename.rsplit("/", 1)[-1].startswith("test")


def telling_decorator(filename: str, name: str) -> bool:
    """Whether adding or removing decorator `name` is worth a line: not a declaration
    (staticmethod, dataclass...), and not test scaffolding (fixtures, process isolation,
    marks) in a test, whose reviewer reads the test itself."""
    if name in _DECLARATIVE or name.endswith(".setter") or name.endswith(".getter"):
        return False
    return not is_test_path(filename)


def decorations(
    file: str, scope: str, decorators: list[tuple[str, re.Match[str]]], moved: set[str]
) -> Iterator[StructureNote]:
    """The notes of a piece's decorator lines: (marker, `DECORATOR` match) in order."""
    matrix: list[int] = []
    old_matrix: list[int] = []
    parametrize_changed = False
    for marker, decorator in decorators:
        code = decorator.string
        name = decorator.group(1)
        parametrize = PARAMETRIZE.match(code)
        if parametrize:
            cases = _case_count(parametrize.group(1))
            if marker != "+":
                old_matrix.append(cases)
            if marker != "-":
                matrix.append(cases)
            parametrize_changed = parametrize_changed or marker != " "
            continue
        if marker == " " or code.strip() in moved or not telling_decorator(file, name):
            continue
        if _ISOLATION.search(name) and marker == "+":
            yield StructureNote(file, scope, "isolated", (name,))
        elif not name.startswith("pytest.mark.parametrize"):
            kind: Kind = "decorator-added" if marker == "+" else "decorator-removed"
            yield StructureNote(file, scope, kind, (name,))
    # Only a matrix that grew or shrank: "a new test has N cases" was judged noise
    # every time (nothing to act on), a changed count says which coverage moved.
    if not (parametrize_changed and matrix and all(matrix) and old_matrix and all(old_matrix)):
        return
    total, before = _product(matrix), _product(old_matrix)
    if total != before:
        shape = "×".join(str(size) for size in matrix)
        yield StructureNote(file, scope, "parametrize", (str(total), shape, str(before)))


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


def wrap_call(code: str) -> re.Match[str] | None:
    """A column-0 line that is one call with one name: "allow_in_graph(fn)"."""
    if code[:1] in " \t":
        return None
    stripped = code.strip()
    if not stripped.endswith(")"):
        return None  # the pattern ends with the call's ")"
    return _WRAP_CALL.match(stripped)


def wrapped_note(file: str, call: re.Match[str]) -> StructureNote:
    wrapper = (call.group(1) or "") + call.group(2)
    return StructureNote(file, call.group(3), "wrapped", (wrapper,))


def todo_said(found: re.Match[str]) -> str:
    """What a `TODO` match leaves for later; "" when it says nothing ("# TODO", "# TODO: TODO")."""
    said = found.group(2)
    return "" if said.strip(" \t:.-").upper() in ("", "TODO", "FIXME", "XXX") else said


_STRING_LITERAL = re.compile(r"\"[^\"]*\"|'[^']*'")


def open_brackets(code: str) -> int:
    """How many brackets a line of code leaves open (negative: closes more than it
    opens), its strings and trailing comment aside."""
    text = _STRING_LITERAL.sub("", code.split("#", 1)[0])
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")


def snip(code: str) -> str:
    text = " ".join(code.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"
