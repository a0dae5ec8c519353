"""The engine's fast paths answer exactly what the plain computations answer.

The lazy added-line index (bot/core/rules/added.py AddedIndex) against the full scan;
the split-free added text and evidence subject against their plain definitions.
"""

from __future__ import annotations

import pickle
import random
import re
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.judging import risks
from bot.core.judging.risks import compile_risk_settings
from bot.core.reading import symbols
from bot.core.reading.body import PullRequestBody
from bot.core.reading.structure import lines as structure_lines
from bot.core.reading.structure import notes as structure_notes
from bot.core.reading.structure import pieces as structure_pieces
from bot.core.reading.structure import read as structure
from bot.core.reading.structure import whole as structure_whole
from bot.core.reading.structure import whole_notes as structure_whole_notes
from bot.core.render import escape
from bot.core.rules import evaluate, match
from bot.core.rules.added import (
    AddedScanner,
    _added_text,
    _added_texts,
    _PatchTexts,
    added_lines,
)
from bot.core.rules.evaluate import SUBJECT_CHARS, _short
from bot.core.rules.patterns import LinePattern, encode
from bot.core.rules.risk_settings import RiskSettings
from bot.rulebook.files import load_rules
from tests.core.rules.test_rules_literals import SCANNER, _patch, lines, pull_requests

pytestmark = pytest.mark.property


def _whole_pieces(filename: str, patch: str, budget: int) -> Iterator[structure_pieces.Hunk]:
    """The pieces of `structure_whole.readings`: what `hunks_plain` must equal."""
    for reading in structure_whole.readings(filename, patch, budget):
        if isinstance(reading, structure_whole.WholeHunk):
            yield from reading.pieces()
        else:
            yield reading


def _check_index(scanner: AddedScanner, patches: list[tuple[str, str]], rng: random.Random) -> None:
    full = scanner.scan(patches)
    # Both ways of deciding the budget: a bound first, each text asked when a question
    # reaches it (the default), and every pattern's candidates listed up front.
    indexes = [scanner.index(patches), scanner.index(patches, bound_first=False)]
    for index in indexes:
        assert index.complete == full.complete
    names = [name for name, _ in patches]
    for pattern_id in range(len(scanner.patterns)):
        hits = full.hits.get(pattern_id, [])
        for _ in range(3):
            allowed = None if rng.random() < 0.3 else {n for n in names if rng.random() < 0.5}
            limit = rng.choice([1, 2, 30])
            inside = [h for h in hits if allowed is None or h[0] in allowed]
            for index in indexes:
                want = (inside[:limit], bool(hits))
                assert index.first_hits(pattern_id, allowed, limit) == want


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pull_requests, st.randoms(use_true_random=False))
def test_lazy_hits_are_the_first_hits_of_the_full_scan(
    files: list[list[str]], rng: random.Random
) -> None:
    patches = [(f"f{i}.py", _patch(added)) for i, added in enumerate(files)]
    _check_index(SCANNER, patches, rng)


