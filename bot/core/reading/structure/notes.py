"""The notes of one piece (`Hunk`): what its removed and added lines show.

`all_hunk_notes` is the definition, every question asked; `hunk_notes` asks only the
questions the piece's text can answer yes to, of the kinds that can still be shown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from bot.core.reading.specifics import StructureNote
from bot.core.reading.structure.lines import (
    ASSERT,
    DEF,
    RAISE,
    RANK,
    SHOWN_ALL,
    TODO,
    decorations,
    is_test_file,
    open_brackets,
    snip,
    todo_said,
    wrap_call,
    wrapped_note,
)
from bot.core.reading.structure.pieces import Hunk

_CONDITION = re.compile(r"[ \t]*(?:if|elif|while)[ \t(].*:[ \t]*(?:#.*)?$")
# Not after "." either: `self.size = n` assigns an attribute, it passes no keyword.
_KWARG = re.compile(r"(?<![=!<>\w.])([A-Za-z_]\w{0,60})[ \t]*=(?!=)")
# The innermost call still open at a point of a line: its callee's name.
_CALLEE = re.compile(r"([A-Za-z_]\w*)[ \t]*\(")
_CALL_LOOKBACK = 1000
_NAMES = re.compile(r"[A-Za-z_]\w*")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")  # names in a message are not the code's
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
_KEYWORDS = frozenset({"if", "elif", "while", "not", "and", "or", "is", "in", "None", "True",
                       "False", "lambda"})
# `x is not None` tests what `x` does, for a value that is never falsy otherwise.
_IS_NOT_NONE = re.compile(r"([A-Za-z_][\w.]*)[ \t]+is[ \t]+not[ \t]+None\b")
_IS_NONE = re.compile(r"([A-Za-z_][\w.]*)[ \t]+is[ \t]+None\b")
# Words of an assert that name no subject: shared by every guard.
_NOT_SUBJECTS = frozenset({
    "assert", "self", "cls", "is", "not", "None", "and", "or", "in", "isinstance", "len",
    "True", "False",
})
# A removed branch that handled a case: `if`/`elif`/`else`, or a conditional expression.
_BRANCH = re.compile(r"[ \t]*(?:if|elif|else)\b|.*\bif\b.*\belse\b")
# Where a line of capped codes joined by "\n" ends in a one-name call, as one that
# `wrap_call` reads must.
_MAY_WRAP = re.compile(r"\([A-Za-z_]\w*\)[^\S\n]*(?:\n|\Z)")


def all_hunk_notes(hunk: Hunk) -> Iterator[StructureNote]:
    """Every note of one hunk: the plain definition `hunk_notes` answers like."""
    removed = [c for c in hunk.removed if c.strip()]
    added = [c for c in hunk.added if c.strip()]
    moved = {c.strip() for c in removed} & {c.strip() for c in added}
    yield from _notes_of(hunk, removed, added, moved)


def _notes_of(
    hunk: Hunk,
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
        changed = next(
            (pair for pair in zip(old_conditions, new_conditions, strict=False)
             if not _cosmetic(*pair, hunk) and not _inverted_guard(*pair, added)),
            None,
        )
        if changed is not None:
            yield StructureNote(
                hunk.file, symbol, "condition", (snip(changed[0]), snip(changed[1]))
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
        found = TODO.search(code)
        said = todo_said(found) if found else ""
        if said:
            yield StructureNote(hunk.file, symbol, "todo", (snip(said),))
            break
    if wrapped:
        yield from _wrapped(hunk, added)


# A statement that leaves the block early: a guard inverted into an early exit ends so.
_EARLY_EXIT = re.compile(r"[ \t]*(?:return|continue|break|raise)\b")


def _inverted_guard(old: str, new: str, added: list[str]) -> bool:
    """A condition negated where the hunk adds an early exit: `if x is not None: <body>`
    turned into `if x is None: return` with the body after it tests the same case
    (judged misdirected as a "changed condition": the logic is the same)."""
    old_words, new_words = _condition_words(old)[1:], _condition_words(new)[1:]
    negated = (old_words == ["not", *new_words] or new_words == ["not", *old_words])
    return negated and any(_EARLY_EXIT.match(code) for code in added)


def _cosmetic(old: str, new: str, hunk: Hunk) -> bool:
    """A condition that tests the same thing: `if x:` → `if x is not None:`, or a
    variable renamed throughout (`current` → `current_requests`: both names stand on
    other lines of their side, and the old one on no added or context line)."""
    old_words, new_words = _condition_words(old), _condition_words(new)
    if len(old_words) != len(new_words):
        return False
    renamed = [(was, now) for was, now in zip(old_words, new_words, strict=True) if was != now]
    if not renamed:
        return True
    if any(not (_NAMES.fullmatch(was) and _NAMES.fullmatch(now)) or was in _KEYWORDS
           or now in _KEYWORDS for was, now in renamed):
        return False
    kept: Counter[str] = Counter()
    gone: Counter[str] = Counter()
    for marker, code in hunk.lines:
        (gone if marker == "-" else kept).update(_NAMES.findall(_STRING.sub("", code)))
    # Each name once in its own condition: a rename uses them elsewhere too.
    return all(not kept[was] and gone[was] > 1 and kept[now] > 1 for was, now in renamed)


def _condition_words(condition: str) -> list[str]:
    """A condition's tokens, with a None test spelled as truthiness."""
    text = condition.split("#", 1)[0].strip().rstrip(":")
    text = _IS_NOT_NONE.sub(r"\1", text)
    text = _IS_NONE.sub(r"not \1", text)
    return _TOKEN.findall(text)


