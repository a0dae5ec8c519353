"""The conversation bench (bench/bench_conversation.py): threads rebuilt from the cases'
quotes, its scores on a small set it can get wrong, and its GitHub call counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.bench_conversation import (
    RULES_DIR,
    count_calls,
    format_asks,
    load_cases,
    score,
    thread_of,
)
from bot.rulebook.files import load_rules

RULES = load_rules(RULES_DIR)


def test_quotes_become_remarks_of_the_right_kind() -> None:
    thread = thread_of({
        "tests": '"Can we extend the test?", Yard1, 2024-02-27 | "let\'s also add those '
                 'dimensions to the punica test?", Yard1 (review thread on csrc/x.h:31), '
                 "2024-02-27",
        "docs": '"Can you update docs as well?", DarkLight1337 (review), 2025-04-02',
        "other": "Follow-up PR #55661 body (same author): no quote here",
    }, 3050)
    assert [(r.kind, r.author, r.body[:20]) for r in thread] == [
        ("comment", "Yard1", "Can we extend the te"),
        ("review_comment", "Yard1", "let's also add those"),
        ("review", "DarkLight1337", "Can you update docs "),
    ]
    assert thread[0].created_at is not None
    assert thread[0].created_at.year == 2024


def _write_cases(folder: Path) -> None:
    case = {
        "number": 1, "title": "[Frontend] Tidy", "author": "someone",
        "body": "## Purpose\nTidy.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n",
        "files": [{"filename": "vllm/entrypoints/openai/serving_chat.py", "status": "modified",
                   "patch": "@@ -1 +1,2 @@ def f():\n+    x = 1\n"}],
        "asks": {"tests": True, "docs": True, "gpu_eval": False, "release_gate": None,
                 "other": ["fix merge conflict"]},
        "evidence": {
            "tests": '"Could you add a unit test for this?", rev, 2025-01-01',
            "other": '"Can you fix the merge conflict?", rev, 2025-01-02 | "Please run '
                     'lm_eval on this.", rev, 2025-01-03',
        },
    }
    quiet = {"number": 2, "title": "x", "body": "", "files": [], "asks": {}, "evidence": {}}
    (folder / "reviewer_asks.json").write_text(json.dumps([case, quiet]))


def test_scores_count_shown_missed_and_unasked(tmp_path: Path) -> None:
    _write_cases(tmp_path)
    cases, missing = load_cases([tmp_path])
    assert missing == ["real_prs.json"]
    scored = score(cases, RULES)
    assert scored.cases == 1  # the quiet one has no known thread
    assert scored.named == 2
    assert scored.before_shown == 1  # missing-tests anticipated the tests ask
    assert scored.after_shown == 1  # docs was named but nobody's quote asks for it
    assert scored.misses == ["#1 docs: ['Could you add a unit test for this?']"]
    # The rebase is named under `other`; the lm_eval ask is one the case says was not made.
    assert scored.unasked == ["#1 gpu-eval: “Please run lm_eval on this.”"]
    assert scored.duplicates == []
    report = format_asks(scored, missing)
    assert "shown AFTER (with the thread): 1/2 (50%)" in report
    assert "missing case file: real_prs.json" in report


@pytest.mark.slow
async def test_call_counts_before_and_after() -> None:
    before = await count_calls(read_conversation=False)
    after = await count_calls(read_conversation=True)
    assert [c.ran for c in before] == [True, False, False, False, True, True]
    assert all(c.ran for c in after)
    # Unchanged lists cost a 304 each: a job with nothing new is charged less than read.
    lgtm = after[1]
    assert lgtm.charged < lgtm.calls
    assert lgtm.routes["GET /repos/{owner}/{repo}/pulls/{number}/reviews 304"] == 1
    # Reading the thread adds at most the two list reads to a pull_request event's job.
    assert after[4].calls - before[4].calls == 2
    assert after[4].charged == before[4].charged
