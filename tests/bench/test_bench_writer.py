"""`python -m bench writer`: requests for the corpus, a run against the fake endpoint, and
a replay of recorded completions, each reporting kept and dropped items per PR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import bench_writer
from tests.fakes.openai_http import FakeOpenAIServer, Reply

ONLY = ["pr38174", "pr32374"]


def _reply(point: str, cite: str) -> str:
    return json.dumps({"title": "t", "summary": "", "points": [{"text": point, "cites": [cite]}],
                       "not_needed": [], "gaps": [], "lesson": None})


def test_requests_are_written_per_case_and_deterministic(tmp_path: Path) -> None:
    first = bench_writer.write_requests(tmp_path / "a", ONLY, "en", "m")
    second = bench_writer.write_requests(tmp_path / "b", ONLY, "en", "m")
    assert sorted(p.name for p in first) == ["pr32374.json", "pr38174.json"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
    body = json.loads((tmp_path / "a/pr38174.json").read_text())
    assert "pull request #38174" in body["messages"][1]["content"]


def test_run_reports_kept_and_dropped_per_pr() -> None:
    reply = _reply("`VocabMapping` maps ids; also `invented_name`.",
                   "vllm/v1/spec_decode/vocab_mapping.py")
    with FakeOpenAIServer([Reply(content=reply)]) as url:
        rows = bench_writer.run_corpus(url, "m", ["pr38174"], "en", 10.0)
    assert [(r.name, r.result.status) for r in rows] == [("pr38174", "nothing_verified")]
    assert [d.reason for d in rows[0].result.dropped] == ["unknown-code"]
    text = bench_writer.report(rows)
    assert "unknown-code 1" in text
    assert "1234/100" in text


def test_replay_renders_recorded_completions(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    recorded = tmp_path / "rec"
    recorded.mkdir()
    (recorded / "pr38174.json").write_text(_reply(
        "`VocabMapping` maps target ids to draft ids.", "vllm/v1/spec_decode/vocab_mapping.py"))
    assert bench_writer.main(["replay", str(recorded), "--only", *ONLY,
                              "--out", str(tmp_path / "md")]) == 0
    out = capsys.readouterr().out
    assert "| pr38174 | ok | 2 |" in out  # the title and the point
    assert "pr32374" not in out  # nothing recorded for it
    assert "`VocabMapping` maps target ids to draft ids." in (
        tmp_path / "md/pr38174.md").read_text()
