"""One place that builds a handler context over the shared in-memory fake GitHub."""

from __future__ import annotations

from pathlib import Path

from bot.handlers.context import HandlerContext
from bot.handlers.repo_rules import RulesProvider
from bot.observe.metrics import Metrics
from bot.rulebook.files import read_rule_sources
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeFile, FakeGitHubState

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
REPO = "vllm-project/vllm"
BOT = "pr-digest[bot]"

COMPILE_PATCH = (
    "@@ -10,6 +10,9 @@ def _active_check_mode():\n"
    "     mode = _MODE.get()\n"
    "+    if torch.compiler.is_compiling():\n"
    "+        return None\n"
    "+    return mode\n"
)
COMPILE_FILES = [
    FakeFile("vllm/utils/gpu_sync_debug.py", additions=40, deletions=3, patch=COMPILE_PATCH),
    FakeFile("vllm/compilation/decorators.py", additions=12, deletions=2,
             patch="@@ -1,3 +1,4 @@ class Wrapper:\n+    allow_in_graph(fn)\n"),
]
UNTESTED_BODY = (
    "## Purpose\nFix a graph break in the sync-debug checker.\n\n"
    "## Test Plan\n\n## Test Result\nModel evaluation — Not yet run — needs a GPU run "
    "before merge\n"
)


def make_state() -> FakeGitHubState:
    state = FakeGitHubState()
    state.add_repo(REPO)
    return state


def make_ctx(**overrides: object) -> HandlerContext:
    rules = RulesProvider(read_rule_sources(RULES_DIR))
    values: dict[str, object] = {"bot_login": BOT, "rules": rules, "metrics": Metrics()}
    values.update(overrides)
    return HandlerContext(**values)  # type: ignore[arg-type]


def gh_for(state: FakeGitHubState) -> MemoryGitHub:
    return MemoryGitHub(state, actor=BOT)
