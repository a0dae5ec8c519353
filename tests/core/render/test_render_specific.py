"""The PR-specific sections of the digest (bot/core/render/specific.py): what to check
and the linked work, in both languages, with everything from the PR escaped."""

from __future__ import annotations

import pytest

from bot.core.findings import Digest
from bot.core.reading.specifics import Decision, Link, StructureNote, ValueChange
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.render.specific import check_lines, escape_quote, link_lines, structure_line
from bot.core.vocabulary import AreaMatch, Lang


def _digest(lang: Lang = "en", **fields: object) -> Digest:
    base: dict[str, object] = {
        "repo": "vllm-project/vllm",
        "number": 1,
        "head_sha": "",
        "lang": lang,
        "rules_version": "t",
        "verdict": "read",
        "reading_minutes": 2,
    }
    base.update(fields)
    return Digest.model_validate(base)


def _area(area_id: str, files: tuple[str, ...], focus: tuple[str, ...], triggered=()) -> AreaMatch:  # type: ignore[no-untyped-def]
    return AreaMatch(
        id=area_id,
        title=area_id.title(),
        audience="a",
        criticality="medium",
        numerics=False,
        files=files,
        focus=focus,
        focus_triggered=triggered,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("uses `get_rope()` instead", "uses `get_rope()` instead"),
        ("`a` and `b`", "`a` and `b`"),
        ("ping @team and #123 <b>x</b>", "ping @\u2060team and \\#\u2060123 &lt;b&gt;x&lt;/b&gt;"),
        ("odd `backtick", "odd `backtick`"),
    ],
)
def test_escape_quote_keeps_code_and_escapes_the_rest(text: str, expected: str) -> None:
    assert escape_quote(text) == expected


STRUCTURE = [
    (
        StructureNote("f.py", "g", "reordered", ("if x:", "y = 1")),
        "`g`: `if x:` now runs before `y = 1`",
        "`g`：`if x:` 现在先于 `y = 1` 执行",
    ),
    (
        StructureNote("f.py", "g", "raise-changed", ("ValueError", "VLLMValidationError")),
        "`g`: raises `VLLMValidationError` instead of `ValueError`; "
        "check callers that catch `ValueError`",
        "`g`：改为抛出 `VLLMValidationError`（原为 `ValueError`）；"
        "请检查捕获 `ValueError` 的调用方",
    ),
    (
        StructureNote("t.py", "test_g", "parametrize", ("8", "2×2×2", "")),
        "`test_g`: 8-case parametrize matrix (2×2×2)",
        "`test_g`：参数化矩阵共 8 种组合（2×2×2）",
    ),
    (
        StructureNote("t.py", "test_g", "parametrize", ("2", "2", "1")),
        "`test_g`: parametrize cases 1 → 2",
        "`test_g`：参数化用例 1 → 2 个",
    ),
    (
        StructureNote("m.py", "", "todo", ("drop *this* @later",)),
        "`m.py`: TODO left for later: drop \\*this\\* @\u2060later",
        "`m.py`：留下了 TODO：drop \\*this\\* @\u2060later",
    ),
]


@pytest.mark.parametrize(("note", "en", "zh"), STRUCTURE)
def test_structure_lines(note: StructureNote, en: str, zh: str) -> None:
    assert structure_line(note, "en") == en
    assert structure_line(note, "zh") == zh


