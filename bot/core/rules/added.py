"""Scan the added lines of every patch once for all `added:` patterns of a rule set.

Each file's added lines are joined once (newline-separated) and a pattern runs over that
text with one search. Patterns run on RE2 (bot/core/rules/patterns.py): linear time, no match ever
crosses a line break, and `^`/`$` anchor at line boundaries, so the joined text behaves
like its lines searched one by one.

Most (pattern, file) pairs cannot match, so each pattern first names the literals a
match needs (literals.py). One text of all files tells which files hold any of them
(`str.find` is a fast substring scan): only those files get the regex, starting where
the first literal allows, and a pattern none of whose literals occur anywhere costs a
few `find`s for the whole PR. The regex still decides every hit, so results are
unchanged (tests/core/rules/test_rules_literals.py).

The scan has a budget (SCAN_BUDGET_BYTES of text searched, summed over every search,
each byte charged its pattern's `cost_weight`): RE2 is linear, so weighted bytes bound
time, for a repository override's patterns as for the bundled ones. A PR that exhausts
it gets a partial result and says so (`AddedScan.complete`). Bytes rather than seconds
keep the digest a pure function of the PR.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import itemgetter
from typing import Any

import re2  # type: ignore[import-untyped]

from bot.core.rules.literals import RequiredLiterals, required_literals
from bot.core.rules.patterns import LinePattern, encode

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


# Line breaks `str.splitlines` knows besides "\n"; a patch without them splits alike on "\n".
# Looked for one by one with `in` (a memchr-speed scan): a regex class is ~5x slower.
_ASCII_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"
_OTHER_BREAKS = _ASCII_BREAKS + "\x85\u2028\u2029"
# Every "\n"-separated line that starts with "+", without it (`.` stops only at "\n"), in
# a text where each line follows a "\n": spelled from the "\n", not with a MULTILINE
# `^`, a pattern starting with a literal is searched for several times faster.
_ADDED_LINE = re.compile(r"\n\+(.*)")


def _has_other_breaks(patch: str) -> bool:
    breaks = _ASCII_BREAKS if patch.isascii() else _OTHER_BREAKS
    return any(char in patch for char in breaks)


def _added_text(patch: str, *, may_break: bool = True) -> str:
    """The added lines joined; `may_break=False` when the patch is known to hold no line
    break but "\n" (`_added_texts` asks all patches at once)."""
    if not patch.startswith("@@"):
        return "\n".join(added_lines(patch))
    # GitHub's `patch` starts at the first hunk: no headers.
    if may_break and _has_other_breaks(patch):
        return "\n".join([line[1:] for line in patch.splitlines() if line[:1] == "+"])
    _, _, body = patch.partition("\n")
    last = body.rfind("\n") + 1
    if body[:1] == "+" and body[last : last + 1] == "+":
        # A new file's single hunk: every line is added (a common shape of big PRs).
        text = body[1:].replace("\n+", "\n")
        # Each "\n+" replaced took one character: all were replaced when every "\n" was.
        if len(body) - 1 - len(text) == body.count("\n"):
            return text
    return "\n".join(_ADDED_LINE.findall("\n" + patch))


def _added_texts(patches: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """(file, `_added_text`) of each patch; the other line breaks are looked for in all
    patches at once (one scan each, not one per patch)."""
    may_break = _has_other_breaks("".join([patch for _, patch in patches]))
    return [(name, _added_text(patch, may_break=may_break)) for name, patch in patches]


class NeedleSet:
    """Every literal of a rule set in one RE2 set: one linear pass over a PR's joined text
    says which literals occur in it at all. Without it each absent literal cost a
    `str.find` over the whole text (~200 of them on a 3,000-file PR: 130 ms).

    Bytes are matched as Latin-1, each literal spelled as `\\xHH` escapes of its UTF-8
    (surrogates passed through), so presence in the bytes is exactly presence in the
    str: UTF-8 is self-synchronising. The `folded` literals (lower-cased, looked for in
    lower-cased ASCII text) are matched ignoring case in the same pass: a folded literal
    found in the lower-cased text of an ASCII file is found this way in its text, and
    one found only where it is not (a non-ASCII file, a Latin-1 letter folded) merely
    costs the `find`s that then find nothing."""

    def __init__(self, needles: Iterable[str], folded: Iterable[str] = ()) -> None:
        self.needles: tuple[str, ...] = tuple(sorted(set(needles)))
        self.folded: tuple[str, ...] = tuple(sorted(set(folded)))
        options = re2.Options()
        options.encoding = re2.Options.Encoding.LATIN1
        options.log_errors = False
        options.max_mem = _NEEDLE_SET_MEM
        self._set: Any = None
        if self.needles or self.folded:
            regex_set = re2.Set.SearchSet(options)
            for needle in self.needles:
                regex_set.Add(_escaped(needle))
            for needle in self.folded:
                regex_set.Add("(?i)" + _escaped(needle))
            regex_set.Compile()
            self._set = regex_set

    def __reduce__(self) -> tuple[Any, tuple[tuple[str, ...], tuple[str, ...]]]:
        return NeedleSet, (self.needles, self.folded)  # an RE2 set does not pickle: rebuild it

    def present(self, text: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """(the needles, the folded needles) occurring in `text`; None when the set cannot
        tell (RE2 ran out of memory), and then every needle must be looked for."""
        return self.present_in(_raw(text))

    def present_in(self, data: bytes) -> tuple[frozenset[str], frozenset[str]] | None:
        """`present` of a text encoded with `_raw`."""
        if self._set is None:
            return frozenset(), frozenset()
        try:
            found = self._set.Match(data) or ()
        except re2.error:
            return None
        exact = len(self.needles)
        return (
            frozenset(self.needles[i] for i in found if i < exact),
            frozenset(self.folded[i - exact] for i in found if i >= exact),
        )


def _escaped(needle: str) -> str:
    return "".join(f"\\x{byte:02x}" for byte in _raw(needle))


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class _Haystack:
    """Some of the texts joined into one, to find which of them contain a string."""

    def __init__(
        self,
        texts: Sequence[str],
        owners: Sequence[int],
        present: AbstractSet[str] | None,
        joined: str | None = None,
    ) -> None:
        self.owners = owners  # index of each joined text among all files
        self.texts = texts
        self._joined = joined
        self._seen: dict[str, dict[int, int]] = {}  # patterns share many literals
        self._present = present  # the needles that occur at all; None: unknown

    @property
    def joined(self) -> str:
        if self._joined is None:
            self._joined = "\n".join(self.texts)
        return self._joined

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
        if "\n" not in needle:
            # A present needle is looked for in each text: one short `find` per file
            # costs less than walking a common needle's occurrences through the joined
            # text (find, then bisect to its file), and finds the same first places.
            finds = list(map(str.find, self.texts, repeat(needle)))
            # (owner, place) of each text holding it, in file order, without a Python
            # step per text: compress keeps the pairs whose find is not -1.
            kept = map((-1).__lt__, finds)
            places = dict(compress(zip(self.owners, finds, strict=True), kept))
            self._seen[needle] = places
            return places
        starts: list[int] = []
        offset = 0
        for text in self.texts:
            starts.append(offset)
            offset += len(text) + 1
        joined, owners, last = self.joined, self.owners, len(starts) - 1
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
        needles: NeedleSet | None = None,
    ) -> None:
        self.files = [(name, text) for name, text in files if text]
        everything = range(len(self.files))
        self._everything = [(i, 0) for i in everything]
        texts = [text for _, text in self.files]
        joined = "\n".join(texts)
        self.all_ascii = joined.isascii()
        # The texts joined at a character none holds, so that what is done to each of
        # them (lower(), encode()) is done to all at once and split back.
        self._separated = None if "\x00" in joined else "\x00".join(texts)
        present = needles.present(joined) if needles is not None else None
        exact, folded = (None, None) if present is None else present
        self._folded_present: frozenset[str] | None = folded
        self._exact = _Haystack(texts, everything, exact, joined)
        self._fold_case = fold_case
        self._folded: _Haystack | None = None
        self._unfoldable: list[int] = []

    def folded(self) -> _Haystack:
        """The lower-cased texts, built when a case-folded literal is first looked for."""
        if self._folded is None:
            # Case-folded look-ups are only sound on ASCII text (see literals.py), where
            # lower() keeps every offset; files with other characters always get the regex.
            everything = range(len(self.files))
            if self.all_ascii:
                ascii_ids: Sequence[int] = everything
            else:
                ascii_ids = [i for i in everything if self.files[i][1].isascii()]
            self._unfoldable = sorted(set(everything) - set(ascii_ids))
            if self._folded_present is not None and not self._folded_present:
                ascii_ids = []  # no folded literal occurs: none is ever looked for
            if ascii_ids is everything and self._separated is not None and self.files:
                lowered = self._separated.lower().split("\x00")
            else:
                lowered = [self.files[i][1].lower() for i in ascii_ids]
            self._folded = _Haystack(lowered, ascii_ids, self._folded_present)
        return self._folded

    def candidates(self, literals: RequiredLiterals | None) -> list[tuple[int, int]]:
        """(file index, where to start searching), in file order, for every file that may
        match a pattern needing `literals`: no match starts before that place.

        `candidates_plain`, without a Python step per file in the common cases (a big
        PR asks ~45 patterns about up to 3,000 files each): one literal occurring, its
        places already in file order, and a lead of 0 (most patterns)."""
        if literals is None:
            return self._everything
        haystack = self.folded() if literals.ignore_case else self._exact
        found = [places for o in literals.options if (places := haystack.first_places(o))]
        extra = self._unfoldable if literals.ignore_case else []
        first: dict[int, int]
        if len(found) == 1 and not extra:
            first = found[0]  # file order: each literal's places are found in it
        elif not found and not extra:
            return []
        else:
            merged = dict(found[0]) if found else {}
            for places in found[1:]:
                for index, at in places.items():
                    if at < merged.get(index, at + 1):
                        merged[index] = at
            merged.update((index, 0) for index in extra)
            first = {index: merged[index] for index in sorted(merged)}
        lead = literals.lead
        if lead is None:
            return [(index, 0) for index in first]
        if lead == 0:
            return list(first.items())
        return [(index, at - lead if at > lead else 0) for index, at in first.items()]

    def candidates_plain(self, literals: RequiredLiterals | None) -> list[tuple[int, int]]:
        """The definition `candidates` answers like."""
        if literals is None:
            return self._everything
        haystack = self.folded() if literals.ignore_case else self._exact
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
        self.weights: tuple[int, ...] = tuple(regex.cost_weight for regex in self._regexes)
        self.literals: tuple[RequiredLiterals | None, ...] = tuple(
            required_literals(pattern, re.MULTILINE) for pattern in self.patterns
        )
        self._fold_case = any(lit is not None and lit.ignore_case for lit in self.literals)
        # A literal without "\n" that occurs in an added text occurs in its patch too.
        self._patch_presence = not any(
            "\n" in option for lit in self.literals if lit is not None for option in lit.options
        )
        self._needles = NeedleSet(
            (o for lit in self.literals if lit is not None and not lit.ignore_case
             for o in lit.options),
            (o for lit in self.literals if lit is not None and lit.ignore_case
             for o in lit.options),
        )

    def _prepare(self, patches: Sequence[tuple[str, str]]) -> _Prepared:
        texts = AddedTexts(
            _added_texts(patches),
            fold_case=self._fold_case,
            needles=self._needles,
        )
        return _Prepared(texts)

    def scan(self, patches: Sequence[tuple[str, str]]) -> AddedScan:
        """Every pattern's hits over (file, patch) pairs."""
        if not self.patterns:
            return AddedScan()
        return self._scan(self._prepare(patches))

    def _scan(self, prepared: _Prepared) -> AddedScan:
        result = AddedScan()
        files, encoded = prepared.files, prepared.encoded
        left = self.budget
        hits = result.hits
        for pattern_id, regex in enumerate(self._regexes):
            search = regex.search_bytes
            weight = self.weights[pattern_id]
            found_in: list[tuple[str, str]] = []
            for index, at in prepared.candidates(self.literals[pattern_id]):
                data = encoded[index]
                left -= (len(data) - at) * weight
                if left < 0:
                    if found_in:
                        hits[pattern_id] = found_in
                    result.complete = False
                    return result
                # The search sees the text before `at` (`^`, `\b`), so with no match
                # possible before `at` it finds what a search from 0 would.
                span = search(data, at)
                if span is not None:
                    found_in.append((files[index][0], _phrase(data, span)))
            if found_in:
                hits[pattern_id] = found_in
        return result

    def index(
        self, patches: Sequence[tuple[str, str]], *, bound_first: bool = True
    ) -> AddedIndex:
        """The hits of every pattern, searched only as far as the questions asked need.
        `bound_first=False` always lists every pattern's candidates up front: the
        definition the default answers like (tests/core/rules/test_engine_equivalence.py)."""
        return AddedIndex(self, patches, bound_first=bound_first)


