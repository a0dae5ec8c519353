"""Scan the added lines of every patch once for all `added:` patterns of a rule set.

Each file's added lines are joined once (newline-separated) and a pattern runs over that
text with one `search`, compiled with re.MULTILINE so `^` and `$` anchor at line
boundaries. (A single alternation of all patterns was measured slower: case-insensitive
alternatives defeat re's literal-prefix search.)

Most (pattern, file) pairs cannot match, and `re` has no fast scan for `\b(a|b)\b` or
`(?i)...`, so each pattern first names the literals a match needs (literals.py). One
text of all files tells which files hold any of them (`str.find` is a fast substring
scan): only those files get the regex, starting where the first literal allows, and a
pattern none of whose literals occur anywhere costs a few `find`s for the whole PR. The
regex still decides every hit, so results are unchanged (tests/test_rules_literals.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence

from bot.core.rules.literals import RequiredLiterals, required_literals

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


class AddedScanner:
    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: tuple[str, ...] = tuple(dict.fromkeys(patterns))
        self.ids: dict[str, int] = {pattern: i for i, pattern in enumerate(self.patterns)}
        self._regexes = tuple(re.compile(pattern, re.MULTILINE) for pattern in self.patterns)
        self.literals: tuple[RequiredLiterals | None, ...] = tuple(
            required_literals(pattern, re.MULTILINE) for pattern in self.patterns
        )
        self._fold_case = any(lit is not None and lit.ignore_case for lit in self.literals)

    def scan(self, patches: Sequence[tuple[str, str]]) -> dict[int, list[tuple[str, str]]]:
        """Pattern id -> [(file, first matched phrase)] over (file, patch) pairs."""
        hits: dict[int, list[tuple[str, str]]] = {}
        if not self.patterns:
            return hits
        texts = AddedTexts(
            [(name, _added_text(patch)) for name, patch in patches],
            fold_case=self._fold_case,
        )
        files = texts.files
        for pattern_id, regex in enumerate(self._regexes):
            for index, start in texts.candidates(self.literals[pattern_id]):
                name, text = files[index]
                # `search(text, start)` sees the whole text (`^`, `\b`, lookbehind), so
                # with no match possible before `start` it finds what `search(text)` would.
                found = regex.search(text, start)
                if found is not None:
                    phrase = found.group(0).strip() or _line_at(text, found.start())
                    hits.setdefault(pattern_id, []).append((name, phrase))
        return hits


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end != -1 else len(text)].strip()
