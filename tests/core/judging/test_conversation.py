"""What the conversation does to the digest, as plain data: evidence posted later by the
author or a maintainer settles the risk it answers (never adds one), asks stand in for
the digest's own items, and an ask is answered by a reply, evidence or a later commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, Conversation, PullRequestFacts, Remark
from bot.core.findings import CiPlan, CiRun, CiStepRef
from bot.core.judging.conversation import read_conversation
from bot.core.judging.risks import assess_risks
from bot.core.reading.body import parse_body
from bot.core.render.comment import render_digest, risk_level
from bot.core.render.contract import digest_json
from bot.rulebook.files import load_rules

RULES = load_rules(Path(__file__).resolve().parents[3] / "rules")
T0 = datetime(2026, 9, 1, tzinfo=UTC)
HEAD = "a" * 40
COMPILE = ChangedFile(
    filename="vllm/compilation/decorators.py", additions=30, deletions=2,
    patch="@@ -1,2 +1,3 @@ def wrap():\n+    torch.compiler.allow_in_graph(fn)\n+    y = x * 2\n")
CHAT = ChangedFile(filename="vllm/entrypoints/openai/serving_chat.py", additions=12,
                   deletions=2, patch="@@ -1,2 +1,3 @@ def create():\n+    x = 1\n")
CHAT_TEST = ChangedFile(filename="tests/entrypoints/test_chat.py", additions=20,
                        patch="@@ -0,0 +1 @@\n+def test_chat(): pass\n")
UNTESTED = ("## Purpose\nFix a graph break.\n\n## Test Plan\n\n## Test Result\n"
            "Model evaluation — Not yet run — needs a GPU run before merge\n")
DOCUMENTED = "## Purpose\nTidy.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
LM_EVAL = ("|Tasks|Version|Filter|n-shot|Metric|Value|\n"
           "|gsm8k|3|strict-match|5|exact_match|0.7801|\n")


def facts(*files: ChangedFile, body: str = UNTESTED, title: str = "[torch.compile] Fix",
          head: str = HEAD) -> PullRequestFacts:
    return PullRequestFacts(number=7, title=title, body=body, author="author", head_sha=head,
                            files=files or (COMPILE,))


def say(kind: str, author: str, body: str, minutes: int, **fields: Any) -> Remark:
    ident = 100 + minutes
    fragment = {"comment": "issuecomment-", "review": "pullrequestreview-",
                "review_comment": "discussion_r"}[kind]
    return Remark(kind=kind, id=ident, author=author, body=body,
                  created_at=T0 + timedelta(minutes=minutes),
                  url=f"https://github.com/vllm-project/vllm/pull/7#{fragment}{ident}",
                  **fields)


def digest(pr: PullRequestFacts, *remarks: Remark) -> Any:
    return build_digest(pr, RULES, "en", conversation=Conversation(remarks=remarks))


def risk_ids(d: Any) -> set[str]:
    return {r.id for r in d.risks}


def test_lm_eval_numbers_from_the_author_clear_and_a_run_only_lowers() -> None:
    assert "missing-gpu-eval" in risk_ids(digest(facts()))
    cleared = digest(facts(), say("comment", "author", LM_EVAL, 5))
    assert "missing-gpu-eval" not in risk_ids(cleared)
    assert [(e.risk, e.outcome, e.evidence) for e in cleared.later_evidence] == [
        ("missing-gpu-eval", "cleared", "|gsm8k|3|strict-match|5|exact_match|0.7801|")]
    assert cleared.verdict != digest(facts()).verdict  # no open high risk any more

    ran = digest(facts(), say("comment", "author", "Tested on H100: works, no graph break.", 5))
    (risk,) = [r for r in ran.risks if r.id == "missing-gpu-eval"]
    assert risk.severity == "low"
    assert [(e.risk, e.outcome) for e in ran.later_evidence] == [("missing-gpu-eval", "lowered")]


def test_only_the_author_and_maintainers_evidence_counts() -> None:
    outsider = digest(facts(), say("comment", "stranger", LM_EVAL, 5))
    bot = digest(facts(), say("comment", "ci[bot]", LM_EVAL, 5, author_is_bot=True,
                              maintainer=True))
    maintainer = digest(facts(), say("review", "maint", LM_EVAL, 5, maintainer=True))
    assert "missing-gpu-eval" in risk_ids(outsider)
    assert "missing-gpu-eval" in risk_ids(bot)
    assert "missing-gpu-eval" not in risk_ids(maintainer)


def test_a_remark_that_admits_a_gap_answers_nothing() -> None:
    admitted = digest(facts(), say("comment", "author", LM_EVAL + "\nThe TPU run is not yet run.",
                                   5))
    assert "missing-gpu-eval" in risk_ids(admitted)


def test_pasted_test_results_clear_missing_test_results() -> None:
    empty = facts(CHAT, body="## Purpose\nTidy.\n\n## Test Plan\npytest tests/x.py\n",
                  title="[Frontend] Tidy")
    assert "missing-test-results" in risk_ids(digest(empty))
    pasted = digest(empty, say("comment", "author", "```\n==== 12 passed in 3.1s ====\n```", 3))
    assert "missing-test-results" not in risk_ids(pasted)
    assert pasted.later_evidence[0].evidence == "12 passed in 3.1s"


def test_evidence_never_adds_a_risk() -> None:
    backport = digest(facts(), say("comment", "author", LM_EVAL + "\nCherry-pick to v0.9.1?", 5))
    assert "release-branch" not in risk_ids(backport)


def test_an_ask_replaces_the_digests_own_item_and_keeps_its_weight() -> None:
    pr = facts(CHAT, body=DOCUMENTED, title="[Frontend] Tidy")
    plain = digest(pr)
    asked = digest(pr, say("review", "reviewer", "Can you add a unit test?", 2,
                           review_state="CHANGES_REQUESTED"))
    (ask,) = asked.asks
    assert (ask.kind, ask.status, ask.risk) == ("tests", "open", "missing-tests")
    assert "missing-tests" in risk_ids(plain)
    assert "missing-tests" not in risk_ids(asked)
    assert risk_level(asked) == risk_level(plain)
    assert asked.verdict == plain.verdict
    data = digest_json(asked, render_digest(asked))
    assert [a["risk"] for a in data["asks"]] == ["missing-tests"]
    assert "missing-tests" not in [r["id"] for r in data["risks"]]


def test_an_ask_with_no_matching_item_is_still_shown() -> None:
    d = digest(facts(CHAT, CHAT_TEST, body=DOCUMENTED, title="[Frontend] Tidy"),
               say("comment", "reviewer", "Could you update the docs as well?", 2))
    assert [(a.kind, a.risk) for a in d.asks] == [("docs", "")]


def test_answers_a_reply_a_later_commit_and_evidence() -> None:
    pr = facts(CHAT, body=DOCUMENTED, title="[Frontend] Tidy")
    ask = say("review_comment", "reviewer", "Please add a test here.", 1, commit_id="b" * 40)
    # Another thread's reply does not answer; one in the same thread does.
    other = say("review_comment", "author", "Done.", 2, in_reply_to=999)
    same = say("review_comment", "author", "Done.", 3, in_reply_to=ask.id)
    assert [a.status for a in digest(pr, ask, other).asks] == ["open"]
    assert [(a.status, a.answered_by) for a in digest(pr, ask, same).asks] == [
        ("answered", "reply")]
    # A later commit answers an ask for tests once the PR changes tests.
    with_tests = facts(CHAT, CHAT_TEST, body=DOCUMENTED, title="[Frontend] Tidy")
    assert [(a.status, a.answered_by) for a in digest(with_tests, ask).asks] == [
        ("answered", "commit")]
    same_head = say("review_comment", "reviewer", "Please add a test here.", 1,
                    commit_id=HEAD)
    assert [a.status for a in digest(with_tests, same_head).asks] == ["open"]
    # Evidence posted after an ask for it answers it.
    gpu = say("comment", "reviewer", "Have you run lm_eval on this?", 1)
    answered = digest(facts(), gpu, say("comment", "author", LM_EVAL, 4))
    assert [(a.kind, a.answered_by) for a in answered.asks] == [("gpu-eval", "evidence")]
    early = digest(facts(), say("comment", "author", LM_EVAL, 0),
                   say("comment", "reviewer", "Have you run lm_eval on this?", 4))
    assert [a.status for a in early.asks] == ["open"]


def test_a_top_level_reply_must_speak_of_the_ask() -> None:
    pr = facts(CHAT, body=DOCUMENTED, title="[Frontend] Tidy")
    ask = say("comment", "reviewer", "Can you add a unit test?", 1)
    thanks = say("comment", "author", "Thanks for the review!", 2)
    promise = say("comment", "author", "Will add tests later.", 2)
    named = say("comment", "author", "@reviewer done", 2)
    assert [a.status for a in digest(pr, ask, thanks).asks] == ["open"]
    assert [a.status for a in digest(pr, ask, promise).asks] == ["open"]
    assert [a.status for a in digest(pr, ask, named).asks] == ["answered"]


def test_one_line_per_kind_open_first_and_dismissed_reviews_ask_nothing() -> None:
    pr = facts(CHAT, body=DOCUMENTED, title="[Frontend] Tidy")
    d = digest(
        pr,
        say("comment", "a", "Please rebase.", 1),
        say("comment", "author", "Rebased on main.", 2),
        say("comment", "b", "Can you rebase again? Conflicts.", 3),
        say("comment", "c", "Could you update the docs?", 4),
        say("review", "d", "Please split this into smaller PRs.", 5, review_state="DISMISSED"),
    )
    assert [(a.kind, a.by, a.status) for a in d.asks] == [
        ("docs", "c", "open"), ("rebase", "b", "open")]


def test_the_rendered_section_is_short_and_links_only_this_prs_own_comments() -> None:
    pr = facts(CHAT, body=DOCUMENTED, title="[Frontend] Tidy")
    remarks = [say("comment", f"r{i}", text, i) for i, text in enumerate((
        "Can you add a unit test?", "Could you update the docs?", "Please rebase.",
        "Could you share benchmark numbers?", "Please split this into smaller PRs.",
        "Could you share the test results?"))]
    remarks.append(Remark(kind="comment", id=1, author="x", body="Have you tested on MI300?",
                          created_at=T0, url="https://evil.example/pull/7#issuecomment-1"))
    text = render_digest(digest(pr, *remarks))
    section = text[text.index("**Since the description**"):text.index("**Where to start**")]
    visible = section.split("<details>")[0]
    assert visible.count("\n- ") == 4
    assert "<summary>3 more from the conversation</summary>" in section
    assert "evil.example" not in section
    assert "https://github.com/vllm-project/vllm/pull/7#issuecomment-100" in section


def test_a_ci_risk_is_weighed_with_the_same_ci_plan_and_never_cleared_by_a_comment() -> None:
    h200 = CiStepRef(label=":nvidia: (H200 MIG 35GB) Multimodal Processor", key="mm",
                     file=".buildkite/test_areas/models_multimodal.yaml", device="h200_35gb",
                     gpus=1, matched=("vllm/compilation",), status="not-run")
    plan = CiPlan(steps=(h200,), run=CiRun(context="buildkite/ci/pr", state="blocked",
                                           reported=1))
    pr = facts()
    areas = digest(pr).areas
    risks = assess_risks(pr, parse_body(pr.body), areas, RULES.risks, ci=plan)
    assert {"relevant-ci-not-run", "missing-gpu-eval"} <= {r.id for r in risks}
    reading = read_conversation(pr, parse_body(pr.body), areas, risks, RULES.risks,
                                Conversation(remarks=(say("comment", "author", LM_EVAL, 5),)),
                                ci=plan)
    assert "relevant-ci-not-run" in {r.id for r in reading.risks}
    assert "relevant-ci-not-run" not in {e.risk for e in reading.later}
    assert "missing-gpu-eval" in {e.risk for e in reading.later}
