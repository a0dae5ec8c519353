"""`digest-bot check-config FILE` (issue 14 item 7): a repository's override checked in CI,
run as the console script in a subprocess; and the JSON Schemas editors use for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.check_config import github_annotation
from bot.core.rules.problems import RuleProblem
from bot.rulebook.files import SCHEMAS, schema_text

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent / "digest-bot"

VALID = """\
# yaml-language-server: $schema=https://example.invalid/override.schema.json
disable: [docs]
areas:
  - id: hostile
    title: Hostile
    audience: whoever
    criticality: low
    match: {paths: ['weird/**']}
  - id: compile
    title: Compile (ours)
    audience: us
    criticality: medium
    match: {paths: ['vllm/compilation/**']}
routing:
  max_reviewers_per_pr: 2
"""

# Line 2: an unknown top-level key.
INVALID = """\
disable: [docs]
routeing: {}
"""

# Line 3: a disable id that is not bundled; line 10: an unknown key inside an area.
MIXED = """\
disable:
  - docs
  - no-such-area
areas:
  - id: hostile
    title: Hostile
    audience: whoever
    criticality: low
    match: {paths: ['weird/**']}
    colour: red
"""

# Six problems of six kinds (issue 31): the unknown top-level key on line 4 used to stop
# the check, and was all it reported.
MANY = """\
disable:
  - docs
  - no-such-area
routeing: {}
areas:
  - id: hostile
    title: Hostile
    audience: whoever
    criticality: extreme
    match: {paths: ['weird/**']}
    colour: red
routing:
  max_reviewers_per_pr: many
risks:
  no_such_knob: 1
"""


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=clean,
                          cwd=cwd, timeout=60, check=False)


def write(tmp_path: Path, text: str) -> Path:
    target = tmp_path / ".github" / "pr-digest.yml"
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    return target


def test_a_valid_override_is_one_ok_line_and_exit_0(tmp_path: Path) -> None:
    file = write(tmp_path, VALID)
    result = run("check-config", ".github/pr-digest.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    bundled = len(list((ROOT / "rules").glob("*.yaml"))) - 2  # minus routing and risks
    assert result.stdout == (
        f".github/pr-digest.yml: override OK ({bundled} areas in force: "
        "1 added, 1 replaced, 1 disabled)\n"
    )
    assert result.stderr == ""
    assert file.exists()


def test_an_empty_override_is_ok(tmp_path: Path) -> None:
    file = write(tmp_path, "# nothing yet\n")
    result = run("check-config", str(file))
    assert result.returncode == 0
    assert "0 added, 0 replaced, 0 disabled" in result.stdout


def test_unknown_keys_and_disable_ids_each_get_their_line(tmp_path: Path) -> None:
    file = write(tmp_path, MIXED)
    result = run("check-config", str(file))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{file}:3: disable.1: no bundled area 'no-such-area' (bundled: ")
    assert lines[1] == f"{file}:10: rule 'hostile': areas.0: unknown key 'colour'"
    assert lines[2] == f"2 problems in {file}"
    assert len(lines) == 3
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


def test_a_pattern_whose_program_is_too_large_is_flagged_at_its_line(tmp_path: Path) -> None:
    file = write(tmp_path, """\
areas:
  - id: counted
    title: Counted repeats
    audience: whoever reads them
    criticality: low
    match:
      any:
        - added: 'a.{0,1000}b.{0,1000}c'
