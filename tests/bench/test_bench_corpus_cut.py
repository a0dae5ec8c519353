"""Cutting a PR out of a release diff (bench/corpus/cut.py) on a tiny two-release git repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.corpus.cut import CutError, ReleaseRepo, blocks_of, cut_case, find_window, holdout
from bench.corpus.spec import SpecError, parse_spec

BASE = "".join(f"line {n}\n" for n in range(1, 31))


def _commit(repo: Path, version: str, files: dict[str, str]) -> None:
    for path in repo.iterdir():
        if path.name != ".git":
            subprocess.run(["rm", "-rf", str(path)], check=True)
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A", "-f"], check=True)
    subprocess.run([*git, "commit", "-qm", version, "--allow-empty"], check=True)
    subprocess.run([*git, "tag", f"v{version}"], check=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> ReleaseRepo:
    root = tmp_path_factory.mktemp("releases")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _commit(root, "1.0.0", {"pkg/a.py": BASE, "pkg/old.py": "gone\n"})
    # Between 1.0.0 and 1.1.0: our PR adds `new_helper` near the top and a test file; another
    # PR edits line 25 of the same file and removes pkg/old.py.
    ours = BASE.replace("line 3\n", "line 3\ndef new_helper():\n    return 1\n")
    both = ours.replace("line 25\n", "line 25 changed by someone else\n")
    _commit(
        root, "1.1.0", {"pkg/a.py": both, "tests/test_a.py": "def test_new_helper():\n    pass\n"}
    )
    _commit(root, "1.2.0", {"pkg/a.py": both + "line 31\n", "tests/test_a.py": "x\n"})
    return ReleaseRepo(root)


def _spec(**extra: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "number": 101,
        "title": "[Core] add new_helper",
        "author": "someone",
        "created_at": "2026-08-01T10:00:00Z",
        "state": "merged",
        "body": "Adds `new_helper`.",
        "thread_visibility": "description-only",
        "areas_truth": ["core"],
        "locate": {"tokens": ["new_helper"], "files": ["pkg/a.py", "tests/test_a.py"]},
        "confidence": "high",
    }
    raw.update(extra)
    return raw


def test_the_window_is_where_the_tokens_first_appear(repo: ReleaseRepo) -> None:
    window = find_window(repo, ["new_helper", "line 31"], ["pkg"])
    # One token each: a tie between two windows is not an agreement.
    assert not window.agreed
    assert window.votes == {"new_helper": ("1.0.0", "1.1.0"), "line 31": ("1.1.0", "1.2.0")}
    assert find_window(repo, ["new_helper"], ["pkg"]).pair == ("1.0.0", "1.1.0")
    with pytest.raises(CutError, match="no token"):
        find_window(repo, ["never_written"], [])


def test_only_the_prs_blocks_are_kept(repo: ReleaseRepo) -> None:
    case = cut_case(repo, parse_spec(_spec(), "t.yaml"))
    assert case["source"]["release_pair"] == ["1.0.0", "1.1.0"]
    by_name = {f["filename"]: f for f in case["files"]}
    code = by_name["pkg/a.py"]
    assert code["status"] == "modified"
    assert code["patch"].startswith("@@ -1,6 +1,8 @@")
    assert "+def new_helper():" in code["patch"]
    assert "someone else" not in code["patch"]  # the other PR's block is cut
    assert (code["additions"], code["deletions"]) == (2, 0)
    assert case["source"]["cuts"]["pkg/a.py"] == {"blocks": 2, "kept": [0], "how": "token/thread"}
    test = by_name["tests/test_a.py"]
    assert test["status"] == "added"
    assert test["patch"].startswith("@@ -0,0 +1,2 @@")
    pr = case["event"]["pull_request"]
    assert (pr["additions"], pr["deletions"], pr["changed_files"]) == (4, 0, 2)
    assert "pkg/a.py (1 of 2 blocks)" in case["note"]
    assert case["holdout"] == holdout(101)


def test_blocks_chosen_by_hand_and_hand_edits(repo: ReleaseRepo) -> None:
    spec = _spec(
        locate={"tokens": ["new_helper"], "files": ["pkg/a.py", "pkg/old.py"]},
        blocks={"pkg/a.py": [{"block": 1, "new": "line 25 ours\n"}], "pkg/old.py": "all"},
    )
    case = cut_case(repo, parse_spec(spec, "t.yaml"))
    by_name = {f["filename"]: f for f in case["files"]}
    assert "+line 25 ours" in by_name["pkg/a.py"]["patch"]
    assert "new_helper" not in by_name["pkg/a.py"]["patch"]
    assert by_name["pkg/old.py"]["status"] == "removed"
    assert by_name["pkg/old.py"]["patch"] == "@@ -1 +0,0 @@\n-gone"
    assert case["source"]["hand_edited"] == ["pkg/a.py"]


def test_blocks_are_difflib_opcodes() -> None:
    _, _, blocks = blocks_of("a\nb\nc\n", "a\nB\nc\nd\n")
    assert [(b.tag, b.old, b.new) for b in blocks] == [
        ("replace", (1, 2), (1, 2)),
        ("insert", (3, 3), (3, 4)),
    ]


def test_a_bad_spec_or_block_is_a_clear_error(repo: ReleaseRepo) -> None:
    with pytest.raises(SpecError, match="thread_visibility"):
        parse_spec(_spec(thread_visibility="most"), "t.yaml")
    with pytest.raises(SpecError, match=r"asks\.tests is true but"):
        parse_spec(_spec(asks={"tests": True}), "t.yaml")
    with pytest.raises(CutError, match=r"blocks \[7\] do not exist"):
        cut_case(repo, parse_spec(_spec(blocks={"pkg/a.py": [7]}), "t.yaml"))


def test_a_file_a_release_lacks_is_none_though_its_name_holds_brackets(repo: ReleaseRepo) -> None:
    # `git show` read `[128,128]` as a pattern and answered a missing file with nothing.
    assert repo.text("1.0.0", "configs/block_shape=[128,128].json") is None
    assert repo.text("1.0.0", "pkg/old.py") == "gone\n"
