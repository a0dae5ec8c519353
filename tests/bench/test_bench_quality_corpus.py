"""The blind report's logic (bench/quality_corpus.py) and the item rule (bench/corpus/items.py)
on small synthetic digests and judgement files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus.items import Item, split_items
from bench.quality_corpus import (
    JudgementError,
    by_area,
    figures,
    format_report,
    load_batches,
    load_judgements,
    parse_judgement,
    score_pr,
)

DIGEST = "\n".join(
    [
        "<!-- pr-digest v1 sha=abc verdict=read -->",
        "### 📖 Read · ~3 min",
        "Medium-criticality Frontend change, +17/−5 in 2 files",
        "",
        "**What to check**",
        "- `f`: raises `E` instead of \\`V\\`",
        "- **Frontend**: API compatibility: does a field change shape?",
        "- `x.py`: “We keep the old path.” — author",
        "- CI to run: 3 steps through its paths",
        "- Not in this PR's build: 1 optional step waits for an unblock (X)",
        "",
        "**Risk checklist**",
        "- [ ] **missing-tests** · 🟠 1 source file changed",
        "  — `vllm/x.py`",
        "",
        "**Routing**",
        "- Suggested reviewers: a, b · Labels: `frontend`",
        "",
        "<details><summary>Area checklist (1 item)</summary>",
        "",
        "- [ ] **frontend-docs** · docs updated. — Frontend",
        "</details>",
        "<details><summary>CI steps by job file</summary>",
        "",
        "Run on this PR:",
        "- `entrypoints.yaml`: Unit (H200)",
        "</details>",
        "<details><summary>Why: 1 of 19 rules fired</summary>",
        "- ✅ `frontend` · fired",
        "</details>",
        "",
        "<sub>pr-digest for `abc`</sub>",
    ]
)


def test_items_follow_the_one_rule() -> None:
    items = split_items(DIGEST)
    assert [(i.id, i.where, i.kind, i.text) for i in items] == [
        (1, "visible", "summary", "Medium-criticality Frontend change, +17/−5 in 2 files"),
        (2, "visible", "structure", "`f`: raises `E` instead of `V`"),
        (3, "visible", "area", "**Frontend**: API compatibility: does a field change shape?"),
        (4, "visible", "decision", "`x.py`: “We keep the old path.” — author"),
        (5, "visible", "ci", "CI to run: 3 steps through its paths"),
        (6, "visible", "ci", "Not in this PR's build: 1 optional step waits for an unblock (X)"),
        (7, "visible", "risk", "**missing-tests** · 🟠 1 source file changed — `vllm/x.py`"),
        (8, "visible", "routing", "Suggested reviewers: a, b · Labels: `frontend`"),
        (9, "collapsed", "area", "**frontend-docs** · docs updated. — Frontend"),
        (10, "collapsed", "ci", "Run on this PR: | `entrypoints.yaml`: Unit (H200)"),
    ]
    assert split_items("") == []


def _judgement(
    pr: int, items: list[dict[str, object]], points: list[dict[str, str]], digest: str = "d1"
) -> dict[str, object]:
    return {
        "pr": pr,
        "brief": "b",
        "digest": digest,
        "verdict_fits": True,
        "points": points,
        "items": items,
    }


def _item(
    text: str, verdict: str, where: str = "visible", specific: bool = False
) -> dict[str, object]:
    return {"text": text, "where": where, "verdict": verdict, "why": "w", "specific": specific}


ITEMS = split_items(DIGEST)
JUDGED = parse_judgement(
    _judgement(
        1,
        [
            _item("Medium-criticality Frontend change, +17/−5 in 2 files", "useful"),
            _item("`f`: raises `E` instead of `V`", "useful", specific=True),
            _item("**Frontend**: API compatibility: does a field change shape?", "noise"),
            _item("`x.py`: “We keep the old path.” — author", "useful", specific=True),
            _item("CI to run: 3 steps through its paths", "noise"),
            _item("**missing-tests** · 🟠 1 source file changed — `vllm/x.py`", "unsure"),
            # Item 7 (routing) is left unjudged: its text changed since.
            _item("Suggested reviewers: a · Labels: `frontend`", "useful"),
            _item("**frontend-docs** · docs updated. — Frontend", "noise", "collapsed"),
        ],
        [
            {"text": "p1", "made": "full", "where": "visible"},
            {"text": "p2", "made": "part", "where": "collapsed"},
            {"text": "p3", "made": "no", "where": ""},
        ],
    ),
    "pr1.yaml",
)


def test_one_pr_scores_noise_unjudged_recall_and_kinds() -> None:
    pr = score_pr("pr1", False, ["frontend"], ITEMS, "d1", JUDGED)
    assert (pr.visible, pr.visible_noise, pr.collapsed_noise) == (8, 2, 1)
    assert (pr.specific, pr.unjudged, pr.stale) == (2, 2, False)
    assert (pr.points, pr.made_any, pr.made_visible) == (3, 1.5, 1.0)
    assert pr.kinds["ci"].noise == 1
    assert pr.kinds["ci"].unjudged == 1
    assert pr.kinds["ci"].collapsed == 1
    assert pr.kinds["routing"].unjudged == 1
    assert pr.kinds["risk"].unsure == 1
    assert pr.kinds["area"].collapsed_noise == 1
    assert score_pr("pr1", False, [], ITEMS, "d2", JUDGED).stale


def test_parts_areas_and_shares() -> None:
    judged = score_pr("pr1", False, ["frontend", "docs"], ITEMS, "d1", JUDGED)
    quiet = parse_judgement(_judgement(2, [], [{"text": "p", "made": "no", "where": ""}]), "x")
    silent = score_pr("pr2", True, ["docs"], [], "d1", quiet)
    unjudged = score_pr("pr3", False, ["frontend"], [Item(1, "visible", "summary", "s")], "d", None)
    total = figures([judged, silent, unjudged]).summary()
    assert total["judged_prs"] == 2
    assert total["visible_noise_per_pr"] == 1.0  # 2 noise over 2 judged PRs
    assert total["prs_at_most_one_visible_noise"] == 1
    assert total["recall_any"] == pytest.approx(1.5 / 4, abs=0.001)
    assert total["specific_share"] == pytest.approx(2 / 8, abs=0.001)
    assert (total["unjudged_visible"], total["visible_items"]) == (3, 9)
    areas = by_area([judged, silent, unjudged])
    assert areas["docs"].judged == 2
    assert areas["frontend"].prs == 2
    assert areas["frontend"].judged == 1
    # An unjudged PR's items still count by kind, as unjudged.
    assert figures([judged, unjudged]).kinds["summary"].unjudged == 1
    report = format_report([judged, silent, unjudged])
    assert "- held out: 1/1 PRs judged · visible noise/PR 0.00" in report
    assert "- tuned: 1/2 PRs judged · visible noise/PR 2.00" in report
    assert "not judged yet (1): pr3" in report
    batched = format_report([judged, silent, unjudged], batches={"b1": frozenset({"pr2", "pr3"})})
    assert "- batch b1 (2 PRs, 1 of them held out): 1/2 PRs judged" in batched
    assert "### batch b1: by item kind" in batched


def test_batches_load_and_a_bad_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "batches.yaml"
    path.write_text("batches:\n  b1: {cases: [pr1, pr2]}\n", encoding="utf-8")
    assert load_batches(path) == {"b1": frozenset({"pr1", "pr2"})}
    path.write_text("batches:\n  b1: {cases: pr1}\n", encoding="utf-8")
    with pytest.raises(JudgementError, match="batch b1: `cases` should be a list"):
        load_batches(path)
    assert load_batches(tmp_path / "none.yaml") == {}


def test_bad_judgements_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JudgementError, match="verdict is 'maybe'"):
        parse_judgement(_judgement(1, [_item("x", "maybe")], []), "f.yaml")
    with pytest.raises(JudgementError, match="made is 'most'"):
        parse_judgement(_judgement(1, [], [{"text": "p", "made": "most"}]), "f.yaml")
    (tmp_path / "pr9.yaml").write_text("pr: [\n", encoding="utf-8")
    with pytest.raises(JudgementError, match="not YAML"):
        load_judgements(tmp_path)
