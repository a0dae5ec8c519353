"""`digest-bot digest --event ... --conversation FILE`: a saved thread replays offline as
the service reads it; a bad file is one line naming where, exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cli"
FILES = FIXTURES / "pr_56904_files.json"
CONVERSATION = FIXTURES / "pr_56904_conversation.json"


def _event(tmp_path: Path) -> Path:
    event = json.loads((FIXTURES / "pr_56904.json").read_text())
    event["pull_request"]["body"] = "Supersedes #56800.\n\n" + event["pull_request"]["body"]
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return path


def _run(tmp_path: Path, conversation: Path, capsys: pytest.CaptureFixture[str],
         *extra: str) -> tuple[int, str, str]:
    code = main(["digest", "--event", str(_event(tmp_path)), "--files", str(FILES),
                 "--conversation", str(conversation), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_saved_thread_settles_asks_and_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(tmp_path, CONVERSATION, capsys, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert "missing-gpu-eval" not in {r["id"] for r in data["risks"]}
    assert data["later_evidence"] == [{
        "risk": "missing-gpu-eval", "outcome": "cleared", "by": "hostile-contributor",
        "url": "https://github.com/vllm-project/vllm/pull/2#issuecomment-3004",
        "evidence": "|gsm8k|3|strict-match|5|exact_match|0.7801|± 0.0114|",
    }]
    asks = {a["kind"]: (a["by"], a["status"], a["answered_by"]) for a in data["asks"]}
    assert asks == {"docs": ("zou3519", "open", ""),
                    "gpu-eval": ("ProExpertProg", "answered", "evidence"),
                    "split": ("drive-by", "answered", "reply")}
    (link,) = data["links"]
    assert (link["number"], link["state"], link["is_pull"], link["objection_by"]) == (
        56800, "closed", True, "ProExpertProg")
    assert link["objection"].startswith("We should not wrap at the processor layer")


def test_without_the_file_the_digest_is_the_descriptions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["digest", "--event", str(_event(tmp_path)), "--files", str(FILES),
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["asks"] == []
    assert data["later_evidence"] == []
    assert "missing-gpu-eval" in {r["id"] for r in data["risks"]}
    assert data["links"][0]["state"] == ""


@pytest.mark.parametrize(("content", "message"), [
    ("[]", "expected a JSON object"),
    ('{"reviews": [{"user": {"login": "a"}}]}', "reviews.0.id: Field required"),
    ('{"comments": []}', "comments: Extra inputs are not permitted"),
    ('{"linked": {"not a ref": {"number": 1}}}', "linked.not a ref: not a reference"),
    ("{not json", "not valid JSON"),
])
def test_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = tmp_path / "conversation.json"
    bad.write_text(content)
    code, out, err = _run(tmp_path, bad, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith(f"digest-bot: error: {bad}")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_online_mode_reads_the_conversation_itself(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", "vllm-project/vllm#1", "--conversation", str(CONVERSATION)]) == 2
    assert "--conversation is for --event" in capsys.readouterr().err
