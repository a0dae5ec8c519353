"""The label view's grouping and ordering (bot/core/label_view.py): plain data in, plain out."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.core.judging import risks
from bot.core.label_view import (
    RISK_IDS,
    Summary,
    Triage,
    ViewEntry,
    build_label_view,
    page_of,
    reading_order,
    summarize,
)

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


def test_every_open_pr_is_one_row_with_its_labels_counted_once_each() -> None:
    view = build_label_view(
        [entry(1, labels=("v1",), areas=("torch.compile",)), entry(2, labels=("v1",)),
         entry(3)],
        now=NOW, recent_seconds=DAY,
    )
    assert numbers(view.listed) == [3, 2, 1]  # one row each, not one per label
    # Alphabetical (case-insensitive), with how many PRs each would list.
    assert view.label_counts == (("torch.compile", 1), ("v1", 2))
    assert view.all_labels == ("torch.compile", "v1")
    assert view.shown_open == view.total_open == 3


def test_quiet_prs_are_listed_apart_and_counted() -> None:
    view = build_label_view(
        [entry(1, "quiet", labels=("documentation",)), entry(2, "skim", labels=("ci",)),
         entry(3, "skim", labels=("documentation",))],
        now=NOW, recent_seconds=DAY,
    )
    assert numbers(view.listed) == [3, 2]
    assert numbers(view.quiet) == [1]
    assert view.counts == {"deep-read": 0, "read": 0, "skim": 2, "quiet": 1}
    # The documentation chip counts both PRs carrying the label, the quiet one too.
    assert dict(view.label_counts) == {"ci": 1, "documentation": 2}


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
    assert numbers(view.listed) == [5]
    assert numbers(view.recently_merged) == [4, 1]
    assert view.total_open == 1


def test_label_filter_keeps_its_prs_and_counts_follow_the_filter() -> None:
    view = build_label_view(
        [entry(1, "deep-read", labels=("a", "b")), entry(2, labels=("b",)),
         entry(3, "quiet", labels=("a",)), entry(4, "quiet", labels=("b",)),
         entry(5, state="closed", merged=True, closed_at=NOW - 5, labels=("a",))],
        now=NOW, recent_seconds=DAY, label="a",
    )
    assert numbers(view.listed) == [1]
    assert numbers(view.quiet) == [3]
    assert numbers(view.recently_merged) == [5]
    # Verdict counts are of label a's open PRs, not the repository's.
    assert view.counts == {"deep-read": 1, "read": 0, "skim": 0, "quiet": 1}
    # Label chips count what choosing them would list (the label filter itself aside).
    assert dict(view.label_counts) == {"a": 2, "b": 3}
    assert view.total_open == 4
    assert view.shown_open == 2


def test_verdict_filter_narrows_label_counts_but_not_verdict_counts() -> None:
    entries = [entry(1, "deep-read", labels=("a",)), entry(2, "skim", labels=("a", "b"))]
    deep = build_label_view(entries, now=NOW, recent_seconds=DAY, verdict="deep-read")
    assert numbers(deep.listed) == [1]
    assert deep.counts == {"deep-read": 1, "read": 0, "skim": 1, "quiet": 0}
    assert dict(deep.label_counts) == {"a": 1, "b": 0}
    nothing = build_label_view(entries, now=NOW, recent_seconds=DAY, label="missing")
    assert nothing.is_empty
    assert nothing.filters.narrowed
    empty = build_label_view([], now=NOW, recent_seconds=DAY)
    assert empty.is_empty
    assert not empty.filters.narrowed


def triaged(number: int, *, created: float, lines: int = 10, verdict: str = "read",
            owners: tuple[str, ...] = (), title: str = "", author: str = "alice",
            **fields: Any) -> ViewEntry:
    return ViewEntry(
        number=number, title=title or f"PR {number}", author=author,
        url=f"https://github.com/o/r/pull/{number}", pr_labels=(),
        summary=Summary(verdict=verdict, reading_minutes=5,  # type: ignore[arg-type]
                        verdict_reason="why",
                        triage=Triage(created_at=created, additions=lines, owners=owners,
                                      **fields)),
        updated_at=NOW - number,
    )


def test_sorts_by_age_size_and_verdict() -> None:
    entries = [triaged(1, created=NOW - 5 * DAY, lines=50, verdict="skim"),
               triaged(2, created=NOW - 40 * DAY, lines=5),
               triaged(3, created=NOW - DAY, lines=900, verdict="deep-read")]

    def order(sort: str) -> list[int]:
        return numbers(build_label_view(entries, now=NOW, recent_seconds=DAY,
                                        sort=sort).listed)

    assert order("oldest") == [2, 1, 3]
    assert order("newest") == [3, 1, 2]
    assert order("size") == [3, 1, 2]
    assert order("verdict") == [3, 2, 1]


def test_search_matches_title_author_and_number_and_narrows_counts() -> None:
    entries = [triaged(101, created=NOW, title="[Frontend] Stream usage", author="dave"),
               triaged(202, created=NOW, title="Fix MoE kernel", author="erin",
                       verdict="deep-read"),
               triaged(303, created=NOW, title="Docs typo", author="frontend-fan")]

    def found(query: str) -> list[int]:
        view = build_label_view(entries, now=NOW, recent_seconds=DAY, query=query)
        return sorted(numbers(view.listed))

    assert found("frontend") == [101, 303]  # title, then author
    assert found("ERIN") == [202]
    assert found("#202") == [202]
    assert found("303") == [303]
    assert found("nothing like it") == []
    view = build_label_view(entries, now=NOW, recent_seconds=DAY, query="moe")
    assert view.counts == {"deep-read": 1, "read": 0, "skim": 0, "quiet": 0}


def test_owner_keeps_the_prs_routed_or_owned_by_that_login_or_team() -> None:
    entries = [triaged(1, created=NOW, owners=("Alice", "vllm-project/ci")),
               triaged(2, created=NOW, owners=("bob",)), triaged(3, created=NOW)]

    def mine(owner: str) -> list[int]:
        return numbers(build_label_view(entries, now=NOW, recent_seconds=DAY,
                                        owner=owner).listed)

    assert mine("alice") == [1]  # logins compare case-insensitively
    assert mine("@bob") == [2]
    assert mine("vllm-project/ci") == [1]
    assert mine("carol") == []


def test_waiting_on_follows_draft_asks_reviews_and_ci() -> None:
    def whose(**fields: Any) -> str | None:
        asked = fields.pop("asked", 0)
        waiting = fields.pop("waiting_asks", asked)
        draft = fields.pop("draft", False)
        state = fields.pop("state", "open")
        base = triaged(1, created=NOW - DAY, **fields)
        return replace(base, draft=draft, state=state, summary=replace(
            base.summary, asked=asked, waiting_asks=waiting)).waiting_on

    assert whose() == "reviewer"  # nobody has looked yet
    assert whose(draft=True) == "author"
    assert whose(asked=1) == "author"
    assert whose(asked=1, waiting_asks=0) == "reviewer"  # an outsider's ask (issue 38)
    assert whose(changes_requested=True, last_author_at=NOW - DAY,
                 last_reviewer_at=NOW - 3600) == "author"
    assert whose(changes_requested=True, last_author_at=NOW - 60,
                 last_reviewer_at=NOW - 3600) == "reviewer"  # the author answered
    assert whose(ci_state="failed") == "author"
    assert whose(ci_state="running") == "ci"
    assert whose(ci_state="blocked") == "reviewer"  # a maintainer must unblock it
    assert whose(state="closed") is None
    view = build_label_view([triaged(1, created=NOW, ci_state="running"),
                             triaged(2, created=NOW)], now=NOW, recent_seconds=DAY)
    # One state per row: a reviewer's move is a first review until someone reviewed.
    assert view.waiting == {"first-review": 1, "reviewer": 0, "author": 0, "ci": 1}
    reviewed = triaged(3, created=NOW, reviewed=True)
    assert (reviewed.waiting_on, reviewed.waiting_state) == ("reviewer", "reviewer")
    first = triaged(4, created=NOW)
    assert (first.waiting_on, first.waiting_state) == ("reviewer", "first-review")
    failed = triaged(5, created=NOW, ci_state="failed")  # nobody reviewed, still the author's
    assert failed.waiting_state == "author"
    assert replace(first, draft=True).waiting_state == "author"
    assert replace(first, state="closed").waiting_state is None


def test_requested_reviewers_count_as_owners() -> None:
    entries = [replace(triaged(1, created=NOW), requested=("Alice", "vllm-project/ci")),
               triaged(2, created=NOW, owners=("bob",))]

    def mine(owner: str) -> list[int]:
        return numbers(build_label_view(entries, now=NOW, recent_seconds=DAY,
                                        owner=owner).listed)

    assert mine("alice") == [1]
    assert mine("vllm-project/ci") == [1]
    assert mine("bob") == [2]


def test_predicted_labels_are_the_areas_labels_the_pr_does_not_carry() -> None:
    row = entry(1, labels=("frontend", "v1"), areas=("frontend", "ci/build"))
    assert row.labels == ("frontend", "v1", "ci/build")
    assert row.predicted_labels == {"ci/build"}
    assert entry(2, labels=("x",)).predicted_labels == frozenset()


def test_the_legend_names_every_risk_the_checklist_raises() -> None:
    source = Path(risks.__file__).read_text(encoding="utf-8")
    raised = set(re.findall(r'_risk\(\s*"([a-z-]+)"', source))
    assert raised  # the scan still finds the calls
    assert set(RISK_IDS) == raised


def test_summary_round_trips_its_triage() -> None:
    summary = Summary(verdict="read", reading_minutes=3, verdict_reason="r",
                      triage=Triage(created_at=NOW, reviewed=True, additions=4,
                                    ci_steps=(("failed", 2),), risks=(("x", "high"),),
                                    signals=("ai-assisted",), owners=("a",)))
    assert Summary.from_json(summary.to_json()) == summary
    # A summary stored before the triage fields existed reads with empty ones.
    old = summary.to_json()
    del old["triage"]
    assert Summary.from_json(old).triage == Triage()


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


def test_pages_cut_the_groups_as_one_list_and_keep_the_counts_over_all_rows() -> None:
    view = build_label_view(
        [*(entry(n, "read", updated=NOW - n) for n in range(1, 8)),
         *(entry(n, "quiet", updated=NOW - n) for n in range(8, 11)),
         *(entry(n, state="closed", merged=True, closed_at=NOW - n) for n in range(11, 13))],
        now=NOW, recent_seconds=DAY,
    )
    first, second, third = (page_of(view, n, per_page=4) for n in (1, 2, 3))
    assert (numbers(first.listed), numbers(first.quiet), numbers(first.recently_merged)) == (
        [1, 2, 3, 4], [], [])
    assert (numbers(second.listed), numbers(second.quiet)) == ([5, 6, 7], [8])
    assert (numbers(third.quiet), numbers(third.recently_merged)) == ([9, 10], [11, 12])
    assert [p.pages for p in (first, second, third)] == [3, 3, 3]
    assert (first.previous, first.next, third.previous, third.next) == (None, 2, 2, None)
    assert third.first_row == 9
    # Past the last page: the last page; an empty queue has one (empty) page.
    assert page_of(view, 99, per_page=4) == third
    empty = page_of(build_label_view([], now=NOW, recent_seconds=DAY), 1)
    assert (empty.pages, empty.listed, empty.next) == (1, (), None)
    # The view's own counts are untouched by paging.
    assert view.shown_open == 10
    assert len(view.recently_merged) == 2


def _written_digest(lang: str, status: str) -> dict[str, Any]:
    return {
        "verdict": "read", "reading_minutes": 5, "lang": lang,
        "writer": {"status": status, "kept": [
            {"section": "title", "text": "将 YaRN 缩放因子移入 get_rope", "cites": []},
            {"section": "summary", "text": "Moves the YaRN factor into `get_rope`.",
             "cites": []},
            {"section": "points", "text": "Check `mscale`.", "cites": ["risk.numerics"]},
        ]},
    }


def test_a_row_shows_the_written_summary_and_in_chinese_its_title() -> None:
    english = summarize(_written_digest("en", "ok"))
    assert english.written == "Moves the YaRN factor into `get_rope`."
    assert english.written_title == ""  # the PR's own title is English already
    chinese = summarize(_written_digest("zh", "partial"))
    assert chinese.written_title == "将 YaRN 缩放因子移入 get_rope"
    assert Summary.from_json(chinese.to_json()) == chinese


def test_nothing_written_is_shown_unless_it_passed_verification() -> None:
    for status in ("timeout", "nothing_verified", "budget"):
        shown = summarize(_written_digest("zh", status))
        assert (shown.written, shown.written_title) == ("", "")
    assert summarize({"verdict": "read"}).written == ""