# Patches of every shape the index reads from its patches: context and removed lines
# holding the literals too, file headers, "\\ No newline" markers, other line breaks,
# patches adding nothing, repeated file names.
_LINES_AND_BREAKS = st.lists(
    st.one_of(lines, st.sampled_from(["\r", "\u2028", "\x0b", "\r\n"])), max_size=3
).map("".join)
_ANY_PATCH = st.builds(
    lambda head, marked: head + "\n".join(marker + line for marker, line in marked),
    st.sampled_from(["@@ -1,2 +1,3 @@\n", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n", ""]),
    st.lists(st.tuples(st.sampled_from(["+", "+", "-", " ", "\\", "+++ "]), _LINES_AND_BREAKS),
             max_size=6),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ANY_PATCH, min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_an_index_reading_its_patches_answers_like_the_full_scan(
    patches: list[str], rng: random.Random
) -> None:
    named = [(f"f{i % 4}.py", patch) for i, patch in enumerate(patches)]
    _check_index(SCANNER, named, rng)
    # A pattern without a literal, matching an empty line: a patch adding nothing is
    # no file of the scan, so it must hit nowhere there.
    _check_index(EMPTY_LINES, named, rng)


EMPTY_LINES = AddedScanner([r"^\s*$", r"^(?:foo|bar)?$"])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ANY_PATCH, min_size=1, max_size=6))
def test_patch_texts_hold_every_candidate_and_the_same_added_texts(patches: list[str]) -> None:
    named = [(f"f{i}.py", patch) for i, patch in enumerate(patches)]
    texts = _PatchTexts(named, SCANNER._needles)
    full = _added_texts(named)
    assert [texts.encoded(i) for i in range(len(named))] == [encode(t) for _, t in full]
    prepared = SCANNER._prepare(named)
    assert texts.size >= sum(map(len, prepared.encoded))  # the budget's bound
    kept = [i for i, (_, text) in enumerate(full) if text]  # AddedTexts' files
    for literals in SCANNER.literals:
        if literals is not None and any("\n" in o for o in literals.options):
            # _PatchTexts answers only for literals without "\n" (a scanner holding one
            # never uses it: `_patch_presence`); hypothesis found "o\nb" across lines.
            continue
        listed = {kept[i] for i, _ in prepared.candidates(literals)}
        may_match = texts.may_match(literals)
        assert listed <= {i for i in range(len(named)) if may_match(i)}
        assert texts.may_occur(literals) or not listed


def test_over_the_budget_the_index_answers_like_the_partial_scan() -> None:
    rng = random.Random(7)
    words = ["stream", "speedup x", "foo bar", "Kelvin", "cu_seqlens", "rope_scaling"]
    files = [[" ".join(rng.choice(words) for _ in range(4)) for _ in range(6)] for _ in range(60)]
    patches = [(f"f{i}.py", _patch(added)) for i, added in enumerate(files)]
    for budget in (0, 500, 5_000, 50_000, 10**9):
        scanner = AddedScanner(SCANNER.patterns, budget=budget)
        _check_index(scanner, patches, rng)
    assert not AddedScanner(SCANNER.patterns, budget=500).index(patches).complete
    assert AddedScanner(SCANNER.patterns, budget=10**9).index(patches).complete


_BITS = st.sampled_from(
    ["@@ -1 +1 @@", "\n", "+", "-", " ", "a", "+x", "\r", "\r\n", "\u2028", "\x85", "++",
     "\n+", "é", "\x0c", "+++ b/x", "--- a/x", "\x0b", "\x1c", "\x1d", "\x1e", "\u2029"]
)


_PATCHES = st.one_of(
    st.lists(_BITS, max_size=30).map("".join),
    st.lists(_BITS, max_size=30).map(lambda bits: "@@ -0,0 +1 @@\n+" + "".join(bits)),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PATCHES, max_size=4))
def test_added_texts_of_a_pr_are_each_patchs_added_text(patches: list[str]) -> None:
    # Whether a patch holds another line break is asked of all of them at once.
    named = [(f"f{i}", patch) for i, patch in enumerate(patches)]
    assert _added_texts(named) == [(name, _added_text(patch)) for name, patch in named]


@settings(max_examples=2000, deadline=None)
@given(st.one_of(
    st.lists(_BITS, max_size=30).map("".join),
    st.lists(_BITS, max_size=30).map(lambda bits: "@@ -0,0 +1 @@\n+" + "".join(bits)),
))
def test_added_text_is_the_added_lines_joined(patch: str) -> None:
    if patch.startswith("@@"):
        want = "\n".join(line[1:] for line in patch.splitlines() if line[:1] == "+")
    else:
        want = "\n".join(added_lines(patch))
    assert _added_text(patch) == want


@settings(max_examples=3000, deadline=None)
@given(st.one_of(
    st.text(alphabet=" a\t\n\xa0\u2003\x1c\x85b\u2028.", max_size=2 * SUBJECT_CHARS),
    st.text(max_size=2 * SUBJECT_CHARS),
))
def test_short_subject_is_the_collapsed_and_cut_text(text: str) -> None:
    collapsed = " ".join(text.split())
    want = collapsed if len(collapsed) <= SUBJECT_CHARS else collapsed[: SUBJECT_CHARS - 1] + "…"
    assert _short(text) == want


