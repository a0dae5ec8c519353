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
