"""bench/sdists.py: where the vLLM source releases are, unpacked once, and the skip message."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from bench import sdists


def _tarball(folder: Path, version: str, members: dict[str, bytes]) -> Path:
    path = folder / f"vllm-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_the_folder_is_the_variable_else_the_corpus_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(sdists.ENV, raising=False)
    monkeypatch.setenv("PR_DIGEST_CORPUS_DIR", str(tmp_path / "corpus"))
    assert sdists.sdists_dir() == tmp_path / "corpus" / "sdists"
    monkeypatch.setenv(sdists.ENV, str(tmp_path / "mine"))
    assert sdists.sdists_dir() == tmp_path / "mine"


def test_a_tarball_is_unpacked_once_next_to_itself(tmp_path: Path) -> None:
    _tarball(tmp_path, "0.34.0", {"vllm-0.34.0/vllm/__init__.py": b"x = 1\n"})
    tree = sdists.release_tree("0.34.0", tmp_path)
    assert tree == tmp_path / "vllm-0.34.0"
    assert (tree / "vllm" / "__init__.py").read_bytes() == b"x = 1\n"
    (tree / "marker").write_text("kept")
    assert sdists.release_tree("0.34.0", tmp_path) == tree
    assert (tree / "marker").read_text() == "kept"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".unpack")] == []


def test_an_unpacked_folder_is_used_as_it_is_and_absence_is_none(tmp_path: Path) -> None:
    (tmp_path / "vllm-0.33.0").mkdir()
    assert sdists.release_tree("0.33.0", tmp_path) == tmp_path / "vllm-0.33.0"
    assert sdists.release_tree("0.32.0", tmp_path) is None


def test_a_member_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    _tarball(tmp_path, "0.34.0", {"../escape.py": b"bad\n"})
    with pytest.raises(tarfile.OutsideDestinationError):
        sdists.release_tree("0.34.0", tmp_path)
    assert not (tmp_path.parent / "escape.py").exists()
    assert not (tmp_path / "vllm-0.34.0").exists()


def test_the_skip_message_names_the_variable_and_the_command(tmp_path: Path) -> None:
    message = sdists.missing_message("0.33.0", "0.34.0", folder=tmp_path)
    assert str(tmp_path) in message
    assert "vllm-0.33.0.tar.gz and vllm-0.34.0.tar.gz" in message
    assert sdists.ENV in message
    assert sdists.FILL_COMMAND in message