_PLUMBING_LINES = st.one_of(
    st.sampled_from(["", "# x", "import os", "logger.info(x)", "raise ValueError", ")", "}],",
                     "x = torch.empty(3)", "'a': 1,", "class FooError(Exception):", "pass",
                     "TORCH_CHECK(x)", "print(1)", "y = a * b", "IMPORT os", "ﬁ"]),
    st.text(max_size=12),
)


@settings(max_examples=2000, deadline=None)
@given(_PLUMBING_LINES)
def test_plumbing_union_matches_when_one_plumbing_pattern_does(line: str) -> None:
    patterns = RiskSettings().plumbing_line_patterns
    [union] = compile_risk_settings(RiskSettings()).plumbing
    any_one = any(LinePattern(p).search(line) is not None for p in patterns)
    assert (union.search(line) is not None) == any_one


# Lines a structure note is made of: conditions, raises, asserts, decorators (pytest's
# parametrize and an isolating one), keyword calls, TODOs, wrapper calls, defs; and
# near misses of each (the words alone, in other places).
_CODE = st.sampled_from([
    "if x > 0:", "    if ready and n:", "elif y:", "while True:", "    return x", "x = 1",
    "raise ValueError(x)", "    raise KeyError", "raise", "assert x", "    assert y == 2",
    "@torch.compile", "@pytest.mark.parametrize(\"n\", [1, 2, 3])", "@spawn_new_process",
    "f(a=1, b=2)", "    layer_name=name,", "g(a=1)", "# TODO(me): fix", "# FIXME", "x  # XXX",
    "allow_in_graph(fn)", "wrap(helper)", "def fn(x):", "class Helper:", "    def helper(self):",
    "async def run():", "@", "#", "(", "=", "if", "while", "raise", "assert", "", "   ",
    "verification = 1", "notify(x)", "swap_a()", "swap_b()",
])
_DIFF_LINES = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["+", "-", " "]), _CODE).map("".join),
        st.sampled_from(["@@ -1,3 +1,4 @@ def outer(x):", "@@ -5 +5 @@", "+++ b/x", "--- a/x"]),
    ),
    max_size=25,
)


@settings(max_examples=3000, deadline=None)
@given(_DIFF_LINES, st.sampled_from(["m.py", "tests/test_m.py"]))
def test_structure_notes_skip_only_questions_that_find_nothing(
    lines: list[str], filename: str
) -> None:
    patch = "@@ -1,9 +1,9 @@\n" + "\n".join(lines)
    for hunk in _whole_pieces(filename, patch, 20_000):
        assert list(structure_notes.hunk_notes(hunk)) == list(structure_notes.all_hunk_notes(hunk))


_HUNK_LINES = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["+", "-", " "]), _CODE).map("".join),
        st.sampled_from([
            "@@ -1,3 +1,4 @@ def outer(x):", "@@ -5 +5 @@", "@@@ x", "+++ b/x", "--- a/x",
            "\\ No newline at end of file", "", "+" + " " * 310 + "def far(x):",
            "+" + "y" * 296 + "def cut(", "+@" + "d" * 320, " " + " " * 297 + "@deco",
            "-\r", "+x\x0bdef y():", "+ @deco", "+classy = 1", "+undefined()",
        ]),
    ),
    max_size=30,
)


def _pieces(hunks: Iterable[structure_pieces.Hunk]) -> list[tuple[object, ...]]:
    return [(h.file, h.scope, h.removed, h.added, h.size, h.lines) for h in hunks]


@settings(max_examples=3000, deadline=None)
@given(_HUNK_LINES, st.sampled_from(["@@ -1 +1 @@\n", "@@ -1 +1 @@ class A:\n", "x\n", ""]),
       st.sampled_from([0, 1, 3, 8, 20_000]))
