"""The literal prefilter of `added:` patterns never changes what a plain search finds.

Differential: AddedScanner.scan (literals + start hints) against a plain RE2 search
(the engine, bot/core/rules/patterns.py) of every file's whole added text, for every `added:`
pattern of rules/*.yaml and hand-written tricky ones, on random PRs built from the
patterns' own vocabulary with case and Unicode twists (RE2 folds 'ſ'~'s', 'K'~'k'
under (?i); str.lower does not). Tricky patterns RE2 refuses (lookaround,
backreferences) are rejected at load, so they are left out of the scanner; RE2-only
syntax that `re` reads differently ([[:alpha:]], \\Q..\\E) is in.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.rules.added import AddedScanner, added_lines
from bot.core.rules.literals import required_literals
from bot.core.rules.patterns import LinePattern, encode, pattern_problem
from bot.rulebook.files import load_rules

RULES_DIR = Path(__file__).resolve().parents[3] / "rules"

TRICKY = [
    r"(?i)foo",
    r"\bfoo\b",
    r"a|b",
    r"(foo)?bar",
    r".*",
    r"x*",
    r"[ab]c",
    r"[^a]foo",
    r"\d+x speedup",
    r"torch\.compile",
    r"(?i:Foo)bar",
    r"(?-i:Foo)bar",
    r"(?i)^\s*(foo|bar)\b",
    r"(?<=x)foo",
    r"(?<!x)foo",
    r"(?<=\bfo)obar",
    r"foo(?=bar)",
    r"(?!foo)\w+bar",
    r"(f)\1o",
    r"(?i)stream",
    r"(?i)k_?is",
    r"(?i)\bskip\b",
    r"foo$",
    r"^bar",
    r"\Afoo",
    r"foo\Z",
    r"(?s)x.y",
    r"o\nb",
    r"foo|\bbar\w*",
    r"ab{2,3}cd",
    r"(?:ab|cde)fgh(?:ij|k)",
    r"(?x) f o o  # verbose",
    r"\Bfoo",
    r"(?>foo|foob)ar",
    r"x*+y",
    r"(?i)ſtream",
    r"(?i)\u212aelvin",
    r"(?i)ǅ",
    r"(x)?(?(1)foo|bar)",
    r"fo{0}bar",
    r"(?:foo){2}",
    r"\(foo\)",
    r"a.{2,5}?bar",
    r"[[:alpha:]]+ar",
    r"\Qa.b\E",
    r"\pL+ar",
    r"(?U)fo+",
    r"foo\z",
    r"(?s)o.b",
    r"(?i)^\s*(foo|bar)$",
]


def _patterns() -> list[str]:
    from_rules = list(load_rules(RULES_DIR).added_scanner.patterns)
    assert len(from_rules) > 20  # the real rule set is in the differential
    return from_rules + TRICKY


PATTERNS = [pattern for pattern in _patterns() if pattern_problem(pattern) is None]
SCANNER = AddedScanner(PATTERNS)
PLAIN = [LinePattern(pattern, multiline=True) for pattern in SCANNER.patterns]


def test_the_differential_covers_the_tricky_cases() -> None:
    refused = [pattern for pattern in TRICKY if pattern not in PATTERNS]
    assert r"(?<=x)foo" in refused  # lookbehind: rejected at load
    assert r"(f)\1o" in refused  # backreference: rejected at load
    assert len(PATTERNS) > len(TRICKY)


def _vocabulary() -> list[str]:
    words = {"foo", "bar", "speedup", "stream", "skip", "kelvin", "x", "ab", "bb", "cd", "fgh"}
    for literals in SCANNER.literals:
        for option in literals.options if literals is not None else ():
            words.update({option, option[:-1], option[1:]})
    return sorted(word for word in words if word)


VOCABULARY = _vocabulary()
ODD = ["ſ", "K", "İ", "ı", "ǅ", "ß", "\t", " ", "(", ")", ".", "_", "3", "x", "+++ ", "\\",
       "\x00", "é", "\ud800"]

tokens = st.one_of(
    st.sampled_from(VOCABULARY),
    st.sampled_from(VOCABULARY).map(str.upper),
    st.sampled_from(VOCABULARY).map(str.title),
    st.sampled_from(ODD),
    st.text(alphabet="aAbBfFoOsSkKiI_ 0123456789xſKİı", max_size=3),
)
lines = st.lists(tokens, max_size=6).map("".join)
file_texts = st.lists(lines, max_size=6)
pull_requests = st.lists(file_texts, min_size=1, max_size=6)


def _patch(added: list[str]) -> str:
    body = [f"+{line}" for line in added] + [" context foo bar", "-removed stream"]
    return "@@ -1,2 +1,9 @@\n" + "\n".join(body)


def _plain_hits(patches: list[tuple[str, str]]) -> dict[int, list[tuple[str, str]]]:
    """What scan must return, computed the obvious way."""
    hits: dict[int, list[tuple[str, str]]] = {}
    for pattern_id, regex in enumerate(PLAIN):
        for name, patch in patches:
            data = encode("\n".join(added_lines(patch)))
            span = regex.search_bytes(data) if data else None
            if span is None:
                continue
            line = data.split(b"\n")[data.count(b"\n", 0, span[0])].decode().strip()
            phrase = data[span[0] : span[1]].decode().strip()
            hits.setdefault(pattern_id, []).append((name, phrase or line))
    return hits


def _assert_same(files: list[list[str]]) -> None:
    patches = [(f"f{i}.py", _patch(added)) for i, added in enumerate(files)]
    got, want = SCANNER.scan(patches).hits, _plain_hits(patches)
    for pattern_id in set(got) | set(want):
        assert got.get(pattern_id) == want.get(pattern_id), SCANNER.patterns[pattern_id]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pull_requests)
def test_prefiltered_scan_finds_what_plain_search_finds(files: list[list[str]]) -> None:
    _assert_same(files)


@pytest.mark.parametrize("seed", range(3))
def test_prefiltered_scan_on_a_big_random_pr(seed: int) -> None:
    rng = random.Random(seed)
    pool = VOCABULARY + ODD + [w.upper() for w in VOCABULARY[:40]]
    files = [
        [" ".join(rng.choice(pool) for _ in range(rng.randint(0, 5))) for _ in range(8)]
        for _ in range(400)
    ]
    _assert_same(files)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATTERNS), st.lists(tokens, max_size=10).map("".join))
def test_every_match_holds_an_option_within_lead_of_its_start(pattern: str, text: str) -> None:
    literals = required_literals(pattern, re.MULTILINE)
    found = LinePattern(pattern, multiline=True).search_bytes(encode(text))
    if literals is None or found is None:
        return
    if not text.isascii():
        return  # such files are searched from their start (and skip case-folded look-ups)
    if literals.ignore_case:
        text = text.lower()
    places = [text.find(option) for option in literals.options]
    first = min((at for at in places if at != -1), default=None)
    assert first is not None, (pattern, literals.options)
    if literals.lead is not None:
        assert found[0] >= first - literals.lead, (pattern, literals)


def test_a_needle_across_two_files_is_no_hit() -> None:
    scanner = AddedScanner([r"o\nb", r"\bfoo\b"])
    hits = scanner.scan([("a.py", _patch(["xo"])), ("b.py", _patch(["bx", "a foo"]))]).hits
    assert hits == {scanner.ids[r"\bfoo\b"]: [("b.py", "foo")]}


@pytest.mark.parametrize(
    ("pattern", "options"),
    [
        (r"\b(foo|barbaz)\b", ("barbaz", "foo")),
        (r"(foo)?bar", ("bar",)),
        (r"\d+x speedup", ("x speedup",)),
        (r"torch\.compile", ("torch.compile",)),
        (r"a|b", ("a", "b")),
        (r"(?i)Foo|BAR", ("bar", "foo")),
        (r"Attention|AttentionBackend", ("Attention",)),
    ],
)
def test_literals_of_simple_patterns(pattern: str, options: tuple[str, ...]) -> None:
    literals = required_literals(pattern)
    assert literals is not None
    assert literals.options == options


@pytest.mark.parametrize("pattern", [r".*", r"x*", r"a|", r"(?i)ſtream", r"[^a]", r"(?!foo)"])
def test_no_literals_when_none_are_safe(pattern: str) -> None:
    assert required_literals(pattern) is None


def test_case_insensitive_anywhere_folds_the_whole_pattern() -> None:
    literals = required_literals(r"(?i:Foo)Bar")
    assert literals is not None
    assert literals.ignore_case
    assert all(option == option.lower() for option in literals.options)


def test_the_real_rules_get_literals() -> None:
    # The speed-up rests on this: every `added:` pattern in rules/ has a literal set.
    missing = [
        pattern
        for pattern in load_rules(RULES_DIR).added_scanner.patterns
        if required_literals(pattern, re.MULTILINE) is None
    ]
    assert missing == []


def test_a_lone_surrogate_makes_no_match_the_prefilter_misses() -> None:
    # Hypothesis found it: encoding made '?' of it, so `\?\?\?` matched "??\ud800" in the
    # bytes searched but not in the str the prefilter reads.
    _assert_same([["??\ud800"]])
    assert encode("a\ud800") == "a\ufffd".encode()
