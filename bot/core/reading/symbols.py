"""Where a reader should start: the functions and classes a patch adds, removes or edits.

Read from the unified-diff `patch` GitHub returns per file. Python is parsed with
scope tracking (a hunk header names the enclosing def, indentation says when it
ends); C++/CUDA only from top-level signatures, which is where kernels are declared.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Literal

from bot.core.facts import ChangedFile, is_test_path
from bot.core.reading.structure.lines import open_brackets
from bot.core.vocabulary import Symbol

Change = Literal["added", "removed", "modified"]

_PY_SUFFIXES = (".py", ".pyi")
_CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hip")
_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)")
_PY_DEF = re.compile(r"([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")
# "__global__ void rms_norm_kernel(" / "torch::Tensor Foo::bar(" at column 0; the return
# type may hold parentheses ("std::enable_if_t<(width > 0)>").
_CPP_SIGNATURE = re.compile(
    r"(?:template[ \t]*<[^>\n]{0,200}>[ \t]*)?[A-Za-z_][\w:<>,*&() \t]{0,200}?[\s*&]"
    r"([A-Za-z_]\w*(?:::~?[A-Za-z_]\w*){0,3})[ \t]*\("
)
_CPP_NOT_DEFS = frozenset(
    {"if", "for", "while", "switch", "return", "sizeof", "case", "else", "do", "catch"}
)
_MAX_LINE = 400  # signatures are short; never run a regex over a minified line
_MARKERS = frozenset(" +-")  # a diff line's first character: context, added, removed


@dataclass
class _Scope:
    name: str
    indent: int
    marker: str  # the def line's diff marker: " " (context), "+" or "-"
    is_class: bool = False


# A class body's field: `name: T = value`, `name: T` or `name = value` (not `==`); the
# annotation is a type (`int`, `dict[str, Any] | None`), so prose ("Note: this is") is none.
_TYPE = r"[A-Za-z_][\w.]*(?:\[.*\])?"
_FIELD = re.compile(
    rf"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[ \t]*{_TYPE}(?:[ \t]*\|[ \t]*{_TYPE})*[ \t]*"
    r"(?:=(?!=).*)?|=(?!=).*)$")
_DOCSTRING_QUOTES = ('"""', "'''")
_BODY_INDENT = 4


@dataclass
class _FileSymbols:
    changes: dict[str, set[Change]] = field(default_factory=dict)  # insertion-ordered

    def mark(self, name: str, change: Change) -> None:
        self.changes.setdefault(name, set()).add(change)

    def resolved(self) -> list[tuple[str, Change]]:
        out: list[tuple[str, Change]] = []
        for name, seen in self.changes.items():
            if "modified" in seen or {"added", "removed"} <= seen:
                out.append((name, "modified"))
            else:
                out.append((name, "added" if "added" in seen else "removed"))
        return out


def extract_symbols(files: Sequence[ChangedFile], limit: int = 40) -> tuple[Symbol, ...]:
    """Touched functions/classes, most-changed files first, at most `limit`."""
    ranked = [f for f in files if f.patch and f.filename.endswith(_PY_SUFFIXES + _CPP_SUFFIXES)]
    # Ordered by (-changed lines, name) in two stable sorts: by name, then by changed
    # lines. Each sorts plain strings or ints, faster than 3,000 key tuples.
    ranked.sort(key=_FILENAME)
    ranked.sort(key=_fewer_changed_lines)
    symbols: list[Symbol] = []
    for changed in ranked:
        patch = changed.patch or ""
        if changed.filename.endswith(_PY_SUFFIXES):
            found = _python_symbols(patch)
        else:
            found = _cpp_symbols(patch)
        for name, change in found.resolved():
            symbols.append(Symbol(file=changed.filename, name=name, change=change))
            if len(symbols) >= limit:
                return tuple(symbols)
    return tuple(symbols)


def read_after_the_code(path: str) -> bool:
    """Whether a reader starts at `path` only after the code it tests: a test or a
    test helper."""
    return is_test_path(path)


def removed_files(files: Sequence[ChangedFile]) -> tuple[str, ...]:
    """Files the PR deletes, in the order GitHub lists them."""
    return tuple(f.filename for f in files if f.status == "removed")


# A removed file is moved when this share of its lines stands in one added file, and
# that file is the same content when this share of its own lines came from it.
_MOVED_SHARE = 0.8
_MOVE_MIN_LINES = 5  # a stub's few lines prove no move
# Lines read to find moves: a vendoring PR adds thousands of files; past this, what is
# left unread is not a move's target.
_MOVE_READ_LINES = 20_000


