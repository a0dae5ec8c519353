"""The reconcile sweep through the real adapter: GitHub never redelivers a failed
delivery, so the sweep must find PRs whose digest is stale and only those."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.handlers.processor import JobProcessor
from bot.queue.ledger import Ledger
from bot.queue.store import Job, SqliteJobStore
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import factory_for, make_settings
from tests.handler_env import BOT, COMPILE_FILES, UNTESTED_BODY, make_ctx
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, installations={1: "vllm-project"})
    s.add_repo(REPO)
    old = datetime.now(UTC) - timedelta(days=5)
    for number in (1, 2):
        s.add_pull(REPO, number, title="[torch.compile] Fix", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES))
    s.add_pull(REPO, 3, title="[torch.compile] WIP", files=list(COMPILE_FILES), draft=True)
    s.add_pull(REPO, 4, title="[torch.compile] Old", files=list(COMPILE_FILES), updated_at=old)
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


def _pr_job(number: int) -> Job:
    return Job(id=0, kind="pr", key=f"pr:{REPO}#{number}", installation_id=1, repo=REPO,
               number=number, payload={}, delivery_id=None, attempts=0, state="running",
               not_before=0.0, last_error=None)


async def test_sweep_queues_only_recent_prs_it_has_not_converged(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    run, store = processor
    await run(_pr_job(1))  # a delivery that arrived: PR 1 is converged
    assert len(state.bot_comments(REPO, 1, BOT)) == 1

    assert await run.sweep() == 1
    queued = await store.list_jobs("queued")
    # PR 2's delivery was missed; 3 is a draft, 4 was last updated days ago.
    assert [(job.kind, job.number) for job in queued] == [("pr", 2)]

    state.pull(REPO, 1).head_sha = "f" * 40  # a push whose delivery was lost
    assert await run.sweep() == 2  # PR 2 is still stale: its job has not run yet
    numbers = sorted(job.number or 0 for job in await store.list_jobs("queued"))
    assert numbers == [1, 2]  # PR 2's job coalesced, not duplicated


# --- issue 38, item 10: one line per expected failure ----------------------------------

OTHER = "vllm-project/other"


def _sweep_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bot.handlers.processor"]


async def test_a_repository_the_sweep_cannot_read_is_one_line_and_the_others_are_swept(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState,
    server: FakeGitHubServer, caplog: pytest.LogCaptureFixture,
) -> None:
    # Before: `log.exception`, a ~40-line traceback for a plain 404.
    state.add_repo(OTHER)
    state.fail_next("GET", f"/repos/{OTHER}/pulls", 404)
    run, store = processor
    with caplog.at_level(logging.INFO):
        assert await run.sweep() == 2
    assert sorted(job.number or 0 for job in await store.list_jobs("queued")) == [1, 2]
    failed = [r for r in _sweep_records(caplog) if r.levelno >= logging.WARNING]
    assert [(r.levelname, r.getMessage()) for r in failed] == [(
        "WARNING",
        f"reconcile skipped {OTHER}: GET {server.url}/repos/{OTHER}/pulls: HTTP 404 "
        "(injected 404)")]
    assert failed[0].exc_info is None
    assert "\n" not in failed[0].getMessage()


async def test_rejected_credentials_are_one_line(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState,
    server: FakeGitHubServer, caplog: pytest.LogCaptureFixture,
) -> None:
    state.fail_next("GET", "/app/installations", 401)
    run, _ = processor
    with caplog.at_level(logging.INFO):
        assert await run.sweep() == 0
    failed = [r for r in _sweep_records(caplog) if r.levelno >= logging.WARNING]
    assert [(r.levelname, r.getMessage()) for r in failed] == [(
        "WARNING",
        f"reconcile skipped: cannot list the App's repositories: GET {server.url}"
        "/app/installations: HTTP 401 (injected 401)")]
    assert failed[0].exc_info is None
