"""Reading a rules directory: which files count, and how problems surface."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.core.rules import rules_json_schema
from bot.rulebook.files import check_rules, load_rules, read_rule_sources, write_schema

AREA = "id: docs\ntitle: Docs\naudience: writers\ncriticality: low\nmatch: {paths: [docs/**]}\n"


def test_reads_only_rule_files(tmp_path: Path) -> None:
    (tmp_path / "docs.yaml").write_text(AREA, encoding="utf-8")
    (tmp_path / "_draft.yaml").write_text("broken: [", encoding="utf-8")
    (tmp_path / "schema.json").write_text("{}", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.yaml").write_text("broken: [", encoding="utf-8")
    assert list(read_rule_sources(tmp_path)) == ["docs.yaml"]
    assert [a.id for a in load_rules(tmp_path).areas] == ["docs"]
    assert check_rules(tmp_path) == []


def test_check_rules_reports_problems_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "docs.yaml").write_text(AREA + "colour: red\n", encoding="utf-8")
    assert check_rules(tmp_path) == ["docs.yaml:6: rule 'docs': unknown key 'colour'"]


def test_a_file_that_is_not_text_is_one_problem_and_the_others_are_still_checked(
    tmp_path: Path,
) -> None:
    # Before (issue 31): one line for the whole directory, naming no file.
    (tmp_path / "docs.yaml").write_text(AREA + "colour: red\n", encoding="utf-8")
    (tmp_path / "ci.yaml").write_bytes(b"id: ci\n\xff\n")
    (tmp_path / "routing.yaml").write_bytes(b"\xfe")
    # An unreadable routing.yaml is not an empty one: `x` is not reported as poolless.
    lora = AREA.replace("docs", "lora") + "routing: {labels: [x]}\n"
    (tmp_path / "lora.yaml").write_text(lora, encoding="utf-8")
    assert check_rules(tmp_path) == [
        "ci.yaml:1: not UTF-8 text (byte 7)",
        "docs.yaml:6: rule 'docs': unknown key 'colour'",
        "routing.yaml:1: not UTF-8 text (byte 0)",
    ]


NO_AREAS = "no area rules (one <area>.yaml per area, besides routing.yaml and risks.yaml)"


@pytest.mark.parametrize("files", [{}, {"routing.yaml": "pools: {}\n", "risks.yaml": "{}\n",
                                        "_draft.yaml": AREA, "notes.txt": "hi"}],
                         ids=["empty", "area-less"])
def test_a_directory_without_an_area_rule_is_a_problem(
    tmp_path: Path, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Before (issue 31): "rules OK (0 areas loaded)" and exit 0.
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert check_rules(tmp_path) == [f"{tmp_path}: {NO_AREAS}"]
    assert main(["check-rules", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [f"{tmp_path}: {NO_AREAS}", f"1 problem(s) in {tmp_path}"]


def test_write_schema_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    write_schema(target)
    assert json.loads(target.read_text(encoding="utf-8")) == rules_json_schema()
