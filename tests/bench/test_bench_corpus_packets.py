"""Blind judge packets (bench/corpus/packets.py) for real corpus cases: only what a reviewer
sees, the items split by the report's own rule, checksums that hold."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bench.corpus.items import split_items
from bench.corpus.packets import BRIEF, write_packets

PACKET_FILES = {"pr.md", "thread.md", "digest.md", "items.md", "JUDGE.md", "sha256.txt"}


def test_packets_hold_only_the_reviewer_view_and_checksums(tmp_path: Path) -> None:
    written = write_packets(tmp_path, only={"pr50257", "pr55044"})
    assert sorted(p.name for p in written) == ["pr50257", "pr55044"]
    for folder in written:
        assert {p.name for p in folder.iterdir()} == PACKET_FILES
        for line in (folder / "sha256.txt").read_text(encoding="utf-8").splitlines():
            digest, name = line.split("  ")
            data = (folder / name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == digest
        assert (folder / "JUDGE.md").read_text(encoding="utf-8") == BRIEF.read_text(
            encoding="utf-8"
        )
    posted = tmp_path / "pr50257"
    pr = (posted / "pr.md").read_text(encoding="utf-8")
    assert pr.startswith("# #50257: [Frontend] Migrate Responses API validation errors")
    assert "### `vllm/entrypoints/openai/parser/harmony_utils.py` (modified" in pr
    assert "## How this case was made" in pr
    items = [
        line
        for line in (posted / "items.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("[")
    ]
    expected = split_items((posted / "digest.md").read_text(encoding="utf-8"))
    assert items == [f"[{i.id}] {i.where} · {i.text}" for i in expected]
    assert any(" collapsed · " in line for line in items)


def test_a_quiet_pr_posts_nothing_and_has_no_items(tmp_path: Path) -> None:
    (folder,) = write_packets(tmp_path, only={"pr55044"})
    assert "No comment is posted" in (folder / "digest.md").read_text(encoding="utf-8")
    assert "(no items" in (folder / "items.md").read_text(encoding="utf-8")
