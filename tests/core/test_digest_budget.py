"""The whole pipeline on a PR at GitHub's limits stays inside one comment."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.marker import parse_marker
from bot.core.vocabulary import Lang
from bot.rulebook.files import load_rules

RULES = load_rules(Path(__file__).resolve().parents[2] / "rules")
DIRS = ("vllm/compilation", "vllm/v1/attention/backends", "vllm/multimodal/processing",
        "vllm/entrypoints/openai", "csrc/attention", "tests/compile", "docs/models")


def _huge_pr() -> PullRequestFacts:
    files = []
    for i in range(3000):
        name = f"{DIRS[i % len(DIRS)]}/{'deeply_nested_name_' * 6}{i}.py"
        defs = "".join(f"+def function_number_{i}_{j}(x):\n+    return x\n" for j in range(20))
        patch = f"@@ -1,3 +1,43 @@ class Owner{i}:\n{defs}-old = 1\n"
        files.append(ChangedFile(filename=name, status="modified", additions=40, deletions=1,
                                 patch=patch))
    return PullRequestFacts(
        number=1, title="[torch.compile][Perf] Rewrite everything " + "x" * 500,
        body="## Test Plan\nTBD\n" + "faster " * 20_000, head_sha="a" * 40,
        changed_files=4200, additions=120_000, deletions=3000, files=tuple(files),
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("explain", [False, True])
def test_three_thousand_files_fit_in_one_comment(lang: Lang, explain: bool) -> None:
    pr = _huge_pr()
    digest = build_digest(pr, RULES, lang, explain=explain)
    markdown = render_digest(digest)
    assert len(markdown) <= 60_000
    marker = parse_marker(markdown)
    assert marker is not None
    assert marker.head_sha == "a" * 40
    assert "**large-diff**" in markdown
    assert "3,000" in markdown  # says GitHub listed only 3,000 of 4,200 files
    assert "4,200" in markdown
