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
from typing import Any

import re2  # type: ignore[import-untyped]

from bot.core.patterns import LinePattern, encode
from bot.core.rules.literals import RequiredLiterals, required_literals

# Text searched per PR, summed over every (pattern, file) search. A 3,000-file PR with
# 20 added lines a file searches ~2 MB in all; the budget is for hostile patches.
SCAN_BUDGET_BYTES = 32 * 1024 * 1024

# RE2's memory for the set of all literals (a few hundred short strings need ~1 MB).
_NEEDLE_SET_MEM = 32 << 20

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


class NeedleSet:
    """Every literal of a rule set in one RE2 set: one linear pass over a PR's joined text
    says which literals occur in it at all. Without it each absent literal cost a
    `str.find` over the whole text (~200 of them on a 3,000-file PR: 130 ms).

    Bytes are matched as Latin-1, each literal spelled as `\\xHH` escapes of its UTF-8
    (surrogates passed through), so presence in the bytes is exactly presence in the
    str: UTF-8 is self-synchronising."""

    def __init__(self, needles: Iterable[str]) -> None:
        self.needles: tuple[str, ...] = tuple(sorted(set(needles)))
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.log_errors = False
        options.max_mem = _NEEDLE_SET_MEM
        self._set: Any = None
        if self.needles:
            regex_set = re2.Set.SearchSet(options)
            for needle in self.needles:
                regex_set.Add("".join(f"\\x{byte:02x}" for byte in _raw(needle)))
            regex_set.Compile()
            self._set = regex_set

    def __reduce__(self) -> tuple[Any, tuple[tuple[str, ...]]]:
        return NeedleSet, (self.needles,)  # an RE2 set does not pickle: rebuild it

    def present(self, text: str) -> frozenset[str] | None:
        """The needles occurring in `text`; None when the set cannot tell (RE2 ran out of
        memory), and then every needle must be looked for."""
        if self._set is None:
            return frozenset()
        try:
            found = self._set.Match(_raw(text))
        except re2.error:
            return None
        return frozenset(self.needles[i] for i in found or ())


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class _Haystack:
    """Some of the texts joined into one, to find which of them contain a string."""

    def __init__(
        self, texts: Sequence[str], owners: Sequence[int], needles: NeedleSet | None = None
    ) -> None:
        self.owners = owners  # index of each joined text among all files
        self.starts: list[int] = []
        offset = 0
        for text in texts:
            self.starts.append(offset)
            offset += len(text) + 1
        self.joined = "\n".join(texts)
        self._seen: dict[str, dict[int, int]] = {}  # patterns share many literals
        self._present = needles.present(self.joined) if needles is not None else None

    def first_places(self, needle: str) -> dict[int, int]:
        """File index -> where `needle` first occurs in that file's text.

        A needle that only occurs across the joining newline also lists a file; that
        costs one needless search and, being earlier than any real occurrence, keeps
        the start bound sound.
        """
        if needle in self._seen:
            return self._seen[needle]
        places: dict[int, int] = {}
        if self._present is not None and needle not in self._present:
            return places
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

    def __init__(
        self,
        files: Sequence[tuple[str, str]],
        *,
        fold_case: bool,
        exact_needles: NeedleSet | None = None,
        folded_needles: NeedleSet | None = None,
    ) -> None:
        self.files = [(name, text) for name, text in files if text]
        everything = range(len(self.files))
        self._everything = [(i, 0) for i in everything]
        self._exact = _Haystack([text for _, text in self.files], everything, exact_needles)
        # Case-folded look-ups are only sound on ASCII text (see literals.py), where
        # lower() keeps every offset; files with other characters always get the regex.
        ascii_ids = [i for i in everything if self.files[i][1].isascii()] if fold_case else []
        self._unfoldable = sorted(set(everything) - set(ascii_ids)) if fold_case else []
        self._folded = _Haystack(
            [self.files[i][1].lower() for i in ascii_ids], ascii_ids, folded_needles
        )

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
        self._exact_needles = NeedleSet(
            o for lit in self.literals if lit is not None and not lit.ignore_case
            for o in lit.options
        )
        self._folded_needles = NeedleSet(
            o for lit in self.literals if lit is not None and lit.ignore_case for o in lit.options
        )

    def scan(self, patches: Sequence[tuple[str, str]]) -> AddedScan:
        """Every pattern's hits over (file, patch) pairs."""
        result = AddedScan()
        if not self.patterns:
            return result
        texts = AddedTexts(
            [(name, _added_text(patch)) for name, patch in patches],
            fold_case=self._fold_case,
            exact_needles=self._exact_needles,
            folded_needles=self._folded_needles,
        )
        files = texts.files
        encoded = [encode(text) for _, text in files]
        # Character offsets from the prefilter are byte offsets only in ASCII text.
        ascii_text = [len(data) == len(files[i][1]) for i, data in enumerate(encoded)]
        left = self.budget
        hits = result.hits
        for pattern_id, regex in enumerate(self._regexes):
            search = regex.search_bytes
            found_in: list[tuple[str, str]] = []
            for index, start in texts.candidates(self.literals[pattern_id]):
                data = encoded[index]
                at = start if ascii_text[index] else 0
                left -= len(data) - at
                if left < 0:
                    if found_in:
                        hits[pattern_id] = found_in
                    result.complete = False
                    return result
                # The search sees the text before `at` (`^`, `\b`), so with no match
                # possible before `at` it finds what a search from 0 would.
                span = search(data, at)
                if span is not None:
                    found = data[span[0] : span[1]].decode("utf-8", "replace").strip()
                    found_in.append((files[index][0], found or _line_at(data, span[0])))
            if found_in:
                hits[pattern_id] = found_in
        return result


def _line_at(data: bytes, index: int) -> str:
    start = data.rfind(b"\n", 0, index) + 1
    end = data.find(b"\n", index)
    line = data[start : end if end != -1 else len(data)]
    return line.decode("utf-8", "replace").strip()
