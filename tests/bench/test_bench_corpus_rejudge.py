"""Re-judging a changed digest (bench/corpus/rejudge.py): only items whose text is new are
sent to a judge, kept verdicts stay as they were, and a gone item's verdict is dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.corpus.cases import content_sha, load_corpus, render_case, sha256
from bench.corpus.items import Item, split_items
from bench.corpus.packets import BRIEF, write_packet
from bench.corpus.rejudge import is_stale, merge, to_judge
from bench.quality_corpus import parse_judgement

ITEMS = [
    Item(1, "visible", "summary", "Low-criticality docs change"),
    Item(2, "visible", "ci", "CI to run: `docs.yaml`: Documentation Build"),
    Item(3, "collapsed", "area", "**Docs**: are the examples runnable?"),
]


def _judgement(texts: dict[str, str], digest: str = "a" * 64) -> dict[str, Any]:
    return {
        "pr": 1, "brief": "b" * 64, "digest": digest, "verdict_fits": True,
        "points": [{"text": "p", "made": "full", "where": "visible"}],
        "items": [{"text": text, "where": "visible", "verdict": verdict, "why": "w"}
                  for text, verdict in texts.items()],
    }


def test_only_the_items_without_a_verdict_on_their_text_are_judged_again() -> None:
    old = parse_judgement(_judgement({ITEMS[0].text: "useful", "gone": "noise"}), "t")
    assert to_judge(ITEMS, old) == {2, 3}
    assert to_judge(ITEMS, None) == {1, 2, 3}
    assert is_stale("a" * 64, ITEMS[:1], old) is False
    assert is_stale("c" * 64, ITEMS[:1], old) is True  # another digest: points again
    assert is_stale("a" * 64, ITEMS, old) is True


MARKER = "<!-- pr-digest v1 sha=abc rules={rules} lang=en verdict=read risk=low -->\n"


def test_a_digest_whose_only_change_is_its_hidden_marker_keeps_its_judged_points() -> None:
    body = "### Read · ~3 min\n\n**Who should read it**\n- **Docs** (1 file)\n"
    judged_doc, moved_doc = MARKER.format(rules="r1") + body, MARKER.format(rules="r2") + body
    assert content_sha(judged_doc) == content_sha(moved_doc) == sha256(body)
    assert content_sha(body + "x") != content_sha(moved_doc)
    raw = _judgement({ITEMS[0].text: "useful"}, digest=sha256(judged_doc))
    raw["content"] = content_sha(judged_doc)
    judged = parse_judgement(raw, "t")
    assert is_stale(sha256(moved_doc), ITEMS[:1], judged, content_sha(moved_doc)) is False
    other = MARKER.format(rules="r2") + body.replace("Docs", "CI")
    assert is_stale(sha256(other), ITEMS[:1], judged, content_sha(other)) is True
    # a judgement without the content sha (older ones) still needs the same Markdown
    del raw["content"]
    assert is_stale(sha256(moved_doc), ITEMS[:1], parse_judgement(raw, "t"),
                    content_sha(moved_doc)) is True


def test_merge_keeps_shown_verdicts_takes_the_new_ones_and_drops_the_gone() -> None:
    old = _judgement({ITEMS[0].text: "useful", ITEMS[1].text: "noise", "gone": "noise"})
    new = _judgement({ITEMS[2].text: "noise"}, digest="c" * 64)
    new["points"] = [{"text": "q", "made": "no", "where": "none"}]
    merged = merge(old, new, ITEMS, "t")
    verdicts = {item["text"]: item["verdict"] for item in merged["items"]}
    assert verdicts == {ITEMS[0].text: "useful", ITEMS[1].text: "noise", ITEMS[2].text: "noise"}
    assert merged["digest"] == "c" * 64
    assert merged["earlier_digests"] == ["a" * 64]
    assert merged["points"] == new["points"]
    parse_judgement(merged, "t")  # still a judgement the report reads


def test_a_new_verdict_on_a_kept_text_wins() -> None:
    old = _judgement({ITEMS[0].text: "useful"})
    new = _judgement({ITEMS[0].text: "noise"}, digest="c" * 64)
    (item,) = merge(old, new, ITEMS, "t")["items"]
    assert item["verdict"] == "noise"


def test_a_rejudge_packet_marks_the_new_items_and_skips_an_unchanged_digest(
    tmp_path: Path,
) -> None:
    (case,) = load_corpus(only=["pr50257"])
    items = split_items(render_case(case).markdown)
    brief = BRIEF.read_text(encoding="utf-8")
    half = {item.text: "useful" for item in items[: len(items) // 2]}
    old = parse_judgement(_judgement(half), "t")
    folder = write_packet(case, tmp_path, brief, old, rejudge=True)
    assert folder is not None
    lines = [line for line in (folder / "items.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("[")]
    assert len(lines) == len(items)
    for line, item in zip(lines, items, strict=True):
        mark = "kept" if item.text in half else "JUDGE"
        assert line == f"[{item.id}] {item.where} · {mark} · {item.text}"
    assert "Re-judge" in (folder / "items.md").read_text(encoding="utf-8")
    # Judged whole on today's digest: nothing to send.
    digest = (folder / "digest.md").read_text(encoding="utf-8")
    whole = parse_judgement(_judgement({i.text: "useful" for i in items}, sha256(digest)), "t")
    assert write_packet(case, tmp_path / "again", brief, whole, rejudge=True) is None
