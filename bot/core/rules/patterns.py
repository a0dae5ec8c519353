"""Rule patterns run on RE2: linear time, never across a line break, the GIL released.

Every regex a rule file or the repository override supplies (`added`, `title`, `body`,
`base`, and the patterns of risks.yaml) meets untrusted text: patches, PR bodies, titles.
Python's `re` backtracks (`^(a|aa)+$` on 40 characters took seconds) and holds the GIL
for the whole search, so one PR could stall the webhook acks of the process
(issue 8). RE2 (google-re2) runs in time linear in the text, whatever the pattern, and
releases the GIL while it matches. `never_nl` makes a match that would contain a line
break impossible, so `^\\s*x` cannot walk from one blank line into the next: each
pattern is, in effect, applied to one line at a time.

RE2 has no lookaround and no backreferences; a pattern using them is rejected at load
with its file and line, which is the point: those are the constructs that need
backtracking.
"""

from __future__ import annotations

import re
from typing import Any

import re2  # type: ignore[import-untyped]

# Long enough for an alternation of a few dozen identifiers; longer is a mistake.
MAX_PATTERN_CHARS = 2000
# The most of one text (a title, a body, a branch name) a pattern looks at. GitHub caps a
# PR body at 65,536 characters (at most 4 bytes each); a payload may claim more.
MAX_TEXT_BYTES = 256 * 1024
# RE2's compiled program, in instructions. A search that outgrows RE2's DFA cache falls
# back to its NFA, which costs about 0.7 ns per instruction per byte: counted repeats
# of a wide class (`a.{0,400}b.{0,400}c`: 7,207) turn that into microseconds a byte. The
# bundled patterns need at most ~260; past this cap a pattern is refused at load.
MAX_PROGRAM_SIZE = 10_000
# A scan charges each byte it searches `cost_weight` times: 1 below twice this many
# instructions (every bundled pattern), then in proportion, so one budget of bytes
# bounds the time of every pattern alike, within 2x (issue 32, item 2).
PROGRAM_COST_UNIT = 256
# RE2's memory for one compiled pattern (its DFA cache included); it refuses to compile
# a pattern that needs more, which bounds nested counted repeats.
_MAX_MEM = 8 << 20


_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED


def _options(ignore_case: bool) -> Any:
    options = re2.Options()
    options.never_nl = True  # no match ever contains "\n": one line at a time
    options.case_sensitive = not ignore_case
    options.log_errors = False  # a bad override pattern is reported to its author, not logged
    options.max_mem = _MAX_MEM
    return options


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why, for a `file:line:` report."""


def _compile(source: str, *, ignore_case: bool, multiline: bool) -> Any:
    if len(source) > MAX_PATTERN_CHARS:
        raise PatternError(f"longer than {MAX_PATTERN_CHARS} characters")
    text = f"(?m){source}" if multiline else source
    try:
        compiled = re2.compile(text.encode("utf-8", "surrogatepass"), _options(ignore_case))
    except re2.error as exc:
        raise PatternError(_explain(source, exc)) from None
    if compiled.programsize > MAX_PROGRAM_SIZE:
        raise PatternError(
            f"compiles to {compiled.programsize:,} RE2 instructions (at most "
            f"{MAX_PROGRAM_SIZE:,}): narrow its counted repeats, e.g. `.{{0,400}}`"
        )
    return compiled


def cost_weight(program_size: int) -> int:
    """How many bytes of a scan's budget one searched byte costs (PROGRAM_COST_UNIT)."""
    return max(1, program_size // PROGRAM_COST_UNIT)


def _explain(source: str, exc: Exception) -> str:
    try:
        re.compile(source)
    except re.error as plain:  # not a regex at all: Python's message is the clearest
        return str(plain)
    reason = exc.args[0] if exc.args else exc
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    return (
        f"not supported by RE2 ({reason}); rule patterns run in linear time, so "
        "lookaround and backreferences are not available"
    )


def pattern_problem(source: str) -> str | None:
    """Why `source` cannot be a rule pattern, or None if it can."""
    try:
        _compile(source, ignore_case=False, multiline=False)
    except PatternError as exc:
        return str(exc)
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encode(text: str) -> bytes:
    # Lone surrogates (possible in JSON) become U+FFFD rather than an error. Not '?': the
    # literal prefilter reads the str, and a '?' made here would match `\?\?\?` in the
    # bytes where the str holds none (found by the prefilter's property test).
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


class LinePattern:
    """One compiled rule pattern. `search` on a str, `search_bytes` on pre-encoded text."""

    __slots__ = ("_match", "_regex", "cost_weight", "ignore_case", "multiline", "source")

    def __init__(self, source: str, *, ignore_case: bool = False, multiline: bool = False):
        self.source = source
        self.ignore_case = ignore_case
        self.multiline = multiline
        self._regex = _compile(source, ignore_case=ignore_case, multiline=multiline)
        self.cost_weight = cost_weight(self._regex.programsize)
        # The compiled RE2 object's own Match: the public `search` wraps it in a generator
        # and a match object, which cost 4x the match itself on a big PR's ~30,000 short
        # searches (bench/bench_match.py). Its contract is pinned with the package version
        # and held by tests/core/rules/test_rules_literals.py and test_rule_patterns.py.
        self._match = self._regex._regexp.Match

    def __repr__(self) -> str:
        return f"LinePattern({self.source!r})"

    def __reduce__(self) -> tuple[Any, tuple[str, bool, bool]]:
        # RE2 objects do not pickle; a cached rule set (bot/rulebook/files.py) recompiles.
        return _line_pattern, (self.source, self.ignore_case, self.multiline)

    def search(self, text: str) -> str | None:
        """The first match in the first MAX_TEXT_BYTES of `text`, or None."""
        data = encode(text)[:MAX_TEXT_BYTES]
        span = self.search_bytes(data)
        return None if span is None else data[span[0] : span[1]].decode("utf-8", "replace")

    def search_bytes(self, data: bytes, start: int = 0) -> tuple[int, int] | None:
        """(start, end) byte offsets of the first match at or after `start`, or None.
        Looks behind `start` for `^` and `\\b`, as `re`'s `search(text, pos)` does."""
        span: tuple[int, int] = self._match(_UNANCHORED, data, start, len(data))[0]
        return None if span[0] < 0 else span


def _line_pattern(source: str, ignore_case: bool, multiline: bool) -> LinePattern:
    return LinePattern(source, ignore_case=ignore_case, multiline=multiline)
