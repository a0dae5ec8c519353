"""Issue 8, item 2: no rule pattern can stall the process, whatever the PR or the override.

Before the fix: `rules/tokenizer.yaml`'s `(?i)^\\s*(...)` over 20,000 blank added lines
and a `tokenizers` took 15 s (quadratic: `\\s` crossed lines), an override body pattern
`^(a|aa)+$` took seconds on a few dozen characters (exponential), and both held the
GIL throughout. Rule patterns now run on RE2 (bot/core/rules/patterns.py).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.rules import match_areas
from bot.core.rules.added import AddedScanner
from bot.core.rules.evaluate import PullRequestScan
from bot.core.rules.patterns import MAX_TEXT_BYTES, LinePattern, pattern_problem
from bot.core.rules.risk_settings import RiskSettings
from bot.handlers.repo_rules import RepoRules, RulesProvider
from bot.rulebook.files import load_rules, read_rule_sources

RULES_DIR = Path(__file__).resolve().parents[3] / "rules"
RULES = load_rules(RULES_DIR)
# Each of these took seconds (or forever) under `re` on the texts below.
CATASTROPHIC = [r"^(a|aa)+$", r"(a+)+b", r"(x+x+)+y", r"^(\w+\s?)*$", r"(.*a){12}"]


def _patch(lines: list[str]) -> str:
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(f"+{line}" for line in lines)


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _override(area_match: str, extra: str = "") -> RepoRules:
    provider = RulesProvider(read_rule_sources(RULES_DIR))
    return provider.rules_from_text(
        "areas:\n"
        "  - id: hostile\n"
        "    title: Hostile\n"
        "    audience: whoever\n"
        "    criticality: low\n"
        f"    match: {area_match}\n" + extra
    )


def test_blank_added_lines_do_not_make_the_tokenizer_rule_quadratic() -> None:
    lines = [""] * 30_000 + ["tokenizersx"]
    files = (ChangedFile(filename="requirements/common.txt", additions=30_001,
                         patch=_patch(lines)),)
    pr = PullRequestFacts(title="deps", body="", files=files)
    elapsed = _timed(lambda: match_areas(pr, RULES))
    assert elapsed < 1.0, f"{elapsed:.2f}s for 30,000 blank added lines"


def test_a_pin_is_still_found_on_its_own_line() -> None:
    files = (ChangedFile(filename="requirements/common.txt", additions=3,
                         patch=_patch(["", "  ", "transformers >= 4.56"])),)
    pr = PullRequestFacts(title="Bump", body="", files=files)
    assert "tokenizer" in {area.id for area in match_areas(pr, RULES).areas}


def test_no_pattern_matches_across_a_line_break() -> None:
    scanner = AddedScanner([r"foo\sbar", r"(?s)foo.bar", r"foo[^x]bar", r"(?i)^\s*bar"])
    hits = scanner.scan([("a.py", _patch(["x foo", "bar y"]))]).hits
    assert hits == {scanner.ids[r"(?i)^\s*bar"]: [("a.py", "bar")]}
    assert LinePattern(r"foo\sbar").search("foo\nbar") is None
    assert LinePattern(r"foo\sbar").search("foo bar") == "foo bar"


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_override_patterns_run_in_linear_time(pattern: str) -> None:
    quoted = pattern.replace("'", "''")
    repo = _override(f"{{body: '{quoted}', title: '{quoted}'}}")
    assert repo.problem is None
    body = "a" * 40 + "!"  # `^(a|aa)+$` took 4.7 s on this under `re`
    hostile = "\n".join([body] * 200 + ["x" * 5000, "a" * 5000 + "!"])
    pr = PullRequestFacts(title=body, body=hostile, files=())
    elapsed = _timed(lambda: build_digest(pr, repo.rules, "en"))
    assert elapsed < 0.5, f"{pattern}: {elapsed:.2f}s"


def test_catastrophic_added_pattern_from_an_override_is_linear() -> None:
    repo = _override("{paths: ['**'], added: '^(a|aa)+$'}")
    assert repo.problem is None
    lines = ["a" * 40 + "!"] * 2000 + ["a" * 20_000 + "!"]
    pr = PullRequestFacts(files=(ChangedFile(filename="x.py", additions=2001,
                                             patch=_patch(lines)),))
    elapsed = _timed(lambda: build_digest(pr, repo.rules, "en"))
    assert elapsed < 1.0, f"{elapsed:.2f}s"


def test_catastrophic_risk_patterns_from_an_override_are_linear() -> None:
    provider = RulesProvider(read_rule_sources(RULES_DIR))
    repo = provider.rules_from_text(
        "risks:\n"
        "  backport_patterns: ['^(a|aa)+$']\n"
        "  perf_title_pattern: '(x+x+)+y'\n"
        "  release_branch_pattern: '^(a|aa)+$'\n"
    )
    assert repo.problem is None
    text = "a" * 40 + "!"
    pr = PullRequestFacts(title="x" * 40, body="\n".join([text] * 500), base_ref=text)
    elapsed = _timed(lambda: build_digest(pr, repo.rules, "en"))
    assert elapsed < 0.5, f"{elapsed:.2f}s"


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?<=x)foo", "lookaround"),
        (r"foo(?!bar)", "lookaround"),
        (r"(a)\1", "backreferences"),
        (r"([", "unterminated character set"),
        ("x" * 2001, "longer than 2000 characters"),
    ],
)
def test_patterns_re2_cannot_run_are_refused_at_load(pattern: str, reason: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None
    assert reason in problem


def test_a_lookbehind_in_risks_yaml_is_refused_at_load() -> None:
    with pytest.raises(ValueError, match="lookaround"):
        RiskSettings(backport_patterns=[r"(?<!no )backport"])


def test_a_huge_body_is_searched_only_up_to_the_cap() -> None:
    pattern = LinePattern("needle")
    assert pattern.search("x" * (MAX_TEXT_BYTES - 10) + "needle") == "needle"
    assert pattern.search("x" * MAX_TEXT_BYTES + "needle") is None


def test_the_scan_budget_stops_a_huge_diff_and_says_so() -> None:
    lines = [f"line {i} torch._dynamo" for i in range(2000)]
    patches = [(f"f{i}.py", _patch(lines)) for i in range(10)]
    scanner = AddedScanner([r"\btorch\._dynamo\b", r"zzz\d"], budget=100_000)
    scan = scanner.scan(patches)
    assert not scan.complete
    assert AddedScanner([r"zzz\d"], budget=100_000).scan(patches[:1]).complete

    files = tuple(ChangedFile(filename=f"vllm/compilation/f{i}.py", additions=2000,
                              patch=_patch(lines)) for i in range(10))
    small = replace(RULES, added_scanner=AddedScanner(RULES.added_scanner.patterns, 100_000))
    digest = build_digest(PullRequestFacts(files=files), small, "en")
    assert [note.id for note in digest.notes] == ["added-scan-partial"]
    assert "too large to scan in full" in render_digest(digest)


def test_a_costly_pattern_is_charged_by_its_program_size() -> None:
    """Issue 32, item 2: bytes bound time only if each is charged what it costs."""
    counted = LinePattern(r"a.{0,400}b.{0,400}c")
    assert counted.cost_weight == 28
    assert LinePattern(r"\btorch\._dynamo\b").cost_weight == 1
    # Every bundled pattern costs one byte a byte: the budget they run under is unchanged.
    assert set(RULES.added_scanner.weights) == {1}

    rng = random.Random(3)
    patches = [(f"f{i}.py", _patch(["".join(rng.choices("abx", k=1000)) for _ in range(10)]))
               for i in range(10)]  # ~100 kB, no "c": nothing matches
    cheap = AddedScanner([r"a\w{0,3}c"], budget=150_000)
    costly = AddedScanner([r"a.{0,400}b.{0,400}c"], budget=150_000)
    assert cheap.scan(patches).complete
    assert cheap.index(patches).complete
    assert not costly.scan(patches).complete
    assert not costly.index(patches).complete
    # Within a budget that pays for it, the costly pattern runs in full.
    assert AddedScanner([r"a.{0,400}b.{0,400}c"], budget=28 * 150_000).scan(patches).complete


def test_title_and_body_searches_run_once_each_within_their_own_budget() -> None:
    body = "a" * 60_000
    facts = PullRequestFacts(title="x", body=body)
    cheap = LinePattern("needle")
    costly = LinePattern(r"a.{0,400}b.{0,400}c")
    scan = PullRequestScan(facts, RULES)
    assert scan.search_text("body", cheap, body) is None
    left = scan._texts_left
    assert scan.search_text("body", cheap, body) is None
    assert scan._texts_left == left  # the second search of the same pair is remembered
    # Ran out: the costly search is skipped and the scan says so.
    scan._texts_left = 60_000 * costly.cost_weight - 1
    assert scan.search_text("body", costly, body) is None
    assert not scan.texts_complete


def test_matching_releases_the_interpreter_to_other_threads() -> None:
    """The intake's thread keeps running while a job matches a big, hostile text."""
    pattern = LinePattern(r"(?:a|b)*a(?:a|b){25}c")  # defeats RE2's DFA: its slowest case
    rng = random.Random(1)
    text = bytes(rng.choice(b"ab") for _ in range(1_000_000))
    gaps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        elapsed = _timed(lambda: pattern.search_bytes(text))
    finally:
        stop.set()
        ticker.join()
    assert elapsed > 0.05  # long enough that a held GIL would show
    # A held GIL stops the ticker for the whole search: one gap as long as the search,
    # and almost no ticks. A fixed 50 ms bound on the longest gap flaked on a VM whose
    # host paused it; a gap under half the search and a quarter of the ticks a free
    # thread makes (one per ~1 ms sleep) still fail the moment the GIL is held.
    assert max(gaps) < elapsed / 2, (max(gaps), elapsed)
    assert len(gaps) > elapsed / 0.001 / 4, (len(gaps), elapsed)
