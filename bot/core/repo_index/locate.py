"""Which functions a patch changes, by line numbers against the index's spans.

A removed or modified line is placed by its old-side number, an added line by the old
lines it sits between; GitHub's hunk header (the nearest `def` above, nested ones
included) never decides. A line inside a nested def belongs to the outermost function
or method around it, which is named together with the nested one.

When the record was read at the PR's base the numbers are exact. When it was read at
another commit (the default branch moved on), each hunk is re-anchored first: a `def`
line the hunk shows, or the hunk's lines found in a function's stored signature text,
gives the drift; failing both, the drift of the file's nearest anchored hunk is used.

Each changed line is also classed: blank or comment, docstring, signature (decorators
included), or code. A function whose changed lines are all docstring, comment or blank
has changed nothing its overriders or look-alikes must follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.core.repo_index.model import FileRecord, FunctionRecord
from bot.core.repo_index.signature import SignatureChange, compare, read_params

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,\d+)? @@ ?(.*)")
_DEF = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_]\w*)")
_MAX_LINE = 400
_MAX_LINES = 20_000  # diff lines read per file


@dataclass(frozen=True, slots=True)
class DiffLine:
    marker: str  # "+", "-" or " "
    old: int  # old-side number; for "+" the old line it is inserted before
    text: str


@dataclass
class Touched:
    """One outermost function or method the patch changes."""

    fn: FunctionRecord
    nested: list[str] = field(default_factory=list)  # nested defs with changed lines
    code: bool = False  # a changed line of code: not docstring, comment or blank
    signature: bool = False  # a changed line in the signature or its decorators
    def_removed: bool = False  # its `def` line is a removed line
    # The signature's text after the change, from the new side of the hunk (and the
    # unchanged lines above it); None when the hunk does not show it closing.
    new_signature: str | None = None
    # The def was removed here and added again elsewhere in the file: its new params.
    moved_params: tuple[str, ...] | None = None
    _change: tuple[SignatureChange | None] | None = field(default=None, repr=False)

    def signature_change(self) -> SignatureChange | None:
        """Compatible or not, when a signature line changed; None when it did not. A
        signature that cannot be read back counts as breaking."""
        if not self.signature:
            return None
        if self._change is None:
            self._change = (self._signature_change(),)
        return self._change[0]

    def _signature_change(self) -> SignatureChange | None:
        old = read_params(self.fn.signature, partial=False) if self.fn.signature else None
        if self.new_signature is not None and self.new_signature == self.fn.signature:
            return None  # lines moved and put back: the same signature
        new = read_params(self.new_signature, partial=False) if self.new_signature else None
        if new is None and self.def_removed:
            if self.moved_params is None:
                return SignatureChange(compatible=False, reasons=("removed",))
            new = self.moved_params  # read like `old`: `self` included
        if old is None or new is None:
            return SignatureChange(compatible=False, reasons=("signature unreadable",))
        return compare(old, new)


@dataclass(frozen=True)
class AddedDef:
    """A function the patch adds (its `def` line is new and was not there before)."""

    name: str
    params: tuple[str, ...]


@dataclass
class Located:
    touched: list[Touched]
    added: list[AddedDef]
    anchored: bool  # every hunk was placed exactly or by an anchor, none by a guess


def diff_lines(patch: str) -> Iterator[tuple[int, str, list[DiffLine]]]:
    """(old start, header text, lines) per hunk."""
    lines: list[DiffLine] = []
    start, header, old = 0, "", 0
    in_hunk = False
    for count, raw in enumerate(patch.split("\n")):
        if count >= _MAX_LINES:
            break
        if raw.startswith("@@"):
            if in_hunk:
                yield start, header, lines
            match = _HUNK.match(raw[:_MAX_LINE])
            in_hunk = match is not None
            lines = []
            if match:
                start, header = int(match.group(1)), match.group(4)
                # `-N,0`: nothing removed, the lines go after old line N.
                old = start + 1 if match.group(2) == "0" else start
            continue
        if not in_hunk or not raw or raw[0] not in "+- ":
            continue
        marker, text = raw[0], raw[1:_MAX_LINE + 1]
        lines.append(DiffLine(marker, old, text))
        if marker != "+":
            old += 1
    if in_hunk:
        yield start, header, lines


def locate(record: FileRecord, patch: str, *, exact: bool) -> Located:
    outer = [fn for fn in record.functions if fn.nested_in is None]
    nested = [fn for fn in record.functions if fn.nested_in is not None]
    touched: dict[str, Touched] = {}
    added: list[AddedDef] = []
    anchored = True
    offset = 0
    hunks = list(diff_lines(patch))
    for _, header, lines in hunks:
        if not exact:
            found = _anchor(record, header, lines)
            if found is None:
                anchored = False
            else:
                offset = found
        _read_hunk(outer, nested, lines, offset, touched, added)
    for entry in touched.values():
        if entry.def_removed:
            again = next((a for a in added if a.name == entry.fn.name), None)
            if again is not None:  # moved within the file, not added
                added.remove(again)
                entry.moved_params = again.params
    return Located(list(touched.values()), added, anchored or exact)


def _moved(lines: list[DiffLine]) -> set[int]:
    """Removed and added lines of the same text in one hunk: moved, not changed."""
    removed: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.marker == "-" and line.text.strip():
            removed.setdefault(line.text.strip(), []).append(i)
    moved: set[int] = set()
    for i, line in enumerate(lines):
        same = removed.get(line.text.strip()) if line.marker == "+" else None
        if same:
            moved.update((i, same.pop(0)))
    return moved


def _read_hunk(
    outer: list[FunctionRecord], nested: list[FunctionRecord], lines: list[DiffLine],
    offset: int, touched: dict[str, Touched], added: list[AddedDef],
) -> None:
    moved = _moved(lines)
    for i, line in enumerate(lines):
        if line.marker == " ":
            continue
        fn = _owner(outer, lines, i, offset)
        if line.marker == "+" and fn is None:  # a def inside a function is not a new one
            definition = _DEF.match(line.text)
            if definition and definition.group(1) == "def" and not _removed_def(
                lines, definition.group(2)
            ):
                params = read_params(_new_def_text(lines, i), partial=False)
                added.append(AddedDef(definition.group(2), params or ()))
        if fn is None:
            continue
        entry = touched.setdefault(fn.qualname + f"@{fn.line}", Touched(fn))
        inner = _owner(nested, lines, i, offset, within=fn.qualname)
        if inner is not None and inner.name not in entry.nested:
            entry.nested.append(inner.name)
        _classify(entry, lines, i, offset, moved=i in moved)


def _removed_def(lines: list[DiffLine], name: str) -> bool:
    """A `def name` line removed in the same hunk: the def was edited, not added."""
    for line in lines:
        if line.marker == "-":
            match = _DEF.match(line.text)
            if match and match.group(2) == name:
                return True
    return False


def _new_def_text(lines: list[DiffLine], at: int) -> str:
    """The added def's signature as the new side shows it, up to its colon."""
    text: list[str] = []
    for line in lines[at:at + 60]:
        if line.marker == "-":
            continue
        text.append(line.text.strip())
        if _may_close(text[-1]) and read_params("\n".join(text), partial=False) is not None:
            break
    return "\n".join(text)