class _Prepared:
    """One PR's added texts, encoded, with each pattern's candidate files."""

    def __init__(self, texts: AddedTexts) -> None:
        self.texts = texts
        self.files = texts.files
        separated = texts._separated
        if separated is not None and self.files:
            # `encode` works character by character and "\x00" is one byte of UTF-8.
            self.encoded = encode(separated).split(b"\x00")
        else:
            self.encoded = [encode(text) for _, text in self.files]
        # Character offsets from the prefilter are byte offsets only in ASCII text.
        if texts.all_ascii:
            self.ascii = [True] * len(self.files)
        else:
            self.ascii = [len(data) == len(text) for data, (_, text) in zip(
                self.encoded, self.files, strict=True)]
        self.all_ascii = all(self.ascii)

    def candidates(self, literals: RequiredLiterals | None) -> list[tuple[int, int]]:
        """(file index, byte offset to search from), in file order."""
        found = self.texts.candidates(literals)
        if self.all_ascii:
            return found
        ascii_text = self.ascii
        return [(index, start if ascii_text[index] else 0) for index, start in found]

    def cost(
        self, candidates: Sequence[Sequence[tuple[int, int]]], weights: Sequence[int]
    ) -> int:
        """Weighted bytes a full scan of these candidates searches (`AddedScanner._scan`)."""
        size = [len(data) for data in self.encoded].__getitem__
        return sum(
            weight * (sum(map(size, map(itemgetter(0), found))) - sum(map(itemgetter(1), found)))
            for found, weight in zip(candidates, weights, strict=True)
        )


