"""A part whose read failed shows one line where it would be, in both languages; the
core carries only the part ids (bot/core/vocabulary.py `Part`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.render.i18n import t
from bot.core.vocabulary import PARTS, Lang
from bot.rulebook.files import load_rules

RULES = load_rules(Path(__file__).resolve().parents[3] / "rules")

FACTS = PullRequestFacts(
    repo="vllm-project/vllm", number=7, title="[Frontend] Tidy chat", author="a",
    body="## Purpose\nTidy.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n",
    head_sha="a" * 40, changed_files=1, additions=12, deletions=2,
    files=(ChangedFile(filename="vllm/entrypoints/openai/serving_chat.py", additions=12,
                       deletions=2, patch="@@ -1,2 +1,3 @@\n+    x = 1\n"),),
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_unavailable_part_is_one_line_in_its_section(lang: Lang) -> None:
    digest = build_digest(FACTS.model_copy(update={"unavailable": ("linked", "conversation",
                                                                   "nonsense")}),
                          RULES, lang)
    assert digest.unavailable == ("conversation", "linked")  # known ids, in PARTS order
    body = render_digest(digest)
    for part in ("conversation", "linked"):
        line = f"_{t(lang, f'render.unavailable.{part}')}_"
        assert body.count(line) == 1
        # Under the part's own title.
        title = t(lang, "render.conversation" if part == "conversation" else "render.links")
        assert body.index(f"**{title}**\n{line}") >= 0
    assert digest_json(digest, body)["unavailable"] == ["conversation", "linked"]


def test_nothing_unavailable_adds_no_line() -> None:
    body = render_digest(build_digest(FACTS, RULES, "en"))
    for part in PARTS:
        assert t("en", f"render.unavailable.{part}") not in body
