"""`digest-bot simulate --override FILE --cases ...` (issue 43 item 1): real corpus PRs
digested with and without a small override, the lines it adds and removes per PR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "real" / "corpus"
FRONTEND = CORPUS / "pr42116.json"  # vllm/entrypoints/openai/completion/protocol.py
DOCS = CORPUS / "pr55691.json"  # one docs/ file
UNTOUCHED = CORPUS / "pr38174.json"  # neither

OVERRIDE = """\
disable: [docs]
areas:
  - id: frontend-api
    title: OpenAI-compatible protocol
    audience: frontend maintainers
    criticality: high
    match: {paths: ['vllm/entrypoints/openai/**']}
"""


def _override(tmp_path: Path, text: str = OVERRIDE) -> Path:
    file = tmp_path / "pr-digest.yml"
    file.write_text(text, encoding="utf-8")
    return file


def _sections(out: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        if line.startswith("=== "):
            current = sections.setdefault(line.split()[1], [])
        elif line:
            current.append(line)
    return sections


def test_each_pr_shows_the_lines_the_override_adds_and_removes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    override = _override(tmp_path)
    assert main(["simulate", "--override", str(override),
                 "--cases", str(FRONTEND), str(DOCS), str(UNTOUCHED)]) == 0
    out = capsys.readouterr().out
    sections = _sections(out)
    assert set(sections) == {"vllm-project/vllm#42116", "vllm-project/vllm#55691"}
    frontend = sections["vllm-project/vllm#42116"]
    # The new area has no code owners, so no "Who should read it" line: its rule fires.
    assert ("+- ✅ `frontend-api` · fired — 1 file — file "
            "`vllm/entrypoints/openai/completion/protocol.py`") in frontend
    assert sections["vllm-project/vllm#55691"][1:3] == [
        "-Only Documentation and examples changes, +1/−0 in 1 file",
        "+No area rule matched, +1/−0 in 1 file",
    ]
    assert "pr-digest v1" not in out  # the marker's rules version is not a change
    assert out.splitlines()[-1].startswith(f"{override}: changes 2 of 3 digests (+")


def test_the_added_lines_are_what_digest_repo_dir_posts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    override = _override(tmp_path)
    assert main(["simulate", "--override", str(override), "--cases", str(FRONTEND)]) == 0
    added = [line[1:] for line in _sections(capsys.readouterr().out)["vllm-project/vllm#42116"]
             if line.startswith("+")]
    case = json.loads(FRONTEND.read_text(encoding="utf-8"))
    (tmp_path / "event.json").write_text(json.dumps(case["event"]))
    (tmp_path / "files.json").write_text(json.dumps(case["files"]))
    checkout = tmp_path / "checkout" / ".github"
    checkout.mkdir(parents=True)
    (checkout / "pr-digest.yml").write_text(OVERRIDE, encoding="utf-8")
    assert main(["digest", "--event", str(tmp_path / "event.json"),
                 "--files", str(tmp_path / "files.json"),
                 "--repo-dir", str(checkout.parent)]) == 0
    posted = capsys.readouterr().out.splitlines()
    assert len(added) == 3  # the override adds an area: the heading and its "Why" lines
    assert all(line in posted for line in added)


def test_a_folder_of_cases_is_read_in_name_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    override = _override(tmp_path, "disable: [docs]\n")
    assert main(["simulate", "--override", str(override), "--cases", str(CORPUS)]) == 0
    out = capsys.readouterr().out
    numbers = [int(line.split("#")[1].split()[0]) for line in out.splitlines()
               if line.startswith("=== ")]
    assert numbers == sorted(numbers)
    assert 55691 in numbers
    total = len(list(CORPUS.glob("*.json")))
    assert out.splitlines()[-1].startswith(f"{override}: changes {len(numbers)} of {total} ")


def test_a_bad_override_is_file_line_message_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    override = _override(tmp_path, "disable: [docs]\nareas: []\nroutng: {}\n")
    assert main(["simulate", "--override", str(override), "--cases", str(DOCS)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{override}:3: unknown key 'routng' (did you mean 'routing'?)"]


def test_a_case_that_is_not_one_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["simulate", "--override", str(_override(tmp_path)),
                 "--cases", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"{bad}: expected a case object")