def _reordered(hunk: Hunk, moved: set[str]) -> tuple[str, str] | None:
    """Two statements that swapped places: (now first, now second)."""
    meaningful = {m for m in moved if len(m) >= 6 and m not in {"return", "pass", "else:"}}
    if len(meaningful) < 2:
        return None
    # In a rewrite two surviving lines change order by accident; a reorder is a change
    # made mostly of the moved statements (each is one removed and one added line).
    changed = sum(1 for marker, code in hunk.lines if marker in "+-" and code.strip())
    if 4 * len(meaningful) < changed:
        return None
    old = _dedup([c.strip() for m, c in hunk.lines if m == "-" and c.strip() in meaningful])
    new = _dedup([c.strip() for m, c in hunk.lines if m == "+" and c.strip() in meaningful])
    position = {code: i for i, code in enumerate(old)}
    for i, first in enumerate(new):
        for second in new[i + 1 :]:
            if position.get(first, -1) > position.get(second, -1) >= 0:
                return snip(first), snip(second)
    return None


def _raise_notes(
    hunk: Hunk, removed: list[str], added: list[str], moved: set[str]
) -> Iterator[StructureNote]:
    old = _names(RAISE, removed, moved)
    new = _names(RAISE, added, moved)
    if old and new and set(old) != set(new):
        gone = [n for n in old if n not in new] or old
        came = [n for n in new if n not in old] or new
        yield StructureNote(hunk.file, hunk.scope, "raise-changed", (gone[0], came[0]))
    elif new and not old:
        yield StructureNote(hunk.file, hunk.scope, "raise-added", (new[0],))
    elif old and not new:
        yield StructureNote(hunk.file, hunk.scope, "raise-removed", (old[0],))


def _assert_notes(
    hunk: Hunk, removed: list[str], added: list[str], moved: set[str]
) -> Iterator[StructureNote]:
    old = [c.strip() for c in removed if ASSERT.match(c) and c.strip() not in moved]
    new = [c.strip() for c in added if ASSERT.match(c) and c.strip() not in moved]
    if any(map(_open, old)) or any(map(_open, new)):
        # an assert wrapped over lines shows only its first one here: comparing
        # `assert a or b, (` with `assert (` says nothing of what it checks (judged
        # misdirected on a reformat that added a platform)
        return
    if is_test_file(hunk.file):
        return  # a test's asserts are its checks, not a relaxed invariant
    if old and new:
        yield StructureNote(hunk.file, hunk.scope, "assert-changed", (snip(old[0]), snip(new[0])))
    elif new:
        replacing = [a for a in new if _replaces_fallback(a, removed, moved)]
        if replacing:
            yield StructureNote(hunk.file, hunk.scope, "assert-added", (snip(replacing[0]),))
    elif old and not _source_replaced(old[0], added):
        yield StructureNote(hunk.file, hunk.scope, "assert-removed", (snip(old[0]),))


_ASSERTED = re.compile(r"[ \t]*assert[ \t(]+(?:not[ \t]+)?([A-Za-z_]\w*)\b")


def _source_replaced(assertion: str, added: list[str]) -> bool:
    """Whether the name a removed assert checks is assigned anew in the same hunk: the
    assert guarded the old source of the value (`x = d.get(k)`; `assert x is not None`),
    and the new one (`x = d[k]`) is what to read, not "what guards that case now?"
    (judged answered)."""
    match = _ASSERTED.match(assertion)
    if match is None:
        return False
    assigned = re.compile(rf"[ \t]*{re.escape(match.group(1))}[ \t]*(?::[^=]+)?=(?!=)")
    return any(assigned.match(code) for code in added)


def _open(statement: str) -> bool:
    """Whether a line leaves a bracket open or continues with `\\`: the statement goes on
    below it."""
    return statement.split("#", 1)[0].rstrip().endswith("\\") or open_brackets(statement) > 0


def _replaces_fallback(assertion: str, removed: list[str], moved: set[str]) -> bool:
    """Whether a new assert takes the place of a removed branch on what it asserts
    (`if self.m is None: self.m = build()` → `assert self.m is not None`): a case that
    used to be handled now fails. A new assert alone only asks "can callers reach it?",
    judged a template question on every guard."""
    names = set(_NAMES.findall(assertion)) - _NOT_SUBJECTS
    if not names:
        return False
    for code in removed:
        if code.strip() in moved or not _BRANCH.match(code):
            continue
        if names & set(_NAMES.findall(code)):
            return True
    return False


