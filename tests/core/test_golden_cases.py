"""Golden Markdown for real vLLM PRs, in English and Chinese: wording changes show up as
readable diffs. Regenerate with UPDATE_GOLDEN=1 after an intended change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.conversation_file import read_conversation_file
from bot.core.digest import build_digest
from bot.core.pr_object import changed_files, facts_from_pull_request, pull_request_object
from bot.core.render.comment import render_digest
from bot.core.vocabulary import Lang
from bot.rulebook.files import load_rules
from tests.core.test_cases import CASES, _facts
from tests.golden_files import assert_golden

ROOT = Path(__file__).resolve().parents[2]
RULES = load_rules(ROOT / "rules")
# A compile fix with patches (the sync-debug PR), a YaRN numerics fix, a ROCm perf
# backend, a frontend cleanup and a docs-only PR (quiet).
REAL_CASES = (46280, 45033, 51753, 51215, 45525, 55857, 50752)


def _case(number: int) -> dict[str, Any]:
    return next(c for c in CASES if c["number"] == number)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compile_pr_with_patches(lang: Lang) -> None:
    event = json.loads((ROOT / "tests/fixtures/cli/pr_56904.json").read_text())
    files = json.loads((ROOT / "tests/fixtures/cli/pr_56904_files.json").read_text())
    facts = facts_from_pull_request(pull_request_object(event), changed_files(files))
    assert_golden(f"pr_56904.{lang}.md", render_digest(build_digest(facts, RULES, lang)))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("number", REAL_CASES)
def test_real_case(number: int, lang: Lang) -> None:
    digest = build_digest(_facts(_case(number)), RULES, lang)
    assert_golden(f"pr_{number}.{lang}.md", render_digest(digest))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_compile_pr_with_its_conversation(lang: Lang) -> None:
    """The same PR after its thread: a maintainer's ask answered by lm_eval numbers the
    author posted (missing-gpu-eval cleared), an open docs ask, an outsider's split ask
    answered in its thread, bots ignored, and the closed attempt it supersedes."""
    event = json.loads((ROOT / "tests/fixtures/cli/pr_56904.json").read_text())
    event["pull_request"]["body"] = "Supersedes #56800.\n\n" + event["pull_request"]["body"]
    files = json.loads((ROOT / "tests/fixtures/cli/pr_56904_files.json").read_text())
    saved = json.loads((ROOT / "tests/fixtures/cli/pr_56904_conversation.json").read_text())
    pr = pull_request_object(event)
    facts = facts_from_pull_request(pr, changed_files(files))
    conversation = read_conversation_file(saved, repo=facts.repo, number=facts.number,
                                          html_url=pr.html_url)
    digest = build_digest(facts, RULES, lang, conversation=conversation)
    assert_golden(f"pr_56904_conversation.{lang}.md", render_digest(digest))
