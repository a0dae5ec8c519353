"""Whether a raise the patch adds guards only what the patch adds: a field or parameter
that the base does not have (`if self.stream_interval < 1: raise ...` beside a new
`stream_interval: int = 1`). Such a raise rejects nothing that used to pass.

Read from the file's patch alone: a name is new when an added line defines it (an
annotated field or parameter, `self.name = ...`) and no removed or context line holds
it. Bounded like the rest of the structure reading: lines capped, at most
`_MAX_LINES` read.
"""

from __future__ import annotations

import re

from bot.core.reading.structure.lines import DEF, MAX_LINE, RAISE

_MAX_LINES = 20_000
_NAME = re.compile(r"[A-Za-z_]\w*")
# `name: T`, `name: T = v` (a field, or a parameter on its own line), `self.name = v`.
_DEFINED = re.compile(
    r"[ \t]*(?:self\.([A-Za-z_]\w*)[ \t]*(?::[^=]*)?=(?!=)|([A-Za-z_]\w*)[ \t]*:(?!=))"
)
_PARAMETER = re.compile(r"[(,][ \t]*\**([A-Za-z_]\w*)")
_GUARD = re.compile(r"[ \t]*(?:if|elif)\b(.*)")
_GUARD_LOOKBACK = 8  # lines above a raise where its `if` may stand


def guards_only_new_names(patch: str, exception: str) -> bool:
    """Whether every added `raise <exception>` of `patch` stands under an added `if`
    that reads a name the patch adds (and the file has such a raise)."""
    if not exception or not patch:
        return False
    lines = [(raw[:1], raw[1:MAX_LINE]) for raw in patch.split("\n", _MAX_LINES)[:_MAX_LINES]]
    defined, seen_before = _defined_and_old(lines)
    new = defined - seen_before
    if not new:
        return False
    found = False
    for at, (marker, code) in enumerate(lines):
        raised = RAISE.match(code) if marker == "+" else None
        if raised is None or raised.group(1) != exception:
            continue
        found = True
        guard = _guard_above(lines, at)
        if guard is None or not new & set(_NAME.findall(guard)):
            return False
    return found


def _defined_and_old(lines: list[tuple[str, str]]) -> tuple[set[str], set[str]]:
    """Names added lines define; every name a removed or context line holds."""
    defined: set[str] = set()
    old: set[str] = set()
    for marker, code in lines:
        if marker in " -":
            old.update(_NAME.findall(code))
        elif marker == "+":
            found = _DEFINED.match(code)
            if found is not None:
                defined.add(found.group(1) or found.group(2))
            if DEF.match(code):
                defined.update(_PARAMETER.findall(code))
    return defined, old


def _guard_above(lines: list[tuple[str, str]], at: int) -> str | None:
    """The added `if`/`elif` condition just above line `at`, None when the nearest
    one is old (context) or there is none before a def line."""
    for marker, code in reversed(lines[max(0, at - _GUARD_LOOKBACK) : at]):
        if DEF.match(code):
            return None
        guard = _GUARD.match(code)
        if guard is not None:
            return guard.group(1) if marker == "+" else None
    return None
