"""The digest-quality report (bench/bench_quality.py) over the labelled real-PR cases."""

from __future__ import annotations

import json
from pathlib import Path

from bench.bench_quality import CASES_DIR, RULES_DIR, load_cases, measure, visible_lines
from bench.corpus.cases import CORPUS
from bot.rulebook.files import load_rules


def test_every_labelled_case_is_measured() -> None:
    expected = sum(
        len(json.loads(path.read_text(encoding="utf-8"))) for path in CASES_DIR.glob("*.json")
    )
    cases = load_cases()
    assert len(cases) == expected
    report = measure(cases, load_rules(RULES_DIR))
    assert report.cases == expected
    assert sum(report.verdicts.values()) == expected
    assert report.ask_cases == sum(1 for c in cases if c.asks)
    assert 0 < report.recall_hits <= report.recall_total
    assert report.found_right <= report.found_total
    # Every risk that fired on an asks case is classed exactly once.
    for count in report.risks.values():
        assert count.asked + count.no_ask + count.unknown <= count.fires


def test_collapsed_sections_are_not_visible() -> None:
    markdown = "\n".join(
        [
            "<!-- pr-digest v1 -->",
            "### Read",
            "- [ ] **a** · one",
            "",
            "<details><summary>Area checklist</summary>",
            "",
            "- [ ] **b** · hidden",
            "</details>",
            "tail",
        ]
    )
    assert visible_lines(markdown) == [
        "### Read",
        "- [ ] **a** · one",
        "<details><summary>Area checklist</summary>",
        "tail",
    ]


def test_cli_writes_json(tmp_path: Path) -> None:
    from bench.bench_quality import main

    out = tmp_path / "q.json"
    assert main(["--json", str(out), "--holdout", "--self-judged"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data) == {"corpus", "real", "real, held out", "all", "tune", "holdout"}
    corpus = data["corpus"]
    assert corpus["all"]["prs"] == len(list(CORPUS.glob("pr*.json")))
    assert corpus["tuned"]["prs"] + corpus["held_out"]["prs"] == corpus["all"]["prs"]
    assert data["real"]["prs"] == 25
    # The self-judged sets are frozen (issue 44): the blind corpus judges those PRs now, so
    # a digest change leaves their old verdicts unjudged there rather than failing here.
    for part in ("tuned", "held_out", "all"):
        figures = corpus[part]
        assert 0 <= figures["unjudged_visible"] <= figures["visible_items"]
    assert data["tune"]["cases"] + data["holdout"]["cases"] == data["all"]["cases"]


def test_issue_targets_hold_on_the_labelled_cases() -> None:
    # Issue 9's targets, measured by the quality report; a regression fails here first.
    summary = measure(load_cases(), load_rules(RULES_DIR)).summary()
    # Issue 9 asked 0.8 against hand labels that count title-only areas. Issue 40 opens no
    # area from a title word, label, test file or import alone: blind judges called such
    # areas misdirected on 12 tuned corpus PRs, so recall on these labels is 0.65 now.
    assert summary["area_recall"] >= 0.6
    assert summary["area_precision"] >= 0.9
    assert summary["test_results_above_low_share_on_asks"] <= 1 / 3
    assert summary["median_open_items"] <= 4
    assert summary["deep_read_share"] < 1 / 3
    # High severity only where a reviewer asked or the author admitted the gap; the one
    # exception is a csrc kernel change with a one-line description whose reviewers
    # asked for tests (gpu_eval unknown from the visible thread).
    assert len(summary["high_unjustified"]) <= 1
