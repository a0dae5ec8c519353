"""DIGEST_DELIVERY through the real `digest-bot serve` process against the fake GitHub:
`check` writes a neutral check run per head and no comment; `both` writes both."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.render.check_run import CHECK_NAME
from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)

pytestmark = pytest.mark.slow

CREATE_RUN = ("POST", "/repos/{owner}/{repo}/check-runs")
CREATE_COMMENT = ("POST", "/repos/{owner}/{repo}/issues/{number}/comments")


@pytest.fixture
def world() -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    with FakeGitHubServer(state) as url:
        yield state, url


def _service(url: str, workdir: Path, delivery: str) -> ServiceProcess:
    return ServiceProcess(url, workdir, extra_env={"DIGEST_DELIVERY": delivery})


def _runs(state: FakeGitHubState, sha: str) -> list[str]:
    return [r.summary for r in state.check_runs_for(REPO, sha, CHECK_NAME)]


def test_check_delivery_writes_a_run_per_head_and_no_comment(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    number = 301
    pull = state.add_pull(REPO, number, title="[torch.compile] Fix graph break",
                          body=UNTESTED_BODY, files=list(COMPILE_FILES), head_sha="1" * 40)
    with _service(url, tmp_path, "check") as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        assert svc.send("pull_request", pr_event("opened", number, head_sha="1" * 40)
                        ).status_code == 202
        wait_until(lambda: len(_runs(state, "1" * 40)) == 1, 20, message="check run")
        (summary,) = _runs(state, "1" * 40)
        assert "**missing-gpu-eval**" in summary
        run = state.check_runs_for(REPO, "1" * 40, CHECK_NAME)[0]
        assert (run.status, run.conclusion, run.app_slug) == ("completed", "neutral",
                                                               state.app_slug)

        pull.head_sha = "2" * 40  # a push: the new head gets its own run
        assert svc.send("pull_request", pr_event("synchronize", number, head_sha="2" * 40)
                        ).status_code == 202
        wait_until(lambda: len(_runs(state, "2" * 40)) == 1, 20, message="run on new head")
        marker = parse_marker(_runs(state, "2" * 40)[0])
        assert marker is not None
        assert marker.head_sha == "2" * 40

        # The same head again: the run is current, nothing is written.
        writes = state.count(*CREATE_RUN) + state.count(
            "PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
        assert svc.send("pull_request", pr_event("edited", number, head_sha="2" * 40)
                        ).status_code == 202
        time.sleep(svc.settle_seconds + 1.0)
        assert state.count(*CREATE_RUN) + state.count(
            "PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}") == writes
    assert state.count(*CREATE_RUN) == 2
    assert state.count(*CREATE_COMMENT) == 0
    assert state.bot_comments(REPO, number, BOT) == []


def test_both_writes_the_comment_and_the_run(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    number = 302
    state.add_pull(REPO, number, title="[torch.compile] Fix graph break",
                   body=UNTESTED_BODY, files=list(COMPILE_FILES), head_sha="3" * 40)
    with _service(url, tmp_path, "both") as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        assert svc.send("pull_request", pr_event("opened", number, head_sha="3" * 40)
                        ).status_code == 202
        wait_until(lambda: len(_runs(state, "3" * 40)) == 1
                   and len(state.bot_comments(REPO, number, BOT)) == 1, 20,
                   message="comment and run")
    (body,) = state.bot_comments(REPO, number, BOT)
    assert "**missing-gpu-eval**" in body
    assert "**missing-gpu-eval**" in _runs(state, "3" * 40)[0]
