"""A CI build's state changed on a commit: the status job maps the commit to the open PR
whose head it is (the ledger first, one call otherwise) and queues that PR's digest run.
Through the real adapter and the fake GitHub server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.handlers.processor import JobProcessor
from bot.queue.ledger import Ledger
from bot.queue.store import Job, SqliteJobStore, status_key
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import factory_for, make_settings
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY, make_ctx
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
PULLS_OF_COMMIT = "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, installations={1: "vllm-project"})
    s.add_repo(REPO)
    for number in (1, 2):
        s.add_pull(REPO, number, title="[torch.compile] Fix", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    server.use(s)
    return s


@pytest.fixture
async def processor(
    server: FakeGitHubServer, state: FakeGitHubState, tmp_path: Path
) -> AsyncIterator[tuple[JobProcessor, SqliteJobStore]]:
    settings = make_settings(server.url, db_path=tmp_path / "bot.db")
    store = SqliteJobStore(tmp_path / "bot.db", settle_seconds=0.0)
    ledger = Ledger(tmp_path / "bot.db")
    yield JobProcessor(settings, factory_for(settings), make_ctx(), store, ledger), store
    store.close()
    ledger.close()


def _job(kind: str, number: int | None, payload: dict[str, Any]) -> Job:
    key = status_key(REPO, payload["sha"]) if kind == "status" else f"pr:{REPO}#{number}"
    return Job(id=0, kind=kind, key=key, installation_id=1, repo=REPO, number=number,
               payload=payload, delivery_id=None, attempts=0, state="running",
               not_before=0.0, last_error=None)


async def _queued(store: SqliteJobStore) -> list[tuple[str, int | None, Any]]:
    return [(job.kind, job.number, job.payload.get("actions"))
            for job in await store.list_jobs("queued")]


async def test_a_head_the_ledger_knows_costs_no_call(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    run, store = processor
    await run(_job("pr", 1, {}))  # converged: the ledger keeps its head
    calls = len(state.calls)
    await run(_job("status", None, {"sha": state.pull(REPO, 1).head_sha, "state": "blocked"}))
    assert len(state.calls) == calls
    assert await _queued(store) == [("pr", 1, ["ci-status"])]


async def test_a_head_not_converged_yet_is_asked_of_github_once(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    run, store = processor
    await run(_job("status", None, {"sha": state.pull(REPO, 2).head_sha, "state": "success"}))
    assert state.count("GET", PULLS_OF_COMMIT) == 1
    assert await _queued(store) == [("pr", 2, ["ci-status"])]


async def test_a_commit_that_heads_no_open_pr_queues_nothing(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    run, store = processor
    await run(_job("pr", 1, {}))
    old_head = state.pull(REPO, 1).head_sha
    state.pull(REPO, 1).state = "closed"
    await run(_job("pr", 1, {}))  # a closed PR's head is forgotten
    await run(_job("status", None, {"sha": old_head, "state": "failure"}))
    await run(_job("status", None, {"sha": "9" * 40, "state": "failure"}))
    assert state.count("GET", PULLS_OF_COMMIT) == 2
    assert await _queued(store) == []
