"""Chinese typography (bot/core/render/zh_text.py) and the Chinese catalogue it keeps tidy."""

from __future__ import annotations

import re

import pytest

from bot.core.render.i18n import CATALOGUE, t
from bot.core.render.zh_text import full_width, space_mixed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "改动较大:{files} 个文件;可拆分,或(逐个)阅读",
            "改动较大：{files} 个文件；可拆分，或（逐个）阅读",
        ),
        ("{count:,} 个", "{count:,} 个"),  # a format field keeps its ASCII
        ("运行 `a(b, c):` 后", "运行 `a(b, c):` 后"),  # so does code
    ],
)
def test_full_width(text: str, expected: str) -> None:
    assert full_width(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("在GPU上运行3次", "在 GPU 上运行 3 次"),
        ("高关键度的RoPE改动", "高关键度的 RoPE 改动"),
        ("已经 spaced 的 text", "已经 spaced 的 text"),
        ("`中文x` 不动", "`中文x` 不动"),
        ("提升20%的吞吐", "提升 20% 的吞吐"),
    ],
)
def test_space_mixed(text: str, expected: str) -> None:
    assert space_mixed(text) == expected


_FIELD_OR_CODE = re.compile(r"\{[^{}]*\}|`[^`]*`")


def test_every_chinese_entry_uses_full_width_punctuation() -> None:
    for key, entry in CATALOGUE.items():
        text = _FIELD_OR_CODE.sub("", entry.get("zh", ""))
        assert not re.search(r"[,;:()]", text), key


def test_chinese_uses_the_fields_terms() -> None:
    assert t("zh", "render.routing") == "路由"
    assert t("zh", "trace.files", count=3) == "3 个文件"
    zh = " ".join(entry.get("zh", "") for entry in CATALOGUE.values())
    assert "分派" not in zh
    assert "file(s)" not in zh


def test_no_english_golden_counts_one_thing_in_the_plural() -> None:
    # "in 1 files", "1 of 1 rules": a count of one takes the singular (the `.one` keys).
    import re
    from pathlib import Path

    golden = Path(__file__).resolve().parents[2] / "golden"
    nouns = "files|rules|steps|symbols|risks|items"
    pattern = re.compile(rf"(?<![\d.,])1 (?:more )?(?:job )?({nouns})\b")
    found = [f"{path.name}: {m.group(0)}" for path in sorted(golden.rglob("*.en.md"))
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def test_one_job_file_and_one_view_file_are_singular() -> None:
    assert t("en", "render.ci.more_in_files.one", count=3) == "+3 in 1 more job file"
    assert t("en", "view.size.one", additions=2, deletions=1) == "+2 −1 in 1 file"
    assert t("en", "render.explain.one", fired=1) == "Why: 1 of 1 rule fired"
