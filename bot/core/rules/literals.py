"""The literal strings a regex cannot match without: a cheap substring scan before `search`.

Python's `re` only scans fast for a literal *prefix*; `\\b(a|b)\\b` and `(?i)...` get
none, so on a big PR nearly all time went to searches that find nothing. Walking the
parsed pattern once at compile time yields a set of alternatives such that every match
contains at least one of them; a text holding none of them cannot match.

Soundness rules (each only ever drops information, never invents it):
- Only LITERAL nodes form strings (a class of plain characters, which is what `a|b`
  parses to, gives its characters); anything else (other classes, `.`, anchors,
  lookaround, backreference, conditional, unknown opcode) ends the current string and
  adds nothing.
- A sequence needs all its parts, so any one part's alternatives suffice: we keep the most
  selective. A branch needs one of its arms, so it yields the union, or nothing if an
  arm yields nothing. A repeat yields its body only when it must run at least once.
- IGNORECASE anywhere makes the whole pattern case-insensitive here: literals are
  lower-cased and must be compared with a lower-cased ASCII text (`re` also folds
  'ſ'~'s', 'K'~'k', 'ı'~'i', which `str.lower` does not, so non-ASCII text and
  non-ASCII literals are not prefiltered).

The engine is RE2 (bot/core/rules/patterns.py), whose syntax is nearly `re`'s: patterns are walked
with `re`'s parser, and the few RE2 constructs `re` would read differently get no literals.

`re._parser` is private (sre_parse before 3.11): a node we do not recognise adds no
literal and an unexpected error means "no literals", both of which only cost speed;
tests/core/rules/test_rules_literals.py checks the result against plain `re.search`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", sre.MAX_REPEAT)}
_GROUPS = {sre.SUBPATTERN, getattr(sre, "ATOMIC_GROUP", sre.SUBPATTERN)}


@dataclass(frozen=True)
class RequiredLiterals:
    """Every match contains one of `options` (lower-cased when `ignore_case`), starting at
    most `lead` characters after the match starts (None: no bound is known)."""

    options: tuple[str, ...]
    ignore_case: bool
    lead: int | None


# Leads beyond this buy nothing: the search might as well start at the text's beginning.
_MAX_LEAD = 4096


@dataclass(frozen=True)
class _Found:
    options: frozenset[str]
    lead: int | None

    def selectivity(self) -> tuple[int, int, bool]:
        # The shortest option bounds how rare a hit is; fewer options mean fewer scans.
        shortest = min(len(option) for option in self.options)
        return (shortest, -len(self.options), self.lead is not None)


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None or a + b > _MAX_LEAD else a + b


class _Walker:
    def __init__(self, state: Any) -> None:
        self.state = state
        self.ignore_case = False

    def width(self, op: Any, arg: Any) -> int | None:
        """The most characters one item can match, or None if unbounded (or huge)."""
        high = int(sre_parser.SubPattern(self.state, [(op, arg)]).getwidth()[1])
        return high if high <= _MAX_LEAD else None

    def sequence(self, items: Any) -> _Found | None:
        candidates: list[_Found] = []
        run: list[str] = []
        run_at: int | None = 0
        before: int | None = 0  # the most characters the items so far can match

        def end_run() -> None:
            if run:
                candidates.append(_Found(frozenset({"".join(run)}), run_at))
                run.clear()

        for op, arg in items:
            if op is sre.LITERAL:
                if not run:
                    run_at = before
                run.append(chr(arg))
                before = _plus(before, 1)
                continue
            end_run()
            found = self.node(op, arg)
            if found is not None:
                candidates.append(_Found(found.options, _plus(before, found.lead)))
            before = _plus(before, self.width(op, arg))
        end_run()
        return max(candidates, key=_Found.selectivity, default=None)

    def node(self, op: Any, arg: Any) -> _Found | None:
        if op is sre.BRANCH:
            arms = [self.sequence(arm) for arm in arg[1]]
            known = [arm for arm in arms if arm is not None]
            if len(known) < len(arms):
                return None
            leads = [arm.lead for arm in known]
            return _Found(
                frozenset().union(*(arm.options for arm in known)),
                None if None in leads else max(lead for lead in leads if lead is not None),
            )
        if op in _GROUPS:
            if op is sre.SUBPATTERN:
                _group, add_flags, _del_flags, body = arg
                if add_flags & re.IGNORECASE:
                    self.ignore_case = True
            else:
                body = arg
            return self.sequence(body)
        if op in _REPEATS:
            low, _high, body = arg
            # The first repetition starts where the repeat does.
            return self.sequence(body) if low >= 1 else None
        if op is sre.IN and arg and all(item_op is sre.LITERAL for item_op, _ in arg):
            return _Found(frozenset(chr(code) for _, code in arg), 0)
        return None


def required_literals(pattern: str, flags: int = 0) -> RequiredLiterals | None:
    """Strings one of which every match of `pattern` contains, or None if none is known."""
    if "[:" in pattern or "\\Q" in pattern:
        # RE2 syntax `re` reads differently ([[:alpha:]] is a POSIX class to RE2, a
        # class plus a literal ']' to re): a wrong literal would hide real matches.
        return None
    try:
        parsed = sre_parser.parse(pattern, flags)
        walker = _Walker(parsed.state)
        found = walker.sequence(parsed)
    except Exception:  # private API: running the regex every time is always correct
        return None
    if found is None:
        return None
    options = found.options
    ignore_case = walker.ignore_case or bool(parsed.state.flags & re.IGNORECASE)
    if ignore_case:
        if not all(option.isascii() for option in options):
            return None
        options = frozenset(option.lower() for option in options)
    # An option another option starts is redundant: the shorter one is found at the same
    # place (a prefix, not any substring, so `lead` still holds).
    kept = sorted(o for o in options if not any(o != x and o.startswith(x) for x in options))
    return RequiredLiterals(options=tuple(kept), ignore_case=ignore_case, lead=found.lead)