def test_hunks_read_from_their_text_are_the_line_by_line_ones(
    lines: list[str], head: str, budget: int
) -> None:
    patch = head + "\n".join(lines)
    fast = list(_whole_pieces("m.py", patch, budget))
    # The notes ask for decorator lines before a piece builds its (marker, code) list.
    decorators = [[(m, d.group(0)) for m, d in h.decorator_lines()] for h in fast]
    plain = list(structure_pieces.hunks_plain("m.py", patch, budget))
    assert decorators == [
        [(m, d.group(0)) for m, c in h.lines if (d := structure_lines.DECORATOR.match(c))]
        for h in plain
    ]
    assert _pieces(fast) == _pieces(plain)
    for hunk in fast:
        assert list(structure_notes.hunk_notes(hunk)) == list(structure_notes.all_hunk_notes(hunk))


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["[", "]", "(", ")", "{", "}", ",", " ", "\t", "1", "a", '"']),
                max_size=14).map("".join))
def test_case_count_is_the_character_walk(arguments: str) -> None:
    assert structure_lines._case_count(arguments) == structure_lines._case_count_plain(arguments)


_CPP_LINES = st.lists(
    st.tuples(
        st.sampled_from(["+", "-", " ", "@@ -1 +1 @@ ", "", "+++ ", "\\"]),
        st.sampled_from([
            "__global__ void k(float* x) {", "void f(int a);", "}", "  x = g(y);", "  }",
            "if (a) {", "int n;", "", "   ", "static int h(", "Foo::bar() const {",
            "#define M(x) x", "// f(x)", "template <int N> void t(int n) {", "(",
            # Calls and near misses of the may-be-a-signature search.
            "allow_in_graph(fn) 0.5", "f(x) + g(y)", "a*b(c)", "a&b(", "f (x)", "_x\t(y)",
            "x\x0bf(y)", "x\u2003f(y)", "é g(x)", "*p = f(x)", "a b", "ab(c d)", "int\n(",
            "for (i = f(x); i < n; i++) {", "for\tx(y)", "format f(x)", "if_x f(y)",
            "do\x0bf(x)", "a b(c(d) e", "do&x(int a) {", "if*p(q) {", "for* f(",
        ]),
    ).map("".join),
    max_size=25,
)


@settings(max_examples=3000, deadline=None)
@given(_CPP_LINES)
def test_cpp_symbols_skipping_idle_lines_are_the_line_by_line_ones(lines: list[str]) -> None:
    patch = "\n".join(lines)
    fast = symbols._cpp_symbols(patch).resolved()
    assert fast == symbols._cpp_symbols(patch, skip_idle=False).resolved()


@given(_CPP_LINES)
def test_the_possessive_signature_search_finds_what_backtracking_finds(lines: list[str]) -> None:
    text = "\n" + "\n".join(lines)
    backtracking = re.compile(symbols._MAY_BE_SIGNATURE.pattern.replace("*+", "*"))
    assert backtracking.pattern != symbols._MAY_BE_SIGNATURE.pattern

    def found(pattern: re.Pattern[str]) -> list[tuple[object, ...]]:
        return [(m.span(), *m.groups()) for m in
                (pattern.search(text, at) for at in range(len(text))) if m is not None]

    assert found(symbols._MAY_BE_SIGNATURE) == found(backtracking)


def test_the_structure_strategy_reaches_every_kind_of_note() -> None:
    # The differential test above means something only if its hunks yield notes.
    patches = [
        "-if x > 0:\n+if x > 1:", "+raise ValueError(x)", "-assert x\n+assert y == 2",
        "-if x:\n-    x = 1\n+assert x", "-@pytest.mark.parametrize(\"n\", [1, 2, 3])\n"
        "+@pytest.mark.parametrize(\"n\", [1, 2])",
        "+@torch.compile", "-f(a=1, b=2)\n+f(a=1)", "+x  # TODO(me): fix",
        "+def fn(x):\n+    return x\n+allow_in_graph(fn)",
        "-swap_a()\n-swap_b()\n+swap_b()\n+swap_a()",
    ]
    kinds = set()
    for body in patches:
        for hunk in _whole_pieces("m.py", "@@ -1 +1 @@\n" + body, 20_000):
            kinds |= {note.kind for note in structure_notes.hunk_notes(hunk)}
    assert kinds >= {"condition", "raise-added", "assert-changed", "assert-added",
                     "decorator-added", "kwarg-removed", "todo", "wrapped", "reordered",
                     "parametrize"}