class _PatchTexts:
    """A PR's patches, for an index that makes a patch's added text only when a question
    reaches it. Whatever occurs in an added text occurs in its patch (the added lines
    are pieces of it), so the RE2 presence pass and each patch's `in` tests over the
    patches find every candidate of `AddedTexts.candidates`, and perhaps a few more,
    which the regex then finds nothing in. Only for literals without "\n"."""

    def __init__(self, patches: Sequence[tuple[str, str]], needles: NeedleSet) -> None:
        self.names = [name for name, _ in patches]
        self.patches = [patch for _, patch in patches]
        joined = "\n".join(self.patches)
        self.may_break = _has_other_breaks(joined)
        data = _raw(joined)
        # At least the bytes of all added texts (they are pieces of the patches, each
        # line break one "\n"): a bound on what any pattern may search.
        self.size = len(data)
        self.all_ascii = len(data) == len(joined)
        present = needles.present_in(data)
        self.exact: frozenset[str] | None = None if present is None else present[0]
        self.folded: frozenset[str] | None = None if present is None else present[1]
        self._encoded: dict[int, bytes] = {}

    def may_occur(self, literals: RequiredLiterals | None) -> bool:
        """False only when `AddedTexts.candidates(literals)` is surely empty."""
        if literals is None:
            return bool(self.patches)
        if literals.ignore_case:
            if not self.all_ascii or self.folded is None:
                return True  # a text that is not ASCII is always a candidate
            return any(option in self.folded for option in literals.options)
        return self.exact is None or any(option in self.exact for option in literals.options)

    def may_match(self, literals: RequiredLiterals | None) -> Callable[[int], bool]:
        """Whether patch `i`'s added text may be among `AddedTexts.candidates(literals)`."""
        if literals is None:
            return _ALWAYS
        patches = self.patches
        if not literals.ignore_case:
            present = self.exact
            options = [o for o in literals.options if present is None or o in present]
            return lambda i: any(option in patches[i] for option in options)
        folded = self.folded
        lowered = [o for o in literals.options if folded is None or o in folded]

        def may(i: int) -> bool:
            patch = patches[i]
            if not patch.isascii():
                return True  # `_unfoldable`: case-folded look-ups are unsound there
            if not lowered:
                return False
            patch = patch.lower()
            return any(option in patch for option in lowered)

        return may

    def encoded(self, index: int) -> bytes:
        """Patch `index`'s added text, encoded (b"" when it adds nothing)."""
        data = self._encoded.get(index)
        if data is None:
            text = _added_text(self.patches[index], may_break=self.may_break)
            data = self._encoded[index] = encode(text)
        return data


