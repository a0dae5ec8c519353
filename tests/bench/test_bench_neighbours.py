"""`python -m bench neighbours`: the cases of one release window are each other's open
PRs; each signal is counted where it fires and only there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.bench_neighbours import measure

PATCH = "@@ -10,3 +10,4 @@ def shared_step(x):\n     y = 1\n+    z = 2\n"


def _case(number: int, author: str, files: list[dict[str, Any]], window: list[str],
          body: str = "") -> dict[str, Any]:
    return {"name": f"pr{number}", "files": files, "thread": [],
            "source": {"release_pair": window},
            "event": {"pull_request": {"number": number, "title": f"PR {number}", "body": body,
                                       "user": {"login": author}, "head": {"sha": "a" * 40},
                                       "base": {"ref": "main"}}}}


def test_signals_fire_within_a_window_only(tmp_path: Path) -> None:
    shared = [{"filename": "vllm/x.py", "additions": 1, "deletions": 0, "patch": PATCH}]
    cases = [
        _case(1, "a", shared, ["0.1.0", "0.2.0"], body="Depends on #7 landing first."),
        _case(2, "b", shared, ["0.1.0", "0.2.0"]),
        _case(3, "c", shared, ["0.2.0", "0.3.0"]),  # another window: not compared
        _case(4, "d", [{"filename": "vllm/y.py", "additions": 1}], ["0.1.0", "0.2.0"]),
    ]
    for case in cases:
        (tmp_path / f"{case['name']}.json").write_text(json.dumps(case))
    report, items = measure(tmp_path)
    assert report["cases"] == 4
    assert report["windows"] == 2
    assert report["signals"]["same-function"] == {"items": 2, "prs": 2}
    assert report["signals"]["dependency"] == {"items": 1, "prs": 1}
    assert report["signals"]["same-file"] == {"items": 0, "prs": 0}
    assert sorted((i["pr"], i.get("neighbour")) for i in items if "neighbour" in i) == [
        (1, 2), (2, 1)]
