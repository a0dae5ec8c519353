"""`digest-bot` as a user runs it: offline digests, check-rules, and the online digest
against the fake GitHub HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"
CONTRACT_KEYS = {"verdict", "reading_minutes", "areas", "risks", "reviewers", "labels", "markdown"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DIGEST_APP_ID", "DIGEST_PRIVATE_KEY", "DIGEST_PRIVATE_KEY_PATH",
                 "DIGEST_GITHUB_TOKEN", "DIGEST_GITHUB_API_URL", "DIGEST_LANGUAGE",
                 "DIGEST_RULES_DIR", "DIGEST_BOT_LOGIN"):
        monkeypatch.delenv(name, raising=False)


def _json_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["digest", *args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def test_offline_json_keeps_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json_run(capsys, "--event", str(EVENT), "--files", str(FILES))
    assert set(data) >= CONTRACT_KEYS
    assert data["verdict"] == "deep-read"
    areas = data["areas"]
    assert isinstance(areas, list)
    compile_area = next(a for a in areas if a["id"] == "compile")
    assert {"id", "title", "files", "reasons"} <= set(compile_area)
    assert "vllm/utils/gpu_sync_debug.py" in compile_area["files"]
    risks = data["risks"]
    assert isinstance(risks, list)
    assert {"id", "severity", "text", "evidence"} <= set(risks[0])
    assert "missing-gpu-eval" in {r["id"] for r in risks}
    assert set(data["reviewers"]) == {"users", "teams"}
    assert "ProExpertProg" in data["reviewers"]["users"]
    markdown = data["markdown"]
    assert isinstance(markdown, str)
    assert markdown.startswith("<!-- pr-digest")


def test_offline_markdown_matches_json_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", "--event", str(EVENT), "--files", str(FILES)]) == 0
    markdown = capsys.readouterr().out
    data = _json_run(capsys, "--event", str(EVENT), "--files", str(FILES))
    assert markdown.rstrip("\n") == data["markdown"]


def test_chinese_digest(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json_run(capsys, "--event", str(EVENT), "--files", str(FILES), "--lang", "zh")
    assert "lang=zh" in str(data["markdown"]).splitlines()[0]
    assert "风险" in str(data["markdown"])


def test_bare_pr_object_without_files(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    bare = tmp_path / "pr.json"
    bare.write_text(json.dumps(json.loads(EVENT.read_text())["pull_request"]))
    data = _json_run(capsys, "--event", str(bare))
    assert "compile" in {a["id"] for a in data["areas"]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"action": "opened", "issue": {}}', "not a pull_request"),
        ('{"number": "x", "head": {}}', "malformed pull request"),
    ],
)
def test_bad_event_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "event.json"
    if content is not None:
        path.write_text(content)
    assert main(["digest", "--event", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_bad_files_list_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    files = tmp_path / "files.json"
    files.write_text('{"filename": "a.py"}')
    assert main(["digest", "--event", str(EVENT), "--files", str(files)]) == 2
    assert "list of PR-file objects" in capsys.readouterr().err


def test_check_rules_ok_and_bad(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-rules", str(ROOT / "rules")]) == 0
    assert "rules OK" in capsys.readouterr().out
    assert main(["check-rules", str(ROOT / "tests/fixtures/rules_bad")]) == 1
    err = capsys.readouterr().err
    assert "compile.yaml:7: rule 'compile'" in err
    assert "pathz" in err


@pytest.fixture
def fake_github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHubState]:
    state = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    state.add_repo("vllm-project/vllm")
    state.add_pull("vllm-project/vllm", 7, title="[torch.compile] Fix a graph break",
                   body="## Test Plan\n\nTBD\n", author="alice",
                   files=[FakeFile("vllm/compilation/backends.py", additions=30, deletions=4)])
    with FakeGitHubServer(state) as url:
        monkeypatch.setenv("DIGEST_GITHUB_API_URL", url)
        monkeypatch.setenv("DIGEST_APP_ID", str(state.app_id))
        monkeypatch.setenv("DIGEST_PRIVATE_KEY", PRIVATE_KEY_PEM)
        monkeypatch.setenv("DIGEST_WRITE_INTERVAL_SECONDS", "0.01")
        yield state


def test_online_digest_is_a_dry_run_unless_posted(
    capsys: pytest.CaptureFixture[str], fake_github: FakeGitHubState
) -> None:
    data = _json_run(capsys, "vllm-project/vllm#7")
    assert "compile" in {a["id"] for a in data["areas"]}
    assert data["dry_run_writes"] == ["create_comment"]
    assert fake_github.comments_on("vllm-project/vllm", 7) == []

    assert main(["digest", "vllm-project/vllm#7", "--post"]) == 0
    capsys.readouterr()
    assert len(fake_github.bot_comments("vllm-project/vllm", 7)) == 1
    assert main(["digest", "vllm-project/vllm#7", "--post"]) == 0
    assert len(fake_github.bot_comments("vllm-project/vllm", 7)) == 1


def test_online_digest_of_missing_pr_is_exit_2(
    capsys: pytest.CaptureFixture[str], fake_github: FakeGitHubState
) -> None:
    assert main(["digest", "vllm-project/vllm#999"]) == 2
    assert "vllm-project/vllm#999" in capsys.readouterr().err


def _python_m_bot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, cwd=ROOT,
        timeout=120, env={"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )


def test_python_m_bot_digest_writes_all_of_it_before_its_quick_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `run` ends a digest's process with os._exit: the output must be whole (a pipe,
    # not a terminal, so nothing is line-buffered) and the same as `main` prints.
    for explain in ((), ("--explain",)):
        args = ("digest", "--event", str(EVENT), "--files", str(FILES), "--format", "json")
        done = _python_m_bot(tmp_path, *args, *explain)
        assert done.returncode == 0, done.stderr
        assert main([*args, *explain]) == 0
        assert done.stdout == capsys.readouterr().out
        assert json.loads(done.stdout)["markdown"]


def test_python_m_bot_failures_exit_as_before(tmp_path: Path) -> None:
    missing = _python_m_bot(tmp_path, "digest", "--event", str(tmp_path / "none.json"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    version = _python_m_bot(tmp_path, "--version")
    assert version.returncode == 0
    assert version.stdout.startswith("digest-bot ")
