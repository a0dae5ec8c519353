"""Rule files: what loads, and the exact message (file, line, rule) for each kind of mistake."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bot.core.render.words import rule_text
from bot.core.rules import RuleFileError, parse_rules, rules_json_schema
from bot.core.vocabulary import RuleText
from bot.rulebook.files import check_rules, load_rules

RULES_DIR = Path(__file__).resolve().parents[3] / "rules"
ROUTING = "pools:\n  torch.compile: {users: [alice]}\n"


def area(body: str = "", *, rule_id: str = "compile", match: str = "  paths: [vllm/x/**]") -> str:
    head = (
        f"id: {rule_id}\n"
        "title: {en: Compile, zh: 编译}\n"
        "audience: compile people\n"
        "criticality: high\n"
        f"match:\n{match}\n"
    )
    return head + textwrap.dedent(body)


def problems(sources: dict[str, str]) -> list[str]:
    with pytest.raises(RuleFileError) as caught:
        parse_rules({"routing.yaml": ROUTING, **sources})
    return [str(p) for p in caught.value.problems]


def test_minimal_area_loads_with_defaults() -> None:
    rules = parse_rules({"compile.yaml": area(), "routing.yaml": ROUTING})
    (compiled,) = rules.areas
    assert compiled.id == "compile"
    assert (compiled.title.en, compiled.title.zh) == ("Compile", "编译")
    audience = RuleText.model_validate(compiled.audience.model_dump())
    assert rule_text(audience, "zh") == "compile people"  # zh falls back to en
    assert not compiled.quiet
    assert not compiled.numerics
    assert rules.risks.large_diff_files == 40  # no risks.yaml: RiskSettings() defaults


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            area("colour: red\n"),
            "compile.yaml:7: rule 'compile': unknown key 'colour'",
            id="unknown-top-key",
        ),
        pytest.param(
            area(match="  pathz: [a]"),
            "compile.yaml:6: rule 'compile': match: unknown key 'pathz' (did you mean 'paths'?)",
            id="unknown-nested-key",
        ),
        pytest.param(
            area("focus:\n  - text: hi\n    when: {paths: vllm/x.py}\n"),
            "compile.yaml:9: rule 'compile': focus.0.when.paths: Input should be a valid list",
            id="wrong-type",
        ),
        pytest.param(
            area(match="  title: '(['"),
            "compile.yaml:6: rule 'compile': match.title: invalid regex '([': "
            "unterminated character set at position 1",
            id="bad-regex",
        ),
        pytest.param(
            area(match="  paths: ['docs/{a,b}.md']"),
            "compile.yaml:6: rule 'compile': match.paths: invalid glob 'docs/{a,b}.md': "
            "brace expansion {a,b} is not gitignore syntax; list each glob",
            id="bad-glob",
        ),
        pytest.param(
            area(match="  {}"),
            "compile.yaml:5: rule 'compile': match: a condition needs at least one key",
            id="empty-condition",
        ),
        pytest.param(
            area(match="  exclude: [a/**]"),
            "compile.yaml:5: rule 'compile': match: exclude only works together with paths",
            id="exclude-without-paths",
        ),
        pytest.param(
            area(rule_id="compiler"),
            "compile.yaml:1: rule 'compiler': id: must equal the file name 'compile'",
            id="id-not-stem",
        ),
        pytest.param(
            area("routing:\n  labels: [torch.compile, cuda-graph]\n"),
            "compile.yaml:8: rule 'compile': routing.labels.1: label 'cuda-graph' has no pool "
            "in routing.yaml",
            id="routing-label-without-pool",
        ),
        pytest.param(
            area().replace("criticality: high\n", ""),
            "compile.yaml:1: rule 'compile': missing required key 'criticality'",
            id="missing-key",
        ),
        pytest.param(
            area("numerics: true\nnumerics: false\n"),
            "compile.yaml:8: duplicate key 'numerics'",
            id="duplicate-yaml-key",
        ),
        pytest.param(
            area("focus:\n  - &x {text: a}\n  - *x\n"),
            "compile.yaml:8: YAML anchors and aliases are not allowed",
            id="alias",
        ),
        pytest.param(
            "id: [unclosed\n",
            "compile.yaml:2: not valid YAML: did not find expected ',' or ']'",
            id="yaml-syntax",
        ),
        pytest.param("", "compile.yaml:1: file is empty", id="empty-file"),
    ],
)
def test_each_mistake_gives_its_exact_message(source: str, expected: str) -> None:
    assert problems({"compile.yaml": source}) == [expected]


def test_duplicate_checklist_id_across_files_names_the_first_use() -> None:
    item = "checklist:\n  - id: shared-item\n    text: t\n"
    found = problems(
        {
            "compile.yaml": area(item),
            "docs.yaml": area(item, rule_id="docs"),
        }
    )
    assert found == [
        "docs.yaml:8: rule 'docs': checklist.0.id: 'shared-item' is already used at compile.yaml:8"
    ]


def test_all_problems_are_collected_across_files() -> None:
    found = problems(
        {
            "compile.yaml": area("colour: red\n"),
            "docs.yaml": area(rule_id="docs", match="  title: '(['"),
            "routing.yaml": "pools: {torch.compile: {users: [a], cap: 9}}\n",
        }
    )
    assert [p.split(":")[0] for p in found] == ["compile.yaml", "docs.yaml", "routing.yaml"]
    assert (
        found[2]
        == "routing.yaml:1: pools.torch.compile.cap: Input should be less than or equal to 5"
    )


def test_oversized_file_is_rejected_before_parsing() -> None:
    huge = area("# " + "x" * (1024 * 1024) + "\n")
    assert problems({"compile.yaml": huge}) == ["compile.yaml:1: file is larger than 1024 KiB"]


def test_ignored_files_do_not_count_and_version_tracks_used_files() -> None:
    base = {"compile.yaml": area(), "routing.yaml": ROUTING}
    with_junk = {**base, "_draft.yaml": "garbage: [", "notes.txt": "hi"}
    assert parse_rules(with_junk).version == parse_rules(base).version
    changed = {**base, "compile.yaml": area("quiet: true\n")}
    assert parse_rules(changed).version != parse_rules(base).version
    assert len(parse_rules(base).version) == 12


def test_bad_fixture_directory_reports_every_problem() -> None:
    found = check_rules(Path(__file__).resolve().parents[2] / "fixtures" / "rules_bad")
    assert found == [
        "compile.yaml:7: rule 'compile': match: unknown key 'pathz' (did you mean 'paths'?)",
        "compile.yaml:9: rule 'compile': routing.labels.0: label 'no-such-label' has no pool "
        "in routing.yaml",
        "docs.yaml:5: rule 'docs': match.title: invalid regex '([': "
        "unterminated character set at position 1",
    ]


def test_missing_directory_is_one_problem(tmp_path: Path) -> None:
    assert check_rules(tmp_path / "nope") == [f"{tmp_path / 'nope'}: not a directory"]


def test_every_shipped_rule_file_loads() -> None:
    assert check_rules(RULES_DIR) == []
    rules = load_rules(RULES_DIR)
    ids = {a.id for a in rules.areas}
    assert {
        "compile",
        "cudagraph",
        "multimodal",
        "tokenizer",
        "yarn",
        "attention-backend",
        "frontend",
        "new-model",
        "docs",
        "ci",
    } <= ids
    for compiled in rules.areas:
        assert compiled.title.zh, compiled.id
        assert compiled.audience.zh, compiled.id
        assert all(f.text.zh for f in compiled.focus), compiled.id
        assert all(c.text.zh for c in compiled.checklist), compiled.id
    quiet = {a.id for a in rules.areas if a.quiet}
    assert quiet == {"docs", "ci"}


def test_schema_json_is_up_to_date() -> None:
    on_disk = json.loads((RULES_DIR / "schema.json").read_text(encoding="utf-8"))
    assert on_disk == rules_json_schema(), "regenerate: digest-bot export-schema"


def test_schema_accepts_the_plain_string_shorthand() -> None:
    text_schema = rules_json_schema()["$defs"]["LocalizedText"]
    assert {"type": "string"} in text_schema["anyOf"]
