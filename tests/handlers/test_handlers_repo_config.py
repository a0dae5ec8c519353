"""The service reads the repository's own config at each PR's base: end state on the fake."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.handlers.digest import sync_pull_request
from tests.fakes.github_state import FakeFile
from tests.handler_env import REPO, gh_for, make_ctx, make_state

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_config"
LORA_FILE = FakeFile(
    "vllm/lora/layers/base.py", additions=3, deletions=1,
    patch="@@ -10,3 +10,5 @@ class BaseLayer:\n     x = 1\n+    y = 2\n+    z = 3\n",
)


def _tree(version: str) -> dict[str, str | bytes]:
    root = FIXTURES / version
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


async def test_the_digest_names_code_owners_and_ci_steps_from_the_base() -> None:
    state = make_state()
    base = state.add_commit(REPO, _tree("0.34.0"))
    pull = state.add_pull(REPO, 7, title="[LoRA] Fix slicing", files=[LORA_FILE],
                          body="Fix.\n\nTested with pytest tests/lora -q: 12 passed")
    pull.base_sha = base
    ctx = make_ctx()
    outcome = await sync_pull_request(gh_for(state), ctx, REPO, 7)

    assert outcome.digest is not None
    assert outcome.digest.repo_config_source == f"base {base[:7]}"
    assert outcome.digest.owners is not None
    assert "jeejeelee" in outcome.digest.owners.users
    ci = outcome.digest.ci
    assert ci is not None
    assert any(s.file == ".buildkite/test_areas/lora.yaml" for s in ci.steps)
    assert "lora" in outcome.digest.ci_areas
    posted = state.comments_on(REPO, 7)[-1].body
    assert "code owners" in posted
    assert "`lora.yaml`" in posted

    # A second PR on the same base reads nothing again and parses nothing again.
    calls_before = sum(1 for c in state.calls if "/git/" in c.path)
    pull2 = state.add_pull(REPO, 8, title="[LoRA] Another", files=[LORA_FILE])
    pull2.base_sha = base
    again = await sync_pull_request(gh_for(state), ctx, REPO, 8)
    assert again.digest is not None
    assert again.digest.ci == ci
    assert len(ctx.repo_configs.parsed) == 1
    assert sum(1 for c in state.calls if "/git/" in c.path) == calls_before


async def test_an_unreadable_base_degrades_to_the_rules_alone() -> None:
    state = make_state()
    state.add_pull(REPO, 9, title="[LoRA] Fix", files=[LORA_FILE])  # base_sha unknown
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 9)
    assert outcome.digest is not None
    assert outcome.digest.ci is None
    assert outcome.digest.owners is None
    assert outcome.digest.repo_config_problems  # the missing commit is named, not fatal
    assert outcome.action in {"create", "noop"}


FRONTEND_POOL = ("DarkLight1337", "njhill", "aarnphm", "chaunceyjiang")


async def test_code_owners_covering_every_file_leave_the_pools_unasked() -> None:
    state = make_state()
    for user in FRONTEND_POOL:
        state.set_permission(REPO, user, "write")
    base = state.add_commit(REPO, _tree("0.34.0"))
    # `frontend` has a pool; vllm/entrypoints/openai/chat_completion/ has code owners in 0.34.0.
    pull = state.add_pull(REPO, 11, title="[Frontend] Fix", labels=["frontend"],
                          files=[FakeFile("vllm/entrypoints/openai/chat_completion/serving.py",
                                          additions=2, deletions=1,
                                          patch="@@ -1,2 +1,3 @@\n a\n+b\n")])
    pull.base_sha = base
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 11)
    assert outcome.digest is not None
    assert outcome.digest.owners is not None
    assert outcome.digest.owners.users
    assert not outcome.digest.owners.unowned
    assert state.pulls[(REPO, 11)].requested_users == []  # nobody beyond GitHub's own

    # The same PR on a base without CODEOWNERS: the pool is asked.
    state2 = make_state()
    for user in FRONTEND_POOL:
        state2.set_permission(REPO, user, "write")
    pull2 = state2.add_pull(REPO, 11, title="[Frontend] Fix", labels=["frontend"],
                            files=[FakeFile("vllm/entrypoints/openai/chat_completion/serving.py",
                                            additions=2, deletions=1,
                                            patch="@@ -1,2 +1,3 @@\n a\n+b\n")])
    pull2.base_sha = state2.add_commit(REPO, {"README.md": "vLLM\n"})
    await sync_pull_request(gh_for(state2), make_ctx(), REPO, 11)
    assert state2.pulls[(REPO, 11)].requested_users != []


async def test_owners_cut_short_by_the_budget_do_not_stand_in_for_the_pools() -> None:
    # Issue 38, item 4: past the CODEOWNERS budget a file's owners are unknown, so the
    # owners found must not count as covering every file. Before: the files left over
    # counted as owned, and the pools were not asked.
    state = make_state()
    for user in FRONTEND_POOL:
        state.set_permission(REPO, user, "write")
    tree = _tree("0.34.0")
    # Globs after vLLM's lines outrank them, so each is asked about each file.
    tree[".github/CODEOWNERS"] = str(tree[".github/CODEOWNERS"]) + "".join(
        f"**/v*{i}q*/** @bomb{i}\n" for i in range(2_000))
    files = [FakeFile(f"vllm/lora/layers/part_{i}.py", additions=1,
                      patch="@@ -1 +1,2 @@\n a\n+b\n") for i in range(200)]
    pull = state.add_pull(REPO, 12, title="[Frontend] Split", labels=["frontend"], files=files)
    pull.base_sha = state.add_commit(REPO, tree)
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 12)
    assert outcome.digest is not None
    owners = outcome.digest.owners
    assert owners is not None
    assert owners.users  # the files matched before the budget ran out are owned
    assert not owners.unowned
    assert 0 < len(owners.unmatched) < 200
    assert "are not shown" in state.comments_on(REPO, 12)[-1].body
    assert state.pulls[(REPO, 12)].requested_users != []


async def test_pool_members_neither_owners_nor_collaborators_are_warned_about_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = make_state()
    base = state.add_commit(REPO, _tree("0.34.0"))
    # Of the three pool members 0.34.0's CODEOWNERS does not name, one is still a
    # collaborator: routing can ask them, so only the other two are worth an edit.
    state.set_permission(REPO, "gshtras", "write")
    ctx = make_ctx()
    for number in (21, 22):
        pull = state.add_pull(REPO, number, title="[LoRA] Fix", files=[LORA_FILE])
        pull.base_sha = base
        with caplog.at_level(logging.WARNING, logger="bot.handlers.routing"):
            await sync_pull_request(gh_for(state), ctx, REPO, number)
    warnings = [r.getMessage() for r in caplog.records
                if "neither code owners nor collaborators" in r.getMessage()]
    assert warnings == [
        "routing pool members are neither code owners nor collaborators: "
        "russellb (structured-output), simon-mo (ci/build)"
    ]
