"""Golden-file comparison for rendered Markdown: wording changes show up as diffs.

Run with UPDATE_GOLDEN=1 to rewrite the files after an intended change, then review
`git diff tests/golden/`.
"""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN_DIR = Path(__file__).parent / "golden"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN_DIR / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        raise AssertionError(f"{path} is missing; run with UPDATE_GOLDEN=1 to create it")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from {path} (UPDATE_GOLDEN=1 to accept)"
