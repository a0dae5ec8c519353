"""The repo-config bench (bench/bench_repo_config.py) on two tiny release trees: the
sample it builds from their diff, its truth and scores, and its GitHub call counts."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from bench.bench_repo_config import (
    RULES_DIR,
    Change,
    api_calls,
    build_sample,
    changed_files,
    file_patch,
    format_report,
    load_or_build_sample,
    main,
    measure,
    read_base_config,
    read_base_files,
    truth_for,
)
from bot.rulebook.files import load_rules

LORA = ".buildkite/test_areas/lora.yaml"
ENTRYPOINTS = ".buildkite/test_areas/entrypoints.yaml"
SAMPLERS = ".buildkite/test_areas/samplers.yaml"

CI_CONFIG = """\
name: vllm_ci
job_dirs:
  - ".buildkite/test_areas"
run_all_patterns:
  - "setup.py"
"""
LORA_JOBS = """\
group: LoRA
depends_on:
  - image-build
steps:
  - label: LoRA
    source_file_dependencies: [vllm/lora/punica.py, tests/lora/]
  - label: LoRA TP
    source_file_dependencies: [vllm/lora/tp/]
  - label: LoRA [Nightly]
    optional: true
    source_file_dependencies: [vllm/lora/]
"""
ENTRYPOINT_JOBS = """\
group: Entrypoints
steps:
  - label: Entrypoints
    source_file_dependencies: [vllm/entrypoints/]
"""
SAMPLER_JOBS = """\
group: Samplers
steps:
  - label: Samplers
    source_file_dependencies: [vllm/v1/sample/]
"""
CODEOWNERS = """\
/vllm/lora @alice
/vllm/entrypoints @bob @org/frontend
"""
MERGIFY = """\
pull_request_rules:
- name: label-frontend
  conditions:
    - files~=^vllm/entrypoints/
  actions:
    label:
      add:
        - frontend
- name: label-kv-connector
  conditions:
    - files~=^examples/disaggregated/
  actions:
    label:
      add:
        - kv-connector
