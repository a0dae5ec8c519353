"""parse_body on real vLLM PR bodies, on heading variants, and on hostile input."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.reading.body import parse_body

CASES_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "cases" / "vllm_prs.json"
CASES: dict[int, dict[str, Any]] = {c["number"]: c for c in json.loads(CASES_FILE.read_text())}

# What a reviewer concludes from each real body: which sections exist, whether the
# plan/result say anything, which "not run" admissions it makes, whether it shows
# accuracy/benchmark results.
REAL = [
    # (number, sections, test_plan_empty, test_result_empty, not_run, has_eval)
    (53275, set(), True, True, (), False),  # no body at all
    (50752, {"purpose"}, True, True, (), False),
    (45525, {"purpose", "test_plan"}, False, True, (), False),  # a command, no outcome
    (46280, {"purpose", "test_plan"}, False, True, (), False),
    (34031, {"purpose", "test_plan", "test_result"}, False, True, ("TBD",), False),
    (
        50758,
        {"preamble", "not duplicating existing prs", "test_plan", "evaluation"},
        False,
        False,  # "## Tests" holds both commands and outcomes ("passed")
        ("requires CUDA hardware/CI",),
        False,
    ),
    (47433, {"purpose", "test_plan", "test_result"}, True, True, (), False),  # bare template
    (28934, {"purpose", "evaluation"}, True, True, (), True),  # lm_eval gsm8k table
    (23958, {"purpose", "test_plan", "test_result"}, False, False, (), False),
    (45033, {"purpose", "what changed", "selection & gating"}, True, True, (), False),
    (
        55857,
        {"preamble", "purpose", "test_plan", "test_result"},
        False,
        True,
        ("To be confirmed by CI",),
        False,
    ),
    (
        51753,
        {"purpose", "duplicate-work check", "test_plan", "test_result"},
        False,
        False,
        (),
        False,
    ),
    (
        51215,
        {"purpose", "modifications", "test_plan", "additional context"},
        True,
        True,
        ("Not run",),
        False,
    ),
    (33942, {"preamble"}, True, True, (), False),
    (34266, {"preamble", "purpose", "test_plan", "test_result"}, True, True, (), False),
]


@pytest.mark.parametrize(
    ("number", "sections", "plan_empty", "result_empty", "not_run", "has_eval"), REAL
)
def test_real_bodies_read_like_a_reviewer(
    number: int,
    sections: set[str],
    plan_empty: bool,
    result_empty: bool,
    not_run: tuple[str, ...],
    has_eval: bool,
) -> None:
    body = parse_body(CASES[number]["body"])
    assert set(body.sections) == sections
    assert body.test_plan_empty is plan_empty
    assert body.test_result_empty is result_empty
    assert body.not_run == not_run
    assert bool(body.eval_evidence) is has_eval


def test_real_lm_eval_table_is_evidence_but_the_command_is_not() -> None:
    body = parse_body(CASES[28934]["body"])
    assert any(line.startswith("|gsm8k|") and "0.9014" in line for line in body.eval_evidence)
    assert any("|Tasks|Version|" in line for line in body.eval_evidence)
    assert not any(line.startswith("lm_eval") for line in body.eval_evidence)


def test_real_template_checklist_is_dropped() -> None:
    body = parse_body(CASES[47433]["body"])
    assert "Essential Elements" not in body.text
    assert body.sections == {"purpose": "", "test_plan": "", "test_result": ""}


def test_real_bench_command_is_a_plan_not_evidence() -> None:
    body = parse_body(CASES[23958]["body"])
    assert body.sections["test_result"] == "Functional"
    assert body.eval_evidence == ()


def test_model_evaluation_not_yet_run() -> None:
    body = parse_body(
        "## Purpose\nFix the fusion pass.\n\n## Test Plan\npytest tests/compile -k fusion\n\n"
        "## Test Result\n12 passed\n\n## Model evaluation\n\n"
        "Not yet run — needs a GPU run before merge.\n\n## Duplicate-work check\nNone open.\n"
    )
    assert body.not_run == ("Not yet run", "needs a GPU run")
    assert body.eval_evidence == ()
    assert body.sections["evaluation"] == "Not yet run — needs a GPU run before merge."
    assert body.sections["duplicate-work check"] == "None open."
    assert (body.test_plan_empty, body.test_result_empty) == (False, False)


def test_cdna_box_admission() -> None:
    body = parse_body("## Testing\nBuilt locally; runtime verification needs a CDNA box.")
    assert body.not_run == ("runtime verification needs a CDNA box",)


@pytest.mark.parametrize(
    "heading",
    [
        "## Test Plan",
        "## Testing",
        "## Tests",
        "## Validation",
        "## How was this tested?",
        "### Test plan",
        "# TEST PLAN #",
        "## 1. Test Plan",
        "## 🧪 Test Plan",
        "Test plan",
        "Test plan:",
        "**Test Plan**",
        "**Test Plan:**",
        "__Testing__",
    ],
)
def test_test_plan_heading_variants(heading: str) -> None:
    body = parse_body(f"## Purpose\nWhy.\n\n{heading}\npytest tests/x.py\n")
    assert body.sections["test_plan"] == "pytest tests/x.py"
    assert body.sections["purpose"] == "Why."
    assert body.test_plan_empty is False


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("## Summary", "purpose"),
        ("## Motivation", "purpose"),
        ("## Description", "purpose"),
        ("## Test Results", "test_result"),
        ("## Results", "test_result"),
        ("**Test Result**", "test_result"),
        ("## Model evaluation", "evaluation"),
        ("## Accuracy", "evaluation"),
        ("## Accuracy test", "evaluation"),
        ("## Benchmarks", "evaluation"),
        ("## Evaluation", "evaluation"),
        ("## Duplicate-work check", "duplicate-work check"),
    ],
)
def test_section_kinds(heading: str, kind: str) -> None:
    assert parse_body(f"{heading}\ncontent here\n").sections == {kind: "content here"}


def test_same_line_label_content() -> None:
    body = parse_body("Test plan: pytest tests/a.py\nTest result: 2 passed\n")
    assert body.sections == {"test_plan": "pytest tests/a.py", "test_result": "2 passed"}
    assert body.test_result_empty is False


def test_subheading_stays_inside_its_section() -> None:
    body = parse_body("## Test Plan\n### Unit tests\npytest a\n### E2E\npytest b\n## Purpose\nx")
    assert "pytest a" in body.sections["test_plan"]
    assert "pytest b" in body.sections["test_plan"]


def test_prose_starting_with_a_section_word_is_not_a_heading() -> None:
    body = parse_body("## Purpose\nx\nTests pass locally on my box.\nResults: see below\n")
    assert set(body.sections) == {"purpose", "test_result"}
    assert "Tests pass locally" in body.sections["purpose"]
    assert body.sections["test_result"] == "see below"


def test_list_items_are_not_headings() -> None:
    body = parse_body("## Purpose\n- Tests: added two\n- Summary: none\n")
    assert set(body.sections) == {"purpose"}


def test_html_comment_hides_a_heading() -> None:
    body = parse_body("## Purpose\nx\n<!-- ## Test Plan\npytest hidden -->\n## Test Result\nok")
    assert "test_plan" not in body.sections
    assert "hidden" not in body.text
    assert body.sections["test_result"] == "ok"


def test_unterminated_comment_hides_the_rest() -> None:
    body = parse_body("## Purpose\nvisible\n<!-- ## Test Result\n3 passed")
    assert body.sections == {"purpose": "visible"}
    assert body.test_result_empty is True


def test_template_checklist_is_ignored() -> None:
    body = parse_body(
        "## Purpose\nFix.\n\n---\n<details>\n<summary> Essential Elements of an Effective PR "
        "Description Checklist </summary>\n\n- [ ] The test plan.\n- [ ] Not run yet\n</details>\n"
        "<details><summary>Logs</summary>\nkept\n</details>"
    )
    assert "Essential Elements" not in body.text
    assert "kept" in body.text
    assert body.not_run == ()
    assert not body.text.rstrip().endswith("---")


def test_code_fence_fake_heading_is_content() -> None:
    body = parse_body(
        "## Test Plan\n```\n## Test Result\nTBD\n```\n````markdown\n```\n## Purpose\n```\n````\n"
    )
    assert set(body.sections) == {"test_plan"}
    assert "## Test Result" in body.sections["test_plan"]
    assert body.not_run == ()  # "TBD" inside a fence is log text, not an admission


def test_unclosed_fence_runs_to_the_end() -> None:
    body = parse_body("## Test Plan\npytest\n```\n## Test Result\nTBD")
    assert set(body.sections) == {"test_plan"}


def test_crlf_equals_lf() -> None:
    text = "## Purpose\nx\n\n## Test Plan\npytest\n\n## Test Result\nTBD\n"
    crlf = parse_body(text.replace("\n", "\r\n"))
    lf = parse_body(text)
    assert crlf == lf
    assert crlf.not_run == ("TBD",)


@pytest.mark.parametrize("raw", [None, "", "   \n"])
def test_empty_bodies(raw: str | None) -> None:
    body = parse_body(raw)
    assert body.test_plan_empty
    assert body.test_result_empty
    assert body.not_run == body.eval_evidence == body.perf_claims == body.perf_numbers == ()


@pytest.mark.parametrize(
    ("result", "empty"),
    [
        ("", True),
        ("TBD", True),
        ("N/A", True),
        ("To be confirmed by CI.", True),
        ("will add", True),
        ("- [ ] run the e2e tests", True),
        ("Not run; documentation-only change.", True),
        ("3 passed in 1.2s", False),
        ("Functional", False),
    ],
)
def test_placeholder_results(result: str, empty: bool) -> None:
    body = parse_body(f"## Test Plan\npytest tests/a.py\n\n## Test Result\n{result}\n")
    assert body.test_result_empty is empty


def test_weak_phrases_count_only_in_test_sections() -> None:
    prose = "## Purpose\nSchedule pending requests; N/A for pooling models; not run on CPU.\n"
    assert parse_body(prose).not_run == ()
    tests = "## Test Result\nPending.\n- [ ] gsm8k on H100\n"
    assert parse_body(tests).not_run == ("Pending", "- [ ] gsm8k on H100")


def test_longer_admission_wins_over_its_substring() -> None:
    body = parse_body("## Testing\nThis has not been tested on ROCm.")
    assert body.not_run == ("has not been tested",)


def test_perf_claims_and_numbers() -> None:
    body = parse_body(
        "## Summary\nMakes decode 2x faster and reduces latency.\n\n## Benchmarks\n"
        "```\nOutput token throughput (tok/s): 1710.4\nMean TTFT (ms): 41.2\n```\n"
        "| batch | before | after |\n|---|---|---|\n| 1 | 10.2 ms | 8.1 ms |\n"
    )
    assert body.perf_claims == ("2x faster", "reduces latency")
    assert "10.2 ms" in body.perf_numbers
    assert "2x" not in body.perf_numbers  # the claim itself is not a measurement
    assert "Output token throughput (tok/s): 1710.4" in body.eval_evidence
    assert "Mean TTFT (ms): 41.2" in body.eval_evidence


def test_a_performance_section_is_read_as_its_numbers() -> None:
    body = parse_body(
        "## Purpose\nRetune the MoE config.\n\n## Performance\n\nA/B runs used the harness.\n"
        "- GPU: NVIDIA H20-3e, 143771 MiB\n\n## Accuracy\nGSM8K unchanged at 0.95\n"
    )
    assert body.perf_sections == ("- GPU: NVIDIA H20-3e, 143771 MiB",)


def test_a_performance_section_without_a_number_is_no_result() -> None:
    assert parse_body("## Performance\nIt is faster.\n").perf_sections == ()
    assert parse_body("## Performance\nTBD\n").perf_sections == ()


def test_claim_without_numbers() -> None:
    body = parse_body("## Purpose\nThis speeds things up: 30% faster prefill.")
    assert body.perf_claims == ("30% faster",)
    assert body.perf_numbers == ()


def test_hardware_throughput_line_is_evidence() -> None:
    body = parse_body("On MI300X we measured 2450 tok/s (was 2100 tok/s).")
    assert body.eval_evidence == ("On MI300X we measured 2450 tok/s (was 2100 tok/s).",)


# name: (prefix, unit, count): the body is prefix + unit * count, about a megabyte.
ADVERSARIAL = {
    "one huge heading line": ("", "#", 1_000_000),
    "comment openers": ("", "<!--", 250_000),
    "fence lines": ("", "```\n", 250_000),
    "digit run": ("", "1", 1_000_000),
    "dotted digits": ("", "1.", 500_000),
    "eval words": ("", "gsm8k " * 300 + "\n", 550),
    "bold markers": ("", "**", 500_000),
    "needs a": ("", "needs a ", 125_000),
    "test sections": ("", "## Test Plan\n" + "not " * 100 + "\n", 2400),
    "pipes": ("", "|", 1_000_000),
    "details": ("", "<details>", 110_000),
    "numbers": ("", "1234 tok/s 5% 2x H100 0.91 gsm8k\n", 30_000),
    "short lines": ("", "a\n", 500_000),
    "headings": ("", "## Test Plan\n", 80_000),
    "digit lines in many sections": ("", "## Other\n" + "1\n" * 100, 4800),
    "repeated sections": ("## Test Plan\n", "x" * 60 + "\n## Test Plan\n", 13_500),
}


def _parse_cpu_seconds(raw: str) -> float:
    """The least CPU time of three parses: the one least disturbed by other work."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        parse_body(raw)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.timing  # a ratio of CPU times still flaked once beside other workers
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_megabyte_adversarial_body_is_linear(name: str) -> None:
    prefix, unit, count = ADVERSARIAL[name]
    full = prefix + unit * count
    assert len(full) >= 990_000
    quarter = _parse_cpu_seconds(prefix + unit * (count // 4))
    whole = _parse_cpu_seconds(full)
    # Linear: 4x the input, about 4x the time; quadratic would be 16x. Both measured
    # in this run, so a loaded machine slows both (the old fixed 1 s bound flaked
    # under load). The absolute bound only catches a hang: typical is 0.1-0.3 s.
    assert whole < 8 * quarter + 0.02, (quarter, whole)
    assert whole < 5.0


MARKDOWN_BITS = st.sampled_from(
    [
        "## Test Plan", "## Test Result", "**Testing**", "Test plan:", "## Purpose", "### x",
        "```", "````", "~~~", "<!--", "-->", "<details>", "</details>", "- [ ] ", "- [x] ",
        "TBD", "not yet run", "N/A", "pending", "gsm8k 0.91", "|Tasks|Version|", "1.5x faster",
        "12 ms", "H100", "\n", "\r\n", " ", "text", "İ", "—", "#", "*", "|",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKDOWN_BITS, max_size=60).map("".join))
def test_parse_body_never_fails_and_ignores_line_endings(raw: str) -> None:
    body = parse_body(raw)
    assert parse_body(raw.replace("\r\n", "\n")) == body
    for content in body.sections.values():
        assert all(line in body.text for line in content.split("\n"))
    for phrase in (*body.not_run, *body.perf_claims, *body.perf_numbers):
        assert phrase.lower() in body.text.lower()
