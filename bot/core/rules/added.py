"""Scan the added lines of every patch once for all `added:` patterns of a rule set.

Each file's added lines are joined once (newline-separated) and every distinct pattern
runs over that text with one `search`, compiled with re.MULTILINE so `^` and `$` anchor
at line boundaries. That lets `re` use its fast literal scan over the whole text instead
of a Python-level loop per line. (A single alternation of all patterns was measured
slower: case-insensitive alternatives defeat re's literal-prefix search.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

_HEADERS = ("--- ", "+++ ", "diff ", "index ")


def added_lines(patch: str) -> Iterator[str]:
    """The added lines of a unified-diff patch, without their '+'.

    File headers ('--- a/x', '+++ b/x') only count before the first hunk: inside a
    hunk, '+++ x' is an added line whose text starts with '++'.
    """
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif not in_hunk and line.startswith(_HEADERS):
            continue
        elif line.startswith("+"):
            yield line[1:]


class AddedScanner:
    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: tuple[str, ...] = tuple(dict.fromkeys(patterns))
        self.ids: dict[str, int] = {pattern: i for i, pattern in enumerate(self.patterns)}
        self._regexes = tuple(re.compile(pattern, re.MULTILINE) for pattern in self.patterns)

    def scan(self, patches: Sequence[tuple[str, str]]) -> dict[int, list[tuple[str, str]]]:
        """Pattern id -> [(file, first matched phrase)] over (file, patch) pairs."""
        hits: dict[int, list[tuple[str, str]]] = {}
        if not self.patterns:
            return hits
        for name, patch in patches:
            text = "\n".join(added_lines(patch))
            if not text:
                continue
            for pattern_id, regex in enumerate(self._regexes):
                found = regex.search(text)
                if found is not None:
                    phrase = found.group(0).strip() or _line_at(text, found.start())
                    hits.setdefault(pattern_id, []).append((name, phrase))
        return hits


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end != -1 else len(text)].strip()