def moved_files(files: Sequence[ChangedFile]) -> tuple[tuple[str, str], ...]:
    """(old, new) for each file the PR removes whose lines mostly stand in one file it
    adds: a move (GitHub lists it as a removal and an addition when the content also
    changed a little, or split). `new` is the added file holding most of them."""
    budget = _MOVE_READ_LINES
    removed: list[tuple[str, list[str]]] = []
    for changed in files:
        if changed.status == "removed" and budget > 0:
            lines = _content(changed.patch, "-", budget)
            budget -= len(lines)
            if len(lines) >= _MOVE_MIN_LINES:
                removed.append((changed.filename, lines))
    if not removed:
        return ()
    owner: dict[str, str] = {}  # a line -> the first added file holding it
    for changed in files:
        if changed.status != "added" or budget <= 0:
            continue
        lines = _content(changed.patch, "+", budget)
        budget -= len(lines)
        for line in lines:
            owner.setdefault(line, changed.filename)
    moves: list[tuple[str, str]] = []
    for filename, lines in removed:
        holders = [owner[line] for line in lines if line in owner]
        if len(holders) < _MOVED_SHARE * len(lines):
            continue
        target = max(set(holders), key=holders.count)
        moves.append((filename, target))
    return tuple(moves)


def same_content(files: Sequence[ChangedFile], moves: Sequence[tuple[str, str]]) -> set[str]:
    """The added files of `moves` most of whose lines came from the file moved there:
    nothing in them is new."""
    patches = {f.filename: f.patch for f in files}
    same: set[str] = set()
    for old, new in moves:
        before = set(_content(patches.get(old), "-"))
        after = _content(patches.get(new), "+")
        if after and sum(line in before for line in after) >= _MOVED_SHARE * len(after):
            same.add(new)
    return same


def _content(patch: str | None, marker: str, budget: int = _MOVE_READ_LINES) -> list[str]:
    """A new or removed file's non-blank lines (each stripped and capped), of its first
    `budget` lines."""
    if not patch or budget <= 0:
        return []
    return [
        stripped for raw in patch.split("\n", budget)[:budget]
        if raw[:1] == marker and not raw.startswith(marker * 3)
        and (stripped := raw[1:_MAX_LINE].strip())
    ]


_FILENAME: Callable[[ChangedFile], str] = attrgetter("filename")


def _fewer_changed_lines(changed: ChangedFile) -> int:
    return -_changed_lines(changed)


def _changed_lines(changed: ChangedFile) -> int:
    if changed.changes or not changed.patch:
        return changed.changes
    # Offline file lists may lack counts; the patch still says how much changed.
    return sum(1 for line in changed.patch.split("\n") if line[:1] in "+-")


def _python_symbols(patch: str) -> _FileSymbols:
    found = _FileSymbols()
    if "def" not in patch and "class" not in patch:
        return found  # no def line and no hunk header naming one: no scope to report
    scopes: list[_Scope] = []
    docstring = [False, False]  # inside a class body's docstring: new side, old side
    field_open = 0  # brackets a field's value leaves open
    for raw in patch.split("\n"):
        line = raw[:_MAX_LINE]
        if line.startswith("@@"):
            scopes = _hunk_scopes(line)
            docstring, field_open = [False, False], 0
            continue
        if not line or line[0] not in " +-" or line.startswith(("+++", "---")):
            continue
        marker, code = line[0], line[1:]
        if not code.strip():
            continue
        indent = len(code) - len(code.lstrip(" \t"))
        # A line at or left of a scope's def line ends that scope (Python blocks).
        while scopes and indent <= scopes[-1].indent and not _is_continuation(code):
            scopes.pop()
        definition = _PY_DEF.match(code)
        if definition:
            name = definition.group(3)
            if marker == "+":
                found.mark(name, "added")
            elif marker == "-":
                found.mark(name, "removed")
            scopes.append(_Scope(name, indent, marker, definition.group(2) == "class"))
            docstring = [False, False]
            continue
        if field_open > 0:  # the rest of a field's value, wrapped over lines
            field_open = max(0, field_open + open_brackets(code))
            continue
        if (scopes and scopes[-1].is_class and scopes[-1].marker == " "
                and (any(docstring) or indent == scopes[-1].indent + _BODY_INDENT)):
            # A class body's own lines (ruff indents a body by four spaces): a field added
            # or removed is named as such (`SchedulerConfig.window`), and its docstring is
            # prose; naming only the class was judged generic when fields were the change.
            # each side of the diff opens and closes its own docstrings
            sides = (0, 1) if marker == " " else (0,) if marker == "+" else (1,)
            if any(docstring[i] for i in sides) or code.lstrip().startswith(
                    _DOCSTRING_QUOTES):
                if sum(code.count(q) for q in _DOCSTRING_QUOTES) % 2:
                    for i in sides:
                        docstring[i] = not docstring[i]
                continue
            field_name = _FIELD.match(code)
            if field_name:
                if marker != " ":
                    found.mark(f"{scopes[-1].name}.{field_name.group(1)}",
                               "added" if marker == "+" else "removed")
                field_open = max(0, open_brackets(code))
                continue
        # The body of an added or removed def is part of that addition or removal.
        if marker != " " and scopes and scopes[-1].marker == " ":
            found.mark(scopes[-1].name, "modified")
    return found