def _decorator_notes(hunk: Hunk, moved: set[str]) -> Iterator[StructureNote]:
    return decorations(hunk.file, hunk.scope, hunk.decorator_lines(), moved)


def hunk_notes(hunk: Hunk, below: int = SHOWN_ALL) -> Iterator[StructureNote]:
    """`all_hunk_notes` of the kinds ranked before `below`."""
    notes = _asked_notes(hunk, below)
    return notes if below == SHOWN_ALL else (n for n in notes if RANK[n.kind] < below)


def _asked_notes(hunk: Hunk, below: int) -> Iterator[StructureNote]:
    """`all_hunk_notes`, asking only the questions the hunk's text can answer yes to,
    and of those only the ones that may find a kind ranked before `below`.

    A 3,000-file PR has thousands of hunks and most yield nothing: each kind of note
    needs a word (`if`, `raise`, `assert`, `@`, `=`, `#`, `(`) in the lines it reads,
    so one substring test over those lines skips the kind's regexes when the word is
    absent. Skipping a question that finds nothing leaves the notes and their order
    as they were (tests/core/rules/test_engine_equivalence.py)."""
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
        reordered=len(moved) >= 2 and RANK["reordered"] < below,
        condition=("if" in old_text or "while" in old_text)
        and ("if" in new_text or "while" in new_text)
        and RANK["condition"] < below,
        raises=("raise" in old_text or "raise" in new_text) and RANK["raise-changed"] < below,
        asserts=("assert" in old_text or "assert" in new_text)
        and RANK["assert-changed"] < below,
        # The changed lines among `hunk.lines` are `hunk.removed` and `hunk.added`.
        decorators=("@" in old_text or "@" in new_text) and RANK["decorator-added"] < below,
        kwargs=bool(added) and "=" in old_text and RANK["kwarg-removed"] < below,
        todo="#" in new_text
        and ("TODO" in new_text or "FIXME" in new_text or "XXX" in new_text)
        and RANK["todo"] < below,
        wrapped="(" in new_text
        and _MAY_WRAP.search(new_text) is not None
        and RANK["wrapped"] < below,
    )


def _dropped_kwargs(removed: list[str], added: list[str]) -> list[str]:
    """Keyword arguments that removed lines passed and their replacements no longer do."""
    if not added or not removed:
        return []
    old = _kwargs(removed)
    new = set(_kwargs(added))
    added_text = "\n".join(added)
    return [
        name
        for name in old
        if name not in new
        and not _passed_anywhere(name, added_text)
        and not _now_annotated(name, added_text)
        and _callee_kept(_callees_passing(name, removed), added_text)
    ]


def _passed_anywhere(name: str, text: str) -> bool:
    """`name=` on any added line: a call re-wrapped over other lines (`dtype=x)` closing
    it) still passes it."""
    return re.search(rf"(?<![\w.]){re.escape(name)}[ \t]*=(?!=)", text) is not None


def _now_annotated(name: str, text: str) -> bool:
    """`name: T = default` on an added line: a signature's parameter that gained a type
    (`x=None` -> `x: Tensor | None = None`), not a keyword a call stopped passing
    (judged misdirected as "no longer passes x")."""
    return re.search(rf"(?:^|[(,])[ \t]*{re.escape(name)}[ \t]*:(?!=)", text,
                     re.MULTILINE) is not None


def _callees_passing(name: str, lines: list[str]) -> set[str]:
    """The callees that removed lines pass keyword `name` to, read across the lines of
    a multi-line call (the innermost call still open where the keyword stands)."""
    text = "\n".join(lines)
    callees: set[str] = set()
    for found in re.finditer(rf"(?<![\w.]){re.escape(name)}[ \t]*=(?!=)", text):
        head = text[max(0, found.start() - _CALL_LOOKBACK) : found.start()]
        for match in reversed(list(_CALLEE.finditer(head))):
            tail = head[match.end() :]
            if tail.count("(") >= tail.count(")"):
                callees.add(match.group(1))
                break
    return callees


def _callee_kept(callees: set[str], added_text: str) -> bool:
    """A keyword is "no longer passed" only to a call the new lines still make: a call
    replaced by another function (`.to(d, non_blocking=True)` by a helper) drops no
    argument. Where no callee shows, kept as before."""
    return not callees or any(f"{c}(" in added_text for c in callees)


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


def _wrapped(hunk: Hunk, added: list[str]) -> Iterator[StructureNote]:
    """`allow_in_graph(fn)` at module level: `fn` is handed to a wrapper by call, not @."""
    defined: set[str] | None = None  # read only when a line looks like such a call
    for code in added:
        call = wrap_call(code)
        if call is None:
            continue
        if defined is None:
            defined = {m.group(1) for m in (DEF.match(c) for c in added) if m} | {hunk.scope}
        if call.group(3) in defined:
            yield wrapped_note(hunk.file, call)
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
