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