def _hunk_scopes(header: str) -> list[_Scope]:
    match = _HUNK.match(header)
    if not match:
        return []
    context = match.group(1)
    definition = _PY_DEF.match(context)
    if not definition:
        return []
    # git keeps the def line's indentation in the header when it has one.
    return [_Scope(definition.group(3), len(definition.group(1)), " ",
                   definition.group(2) == "class")]


def _is_continuation(code: str) -> bool:
    # Closing brackets and decorators of a multi-line signature stay in scope.
    return code.lstrip()[:1] in ")]}"


# A diff line that may be a signature (`_cpp_name`): its code starts with a letter or
# "_" (`_CPP_SIGNATURE`, "template" included) and holds a space, "*" or "&" with a "("
# after it. Spelled without backtracking: the first such character (group 2, after the
# line's first word or part of it, group 1), then the first "(" after it. Both runs are
# possessive (`*+`): each stops at a character it excludes, so giving characters back
# could never let the next step match, and a line without a "(" fails at once instead
# of being retried at every shorter length (~half the search on a big PR's `.cu` files).
# Whether that word is a keyword (`for (...)`) is asked of the line found: a lookahead
# on every line would double the search.
_MAY_BE_SIGNATURE = re.compile(r"\n[ +-]([A-Za-z_][^\s*&]*+)([*&]|[^\S\n])[^\n(]*+\(")
_HUNK_HEADER = re.compile(r"\n(@@[^\n]*)")


def _cpp_symbols(patch: str, *, skip_idle: bool = True) -> _FileSymbols:
    """Top-level functions a C++/CUDA patch touches. `skip_idle=False` reads every line:
    the definition the default answers like (tests/core/rules/test_engine_equivalence.py)."""
    found = _FileSymbols()
    if "(" not in patch:
        return found  # every signature has one: no line or hunk header can name a function
    if skip_idle and not _may_name_a_function(patch):
        return found
    current, current_marker = "", " "
    for raw in patch.split("\n"):
        # Outside a function only a hunk header or a line with "(" (a signature) can
        # change anything: a big PR's other lines are passed over at once.
        if skip_idle and not current and "(" not in raw and raw[:2] != "@@":
            continue
        line = raw[:_MAX_LINE]
        marker = line[:1]
        if marker == "@" and line.startswith("@@"):
            match = _HUNK.match(line)
            current, current_marker = (_cpp_name(match.group(1)) if match else ""), " "
            continue
        if marker not in _MARKERS or (marker != " " and line.startswith(("+++", "---"))):
            continue
        code = line[1:]
        # Only a line with "(" can name a function (`_cpp_name`).
        name = _cpp_name(code) if "(" in code and code[:1] not in " \t#/{}" else ""
        if name:
            current, current_marker = name, marker
            if marker == "+":
                found.mark(name, "added")
            elif marker == "-":
                found.mark(name, "removed")
        elif marker != " " and current and current_marker == " " and code.strip():
            found.mark(current, "modified")
        if code.startswith("}"):  # a column-0 brace closes the top-level function
            current = ""
    return found


def _may_name_a_function(patch: str) -> bool:
    """Whether a line or a hunk header of `patch` may name a function. Without one the
    line-by-line read never leaves "outside a function", so it marks nothing: a big
    PR's `.cu` patches of calls (`f(x);`, `g(y) + 1`) are passed over with one search."""
    text = "\n" + patch
    found = _MAY_BE_SIGNATURE.search(text)
    while found is not None:
        # After a space, group 1 is the line's first word (`code.split()[0]`); one
        # holding "*" or "&" is no keyword.
        if found.group(2) in "*&" or found.group(1) not in _CPP_NOT_DEFS:
            return True
        found = _MAY_BE_SIGNATURE.search(text, found.start() + 1)
    for header in _HUNK_HEADER.findall(text):
        match = _HUNK.match(header[:_MAX_LINE])
        if match and _cpp_name(match.group(1)):
            return True
    return False


def _cpp_name(code: str) -> str:
    # "(" first: most lines of a patch have none, and the signature regex needs one.
    if "(" not in code or code[0] in " \t" or code.rstrip().endswith(";"):
        return ""  # indented: a call; ";": a declaration or statement
    parts = code.split(None, 1)
    if parts and parts[0] in _CPP_NOT_DEFS:
        return ""  # `for (...)`, `if (...)`: whatever the regex would say
    match = _CPP_SIGNATURE.match(code)
    if not match:
        return ""
    name = match.group(1)
    last = name.split("::")[-1]
    if last in _CPP_NOT_DEFS:
        return ""
    if len(last) > 4 and last.startswith("__") and last.endswith("__"):
        # A compiler attribute (`__global__ void __launch_bounds__(512, 1)` heads a
        # kernel whose name is on the next line), never a function of the change.
        return ""
    return name
