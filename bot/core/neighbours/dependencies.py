""""Depends on #N", "after #N", "stacked on #N", "blocked by #N": what this PR waits for,
read line by line (bounded, code fences skipped) from the description and the author's
own comments."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.core.neighbours.model import Cue, DependencyRef
from bot.core.reading.prose import body_lines

MAX_DEPENDENCIES = 5
MAX_TEXTS = 50  # the author's comments read, newest last
_MAX_LINE = 1_000
_REF = r"(?:PR[ \t]{0,2})?#(\d{1,7})"
_CUE = re.compile(
    r"\b(depends[ \t]+on|depending[ \t]+on|stacked[ \t]+on(?:[ \t]+top[ \t]+of)?"
    r"|blocked[ \t]+by|after)[ \t]*:?[ \t]*" + _REF + r"\b",
    re.IGNORECASE,
)
# "after #N" is common prose ("after #123 the test fails"): a dependency only on a line
# that speaks of landing or merging.
_ORDER_WORDS = re.compile(r"\b(?:land|lands|landed|merge|merged|merges|go(?:es)? in|wait)\b",
                          re.IGNORECASE)
_CUE_ID: dict[str, Cue] = {"depends": "depends-on", "depending": "depends-on",
                           "stacked": "stacked-on", "blocked": "blocked-by", "after": "after"}


def find_dependencies(
    body: str | None, author_comments: Iterable[str] = (), *, own: int = 0
) -> tuple[DependencyRef, ...]:
    """The PRs this one says it waits for, first mention first, at most MAX_DEPENDENCIES."""
    found: dict[int, DependencyRef] = {}
    texts = [body, *list(author_comments)[-MAX_TEXTS:]]
    for text in texts:
        for line in body_lines(text):
            if line.in_fence:
                continue
            _read_line(line.text[:_MAX_LINE], found)
            if len(found) >= MAX_DEPENDENCIES:
                break
    found.pop(own, None)
    return tuple(found.values())[:MAX_DEPENDENCIES]


def _read_line(line: str, found: dict[int, DependencyRef]) -> None:
    for match in _CUE.finditer(line):
        word = match.group(1).split()[0].lower()
        cue = _CUE_ID[word]
        if cue == "after" and not _ORDER_WORDS.search(line):
            continue
        number = int(match.group(2))
        found.setdefault(number, DependencyRef(number=number, cue=cue))
