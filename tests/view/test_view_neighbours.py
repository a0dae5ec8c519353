"""Issue 42 in the label view: a row says "overlaps #N", "competes with #N" or "conflicts",
and a filter keeps only those rows (and the JSON API carries `neighbours`). Every test
runs on both stores (tests/view/conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fakes.github_state import FakeFile
from tests.handler_env import COMPILE_FILES, REPO, UNTESTED_BODY
from tests.view_env import view_env

PAGE = f"/view/{REPO}"
API = f"/api/digests/{REPO}"
SAME_FUNCTION = FakeFile("vllm/compilation/decorators.py", additions=12, deletions=2,
                         patch="@@ -1,3 +1,4 @@ class Wrapper:\n+    other(fn)\n")
SAME_MODULE = FakeFile("vllm/utils/gpu_sync_debug.py", additions=3, deletions=1,
                       patch="@@ -9,2 +9,3 @@ def unrelated():\n+    x = 1\n")
LORA = FakeFile("vllm/lora/layers.py", additions=30, deletions=2,
                patch="@@ -5,2 +5,3 @@ def apply_lora():\n+    w = 4\n")


def _numbers(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-number="(\d+)"', html)]


def _row(html: str, number: int) -> str:
    start = html.index(f'data-number="{number}"')
    end = html.find('<li class="entry', start)
    return html[start:end if end >= 0 else len(html)]


async def test_rows_show_and_filter_overlaps_competition_and_conflicts(tmp_path: Path) -> None:
    async with view_env(tmp_path, open_prs=True) as env:
        env.state.add_pull(REPO, 1, title="Fix a graph break", body="Fixes #900\n\n"
                           + UNTESTED_BODY, files=COMPILE_FILES, author="alice")
        env.state.add_pull(REPO, 2, title="Another compile fix", body=UNTESTED_BODY,
                           files=[SAME_FUNCTION, SAME_MODULE], author="bob")
        env.state.add_pull(REPO, 3, title="LoRA", body="Fixes #900\n\n" + UNTESTED_BODY,
                           files=[LORA], author="carol")
        env.state.add_pull(REPO, 4, title="Unrelated LoRA tidy", body=UNTESTED_BODY,
                           files=[FakeFile("vllm/lora/models.py", additions=30, deletions=1,
                                           patch="@@ -1,1 +1,2 @@ def load():\n+    v = 1\n")],
                           author="dave")
        env.state.pull(REPO, 4).mergeable_state = "dirty"
        for number in (1, 2, 3, 4):
            await env.digest(number)
        page = (await env.get(PAGE)).text
        overlapping = (await env.get(PAGE, params={"neighbours": "overlaps"})).text
        competing = (await env.get(PAGE, params={"neighbours": "competes"})).text
        conflicts = (await env.get(PAGE, params={"neighbours": "conflicts"})).text
        bad = await env.get(PAGE, params={"neighbours": "everything"})
        api = {item["number"]: item for item in (await env.get(API)).json()}
    assert "overlaps #1" in _row(page, 2)
    assert "competes with #1" in _row(page, 3)
    assert "conflicts" in _row(page, 4)
    assert "overlaps" not in _row(page, 4)
    assert "competes" not in _row(page, 4)
    assert sorted(_numbers(overlapping)) == [2]
    assert sorted(_numbers(competing)) == [3]
    assert sorted(_numbers(conflicts)) == [4]
    assert bad.status_code == 400
    assert "neighbours" in bad.text
    assert [n["number"] for n in api[2]["neighbours"]["neighbours"]] == [1]
    assert api[4]["neighbours"]["live"]["conflicts"] is True
