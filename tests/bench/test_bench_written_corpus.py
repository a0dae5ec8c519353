"""The written variant of the corpus (bench/corpus/written.py): a recorded completion is
verified and rendered into the digest the judges see; the packets mark only its new
items for judging, and the side-by-side report names both variants."""

from __future__ import annotations

import json
from pathlib import Path

from bench.corpus.cases import load_corpus, render_case
from bench.corpus.items import split_items
from bench.corpus.packets import write_packets
from bench.corpus.written import renderer
from bench.quality_corpus import format_side_by_side, load_judgements, measure

CASE = "pr38174"
POINT = "The new `VocabMapping` is only built when the heterogeneous vocabulary is asked for."


def _completions(tmp_path: Path) -> Path:
    directory = tmp_path / "completions"
    directory.mkdir()
    reply = {"title": "Heterogeneous draft vocabularies", "summary": "Maps draft token ids.",
             "points": [{"text": POINT, "cites": ["vllm/v1/spec_decode/vocab_mapping.py"]}],
             "not_needed": [], "gaps": [], "lesson": None}
    (directory / f"{CASE}.json").write_text(json.dumps(reply), encoding="utf-8")
    return directory


def test_a_recorded_completion_changes_only_its_case(tmp_path: Path) -> None:
    render = renderer(_completions(tmp_path))
    cases = {case.name: case for case in load_corpus(only=[CASE, "pr32374"])}
    written, other = cases[CASE], cases["pr32374"]
    assert "VocabMapping" in render(written).markdown
    assert render(written).markdown != render_case(written).markdown
    assert render(other).markdown == render_case(other).markdown


def test_writer_packets_mark_only_new_items(tmp_path: Path) -> None:
    completions = _completions(tmp_path)
    folders = write_packets(tmp_path / "packets", only=set(), writer=completions)
    assert [folder.name for folder in folders] == [CASE]
    items = (folders[0] / "items.md").read_text(encoding="utf-8")
    judged_lines = [line for line in items.splitlines() if "JUDGE" in line]
    assert any("VocabMapping" in line for line in judged_lines)
    plain = {item.text for item in split_items(render_case(load_corpus(only=[CASE])[0]).markdown)}
    written = split_items((folders[0] / "digest.md").read_text(encoding="utf-8"))
    kept = [item for item in written if item.text in plain]
    assert kept, "items the plain digest shows too keep their verdict"
    assert len(judged_lines) < len(written)


def test_side_by_side_reports_both_variants(tmp_path: Path) -> None:
    cases = load_corpus(only=[CASE])
    judgements = load_judgements()
    plain = measure(cases, judgements)
    written = measure(cases, {}, renderer(_completions(tmp_path)))
    text = format_side_by_side(plain, written)
    assert "tuned, plain: 1/1 PRs judged" in text
    assert "tuned, written: 0/1 PRs judged" in text