_RULES = load_rules(Path(__file__).resolve().parents[3] / "rules")
# Pieces of the bundled globs' paths and near misses, so random names hit and miss them.
_PATH_PARTS = st.sampled_from([
    "vllm/", "csrc/", "tests/", "docs/", "model_executor/", "models/", "attention/",
    "backends/", "mla", "rocm", "aiter", "triton_", "ops.h", "torch_bindings.cpp",
    "README.md", ".md", ".py", ".cu", "setup.py", "CMakeLists.txt", "x", "/", "\n", "é",
    "quantization/", "v1/", ".buildkite/", "platforms/", "compilation/", "mkdocs.yaml",
])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(_PATH_PARTS, min_size=1, max_size=8).map("".join), max_size=20))
def test_glob_literals_skip_only_globs_that_cannot_match(names: list[str]) -> None:
    index = _RULES.path_index
    assert index.match(names) == index.match_plain(names)


def test_the_glob_strategy_matches_globs_with_literals() -> None:
    names = ["vllm/attention/backends/mla/x.py", "csrc/torch_bindings.cpp", "docs/README.md",
             "vllm/platforms/rocm.py", "setup.py"]
    hits = _RULES.path_index.match(names)
    assert {name for found in hits.values() for name in found} == set(names)
    assert any(_RULES.path_index._needles[glob_id] for glob_id in hits)


def _has_compute_plain(patch: str | None, plumbing: tuple[LinePattern, ...]) -> bool | None:
    """risks._Context.has_compute as first written: split, then look line by line."""
    if not patch:
        return None
    for line in patch.split("\n", risks._MAX_PATCH_LINES)[: risks._MAX_PATCH_LINES]:
        if not line.startswith("+") or line.startswith("+++"):
            continue
        if risks._first_match(plumbing, line[1:].strip()[:400]) is None:
            return True
    return False


_PATCH_LINES = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["+", "-", " ", "++", "+++", ""]), _PLUMBING_LINES)
        .map("".join),
        st.sampled_from(["\r", "+\r", "+ x = f(y)\u2028", "\x85+ z", "@@ -1 +1 @@"]),
    ),
    max_size=12,
)


@settings(max_examples=2000, deadline=None)
@given(_PATCH_LINES, st.sampled_from([2, 3, 5, 4000]))
def test_compute_line_search_is_the_line_by_line_one(lines: list[str], cap: int) -> None:
    compiled = compile_risk_settings(RiskSettings())
    context = risks._Context(PullRequestFacts(), PullRequestBody(), (), compiled)
    patch = "\n".join(lines)
    original = risks._MAX_PATCH_LINES
    risks._MAX_PATCH_LINES = cap  # a small cap, so patches past it are generated
    try:
        fast = context.has_compute(ChangedFile(filename="x.py", patch=patch))
        plain = _has_compute_plain(patch, compiled.plumbing)
    finally:
        risks._MAX_PATCH_LINES = original
    assert fast == plain


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(st.text(alphabet=" ab\t\n\x7f\x1b~", max_size=40), st.text(max_size=40)),
    st.one_of(st.none(), st.integers(min_value=0, max_value=45)),
)
def test_clean_line_of_printable_ascii_is_the_character_walk(text: str, limit: int | None) -> None:
    cleaned = escape._clean_chars(text)
    if limit is None:
        want = ("".join(cleaned), False)
    else:
        want = ("".join(islice(cleaned, limit)), next(cleaned, None) is not None)
    assert escape.clean_line(text, limit) == want


def _escape_code_plain(s: str, limit: int, keep: str) -> str:
    """escape_code as first written: every text walked character by character."""
    limit = max(2, limit)
    if keep == "tail":
        backwards, cut = escape.clean_line(iter(reversed(s)), limit + escape._LOOKAHEAD)
        tokens = list(reversed(list(escape._code_tokens(backwards[::-1]))))
    else:
        text, cut = escape.clean_line(iter(s), limit + escape._LOOKAHEAD)
        tokens = list(escape._code_tokens(text))
    if cut or sum(len(tok) for tok in tokens) > limit:
        kept: list[str] = []
        used = len(escape.ELLIPSIS)
        for tok in tokens:
            if used + len(tok) > limit:
                break
            kept.append(tok)
            used += len(tok)
        tokens = [*kept, escape.ELLIPSIS]
    if keep == "tail":
        tokens.reverse()
    content = "".join(tokens)
    if not content:
        return "` `"
    best = run = 0
    for ch in content:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    fence = "`" * (best + 1)
    pad = " " if content[0] == "`" or content[-1] == "`" else ""
    return f"{fence}{pad}{content}{pad}{fence}"


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(st.text(alphabet=" a`<>@\t\n\u202e/", max_size=30), st.text(max_size=30)),
    st.integers(min_value=0, max_value=25),
    st.sampled_from(["head", "tail"]),
)
def test_escape_code_is_the_character_walk(
    text: str, limit: int, keep: Literal["head", "tail"]
) -> None:
    assert escape.escape_code(text, limit, keep=keep) == _escape_code_plain(text, limit, keep)


