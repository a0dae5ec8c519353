"""A body read against the base's own PR template: vLLM's 0.34.0 template and its
predecessor (0.31.0), from tests/fixtures/vllm_config/ (Apache-2.0, see its README)."""

from __future__ import annotations

from pathlib import Path

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.reading.body import parse_body
from bot.core.reading.template import parse_template, strip_against
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.repo_config.config import RepoConfig
from bot.core.vocabulary import Lang
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "vllm_config"
RULES = load_rules(ROOT / "rules")
NEW = (FIXTURES / "0.34.0" / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text()
OLD = (FIXTURES / "0.31.0" / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text()
AI_BOX = "AI assistance was used during the creation of this PR."


def _filled(template: str, **sections: str) -> str:
    """The template as an author fills it: text under the named headings."""
    body = template
    for heading, text in sections.items():
        body = body.replace(f"## {heading}\n", f"## {heading}\n\n{text}\n", 1)
    return body


def test_the_template_is_read_as_headings_boilerplate_and_boxes() -> None:
    template = parse_template(NEW, source=".github/PULL_REQUEST_TEMPLATE.md")
    assert template.headings == ("Overview", "Claims", "Validation", "Details")
    written = [w for _, w in template.boxes]
    assert AI_BOX in written
    assert len(written) == 6
    # The instructions are HTML comments: GitHub hides them, they are not lines to match.
    assert not any("summarize the change" in line for line in template.boilerplate)
    assert "<summary> pull request checklist </summary>" in template.boilerplate


def test_a_body_keeps_only_the_authors_words_and_the_ticked_boxes() -> None:
    template = parse_template(NEW, source="t")
    body = _filled(NEW, Overview="Fix the scheduler's preemption order.").replace(
        f"- [ ] {AI_BOX}", f"- [x] {AI_BOX}")
    text, ticked = strip_against(body, template)
    assert ticked == (AI_BOX,)
    assert "Pull Request Checklist" not in text
    assert "Design Fit" not in text
    assert "BEFORE SUBMITTING" not in text
    assert "Fix the scheduler's preemption order." in text
    parsed = parse_body(text)
    assert parsed.sections["purpose"] == "Fix the scheduler's preemption order."
    assert parsed.titles["test_plan"] == "Validation"
    assert parsed.test_plan_empty
    # The checklist's "**Testing and Validation:** ..." box is gone, so it cannot pose
    # as a test section with text in it.
    assert "Validates the change" not in parsed.text


def test_an_authors_own_checklist_line_is_kept() -> None:
    template = parse_template(NEW, source="t")
    body = _filled(NEW, Validation="- [x] Ran tests/v1/core/test_scheduler.py: 42 passed")
    text, ticked = strip_against(body, template)
    assert ticked == ()
    assert "42 passed" in text


def test_a_template_box_with_its_end_cut_is_still_the_templates() -> None:
    """A copy of a template box whose end was edited or cut is the template's line, not
    an unticked box of the author's (which reads as an admitted gap)."""
    template = parse_template(OLD, source="t")
    cut = "- [ ] The test results, such as pasting the results comparison before and after, or"
    body = f"## Test Result\nlm_eval gsm8k: 0.87 before, 0.87 after\n{cut}\n"
    text, _ = strip_against(body, template)
    assert "The test results, such as" not in text
    assert parse_body(text).not_run == ()
    # A short box of the author's sharing a few opening words stays theirs.
    own = "- [ ] The test results on ROCm"
    assert own in strip_against(f"## Test Result\n{own}\n", template)[0]


def test_a_pr_opened_on_the_older_template_still_reads_with_the_newer_one() -> None:
    # A PR opened before the base moved to the new template: its boilerplate is not in
    # the new template, and the known phrases of the old one still take it out.
    template = parse_template(NEW, source="t")
    body = _filled(OLD, Purpose="Speed up top-k.", **{"Test Plan": "pytest tests/kernels"})
    text, _ = strip_against(body, template)
    parsed = parse_body(text)
    assert "Essential Elements" not in parsed.text
    assert "PLEASE FILL IN" not in parsed.text
    assert parsed.sections["purpose"] == "Speed up top-k."
    assert not parsed.test_plan_empty


def test_the_lm_eval_result_line_is_accuracy_evidence_and_its_command_is_not() -> None:
    result = parse_body("## Validation\nlm_eval gsm8k: 0.874 before, 0.874 after\n")
    assert result.accuracy_evidence == ("lm_eval gsm8k: 0.874 before, 0.874 after",)
    command = parse_body(
        "## Validation\nlm_eval --model vllm --model_args gpu_memory_utilization=0.8 "
        "--tasks gsm8k\n")
    assert command.accuracy_evidence == ()


def _digest(body: str, config: RepoConfig | None, lang: Lang = "en") -> dict[str, object]:
    facts = PullRequestFacts(
        repo="vllm-project/vllm", number=1, title="[Core] Fix preemption order", body=body,
        author="someone", head_sha="a" * 40, base_ref="main",
        files=(ChangedFile(filename="vllm/v1/core/sched/scheduler.py", status="modified",
                           additions=30, deletions=4,
                           patch="@@ -1,2 +1,3 @@\n a\n+b\n"),),
    )
    digest = build_digest(facts, RULES, lang, repo_config=config)
    return digest_json(digest, render_digest(digest))


def test_the_digest_names_the_empty_validation_section_and_the_ai_box() -> None:
    config = RepoConfig(source="base 1234567",
                        template=parse_template(NEW, source=".github/PULL_REQUEST_TEMPLATE.md"))
    body = _filled(NEW, Overview="Fix the scheduler's preemption order.").replace(
        f"- [ ] {AI_BOX}", f"- [x] {AI_BOX}")
    out = _digest(body, config)
    assert out["ai_assisted"] is True
    assert out["checklist_ticked"] == [AI_BOX]
    listed = out["risks"]
    assert isinstance(listed, list)
    risks = {r["id"]: r for r in listed}
    # Nothing planned and nothing shown, beside no test change: said once, by missing-tests.
    assert "missing-test-results" not in risks
    assert risks["missing-tests"]["evidence"][0] == "empty Validation section"
    assert "AI-assistance box" in str(out["markdown"]).split("\n", 3)[2]

    # Without the template the same body is still read, but no box is a signal.
    bare = _digest(body, None)
    assert bare["ai_assisted"] is False
    assert bare["checklist_ticked"] == []