""")
    result = run("check-config", str(file))
    assert result.returncode == 1
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{file}:8: rule 'counted': ")
    assert "RE2 instructions (at most 10,000)" in first


def test_an_unknown_top_level_key(tmp_path: Path) -> None:
    file = write(tmp_path, INVALID)
    result = run("check-config", str(file))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{file}:2: unknown key 'routeing' (did you mean 'routing'?)", f"1 problem in {file}"]


def test_every_problem_is_reported_with_its_line_in_one_run(tmp_path: Path) -> None:
    file = write(tmp_path, MANY)
    result = run("check-config", str(file))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{file}:3: disable.1: no bundled area 'no-such-area' (bundled: ")
    assert lines[1:] == [
        f"{file}:4: unknown key 'routeing' (did you mean 'routing'?)",
        f"{file}:9: rule 'hostile': areas.0.criticality: Input should be 'low', 'medium', "
        "'high' or 'critical'",
        f"{file}:11: rule 'hostile': areas.0: unknown key 'colour'",
        f"{file}:13: routing.max_reviewers_per_pr: Input should be a valid integer, unable to "
        "parse string as an integer",
        f"{file}:15: risks: unknown key 'no_such_knob'",
        f"6 problems in {file}",
    ]
    assert result.stdout == ""
    github = run("check-config", ".github/pr-digest.yml", "--format", "github", cwd=tmp_path)
    assert github.returncode == 1
    assert [line.split("::")[1] for line in github.stdout.splitlines()] == [
        f"error file=.github/pr-digest.yml,line={n}" for n in (3, 4, 9, 11, 13, 15)]
    assert github.stderr == "6 problems in .github/pr-digest.yml\n"


def test_bundled_rules_without_an_area_rule_cannot_check_anything(tmp_path: Path) -> None:
    file = write(tmp_path, "# nothing yet\n")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "routing.yaml").write_text("pools: {}\n", encoding="utf-8")
    result = run("check-config", str(file), "--rules", str(rules))
    assert result.returncode == 2
    assert result.stderr == (f"digest-bot: error: the bundled rules in {rules} hold no area "
                             "rule (run `digest-bot check-rules`)\n")
    assert result.stdout == ""


def test_a_duplicate_key_names_its_second_line(tmp_path: Path) -> None:
    file = write(tmp_path, "disable: [docs]\nrisks: {}\ndisable: [ci]\n")
    result = run("check-config", str(file))
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith(f"{file}:3: duplicate key 'disable'")


def test_github_format_prints_one_annotation_per_problem(tmp_path: Path) -> None:
    write(tmp_path, MIXED)
    result = run("check-config", ".github/pr-digest.yml", "--format", "github", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        "::error file=.github/pr-digest.yml,line=3::disable.1: no bundled area 'no-such-area'")
    assert lines[1] == ("::error file=.github/pr-digest.yml,line=10::"
                        "rule 'hostile': areas.0: unknown key 'colour'")
    assert result.stderr == "2 problems in .github/pr-digest.yml\n"


def test_github_annotations_escape_what_would_break_the_command() -> None:
    problem = RuleProblem("a,b:c.yml", 4, None, "100% bad\nsecond line")
    assert github_annotation(problem) == (
        "::error file=a%2Cb%3Ac.yml,line=4::100%25 bad%0Asecond line")


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, fmt: str) -> None:
    missing = tmp_path / "nope.yml"
    result = run("check-config", str(missing), "--format", fmt)
    assert result.returncode == 2
    assert result.stderr == f"digest-bot: error: {missing}: no such file\n"
    assert result.stdout == ""


def test_a_directory_or_binary_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run("check-config", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"digest-bot: error: {tmp_path}: is a directory\n"
    binary = tmp_path / "pr-digest.yml"
    binary.write_bytes(b"disable: [\xff]\n")
    result = run("check-config", str(binary))
    assert result.returncode == 2
    assert result.stderr == f"digest-bot: error: {binary}: not UTF-8 text (byte 10)\n"


def test_a_too_large_override_is_refused_like_the_service_does(tmp_path: Path) -> None:
    file = write(tmp_path, "# " + "x" * (256 * 1024) + "\n")
    result = run("check-config", str(file))
    assert result.returncode == 1
    assert result.stderr.splitlines()[0] == f"{file}:1: larger than 262144 bytes"


# --- the JSON Schemas ------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schemas_are_current(name: str) -> None:
    on_disk = (ROOT / "rules" / name).read_text(encoding="utf-8")
    assert on_disk == schema_text(name), "regenerate: digest-bot export-schema"


def test_export_schema_writes_every_schema_into_a_directory(tmp_path: Path) -> None:
    result = run("export-schema", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SCHEMAS)
    for name in SCHEMAS:
        assert (tmp_path / name).read_text(encoding="utf-8") == schema_text(name)
    override = json.loads((tmp_path / "override.schema.json").read_text(encoding="utf-8"))
    assert set(override["properties"]) == {"areas", "disable", "routing", "risks", "delivery"}
    assert override["additionalProperties"] is False


def test_export_schema_to_a_file_writes_only_the_area_schema(tmp_path: Path) -> None:
    target = tmp_path / "area.json"
    result = run("export-schema", str(target))
    assert result.returncode == 0
    assert [p.name for p in tmp_path.iterdir()] == ["area.json"]
    assert target.read_text(encoding="utf-8") == schema_text("schema.json")
