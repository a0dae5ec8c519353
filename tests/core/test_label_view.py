"""The label view's grouping and ordering (bot/core/label_view.py): plain data in, plain out."""

from __future__ import annotations

from typing import Any

from bot.core.label_view import Summary, ViewEntry, build_label_view, reading_order, summarize

NOW = 1_800_000_000.0
DAY = 86_400.0


def entry(number: int, verdict: str = "read", *, labels: tuple[str, ...] = (),
          areas: tuple[str, ...] = (), updated: float = NOW - 100, state: str = "open",
          merged: bool = False, closed_at: float | None = None) -> ViewEntry:
    return ViewEntry(
        number=number, title=f"PR {number}", author="alice",
        url=f"https://github.com/o/r/pull/{number}", pr_labels=labels,
        summary=Summary(verdict=verdict, reading_minutes=5,  # type: ignore[arg-type]
                        verdict_reason="why", area_labels=areas),
        updated_at=updated, state=state, merged=merged, closed_at=closed_at,
    )


def numbers(entries: Any) -> list[int]:
    return [e.number for e in entries]


def test_reading_order_is_verdict_then_most_recent_then_number() -> None:
    ordered = reading_order([
        entry(1, "skim", updated=NOW - 1),
        entry(2, "deep-read", updated=NOW - 50),
        entry(3, "read", updated=NOW - 10),
        entry(4, "deep-read", updated=NOW - 5),
        entry(5, "read", updated=NOW - 10),
    ])
    assert numbers(ordered) == [4, 2, 5, 3, 1]


def test_a_pr_is_listed_under_each_of_its_own_and_its_areas_labels() -> None:
    view = build_label_view(
        [entry(1, labels=("v1",), areas=("torch.compile",)), entry(2, labels=("v1",)),
         entry(3)],
        now=NOW, recent_seconds=DAY,
    )
    groups = {g.label: numbers(g.entries) for g in view.groups}
    assert groups == {"torch.compile": [1], "v1": [2, 1], "": [3]}
    # Alphabetical (case-insensitive), the unlabeled group last.
    assert [g.label for g in view.groups] == ["torch.compile", "v1", ""]
    assert view.all_labels == ("torch.compile", "v1")


def test_quiet_prs_are_only_in_the_quiet_group() -> None:
    view = build_label_view(
        [entry(1, "quiet", labels=("documentation",)), entry(2, "skim", labels=("ci",))],
        now=NOW, recent_seconds=DAY,
    )
    assert [g.label for g in view.groups] == ["ci"]
    assert numbers(view.quiet) == [1]
    assert view.counts == {"deep-read": 0, "read": 0, "skim": 1, "quiet": 1}


def test_closed_prs_leave_and_merged_ones_stay_while_recent() -> None:
    view = build_label_view(
        [
            entry(1, state="closed", merged=True, closed_at=NOW - 3600, labels=("v1",)),
            entry(2, state="closed", merged=True, closed_at=NOW - 3 * DAY),
            entry(3, state="closed", merged=False, closed_at=NOW - 60),
            entry(4, state="closed", merged=True, closed_at=NOW - 60),
            entry(5, labels=("v1",)),
        ],
        now=NOW, recent_seconds=DAY,
    )
    assert [numbers(g.entries) for g in view.groups] == [[5]]
    assert numbers(view.recently_merged) == [4, 1]


def test_label_filter_keeps_one_group_and_its_quiet_and_merged_prs() -> None:
    view = build_label_view(
        [entry(1, labels=("a", "b")), entry(2, labels=("b",)), entry(3, "quiet", labels=("a",)),
         entry(4, "quiet", labels=("b",)),
         entry(5, state="closed", merged=True, closed_at=NOW - 5, labels=("a",))],
        now=NOW, recent_seconds=DAY, label="a",
    )
    assert [(g.label, numbers(g.entries)) for g in view.groups] == [("a", [1])]
    assert numbers(view.quiet) == [3]
    assert numbers(view.recently_merged) == [5]


def test_verdict_filter_and_empty_result() -> None:
    entries = [entry(1, "deep-read", labels=("a",)), entry(2, "skim", labels=("a",))]
    deep = build_label_view(entries, now=NOW, recent_seconds=DAY, verdict="deep-read")
    assert [numbers(g.entries) for g in deep.groups] == [[1]]
    nothing = build_label_view(entries, now=NOW, recent_seconds=DAY, label="missing")
    assert nothing.is_empty
    assert build_label_view([], now=NOW, recent_seconds=DAY).is_empty


def test_summary_takes_one_focus_question_per_area_in_turn_and_the_high_risks() -> None:
    digest = {
        "verdict": "deep-read", "reading_minutes": 9, "verdict_reason": "because",
        "areas": [
            {"id": "compile", "title": "torch.compile", "focus": ["c1", "c2", "c3"]},
            {"id": "multimodal", "title": "Multimodal", "focus": ["m1"]},
            {"id": "docs", "title": "Docs", "focus": []},
        ],
        "risks": [
            {"id": "missing-gpu-eval", "severity": "high", "text": "run lm_eval"},
            {"id": "large-diff", "severity": "medium", "text": "big"},
        ],
        "labels": ["torch.compile"],
        "reviewers": {"users": ["bob"], "teams": []},
    }
    summary = summarize(digest)
    assert summary.checks == ("c1", "m1", "c2")
    assert summary.who == ("torch.compile", "Multimodal", "Docs")
    assert summary.high_risks == (("missing-gpu-eval", "run lm_eval"),)
    assert summary.area_labels == ("torch.compile",)
    assert Summary.from_json(summary.to_json()) == summary


def test_summary_of_an_unknown_verdict_reads_as_quiet() -> None:
    summary = Summary.from_json({"verdict": "something-new", "reading_minutes": 1})
    assert summary.verdict == "quiet"


def test_summary_counts_the_asks_and_how_many_were_answered() -> None:
    digest = {
        "verdict": "read", "reading_minutes": 3, "verdict_reason": "",
        "asks": [{"kind": "tests", "status": "open"}, {"kind": "docs", "status": "answered"},
                 {"kind": "rebase", "status": "answered"}, "not an ask"],
    }
    summary = summarize(digest)
    assert (summary.asked, summary.answered) == (3, 2)
    assert Summary.from_json(summary.to_json()) == summary
    assert (summarize({"verdict": "read"}).asked, Summary.from_json({}).answered) == (0, 0)