def test_a_pickled_path_index_compiles_only_the_globs_it_is_asked_about() -> None:
    loaded = pickle.loads(pickle.dumps(_RULES.path_index))  # noqa: S301 (our own bytes)
    assert all(regex is None for regex in loaded._regexes)
    names = ["docs/README.md", "vllm/platforms/rocm.py", "csrc/torch_bindings.cpp"]
    assert loaded.match(names) == _RULES.path_index.match_plain(names)
    compiled = sum(regex is not None for regex in loaded._regexes)
    assert 0 < compiled < len(loaded._regexes)


def test_structure_reads_the_first_20000_patch_lines_and_no_more() -> None:
    # A condition change at the very end of a patch, after `filler` context lines: the
    # hunk header, the filler and the two changed lines are filler + 3 lines.
    def notes(filler: int) -> tuple[str, ...]:
        patch = "@@ -1 +1 @@\n" + " x\n" * filler + "-if a:\n+if b:"
        files = (ChangedFile(filename="m.py", patch=patch),)
        return tuple(note.kind for note in structure.read_structure(files))

    cap = structure._MAX_PATCH_LINES
    assert notes(cap - 3) == ("condition",)  # its last line is line `cap`
    assert notes(cap - 2) == ()  # the added condition is line cap + 1: not read


_RANKED_FILES = st.lists(
    st.builds(
        ChangedFile,
        filename=st.sampled_from(["a.py", "b.py", "a.cu", "z/a.py", "B.h", "c.md", "é.py"]),
        additions=st.integers(0, 3),
        deletions=st.integers(0, 2),
        patch=st.sampled_from([None, "", "@@ -1 +1 @@\n+def f():", "@@ -1 +1 @@\n-class C:",
                               "@@ -1 +1 @@\n+void g(int x) {", "@@ -1 +1 @@ def h():\n+  x"]),
    ),
    max_size=12,
)


@settings(max_examples=1000, deadline=None)
@given(_RANKED_FILES)
def test_symbols_rank_files_like_the_key_tuple_sort(files: list[ChangedFile]) -> None:
    # The definition: one sort by (-changed lines, name), stable, then each file's symbols.
    sources = (".py", ".pyi", *symbols._CPP_SUFFIXES)
    ranked = sorted(
        (f for f in files if f.patch and f.filename.endswith(sources)),
        key=lambda f: (-symbols._changed_lines(f), f.filename),
    )
    want = [
        (f.filename, name, change)
        for f in ranked
        for name, change in (
            symbols._python_symbols if f.filename.endswith(".py") else symbols._cpp_symbols
        )(f.patch or "").resolved()
    ][:5]
    got = [(s.file, s.name, s.change) for s in symbols.extract_symbols(files, limit=5)]
    assert got == want


_DIRS = ["vllm/model_executor/models", "vllm/v1/attention/backends", "csrc/attention",
         "tests/kernels", "docs/models", "vllm/compilation", ".buildkite", "vllm/lora"]
_MANY_FILES = st.lists(
    st.tuples(st.sampled_from(_DIRS), st.sampled_from(["py", "cu", "md", "yaml"]),
              st.sampled_from(["", "+allow_in_graph(fn)", "+rope_scaling = 1", "+x"])),
    min_size=25, max_size=120,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MANY_FILES)
