"""Issue 38, item 10: a GitHub answer that does not fit its schema (githubkit's pydantic
models) is a permanent failure naming the field, not a transient one retried 8 times.
The fake GitHub serves the real response shape with one field broken, over loopback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.github.protocol import GitHubError
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key
from tests.fakes import responses
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
PULL = "/repos/{owner}/{repo}/pulls/{number}"
FILES = "/repos/{owner}/{repo}/pulls/{number}/files"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py", "vllm/b.py"])
    server.use(s)
    return s


def _broken_pull(state: FakeGitHubState) -> dict[str, object]:
    body = responses.pull_request(state.pull(REPO, 1), state.repos[REPO])
    body["head"] = {**body["head"], "sha": 12345}  # a number where GitHub sends a string
    return body


async def test_a_pull_that_does_not_fit_the_schema_is_permanent_and_names_the_field(
    state: FakeGitHubState, server: FakeGitHubServer,
) -> None:
    state.fail_next("GET", PULL, 200, body=_broken_pull(state))
    async with make_factory(server.url).for_installation(1) as gh:
        with pytest.raises(GitHubError) as raised:
            await gh.get_pull(REPO, 1)
    assert raised.value.permanent
    assert str(raised.value) == (
        "GitHub's PullRequest did not match its schema at `head.sha`: Input should be a "
        "valid string")
    assert state.count("GET", PULL) == 1


async def test_a_list_item_is_named_by_its_place(
    state: FakeGitHubState, server: FakeGitHubServer,
) -> None:
    good = responses.diff_entry(REPO, state.pull(REPO, 1).files[0], "a" * 40)
    broken = {k: v for k, v in good.items() if k != "filename"}
    state.fail_next("GET", FILES, 200, body=[good, broken, {**broken, "status": 3}])
    async with make_factory(server.url).for_installation(1) as gh:
        with pytest.raises(GitHubError) as raised:
            await gh.list_files(REPO, 1)
    assert raised.value.permanent
    assert str(raised.value) == (
        "GitHub's list[DiffEntry] did not match its schema at `[1].filename`: Field "
        "required (and 2 more problems)")


async def test_the_job_is_parked_at_its_first_attempt_with_the_field_named(
    state: FakeGitHubState, server: FakeGitHubServer, tmp_path: Path,
) -> None:
    # Before: a GitHubError without `permanent`: retried, 8 attempts over ~20 minutes.
    state.fail_next("GET", PULL, 200, body=_broken_pull(state), times=8)
    factory = make_factory(server.url)

    async def process(job: Job) -> None:
        async with factory.for_installation(1) as gh:
            await gh.get_pull(job.repo, 1)

    store = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0, max_attempts=8,
                           backoff_base_seconds=0.01, backoff_cap_seconds=0.02)
    job_id = await store.enqueue(NewJob(kind="pr", key=pr_key(REPO, 1), installation_id=1,
                                        repo=REPO, number=1))
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    await worker.start()
    try:
        for _ in range(500):
            job = await store.get(job_id)
            if job is not None and job.state == "parked":
                break
            await asyncio.sleep(0.01)
    finally:
        await worker.stop(1.0)
        store.close()
    assert job is not None
    assert (job.state, job.attempts) == ("parked", 1)
    assert job.last_error == (
        "ResponseMismatch: GitHub's PullRequest did not match its schema at `head.sha`: "
        "Input should be a valid string")
    assert state.count("GET", PULL) == 1
