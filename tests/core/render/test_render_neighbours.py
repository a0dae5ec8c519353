"""The "Other open PRs" section (bot/core/render/neighbours.py) in both languages: golden
Markdown, everything from other PRs escaped, no live mention or link, and the JSON."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.findings import CiPlan, CiRun, Digest
from bot.core.neighbours.model import (
    Dependency,
    LiveState,
    Neighbour,
    Neighbours,
)
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.render.escape import WORD_JOINER
from bot.core.render.neighbours import neighbour_lines
from bot.core.render.words import BASE_MOVED_SHOWN
from bot.core.vocabulary import Lang
from tests.golden_files import assert_golden

FOUND = Neighbours(
    neighbours=(
        Neighbour(number=201, relation="competes", reason="same-issue", shared=("#77",),
                  shared_count=1, title="Fix the same bug @maintainers [x](http://e.vil)",
                  author="rival", created_at=datetime(2026, 11, 2, tzinfo=UTC), approved=True,
                  ci="passed"),
        Neighbour(number=202, relation="overlaps", reason="same-function",
                  shared=("vllm/attention/rope.py::RotaryEmbedding.forward",
                          "vllm/attention/rope.py::apply_rope",
                          "vllm/attention/rope.py::helper"),
                  shared_count=3, title="Rope refactor", author="bob", draft=True,
                  ci="failed"),
        Neighbour(number=203, relation="overlaps", reason="same-file",
                  shared=("vllm/attention/rope.py",), shared_count=1, title="Other",
                  author="carol"),
        Neighbour(number=204, relation="overlaps", reason="same-file",
                  shared=("tests/test_rope.py",), shared_count=1, author="dave"),
    ),
    dependencies=(Dependency(number=150, cue="depends-on", state="open"),),
    live=LiveState(mergeable_state="dirty", conflicts=True, ci_failed=True, base_behind_by=230),
    compared=40,
)


def _digest(lang: Lang, neighbours: Neighbours | None = FOUND, **more: object) -> Digest:
    return Digest.model_validate({
        "repo": "vllm-project/vllm", "number": 100, "head_sha": "", "lang": lang,
        "rules_version": "t", "verdict": "read", "reading_minutes": 2,
        "neighbours": neighbours, **more})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_section_is_golden(lang: Lang) -> None:
    assert_golden(f"neighbours.{lang}.md", "\n".join(neighbour_lines(_digest(lang))) + "\n")


def test_other_prs_text_cannot_mention_link_or_reference() -> None:
    text = "\n".join(neighbour_lines(_digest("en")))
    assert "@maintainers" not in text
    assert "@rival" not in text
    assert f"@{WORD_JOINER}rival" in text
    assert "](http" not in text
    assert "#201" not in text  # GitHub would link it, and backlink this PR on #201
    assert f"#{WORD_JOINER}201" in text


def test_three_shown_the_rest_counted_and_the_section_sits_in_the_comment() -> None:
    comment = render_digest(_digest("en"))
    assert "**Other open PRs**" in comment
    assert "rope.py" in comment
    assert "1 more open PR changes the same code." in comment
    assert "204" not in comment.replace(WORD_JOINER, "")


def test_a_failed_build_is_said_once_when_the_ci_section_says_it() -> None:
    ci = CiPlan(run=CiRun(context="buildkite/ci/pr", state="failed"))
    lines = list(neighbour_lines(_digest("en", ci=ci)))
    assert not any("CI build on its head failed" in line for line in lines)
    assert any("CI build on its head failed" in line for line in neighbour_lines(_digest("en")))


@pytest.mark.parametrize(("behind_by", "shown"), [
    (None, False), (0, False), (BASE_MOVED_SHOWN - 1, False), (BASE_MOVED_SHOWN, True)])
def test_the_base_moved_is_said_from_the_threshold(behind_by: int | None, shown: bool) -> None:
    found = Neighbours(live=LiveState(mergeable_state="clean", base_behind_by=behind_by))
    said: tuple[tuple[Lang, str], ...] = (("en", "commits since this PR's merge base"),
                                          ("zh", "合并基点"))
    for lang, words in said:
        lines = list(neighbour_lines(_digest(lang, neighbours=found)))
        assert any(words in line and str(behind_by) in line for line in lines) is shown
        assert len(lines) == int(shown)
    assert digest_json(_digest("en", neighbours=found), "")["neighbours"]["live"][
        "base_behind_by"] == behind_by


def test_no_open_prs_read_no_section_and_null_json() -> None:
    digest = _digest("en", neighbours=None)
    assert list(neighbour_lines(digest)) == []
    assert digest_json(digest, "")["neighbours"] is None


def test_the_json_carries_the_data_not_words() -> None:
    payload = digest_json(_digest("en"), "")["neighbours"]
    assert payload["live"] == {"mergeable_state": "dirty", "conflicts": True, "behind": False,
                               "ci_failed": True, "base_behind_by": 230}
    assert payload["dependencies"] == [{"number": 150, "cue": "depends-on", "state": "open"}]
    assert [(n["number"], n["relation"], n["reason"]) for n in payload["neighbours"]] == [
        (201, "competes", "same-issue"), (202, "overlaps", "same-function"),
        (203, "overlaps", "same-file"), (204, "overlaps", "same-file")]
    assert digest_json(_digest("zh"), "")["neighbours"] == payload