def test_what_to_check_shows_specific_findings_and_no_area_question() -> None:
    # Blind judges called every area question shown here noise (standing and
    # triggered alike); the questions stay in the JSON.
    digest = _digest(
        decisions=(Decision("We keep `f` because callers rely on it.", "f", "a/x.py", 4),),
        structure=(StructureNote("b/y.py", "h", "kwarg-removed", ("layer_name",)),),
        value_changes=(ValueChange("TeleChat3", "max_model_len", "131,072", "32,768"),),
        areas=(
            _area("beta", ("c/z.py",), ("standing beta?", "second beta?")),
            _area("gamma", ("b/y.py",), ("triggered gamma?",), ("triggered gamma?",)),
        ),
    )
    assert list(check_lines(digest)) == [
        "- `f`: “We keep `f` because callers rely on it.” — author",
        "- `h`: no longer passes `layer_name`",
        "- `max_model_len` for TeleChat3: 131,072 → 32,768; check deployed configs",
    ]
    only_questions = _digest(areas=(
        _area("gamma", ("b/y.py",), ("triggered gamma?",), ("triggered gamma?",)),))
    assert list(check_lines(only_questions)) == []


def test_what_to_check_is_at_most_five_lines_specific_first() -> None:
    decisions = tuple(
        Decision(f"We keep `f{i}` because callers rely on it.", f"f{i}", "a/x.py", 4)
        for i in range(3)
    )
    structure = tuple(
        StructureNote("b/y.py", f"h{i}", "kwarg-removed", ("layer_name",)) for i in range(4)
    )
    digest = _digest(
        decisions=decisions,
        structure=structure,
        areas=(_area("beta", ("c/z.py",), ("standing beta?",)),),
    )
    lines = list(check_lines(digest))
    assert len(lines) == 5
    assert lines[:3] == [f"- `f{i}`: “We keep `f{i}` because callers rely on it.” — author"
                         for i in range(3)]
    assert all("beta" not in line for line in lines)
    # Quotes that name nothing of the change give way to notes on changed functions
    # and to changed values; the lines kept stay in their kinds' order.
    unanchored = tuple(Decision(f"We chose plan {i}.", "", "", 4) for i in range(3))
    value = ValueChange("TeleChat3", "max_model_len", "131,072", "32,768")
    crowded = _digest(decisions=unanchored, structure=structure[:3], value_changes=(value,))
    assert list(check_lines(crowded)) == [
        "- “We chose plan 0.” — author",
        *(f"- `h{i}`: no longer passes `layer_name`" for i in range(3)),
        "- `max_model_len` for TeleChat3: 131,072 → 32,768; check deployed configs",
    ]


def test_linked_work_line_lists_links_without_cross_referencing_them() -> None:
    digest = _digest(
        "zh",
        links=(
            Link("supersedes", 50752, "", "Old <title> @x"),
            Link("fixes", 7, "other/repo"),
            Link("follow-up", 3, ""),
            Link("related", 4, ""),
        ),
    )
    (line,) = link_lines(digest)
    assert line == (
        "- 取代 \\#\u206050752 (Old &lt;title&gt; @\u2060x) · 修复 other/repo\\#\u20607"
        " · 后续工作，承接 \\#\u20603"
    )


def test_json_carries_the_specific_findings() -> None:
    digest = _digest(
        decisions=(Decision("q", "", "", 2),),
        links=(Link("fixes", 9, ""),),
    )
    data = digest_json(digest, render_digest(digest))
    assert data["decisions"] == [{"quote": "q", "concerns": "", "concerns_file": "", "score": 2}]
    assert data["links"] == [{"kind": "fixes", "number": 9, "repo": "", "title": "", "state": "",
                              "is_pull": False, "objection": "", "objection_by": ""}]
    assert data["structure"] == []
    assert data["mentions"] == []
    assert data["value_changes"] == []


def test_a_sweep_replacing_one_error_is_shown_once_two_new_rejections_twice() -> None:
    sweep = tuple(
        StructureNote("f.py", f"g{i}", "raise-changed", ("ValueError", "VLLMValidationError"))
        for i in range(3)
    )
    new = tuple(StructureNote("f.py", f"h{i}", "raise-added", ("ValueError",)) for i in range(2))
    lines = list(check_lines(_digest(structure=(*sweep, *new))))
    assert [line.split(":")[0] for line in lines] == ["- `g0`", "- `h0`", "- `h1`"]