"""
BASE: dict[str, str | bytes] = {
    ".buildkite/ci_config.yaml": CI_CONFIG,
    LORA: LORA_JOBS,
    ENTRYPOINTS: ENTRYPOINT_JOBS,
    SAMPLERS: SAMPLER_JOBS,
    ".github/CODEOWNERS": CODEOWNERS,
    ".github/mergify.yml": MERGIFY,
    "PKG-INFO": "Version: 1\n",
    "setup.py": "setup()\n",
    "vllm/lora/punica.py": "def punica():\n    return 1\n",
    "vllm/entrypoints/serve.py": "def serve():\n    pass\n",
    "vllm/v1/sample/sampler.py": "class Sampler:\n    pass\n",
    "vllm/model_executor/models/foo_eagle.py": "class FooEagle:\n    pass\n",
    "examples/disaggregated/proxy.py": "print('p')\n",
    "docs/old.md": "# Old\n\nline\n",
}
HEAD: dict[str, str | bytes] = {
    **{k: v for k, v in BASE.items() if k != "docs/old.md"},
    # The head's pipeline differs only in lora.yaml (the warm new-base count below).
    LORA: LORA_JOBS + "# edited\n",
    "PKG-INFO": "Version: 2\n",  # skipped
    "vllm/lora/punica.py": "def punica():\n    return 2\n",
    "tests/lora/test_punica.py": "def test_punica():\n    assert True\n",
    "vllm/entrypoints/serve.py": "def serve():\n    return 0\n",
    "vllm/v1/sample/sampler.py": "class Sampler:\n    top_k = 1\n",
    "vllm/model_executor/models/foo_eagle.py": "class FooEagle:\n    depth = 2\n",
    "examples/disaggregated/proxy.py": "print('proxy')\n",
    "assets/logo.bin": b"\xff\xd8\xff\x00",  # not UTF-8: no patch, skipped
}


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    return root


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    return (_write(tmp_path / "vllm-0.33.0", BASE), _write(tmp_path / "vllm-0.34.0", HEAD))


def _by_anchor(changes: list[Change]) -> dict[str, Change]:
    return {c.files[0].filename: c for c in changes}


def test_the_diff_lists_text_files_only_with_their_status(trees: tuple[Path, Path]) -> None:
    base, head = trees
    assert changed_files(base, head) == {
        LORA: "modified",
        "docs/old.md": "removed",
        "examples/disaggregated/proxy.py": "modified",
        "tests/lora/test_punica.py": "added",
        "vllm/entrypoints/serve.py": "modified",
        "vllm/lora/punica.py": "modified",
        "vllm/model_executor/models/foo_eagle.py": "modified",
        "vllm/v1/sample/sampler.py": "modified",
    }


def test_patches_are_github_hunks_with_counts() -> None:
    patch, additions, deletions = file_patch("a\nb\nc\n", "a\nB\nc\nd\n")
    assert patch.splitlines() == ["@@ -1,3 +1,4 @@", " a", "-b", "+B", " c", "+d"]
    assert (additions, deletions) == (2, 1)
    patch, additions, deletions = file_patch("", "x\ny\n")
    assert patch.splitlines()[0] == "@@ -0,0 +1,2 @@"
    assert (additions, deletions) == (2, 0)


def test_a_source_and_its_test_are_one_change_and_every_file_is_used_once(
    trees: tuple[Path, Path],
) -> None:
    base, head = trees
    changes = build_sample(base, head, size=50, seed=1)
    used = [f.filename for c in changes for f in c.files]
    assert sorted(used) == sorted(changed_files(base, head))  # each once
    paired = next(c for c in changes if "vllm/lora/punica.py" in c.paths)
    assert paired.kind == "stem"
    assert paired.paths == ("vllm/lora/punica.py", "tests/lora/test_punica.py")
    assert paired.title == "Update punica.py and its tests"
    test = paired.files[1]
    assert (test.status, test.additions, test.deletions) == ("added", 2, 0)
    removed = next(c for c in changes if "docs/old.md" in c.paths)
    assert removed.title == "Remove old.md"
    assert removed.files[0].patch.startswith("@@ -1,3 +0,0 @@")
    assert removed.files[0].deletions == 3
    # Seeded: the same sample again, and the size is a cap.
    assert build_sample(base, head, size=50, seed=1) == changes
    assert len(build_sample(base, head, size=2, seed=1)) == 2


def test_the_sample_is_cached_under_its_settings(trees: tuple[Path, Path], tmp_path: Path) -> None:
    base, head = trees
    cache = tmp_path / "sample.json"
    first, built = load_or_build_sample(base, head, cache, size=50, seed=1)
    assert built
    again, built = load_or_build_sample(base, head, cache, size=50, seed=1)
    assert not built
    assert again == first
    _, built = load_or_build_sample(base, head, cache, size=3, seed=1)
    assert built  # other settings: made anew
    assert len(json.loads(cache.read_text())["changes"]) == 3


def test_truth_comes_from_the_base_files(trees: tuple[Path, Path]) -> None:
    base, head = trees
    changes = _by_anchor(build_sample(base, head, size=50, seed=1))
    files = read_base_files(base)
    lora = truth_for(changes["vllm/lora/punica.py"], files)
    # The nightly step is no PR step, and LoRA TP's dependency is not touched.
    assert lora.steps == {(LORA, "LoRA")}
    assert lora.owners == {"alice"}
    serve = truth_for(changes["vllm/entrypoints/serve.py"], files)
    assert serve.steps == {(ENTRYPOINTS, "Entrypoints")}
    assert serve.owners == {"bob", "org/frontend"}
    assert serve.labels == ("frontend",)
    assert serve.areas == {"frontend"}
    disagg = truth_for(changes["examples/disaggregated/proxy.py"], files)
    assert disagg.areas == {"distributed"}  # kv-connector, mapped
    assert truth_for(changes["docs/old.md"], files).steps == frozenset()  # docs only


def _rules_with_ci_areas(tmp_path: Path) -> Path:
    """The bundled rules plus hand-written `ci_areas`, as rules carried them before the
    pipeline's own selection replaced them: "before" is scored on such a rule set."""
    rules = tmp_path / "rules"
    shutil.copytree(RULES_DIR, rules)
    for name, areas in (("lora", "[lora]"), ("frontend", "[entrypoints]")):
        path = rules / f"{name}.yaml"
        text = path.read_text()
        path.write_text(text.replace("\nmatch:", f"\nci_areas: {areas}\nmatch:", 1))
    return rules