def _may_close(line: str) -> bool:
    """A signature ends at a colon, maybe followed by a comment: only then try to read it."""
    return ":" in line


def _position(lines: list[DiffLine], i: int) -> tuple[int, int]:
    """(the old line before, the old line after) an added line; (n, n) for an old one."""
    line = lines[i]
    if line.marker != "+":
        return line.old, line.old
    return line.old - 1, line.old


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _owner(
    functions: list[FunctionRecord], lines: list[DiffLine], i: int, offset: int,
    within: str | None = None,
) -> FunctionRecord | None:
    """The function whose span holds line `i` (the innermost, among `within`'s nested)."""
    before, after = _position(lines, i)
    before += offset
    after += offset
    line = lines[i]
    best: FunctionRecord | None = None
    for fn in functions:
        if within is not None and fn.nested_in != within:
            continue
        if line.marker != "+":
            inside = fn.start <= before <= fn.end_line
        else:
            inside = fn.start <= before and after <= fn.end_line
            if not inside and before == fn.end_line and line.text.strip():
                # Appended after the function's last line: its own when indented like it.
                last = _old_text(lines, i)
                inside = last is not None and last.strip() != "" and (
                    _indent(line.text) >= _indent(last) and _indent(line.text) > 0
                )
        if inside and (best is None or fn.start >= best.start):
            best = fn
    return best


def _old_text(lines: list[DiffLine], i: int) -> str | None:
    """The text of the old line just before added line `i`, when the hunk shows it."""
    for j in range(i - 1, -1, -1):
        if lines[j].marker != "+":
            return lines[j].text
    return None


