"""`digest-bot digest --repo-dir`: the repository's own CODEOWNERS names the owners."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VLLM = FIXTURES / "vllm_config" / "0.34.0"


def _event(tmp_path: Path) -> tuple[Path, Path]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "title": "[Attention] Fix the FlashAttention backend", "body": "",
        "user": {"login": "someone"}, "labels": [], "state": "open", "draft": False,
        "base": {"ref": "main", "sha": "b" * 40, "repo": {"full_name": "vllm-project/vllm"}},
        "head": {"ref": "x", "sha": "a" * 40}, "changed_files": 2, "additions": 3,
        "deletions": 1,
    }}))
    files = tmp_path / "files.json"
    files.write_text(json.dumps([
        {"filename": "vllm/v1/attention/backends/triton_attn.py", "status": "modified",
         "additions": 2, "deletions": 1, "patch": "@@ -1,1 +1,2 @@\n-a\n+b\n+c"},
        {"filename": "no/owner/here.txt", "status": "added", "additions": 1, "deletions": 0,
         "patch": "@@ -0,0 +1 @@\n+x"},
    ]))
    return event, files


def test_owners_come_from_the_checkouts_codeowners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event, files = _event(tmp_path)
    assert main(["digest", "--event", str(event), "--files", str(files), "--format", "json",
                 "--repo-dir", str(VLLM)]) == 0
    out = json.loads(capsys.readouterr().out)
    # The last matching line wins: triton_attn.py has its own owner in vLLM's file.
    assert out["owners"] == {
        "users": ["tdoublep"], "teams": [],
        "by_file": {"vllm/v1/attention/backends/triton_attn.py": ["@tdoublep"]},
        "unmatched_files": 0,
    }
    # vLLM's needs-rebase rule asks for `conflict`, which no PR payload states.
    assert out["repo_config"]["source"] == f"checkout {VLLM}"
    assert [p.split(":")[:2] for p in out["repo_config"]["problems"]] == [
        [".github/mergify.yml", "617"]]


def test_without_repo_dir_nothing_is_claimed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event, files = _event(tmp_path)
    assert main(["digest", "--event", str(event), "--files", str(files),
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["owners"] is None
    assert out["repo_config"] is None


def test_a_repo_dir_that_is_not_a_directory_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event, files = _event(tmp_path)
    code = main(["digest", "--event", str(event), "--files", str(files),
                 "--repo-dir", str(tmp_path / "missing")])
    assert code == 2
    assert "--repo-dir" in capsys.readouterr().err


def test_check_rules_warns_about_pool_members_codeowners_no_longer_names(
    capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[2]
    assert main(["check-rules", str(root / "rules"), "--repo-dir", str(VLLM)]) == 0
    err = capsys.readouterr().err
    warned = sorted(line.split(": ")[3].split()[0] for line in err.splitlines()
                    if line.startswith("warning: "))
    # The routing pools' members vLLM 0.34.0's CODEOWNERS no longer names.
    assert warned == ["gshtras", "russellb", "simon-mo"]


def test_check_rules_without_codeowners_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[2]
    assert main(["check-rules", str(root / "rules"), "--repo-dir", str(tmp_path)]) == 0
    assert "no CODEOWNERS to check the routing pools against" in capsys.readouterr().err


# --- the checkout's .github/pr-digest.yml (issue 43 item 1) -----------------------------

OVERRIDE = """\
areas:
  - id: ownerless
    title: Files nobody owns
    audience: whoever adopts them
    criticality: low
    match: {paths: ['no/owner/**']}
"""


def _checkout(tmp_path: Path, override: str) -> Path:
    checkout = tmp_path / "checkout"
    (checkout / ".github").mkdir(parents=True)
    (checkout / ".github" / "pr-digest.yml").write_text(override, encoding="utf-8")
    return checkout


def _areas(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [area["id"] for area in json.loads(capsys.readouterr().out)["areas"]]


def test_the_checkouts_override_is_applied_as_the_service_applies_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.handlers.repo_rules import RulesProvider
    from bot.rulebook.files import read_rule_sources

    event, files = _event(tmp_path)
    args = ["digest", "--event", str(event), "--files", str(files), "--format", "json"]
    assert main([*args, "--repo-dir", str(tmp_path)]) == 0  # no override there
    without = _areas(capsys)
    checkout = _checkout(tmp_path, OVERRIDE)
    assert main([*args, "--repo-dir", str(checkout)]) == 0
    captured = capsys.readouterr()
    with_override = [area["id"] for area in json.loads(captured.out)["areas"]]
    assert "ownerless" not in without
    assert sorted(with_override) == sorted([*without, "ownerless"])
    assert f"applied the override {checkout}/.github/pr-digest.yml" in captured.err
    # The service's own provider, given the same text, puts the same rules in force.
    service = RulesProvider(read_rule_sources(Path(__file__).resolve().parents[2] / "rules"))
    applied = service.rules_from_text(OVERRIDE)
    assert applied.problem is None
    assert "ownerless" in {area.id for area in applied.rules.areas}


def test_a_bad_override_is_file_line_message_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event, files = _event(tmp_path)
    checkout = _checkout(tmp_path, "disable: [docs]\nroutng: {}\n")
    code = main(["digest", "--event", str(event), "--files", str(files),
                 "--repo-dir", str(checkout)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{checkout}/.github/pr-digest.yml:2: unknown key 'routng' (did you mean 'routing'?)"]


def test_an_override_symlinked_out_of_the_checkout_is_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event, files = _event(tmp_path)
    outside = tmp_path / "outside.yml"
    outside.write_text("routng: {}\n")
    checkout = tmp_path / "checkout"
    (checkout / ".github").mkdir(parents=True)
    (checkout / ".github" / "pr-digest.yml").symlink_to(outside)
    assert main(["digest", "--event", str(event), "--files", str(files),
                 "--repo-dir", str(checkout)]) == 0
    assert "applied the override" not in capsys.readouterr().err