def test_areas_and_trace_keep_the_path_reasons_they_show(
    files: list[tuple[str, str, str]],
) -> None:
    # A condition keeps MAX_REASONS path reasons; keeping all of them is the definition.
    facts = PullRequestFacts(files=tuple(
        ChangedFile(filename=f"{d}/f{i}.{ext}", additions=1,
                    patch=f"@@ -1 +1 @@\n{added}" if added else None)
        for i, (d, ext, added) in enumerate(files)
    ), title="[Kernel] attention", labels=("ready",))
    assert match.MAX_FILES_PER_AREA <= evaluate.MAX_REASONS
    kept, every = evaluate.PullRequestScan(facts, _RULES), evaluate.PullRequestScan(facts, _RULES)
    every.path_reasons = None
    for area in _RULES.areas:
        short, full = (evaluate.evaluate(area.match, scan, area.id) for scan in (kept, every))
        assert (short.ok, short.files, short.notes) == (full.ok, full.files, full.notes)
        n = len(set(full.files))
        assert match._trace(area, short, n) == match._trace(area, full, n)
        if full.ok:
            assert match._area_match(area, short, kept) == match._area_match(area, full, every)


# Lines of new code and of edits: every line a structure question reads, near misses of
# each, lines over the 300-character cap (cut inside a def, a decorator, a call, a
# TODO), blank ones, and other whitespace around wrapper calls.
_STRUCTURE_CODE = st.one_of(
    _CODE,
    st.sampled_from([
        "allow_in_graph(fn)", "torch.library.wrap(helper)", "wrap(Helper)", "assert(x)",
        "assertEqual(x)", "raise(x)", "raise ValueError", "\tallow_in_graph(fn)",
        "\x0ballow_in_graph(fn)", "\xa0wrap(fn)", "wrap(fn)\u3000", "wrap(fn) \x85", "wrap(fn)\r",
        "@pytest.mark.parametrize(\"m\", [])", "@pytest.mark.parametrize(\"k\", [(1, 2), 3])",
        "@pytest.mark.parametrize_fork", "@pytest.mark.parametrize", "@fork_new_process_for_each",
        "@ x", "@1", "x  # TODO: later", "#TODOx", "# XXX(a) b", "defaults = 1", "classy()",
        " " * 296 + "def far(x):", " " * 290 + "def far(x):", "y" * 295 + "(fn)",
        "x" * 290 + "wrap(fn)", "@" + "d" * 320, " " * 280 + "raise ValueError" + "E" * 30,
        "assert " + "z" * 300, "x # TODO " + "w" * 300, " " * 293 + "@pytest.mark.parametrize(",
        "\r", "\x0b", "é(fn)",
    ]),
)
_HEADERS = st.sampled_from(
    ["@@ -0,0 +1,4 @@", "@@ -0,0 +1 @@ def outer(x):", "@@ -1,3 +1,4 @@ class A:"]
)
_NEW_HUNKS = st.builds(
    lambda head, lines: "\n".join([head, *("+" + line for line in lines)]),
    _HEADERS, st.lists(_STRUCTURE_CODE, max_size=14),
)
# Diff lines holding a def line: read whole (a hunk without one is one piece, read as
# such). New code, and edits: removed lines, context lines (decorators among them).
_DEFINES = st.sampled_from(["def fn(x):", "    def helper(self):", "class Helper:",
                            "async def run():"])
