"""`digest --writer-dry-run` prints the exact request without sending it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"


def test_dry_run_prints_the_request_and_is_deterministic(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["digest", "--event", str(EVENT), "--files", str(FILES), "--writer-dry-run",
            "--writer-model", "qwen3", "--lang", "zh"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    body = json.loads(first)
    assert body["model"] == "qwen3"
    assert body["response_format"]["type"] == "json_schema"
    assert "Simplified Chinese" in body["messages"][1]["content"]
    assert "pull request #56904" in body["messages"][1]["content"]