_UNSEARCHED: object = object()


class AddedIndex:
    """`AddedScanner.scan`'s hits, found lazily.

    A big PR's patterns hit tens of thousands of (pattern, file) pairs, but a condition
    shows at most `limit` of them as evidence (match.MAX_REASONS): only that many hits
    in its files are searched for, in file order, and each search is kept for the next
    condition asking about the same pattern. The answers are the first hits of the full
    scan. The byte budget is checked up front, from the candidates alone: when the
    full scan would have stayed within it, searching less cannot change any answer;
    when it would not have, the full scan runs as before and gives its partial result.
    """

    def __init__(
        self,
        scanner: AddedScanner,
        patches: Sequence[tuple[str, str]],
        *,
        bound_first: bool = True,
    ) -> None:
        self._scanner = scanner
        self._eager: dict[int, list[tuple[str, str]]] | None = None
        self.complete = True
        if not scanner.patterns:
            self._eager = {}
            return
        # Listing every pattern's candidates up front costs the added text of every
        # patch and a `find` per literal per text (~30 ms on a 3,000-file PR), only to
        # decide the budget, while a question stops at its 30th hit. A bound from the
        # patches decides it first: when it fits, a patch is asked whether it may be a
        # candidate, and its added text made, only when a question reaches it.
        self._patches: _PatchTexts | None = None
        if bound_first and scanner._patch_presence:
            texts = _PatchTexts(patches, scanner._needles)
            may = sum(weight for weight, literals in zip(scanner.weights, scanner.literals,
                                                         strict=True)
                      if texts.may_occur(literals))
            if texts.size * may <= scanner.budget:
                self._patches = texts
                self._may_match = [texts.may_match(lit) for lit in scanner.literals]
                self._may_occur = [texts.may_occur(lit) for lit in scanner.literals]
                self._by_file: list[list[object]] = [
                    [_UNSEARCHED] * len(texts.names) for _ in scanner.patterns
                ]
                return
        prepared = scanner._prepare(patches)
        self._files = prepared.files
        self._encoded = prepared.encoded
        self._candidates = [prepared.candidates(lit) for lit in scanner.literals]
        if prepared.cost(self._candidates, scanner.weights) > scanner.budget:
            scan = scanner._scan(prepared)
            self._eager, self.complete = scan.hits, scan.complete
            return
        self._results: list[list[object]] = [[_UNSEARCHED] * len(c) for c in self._candidates]

    def first_hits(
        self, pattern_id: int, allowed: AbstractSet[str] | None, limit: int
    ) -> tuple[list[tuple[str, str]], bool]:
        """The first `limit` hits (file, phrase) in files of `allowed` (None: any file),
        in file order, and whether the pattern hits any file at all."""
        if self._eager is not None:
            hits = self._eager.get(pattern_id, [])
            inside = hits if allowed is None else [hit for hit in hits if hit[0] in allowed]
            return inside[:limit], bool(hits)
        if self._patches is not None:
            return self._first_hits_by_file(self._patches, pattern_id, allowed, limit)
        files = self._files
        candidates = self._candidates[pattern_id]
        in_scope = (self._result(pattern_id, slot)
                    for slot, (index, _) in enumerate(candidates)
                    if allowed is None or files[index][0] in allowed)
        return _first_and_any(
            in_scope, lambda: (self._result(pattern_id, slot) for slot in range(len(candidates))),
            limit, scoped=allowed is not None)

    def _first_hits_by_file(
        self,
        texts: _PatchTexts,
        pattern_id: int,
        allowed: AbstractSet[str] | None,
        limit: int,
    ) -> tuple[list[tuple[str, str]], bool]:
        """`first_hits` asking each patch in file order (the candidates are in file order)."""
        if not self._may_occur[pattern_id]:
            return [], False  # no candidate at all: most patterns on most PRs
        everything = range(len(texts.names))
        if allowed is None:
            order: Iterable[int] = everything
        else:
            order = compress(everything, map(allowed.__contains__, texts.names))
        return _first_and_any(
            (self._result_by_file(texts, pattern_id, index) for index in order),
            lambda: (self._result_by_file(texts, pattern_id, i) for i in everything),
            limit, scoped=allowed is not None)

    def _result_by_file(
        self, texts: _PatchTexts, pattern_id: int, index: int
    ) -> tuple[str, str] | None:
        results = self._by_file[pattern_id]
        known = results[index]
        if known is _UNSEARCHED:
            known = None
            data = texts.encoded(index) if self._may_match[pattern_id](index) else None
            if data:  # a patch adding nothing is no file of the scan
                # From 0: a candidate's start is only where no match can begin before.
                span = self._scanner._regexes[pattern_id].search_bytes(data, 0)
                if span is not None:
                    known = (texts.names[index], _phrase(data, span))
            results[index] = known
        return known  # type: ignore[return-value]

    def _result(self, pattern_id: int, slot: int) -> tuple[str, str] | None:
        results = self._results[pattern_id]
        known = results[slot]
        if known is _UNSEARCHED:
            index, at = self._candidates[pattern_id][slot]
            data = self._encoded[index]
            span = self._scanner._regexes[pattern_id].search_bytes(data, at)
            known = None if span is None else (self._files[index][0], _phrase(data, span))
            results[slot] = known
        return known  # type: ignore[return-value]


def _always(index: int) -> bool:
    return True


_ALWAYS: Callable[[int], bool] = _always


def _phrase(data: bytes, span: tuple[int, int]) -> str:
    found = data[span[0] : span[1]].decode("utf-8", "replace").strip()
    return found or _line_at(data, span[0])


def _line_at(data: bytes, index: int) -> str:
    start = data.rfind(b"\n", 0, index) + 1
    end = data.find(b"\n", index)
    line = data[start : end if end != -1 else len(data)]
    return line.decode("utf-8", "replace").strip()


def _first_and_any(
    in_scope: Iterable[tuple[str, str] | None],
    everywhere: Callable[[], Iterable[tuple[str, str] | None]],
    limit: int,
    *,
    scoped: bool,
) -> tuple[list[tuple[str, str]], bool]:
    """The first `limit` hits among `in_scope` (asked lazily, in file order), and whether
    the pattern hits any file: known from those unless a scope found none, when
    `everywhere` is asked."""
    found: list[tuple[str, str]] = []
    for hit in in_scope:
        if hit is not None:
            found.append(hit)
            if len(found) >= limit:
                break
    if found or not scoped:
        return found, bool(found)
    return found, any(hit is not None for hit in everywhere())
