"""Scan the added lines of every patch once for all `added:` patterns of a rule set.

Each file's added lines are joined once (newline-separated) and a pattern runs over that
text with one search. Patterns run on RE2 (bot/core/patterns.py): linear time, no match ever
crosses a line break, and `^`/`$` anchor at line boundaries, so the joined text behaves
like its lines searched one by one.

Most (pattern, file) pairs cannot match, so each pattern first names the literals a
match needs (literals.py). One text of all files tells which files hold any of them
(`str.find` is a fast substring scan): only those files get the regex, starting where
the first literal allows, and a pattern none of whose literals occur anywhere costs a
few `find`s for the whole PR. The regex still decides every hit, so results are
unchanged (tests/test_rules_literals.py).

The scan has a budget (SCAN_BUDGET_BYTES of text searched, summed over every search):
RE2 is linear, so bytes bound time. A PR that exhausts it gets a partial result and
says so (`AddedScan.complete`). Bytes rather than seconds keep the digest a pure
function of the PR.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from bot.core.patterns import LinePattern, encode
from bot.core.rules.literals import RequiredLiterals, required_literals

# Text searched per PR, summed over every (pattern, file) search. A 3,000-file PR with
# 20 added lines a file searches ~2 MB in all; the budget is for hostile patches.
SCAN_BUDGET_BYTES = 32 * 1024 * 1024

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


def _added_text(patch: str) -> str:
    if patch.startswith("@@"):  # GitHub's `patch` starts at the first hunk: no headers
        return "\n".join([line[1:] for line in patch.splitlines() if line[:1] == "+"])
    return "\n".join(added_lines(patch))


class _Haystack:
    """Some of the texts joined into one, to find which of them contain a string."""

    def __init__(self, texts: Sequence[str], owners: Sequence[int]) -> None:
        self.owners = owners  # index of each joined text among all files
        self.starts: list[int] = []
        offset = 0
        for text in texts:
            self.starts.append(offset)
            offset += len(text) + 1
        self.joined = "\n".join(texts)
        self._seen: dict[str, dict[int, int]] = {}  # patterns share many literals

    def first_places(self, needle: str) -> dict[int, int]:
        """File index -> where `needle` first occurs in that file's text.

        A needle that only occurs across the joining newline also lists a file; that
        costs one needless search and, being earlier than any real occurrence, keeps
        the start bound sound.
        """
        if needle in self._seen:
            return self._seen[needle]
        places: dict[int, int] = {}
        joined, starts, owners, last = self.joined, self.starts, self.owners, len(self.starts) - 1
        at = joined.find(needle)
        while at != -1:
            slot = bisect_right(starts, at) - 1
            places[owners[slot]] = at - starts[slot]
            if slot == last:
                break
            at = joined.find(needle, starts[slot + 1])
        self._seen[needle] = places
        return places


class AddedTexts:
    """The added text of every file of one PR, indexed for literal look-ups."""

    def __init__(self, files: Sequence[tuple[str, str]], *, fold_case: bool) -> None:
        self.files = [(name, text) for name, text in files if text]
        everything = range(len(self.files))
        self._everything = [(i, 0) for i in everything]
        self._exact = _Haystack([text for _, text in self.files], everything)
        # Case-folded look-ups are only sound on ASCII text (see literals.py), where
        # lower() keeps every offset; files with other characters always get the regex.
        ascii_ids = [i for i in everything if self.files[i][1].isascii()] if fold_case else []
        self._unfoldable = sorted(set(everything) - set(ascii_ids)) if fold_case else []
        self._folded = _Haystack([self.files[i][1].lower() for i in ascii_ids], ascii_ids)

    def candidates(self, literals: RequiredLiterals | None) -> list[tuple[int, int]]:
        """(file index, where to start searching), in file order, for every file that may
        match a pattern needing `literals`: no match starts before that place."""
        if literals is None:
            return self._everything
        haystack = self._folded if literals.ignore_case else self._exact
        first = dict(haystack.first_places(literals.options[0]))
        for option in literals.options[1:]:
            for index, at in haystack.first_places(option).items():
                if at < first.get(index, at + 1):
                    first[index] = at
        if literals.ignore_case:
            first.update((index, 0) for index in self._unfoldable)
        lead = literals.lead
        if lead is None:
            return [(index, 0) for index in sorted(first)]
        return [(index, max(first[index] - lead, 0)) for index in sorted(first)]


@dataclass
class AddedScan:
    """Pattern id -> [(file, first matched phrase)]; `complete` is False when the budget
    ran out and some (pattern, file) pairs were never searched."""

    hits: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    complete: bool = True


class AddedScanner:
    def __init__(self, patterns: Iterable[str], budget: int = SCAN_BUDGET_BYTES) -> None:
        self.patterns: tuple[str, ...] = tuple(dict.fromkeys(patterns))
        self.ids: dict[str, int] = {pattern: i for i, pattern in enumerate(self.patterns)}
        self.budget = budget
        self._regexes = tuple(LinePattern(pattern, multiline=True) for pattern in self.patterns)
        self.literals: tuple[RequiredLiterals | None, ...] = tuple(
            required_literals(pattern, re.MULTILINE) for pattern in self.patterns
        )
        self._fold_case = any(lit is not None and lit.ignore_case for lit in self.literals)

    def scan(self, patches: Sequence[tuple[str, str]]) -> AddedScan:
        """Every pattern's hits over (file, patch) pairs."""
        result = AddedScan()
        if not self.patterns:
            return result
        texts = AddedTexts(
            [(name, _added_text(patch)) for name, patch in patches],
            fold_case=self._fold_case,
        )
        files = texts.files
        encoded = [encode(text) for _, text in files]
        # Character offsets from the prefilter are byte offsets only in ASCII text.
        ascii_text = [len(data) == len(files[i][1]) for i, data in enumerate(encoded)]
        left = self.budget
        for pattern_id, regex in enumerate(self._regexes):
            for index, start in texts.candidates(self.literals[pattern_id]):
                data = encoded[index]
                at = start if ascii_text[index] else 0
                left -= len(data) - at
                if left < 0:
                    result.complete = False
                    return result
                # The search sees the text before `at` (`^`, `\b`), so with no match
                # possible before `at` it finds what a search from 0 would.
                span = regex.search_bytes(data, at)
                if span is not None:
                    name = files[index][0]
                    found = data[span[0] : span[1]].decode("utf-8", "replace").strip()
                    phrase = found or _line_at(data, span[0])
                    result.hits.setdefault(pattern_id, []).append((name, phrase))
        return result


def _line_at(data: bytes, index: int) -> str:
    start = data.rfind(b"\n", 0, index) + 1
    end = data.find(b"\n", index)
    line = data[start : end if end != -1 else len(data)]
    return line.decode("utf-8", "replace").strip()
