"""Reading a rules directory: which files count, and how problems surface."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_write_schema_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    write_schema(target)
    assert json.loads(target.read_text(encoding="utf-8")) == rules_json_schema()
