"""`digest-bot index build|show` and `digest --index`, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM
from tests.repo_index_tarballs import tree_tarball
from tests.repo_index_tree import PR_EVENT, PR_FILES, TREE

REPO = "vllm-project/vllm"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("DIGEST_APP_ID", "DIGEST_PRIVATE_KEY", "DIGEST_PRIVATE_KEY_PATH",
                 "DIGEST_GITHUB_TOKEN", "DIGEST_GITHUB_API_URL", "DIGEST_LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DIGEST_DB_PATH", str(tmp_path / "default.db"))


def _build(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["index", "build", "--path", str(TREE), "--name", REPO, "--db", str(db)]) == 0
    return capsys.readouterr().out


def test_build_from_a_checkout_reports_files_skips_and_growth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _build(tmp_path / "index.db", capsys)
    assert out.startswith("indexed 17 files at local-")
    assert "skipped: 1 syntax-error" in out
    assert f"database {tmp_path / 'index.db'}: 0 -> " in out


def test_show_lists_definitions_overrides_and_callers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "index.db"
    _build(db, capsys)
    assert main(["index", "show", "BaseMultiModalProcessor._get_prompt_updates",
                 "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("vllm/multimodal/processing.py:11: @abstractmethod def ")
    assert lines[2] == "  overridden in 3 subclass(es)"
    assert main(["index", "show", "enable_sync_checks", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "vllm/utils/gpu_sync_debug.py:28: def enable_sync_checks(mode, strict)" in out
    assert "    vllm/engine/runner.py (2x)" in out


def test_show_of_an_unknown_symbol_or_without_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", "show", "anything", "--db", str(tmp_path / "none.db")]) == 2
    assert "no index database" in capsys.readouterr().err
    db = tmp_path / "index.db"
    _build(db, capsys)
    assert main(["index", "show", "NoSuchThing", "--db", str(db)]) == 1
    assert "NoSuchThing: not found" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["db", "dir"])
def test_offline_digest_with_an_index(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = TREE
    if source == "db":
        index = tmp_path / "index.db"
        _build(index, capsys)
    args = ["digest", "--event", str(PR_EVENT), "--files", str(PR_FILES), "--index", str(index)]
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    context = data["repo_context"]
    assert [s["changed"] for s in context["siblings"]] == ["_checked_to"]
    assert len(context["overrides"][0]["overriders"]) == 3
    assert context["callers"][0]["call_sites"] == 3
    assert "**Around the change**" in data["markdown"]


def test_offline_digest_without_index_has_no_context(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", "--event", str(PR_EVENT), "--files", str(PR_FILES),
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["repo_context"] is None


def test_a_missing_index_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["digest", "--event", str(PR_EVENT), "--index", str(tmp_path / "nope")]) == 2
    assert "no such directory or index database" in capsys.readouterr().err


def test_build_through_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    server: FakeGitHubServer,
) -> None:
    state = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, installations={1: "vllm-project"})
    repo = state.add_repo(REPO)
    repo.tarball = tree_tarball(TREE)
    server.use(state)
    monkeypatch.setenv("DIGEST_GITHUB_API_URL", server.url)
    monkeypatch.setenv("DIGEST_APP_ID", str(state.app_id))
    monkeypatch.setenv("DIGEST_PRIVATE_KEY", PRIVATE_KEY_PEM)
    db = tmp_path / "online.db"
    assert main(["index", "build", "--repo", REPO, "--db", str(db)]) == 0
    assert capsys.readouterr().out.startswith(f"indexed 17 files at {repo.head_sha[:12]}")
    assert main(["index", "build", "--repo", REPO, "--db", str(db)]) == 0
    assert "is indexed already" in capsys.readouterr().out