def _classify(
    entry: Touched, lines: list[DiffLine], i: int, offset: int, *, moved: bool
) -> None:
    """Class line `i` into `entry`. A moved line (removed and added with the same text)
    changes no code, but its place in a signature still counts."""
    fn = entry.fn
    line = lines[i]
    stripped = line.text.strip()
    before, after = _position(lines, i)
    before += offset
    after += offset
    sig_end = fn.line + max(len(fn.signature.split("\n")), 1) - 1 if fn.signature else (
        fn.body_line - 1
    )
    if line.marker == "-":
        in_sig = fn.start <= before <= sig_end
        in_doc = fn.doc_line <= before <= fn.doc_end and fn.doc_line > 0
        entry.def_removed = entry.def_removed or before == fn.line
    else:
        replaced = _replaces_signature(lines, i, fn, offset, sig_end)
        in_sig = (fn.start <= before and after <= sig_end) or replaced
        in_doc = fn.doc_line > 0 and fn.doc_line <= before and after <= fn.doc_end
    if in_sig and entry.new_signature is None:
        entry.new_signature = _new_signature(fn, lines, offset)
    if in_sig:
        entry.signature = True
        entry.code = entry.code or not moved
    elif in_doc or moved or not stripped or stripped.startswith("#"):
        return
    else:
        entry.code = True


def _new_signature(fn: FunctionRecord, lines: list[DiffLine], offset: int) -> str | None:
    """The signature after the change: its unchanged lines above the hunk, then the
    hunk's new side from where the def starts, up to the colon that closes it."""
    old_lines = fn.signature.split("\n") if fn.signature else []
    first = lines[0].old + offset if lines else 0
    text: list[str] = []
    at = 0
    if fn.line < first:  # the def starts above the hunk: those lines did not change
        text = old_lines[: first - fn.line]
        if len(text) < first - fn.line:
            return None
    else:
        marker = ("def " + fn.name, "async def " + fn.name)
        at = next((i for i, line in enumerate(lines) if line.marker != "-"
                   and line.old + offset >= fn.line and line.text.strip().startswith(marker)), -1)
        if at < 0:
            return None
    for line in lines[at:at + 80]:
        if line.marker == "-":
            continue
        text.append(line.text.strip())
        if _may_close(text[-1]) and read_params("\n".join(text), partial=False) is not None:
            return "\n".join(text)
    # The hunk ends inside the signature: the rest of it did not change.
    last = max((line.old for line in lines if line.marker != "+"), default=0) + offset
    for rest in old_lines[last + 1 - fn.line:] if last >= fn.line else ():
        text.append(rest)
        if _may_close(rest) and read_params("\n".join(text), partial=False) is not None:
            return "\n".join(text)
    return None


def _replaces_signature(
    lines: list[DiffLine], i: int, fn: FunctionRecord, offset: int, sig_end: int
) -> bool:
    """An added line right after removed signature lines, before any kept line: the
    signature's new text."""
    for j in range(i - 1, -1, -1):
        if lines[j].marker == "+":
            continue
        if lines[j].marker == "-":
            old = lines[j].old + offset
            return fn.line <= old <= sig_end
        return False
    return False


def _anchor(record: FileRecord, header: str, lines: list[DiffLine]) -> int | None:
    """The drift (index line - base line) of a hunk, from a def it shows or from its
    lines found in a function's stored signature; None when neither anchors it."""
    for line in lines:
        if line.marker == "+":
            continue
        match = _DEF.match(line.text)
        if match is None:
            continue
        text = line.text.strip()
        if match.group(1) == "class":
            spots = [c.line for c in record.classes if c.name == match.group(2)]
        else:
            spots = [fn.line for fn in record.functions if fn.name == match.group(2)
                     and fn.signature.split("\n", 1)[0] == text]
        if spots:
            return min((spot - line.old for spot in spots), key=abs)
    named = _DEF.match(header)
    if named is None:
        return None
    old_lines = [line for line in lines if line.marker != "+" and line.text.strip()]
    for fn in record.functions:
        if fn.name != named.group(2) or not fn.signature:
            continue
        signature = fn.signature.split("\n")
        for line in old_lines[:3]:
            stripped = line.text.strip()
            if stripped in signature[1:]:
                return fn.line + signature.index(stripped, 1) - line.old
    return None
