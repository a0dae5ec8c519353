"""The real-patch quality bench's scoring (bench/quality_real.py) on a tiny judged file."""

from __future__ import annotations

import pytest

from bench.quality_real import (
    JudgedFileError,
    load_judged,
    load_real_cases,
    normalise,
    parse_judged,
    score,
    visible_items,
)

SHOWN_A = [
    "### 📖 Read · ~3 min",
    "Medium-criticality Frontend change",
    "**What to check**",
    "- `f`: raises `E` instead of \\`V\\`",
    "- **Frontend**: API compatibility: does a field change shape?",
    "- [ ] **missing-tests** · 🟠 1 source file changed",
    "> “A quoted   decision.” — author",
    "<details><summary>Area checklist (1 item)</summary>",
    "1. fixes \\#\u206050",
]
JUDGED = parse_judged(
    {
        "pr1": {
            "`f`: raises `E` instead of `V`": {"verdict": "useful", "why": "x", "specific": True},
            "**Frontend**: API compatibility: does a field change shape?": {
                "verdict": "noise",
                "why": "generic",
            },
            "**missing-tests** · 🟠 1 source file changed": {"verdict": "noise", "why": "y"},
        },
        "pr2": {"gone item": {"verdict": "useful", "why": "z", "specific": True}},
        "pr3": {"quiet item": {"verdict": "useful", "why": "z", "specific": True}},
    },
    "test",
)


def test_items_are_the_visible_list_and_quote_lines_normalised() -> None:
    assert visible_items(SHOWN_A) == [
        "`f`: raises `E` instead of `V`",
        "**Frontend**: API compatibility: does a field change shape?",
        "**missing-tests** · 🟠 1 source file changed",
        "“A quoted decision.” — author",
        "fixes #50",
    ]
    assert normalise("  - [x] a\tb ") == "a b"


def test_noise_unjudged_recall_and_lines() -> None:
    report = score(
        {
            "pr1": ("read", SHOWN_A),
            "pr2": ("skim", ["### skim", "- something new"]),
            "pr3": ("quiet", ["### 💤 Nothing", "- quiet item"]),
        },
        JUDGED,
    )
    summary = report.summary()
    assert report.noise == {"pr1": 2, "pr2": 0, "pr3": 0}
    assert summary["noise_max"] == 2
    assert summary["noise_mean"] == pytest.approx(2 / 3, abs=0.01)
    assert report.unjudged["pr1"] == ["“A quoted decision.” — author", "fixes #50"]
    assert report.unjudged["pr2"] == ["something new"]
    # A quiet PR posts nothing: its judged useful item is missed, and it has 0 lines.
    assert summary["specific_recall_counts"] == [1, 3]
    assert report.lines == {"pr1": len(SHOWN_A), "pr2": 2, "pr3": 0}
    assert summary["median_visible_lines"] == 2
    assert summary["max_visible_lines"] == len(SHOWN_A)


def test_a_bad_verdict_is_a_clear_error() -> None:
    with pytest.raises(JudgedFileError, match="useful\\|noise"):
        parse_judged({"pr1": {"x": {"verdict": "maybe"}}}, "f.yaml")
    with pytest.raises(JudgedFileError):
        parse_judged(["not a mapping"], "f.yaml")


def test_the_project_judged_file_covers_the_real_set() -> None:
    names = {case.name for case in load_real_cases()}
    judged = load_judged()
    assert len(names) == 25
    assert set(judged) == names