_NEW_DEF_HUNKS = st.builds(
    lambda head, lines, at, define: "\n".join(
        [head, *("+" + line for line in [*lines[:at], define, *lines[at:]])]
    ),
    _HEADERS, st.lists(_STRUCTURE_CODE, max_size=14), st.integers(0, 14), _DEFINES,
)
_DIFF_LINE = st.tuples(st.sampled_from(["+", "+", "-", " "]), _STRUCTURE_CODE).map("".join)
_EDIT_DEF_HUNKS = st.builds(
    lambda head, lines, at, define: "\n".join([head, *lines[:at], define, *lines[at:]]),
    _HEADERS, st.lists(_DIFF_LINE, max_size=14), st.integers(0, 14),
    st.tuples(st.sampled_from(["+", " ", "-"]), _DEFINES).map("".join),
)
_EDIT_HUNKS = st.builds(
    lambda head, lines: "\n".join([head, *lines]),
    _HEADERS,
    st.lists(st.one_of(
        st.tuples(st.sampled_from(["+", "+", "-", " "]), _STRUCTURE_CODE).map("".join),
        st.sampled_from(["\\ No newline at end of file", "+++ b/x", "--- a/x", ""]),
    ), max_size=14),
)
_STRUCTURE_PATCHES = st.lists(
    st.one_of(_NEW_HUNKS, _NEW_DEF_HUNKS, _EDIT_DEF_HUNKS, _EDIT_HUNKS), max_size=4
).map("\n".join)
_STRUCTURE_FILES = st.lists(
    st.builds(
        ChangedFile,
        filename=st.sampled_from(["m.py", "tests/test_m.py", "pkg/test_x.py", "a.pyi", "k.cu"]),
        patch=st.one_of(_STRUCTURE_PATCHES, _STRUCTURE_PATCHES.map(lambda p: p + "\n")),
    ),
    max_size=5,
)


@settings(max_examples=3000, deadline=None)
@given(_STRUCTURE_FILES, st.sampled_from([0, 1, 2, 6]), st.sampled_from([20_000, 4, 12, 40]))
def test_read_structure_is_its_plain_definition(
    files: list[ChangedFile], limit: int, cap: int
) -> None:
    original = structure._MAX_PATCH_LINES
    structure._MAX_PATCH_LINES = cap  # a small budget, so patches past it are generated
    try:
        fast = structure.read_structure(files, limit)
        plain = structure._read_structure_plain(files, limit)
    finally:
        structure._MAX_PATCH_LINES = original
    assert fast == plain


@settings(max_examples=4000, deadline=None)
@given(st.one_of(_NEW_DEF_HUNKS, _EDIT_DEF_HUNKS), st.sampled_from(["m.py", "tests/test_m.py"]),
       st.integers(0, 10))
def test_a_hunk_read_whole_is_its_pieces_read_one_by_one(
    hunk: str, filename: str, below: int
) -> None:
    [reading] = structure_whole.readings(filename, hunk, 20_000)
    assert isinstance(reading, structure_whole.WholeHunk)
    plain = list(structure_pieces.hunks_plain(filename, hunk, 20_000))
    assert _pieces(reading.pieces()) == _pieces(plain)
    assert reading.cost == sum(piece.size + 1 for piece in plain)
    notes = [n for piece in plain for n in structure_notes.all_hunk_notes(piece)]
    shown = [n for n in notes if structure_lines.RANK[n.kind] < below]
    assert list(structure_whole_notes.whole_hunk_notes(reading, below)) == shown
    assert list(structure_whole_notes.whole_hunk_notes(reading)) == notes


@settings(max_examples=2000, deadline=None)
@given(_EDIT_HUNKS, st.sampled_from(["m.py", "tests/test_m.py"]), st.integers(0, 10))
def test_hunk_notes_below_a_rank_are_the_notes_ranked_before_it(
    hunk: str, filename: str, below: int
) -> None:
    for piece in _whole_pieces(filename, hunk, 20_000):
        notes = list(structure_notes.all_hunk_notes(piece))
        shown = [n for n in notes if structure_lines.RANK[n.kind] < below]
        assert list(structure_notes.hunk_notes(piece, below)) == shown


def test_the_new_code_strategy_reaches_every_added_kind_of_note() -> None:
    # The differential tests above mean something only if new code yields notes.
    body = ["# TODO: later", "@spawn_new_process", "@torch.compile",
            "@pytest.mark.parametrize(\"n\", [1, 2, 3])", "def fn(x):", "    raise ValueError(x)",
            "    assert x", "\x0ballow_in_graph(fn)"]
    hunk = "@@ -0,0 +1,8 @@\n" + "\n".join("+" + line for line in body)
    [reading] = structure_whole.readings("m.py", hunk, 20_000)
    assert isinstance(reading, structure_whole.WholeHunk)
    kinds = {note.kind for note in structure_whole_notes.whole_hunk_notes(reading)}
    # Not "parametrize" nor "assert-added": new code has no old matrix and no fallback.
    assert kinds == {"todo", "isolated", "decorator-added", "raise-added", "wrapped"}