def test_before_and_after_are_scored_against_that_truth(
    trees: tuple[Path, Path], tmp_path: Path
) -> None:
    base, head = trees
    changes = build_sample(base, head, size=50, seed=1)
    _, config, _ = read_base_config(base)
    rules = load_rules(_rules_with_ci_areas(tmp_path))
    report = measure(changes, rules, config, read_base_files(base))
    before, after = report.before, report.after
    # Truth: LoRA, Entrypoints, Samplers, and both PR steps of the edited lora.yaml (its
    # `depends_on` makes the file a dependency of its steps). Before, the rules' test
    # areas name lora.yaml (LoRA, LoRA TP) for punica.py and entrypoints.yaml for
    # serve.py; no rule names samplers.yaml, and the ci area names no test area.
    assert (before.ci.truth, before.ci.predicted, before.ci.hits) == (5, 3, 2)
    assert (after.ci.truth, after.ci.predicted, after.ci.hits) == (5, 5, 5)
    assert report.ci_key_missing == 0
    assert (report.test_area_total, report.nameable_before, report.nameable_after) == (3, 2, 3)
    # Owners: alice; bob and org/frontend. The frontend pool has neither.
    assert (before.owners.cases, before.owners.truth, before.owners.hits) == (2, 3, 0)
    assert (after.owners.hits, after.owners.all_named) == (3, 2)
    # Areas: frontend (by path both times); distributed only through Mergify's predicted
    # label, which alone opens no area (issue 40: a predicted label is one weak signal).
    assert (before.areas.truth, before.areas.hits) == (2, 1)
    assert after.areas.hits == 1
    assert (report.model_changes, before.models_with_area, after.models_with_area) == (1, 1, 1)
    assert len(before.times) == len(after.times) == len(changes)
    table = "\n".join(format_report(report))
    assert "CI steps recall" in table
    assert "40%" in table  # before's CI recall, 2 of 5


def test_config_reads_cost_what_changed(trees: tuple[Path, Path]) -> None:
    base, head = trees
    calls = asyncio.run(api_calls(base, head))
    # Cold: 4 trees (root, .github, .buildkite, test_areas) and 6 blobs (CODEOWNERS,
    # mergify.yml, ci_config.yaml and three job files).
    assert calls == {
        "cold": 10,
        "warm, same base": 0,
        "warm, new base, code only": 1,
        "warm, new base (0.34.0 config)": 4,  # root, .buildkite, test_areas, lora.yaml
    }


def test_without_sdists_the_bench_says_so_and_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--sdists", str(tmp_path / "none")]) == 0
    printed = capsys.readouterr().out
    assert "repo-config bench skipped: no vLLM source release" in printed
    assert str(tmp_path / "none") in printed
    assert "PR_DIGEST_SDISTS" in printed
    assert "python -m bench corpus releases" in printed


def test_the_cli_prints_the_table_and_writes_json(
    trees: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    assert main(["--sdists", str(tmp_path), "--repeat", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "owners: owner slots named" in printed
    assert "warm, same base: 0" in printed
    data = json.loads(out.read_text())
    assert data["after"]["ci"]["hits"] == 5
    assert (tmp_path / "repo_config_sample.json").is_file()


def test_the_owners_bound_rows_compare_vllms_file_with_a_glob_bomb() -> None:
    from bench.bench_repo_config import BOMB_RULES, format_owners_bound, glob_bomb, owners_bound

    rules = load_rules(RULES_DIR)
    small = owners_bound(glob_bomb(300), "small bomb", rules)
    assert small.rules == 300
    assert small.unmatched > 0  # 3,000 files x 300 globs is over the budget
    assert glob_bomb().count("\n") == BOMB_RULES
    lines = format_owners_bound([small])
    assert lines[1].startswith("  small bomb: 300 rules, parse ")
    assert lines[1].endswith(f", {small.unmatched:,} past the budget")
