"""Issue 31 (observability): a job's GitHub calls are not a log line each at INFO (httpx's
"HTTP Request: GET … 200 OK" filled the service log); they are DEBUG lines, and the
job's one line at INFO sums them: by method and status class, their total time, the
rate limit left. The real worker and adapter against the fake GitHub over HTTP, logs
configured as the service configures them; assertions on the written lines."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.protocol import NotFound
from bot.github.session import GitHubSessionFactory
from bot.observe.logs import configure_logging
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.handler_env import COMPILE_FILES
from tests.keys import PUBLIC_KEY_PEM
from tests.service_harness import ServiceProcess, e2e_state, pr_event, wait_until

REPO = "vllm-project/vllm"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py"])
    server.use(s)
    return s


class Lines:
    """The service's JSON log lines, as `configure_logging` writes them."""

    def __init__(self, level: str) -> None:
        root = logging.getLogger()
        self._saved = (list(root.handlers), root.level)
        self._handler = configure_logging(level, "json")
        assert isinstance(self._handler, logging.StreamHandler)
        self._stream = io.StringIO()
        self._handler.setStream(self._stream)

    def close(self) -> None:
        root = logging.getLogger()
        root.removeHandler(self._handler)
        root.setLevel(self._saved[1])

    def all(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self._stream.getvalue().splitlines() if x]

    def jobs(self) -> list[dict[str, Any]]:
        return [x for x in self.all()
                if x["logger"] == "bot.queue.jobs" and x["msg"].startswith("job ")]


@pytest.fixture
def info_lines() -> Iterator[Lines]:
    lines = Lines("INFO")
    yield lines
    lines.close()


@pytest.fixture
def debug_lines() -> Iterator[Lines]:
    lines = Lines("DEBUG")
    yield lines
    lines.close()


async def run_one_job(tmp_path: Path, factory: GitHubSessionFactory, *, token: bool = False
                      ) -> None:
    """One PR job whose processor makes the calls a digest makes (and a 404)."""
    store = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0, max_attempts=3)
    finished = asyncio.Event()

    async def process(job: Job) -> None:
        try:
            session = factory.for_token() if token else factory.for_installation(1)
            async with session as gh:
                await gh.get_pull(REPO, 1)
                await gh.list_files(REPO, 1)
                await gh.list_comments(REPO, 1)
                await gh.create_comment(REPO, 1, "digest")
                with pytest.raises(NotFound):
                    await gh.get_pull(REPO, 404)
        finally:
            finished.set()

    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    try:
        await store.enqueue(NewJob(kind="pr", key=pr_key(REPO, 1), installation_id=1,
                                   repo=REPO, number=1), delivery_id="d-31")
        await worker.start()
        await asyncio.wait_for(finished.wait(), 10)
        for _ in range(200):
            if (await store.counts())["running"] == 0:
                break
            await asyncio.sleep(0.01)
        await worker.stop(1.0)
    finally:
        store.close()


async def test_a_job_logs_one_summary_line_and_no_line_per_call_at_info(
    tmp_path: Path, state: FakeGitHubState, server: FakeGitHubServer, info_lines: Lines
) -> None:
    await run_one_job(tmp_path, make_factory(server.url))

    lines = info_lines.all()
    assert len(state.calls) == 6  # the token, four reads (one a 404), one write
    assert [x for x in lines if x["logger"] in ("httpx", "httpcore")] == []
    assert [x for x in lines if "HTTP Request" in x["msg"] or "github call" in x["msg"]] == []
    [job] = info_lines.jobs()
    assert (job["msg"], job["level"], job["job"], job["delivery"]) == (
        "job ok", "info", 1, "d-31")
    assert job["github_calls"] == {"GET 2xx": 3, "GET 4xx": 1, "POST 2xx": 2}
    assert 0 < job["github_ms"] <= job["duration_ms"]
    assert job["rate_limit_remaining"] == state.rate_limit_remaining


async def test_at_debug_each_call_is_a_debug_line_with_its_templated_route(
    tmp_path: Path, state: FakeGitHubState, server: FakeGitHubServer, debug_lines: Lines
) -> None:
    await run_one_job(tmp_path, make_factory(server.url))

    lines = debug_lines.all()
    httpx_lines = [x for x in lines if x["logger"] == "httpx"]
    assert len(httpx_lines) == len(state.calls) == 6
    assert {x["level"] for x in httpx_lines} == {"debug"}
    ours = [x for x in lines if x["msg"].startswith("github call ")]
    assert {x["level"] for x in ours} == {"debug"}
    assert [(x["endpoint"], x["status"]) for x in ours] == [
        ("POST /app/installations/{installation_id}/access_tokens", 201),
        ("GET /repos/{owner}/{repo}/pulls/{number}", 200),
        ("GET /repos/{owner}/{repo}/pulls/{number}/files", 200),
        ("GET /repos/{owner}/{repo}/issues/{number}/comments", 200),
        ("POST /repos/{owner}/{repo}/issues/{number}/comments", 201),
        ("GET /repos/{owner}/{repo}/pulls/{number}", 404),
    ]
    assert all(x["job"] == 1 and x["duration_ms"] >= 0 for x in ours)
    [job] = debug_lines.jobs()
    assert job["github_calls"] == {"GET 2xx": 3, "GET 4xx": 1, "POST 2xx": 2}


async def test_a_job_whose_calls_got_no_answer_counts_them_as_errors(
    tmp_path: Path, info_lines: Lines
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening: refused
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        await run_one_job(tmp_path, make_factory(url, github_token="ghp_" + "t" * 36),
                          token=True)

    [job] = info_lines.jobs()
    assert (job["msg"], job["level"]) == ("job retry", "warning")
    assert "cannot connect" in job["error"]
    assert job["github_calls"] == {"GET error": 3}  # the first read, tried three times
    assert "rate_limit_remaining" not in job  # never answered: unknown


@pytest.mark.slow
def test_the_service_log_has_no_request_lines_and_a_summary_per_job(tmp_path: Path) -> None:
    state = e2e_state()
    state.add_pull(REPO, 7, title="[Compile] Fix graph breaks", files=COMPILE_FILES)
    with FakeGitHubServer(state) as url, ServiceProcess(url, tmp_path) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        assert svc.send("pull_request", pr_event("opened", 7)).status_code == 202
        [job] = svc.wait_for_job(pr=7)
        records = svc.log_records()
    assert state.bot_comments(REPO, 7)
    assert [r for r in records if r.get("logger") in ("httpx", "httpcore")] == []
    assert [r for r in records if "HTTP Request" in str(r.get("msg"))] == []
    calls = job["github_calls"]
    assert calls["GET 2xx"] >= 3  # the PR, its files, its comments
    assert calls["POST 2xx"] >= 1  # the comment
    assert sum(calls.values()) <= len(state.calls)
    assert job["github_ms"] > 0
    assert isinstance(job["rate_limit_remaining"], int)
