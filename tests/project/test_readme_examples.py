"""The README's example blocks (a ```sh block right after `<!-- example: offline -->`)
run from a clean checkout: each command exits 0 and prints something."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def example_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"<!-- example: offline -->\n```sh\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            command = line.split(" #", 1)[0].strip()
            if command:
                commands.append(command)
    return commands


def test_the_readme_has_example_blocks() -> None:
    assert len(example_commands()) >= 4


@pytest.mark.parametrize("command", example_commands())
def test_readme_example_runs(command: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/digest-bot", "examples run the console script"
    argv[0] = str(BIN / "digest-bot")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert "Traceback" not in result.stderr
