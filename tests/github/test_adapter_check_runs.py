"""Check runs through the real adapter against the fake GitHub's check-runs endpoints."""

from __future__ import annotations

import pytest

from bot.github.fence import LeaseLost, fenced
from bot.github.protocol import NotFound, Unprocessable
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import CHECK_OUTPUT_MAX_CHARS, FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
SHA = "a" * 40
RUNS = "/repos/{owner}/{repo}/check-runs"
RUN = "/repos/{owner}/{repo}/check-runs/{check_run_id}"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    server.use(s)
    return s


async def test_create_list_and_update_a_run_by_name(
    state: FakeGitHubState, server: FakeGitHubServer
) -> None:
    async with make_factory(server.url).for_installation(1) as gh:
        created = await gh.create_check_run(REPO, SHA, "pr-digest", "👀 Skim", "first")
        listed = await gh.list_check_runs(REPO, SHA, "pr-digest")
        await gh.update_check_run(REPO, created.id, "📖 Read", "second")
        other_head = await gh.list_check_runs(REPO, "b" * 40, "pr-digest")

    assert [r.id for r in listed] == [created.id]
    assert listed[0].app_slug == state.app_slug
    assert listed[0].summary == "first"
    run = state.check_runs[created.id]
    assert (run.status, run.conclusion) == ("completed", "neutral")
    assert (run.title, run.summary) == ("📖 Read", "second")
    assert other_head == []
    assert state.count("PATCH", RUN) == 1


async def test_list_filters_by_name(state: FakeGitHubState, server: FakeGitHubServer) -> None:
    state.create_check_run(REPO, "buildkite", {"name": "ci", "head_sha": SHA})
    async with make_factory(server.url).for_installation(1) as gh:
        assert await gh.list_check_runs(REPO, SHA, "pr-digest") == []
        runs = await gh.list_check_runs(REPO, SHA, "ci")
    assert [(r.name, r.app_slug) for r in runs] == [("ci", "buildkite")]


async def test_an_unknown_run_is_not_found(
    state: FakeGitHubState, server: FakeGitHubServer
) -> None:
    async with make_factory(server.url).for_installation(1) as gh:
        with pytest.raises(NotFound):
            await gh.update_check_run(REPO, 999_999, "t", "s")
    assert state.check_runs == {}


async def test_the_fake_refuses_a_summary_over_githubs_limit(state: FakeGitHubState) -> None:
    # githubkit refuses such a body before sending; the fake answers as GitHub would.
    gh = MemoryGitHub(state)
    with pytest.raises(Unprocessable):
        await gh.create_check_run(REPO, SHA, "pr-digest", "t", "x" * (CHECK_OUTPUT_MAX_CHARS + 1))
    assert state.check_runs == {}


class _Lost:
    async def confirm_before_write(self) -> None:
        raise LeaseLost("lease taken over")

    def check_before_send(self) -> None:
        raise LeaseLost("lease taken over")


async def test_check_run_writes_pass_the_jobs_fence(
    state: FakeGitHubState, server: FakeGitHubServer
) -> None:
    async with make_factory(server.url).for_installation(1) as gh:
        with fenced(_Lost()), pytest.raises(LeaseLost):
            await gh.create_check_run(REPO, SHA, "pr-digest", "t", "s")
    assert state.count("POST", RUNS) == 0
    assert state.check_runs == {}
