"""`digest-bot digest --event ... --open-prs FILE`: the other open PRs as GitHub's REST
API returns them; the digest names those that compete with or overlap this one. A bad
file is one `file:line`-style line, exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.core.render.escape import WORD_JOINER

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cli"
FILES = FIXTURES / "pr_56904_files.json"
OWN_FILES: list[dict[str, Any]] = json.loads(FILES.read_text())


def _event(tmp_path: Path, **pull: object) -> Path:
    event = json.loads((FIXTURES / "pr_56904.json").read_text())
    event["pull_request"]["body"] = ("Fixes #9100\n\nDepends on #56700 landing first.\n\n"
                                     + event["pull_request"]["body"])
    event["pull_request"].update(pull)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return path


def _pr(number: int, author: str, files: list[dict[str, Any]], *, title: str = "Something",
        body: str = "", state: str = "open", merged: bool = False) -> dict[str, Any]:
    return {"number": number, "title": title, "body": body, "state": state, "merged": merged,
            "user": {"login": author}, "head": {"sha": "b" * 40}, "base": {"ref": "main"},
            "draft": False, "created_at": "2026-11-20T10:00:00Z", "files": files}


def _same_function() -> list[dict[str, Any]]:
    # The same file and hunk: it changes `_active_check_mode` too.
    return [f for f in OWN_FILES if f["filename"] == "vllm/utils/gpu_sync_debug.py"]


def _unrelated() -> list[dict[str, Any]]:
    return [{"filename": "vllm/lora/layers.py", "status": "modified", "additions": 1,
             "deletions": 1, "patch": "@@ -1,3 +1,3 @@ def apply():\n-    a = 1\n+    a = 2\n"}]


OPEN_PRS = [
    _pr(56901, "other-dev", _same_function(), title="Make the sync checker cheaper"),
    _pr(56902, "third-dev", _unrelated(), body="Fixes #9100"),
    _pr(56903, "fourth-dev", _unrelated(), title="LoRA tweak"),
    _pr(56700, "hostile-contributor", _same_function()),
]


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], open_prs: Any,
         *extra: str, raw: str | None = None, **pull: object) -> tuple[int, str, str]:
    path = tmp_path / "open.json"
    path.write_text(raw if raw is not None else json.dumps(open_prs, indent=1))
    code = main(["digest", "--event", str(_event(tmp_path, **pull)), "--files", str(FILES),
                 "--open-prs", str(path), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_open_prs_are_named_by_what_they_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(tmp_path, capsys, OPEN_PRS, "--format", "json",
                        mergeable_state="dirty")
    assert code == 0
    found = json.loads(out)["neighbours"]
    named = {n["number"]: (n["relation"], n["reason"]) for n in found["neighbours"]}
    # The author's own PR (56700) is a dependency, not competition; 56903 shares nothing.
    assert named == {56902: ("competes", "same-issue"), 56901: ("overlaps", "same-function")}
    overlap = next(n for n in found["neighbours"] if n["number"] == 56901)
    assert "vllm/utils/gpu_sync_debug.py::_active_check_mode" in overlap["shared"]
    assert found["dependencies"] == [{"number": 56700, "cue": "depends-on", "state": "open"}]
    assert found["live"]["conflicts"] is True
    markdown = json.loads(out)["markdown"].replace(WORD_JOINER, "")
    assert "`_active_check_mode`" in markdown
    assert "#56700 (depends on): still open" in markdown
    assert "Conflicts with its base branch" in markdown
    assert "56903" not in markdown


def test_the_section_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, OPEN_PRS, "--lang", "zh")
    assert code == 0
    assert "**其他未合并的 PR**" in out
    assert "相互竞争" in out


def test_a_merged_dependency_in_the_file_says_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = [*OPEN_PRS[:3], _pr(56700, "hostile-contributor", [], state="closed", merged=True)]
    code, out, _ = _run(tmp_path, capsys, merged, "--format", "json")
    assert code == 0
    assert json.loads(out)["neighbours"]["dependencies"][0]["state"] == "merged"


@pytest.mark.parametrize(("raw", "expected"), [
    ('[\n  {"number": 1,\n  oops}\n]', "open.json:3: not valid JSON"),
    ('{"number": 1}', "open.json: expected a JSON list of PR objects"),
    ('[{"number": 1, "head": {}, "files": "x"}]', "open.json: [0].files: expected a list"),
    ('[{"title": "no number"}]', "open.json: [0]: not a pull_request payload"),
    ('[{"number": 1, "head": {}, "files": [{"status": "added"}]}]',
     "open.json: [0]: malformed file list: filename: Field required"),
])
def test_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: str, expected: str
) -> None:
    code, out, err = _run(tmp_path, capsys, None, raw=raw)
    assert code == 2
    assert out == ""
    assert expected in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
