"""Security issue 8, the job system, against the real service process and the fake
GitHub on loopback: a slow job's lease (item 5), permanent GitHub answers and a
database that cannot be written (item 11)."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    calls_for,
    e2e_state,
    pr_event,
    service_for,
    wait_until,
)

pytestmark = pytest.mark.slow

LEASE = 1.0  # seconds: a job slower than this used to be claimed again
PULL_ROUTE = "/repos/{owner}/{repo}/pulls/{number}"


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    return e2e_state()


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {"DIGEST_LEASE_SECONDS": str(LEASE), "DIGEST_BACKOFF_BASE_SECONDS": "0.2",
           "DIGEST_MAX_ATTEMPTS": "8"}
    with FakeGitHubServer(state) as url, \
            service_for(state, url, tmp_path_factory.mktemp("e2e-jobs"), extra_env=env) as service:
        yield service


def _pull_reads(state: FakeGitHubState, number: int) -> int:
    return sum(1 for c in calls_for(state, number) if c.method == "GET" and c.route == PULL_ROUTE)


# --- item 5: an expired lease lets a running job run again -------------------------------


def test_a_job_slower_than_its_lease_runs_once(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 851
    state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                   files=list(COMPILE_FILES), author="alice")
    # Listing the files takes four leases: the job is alive, only slow.
    state.slow_next("GET", "*/pulls/851/files", 4 * LEASE, times=1)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number, timeout=15)
    time.sleep(2 * LEASE)

    assert _pull_reads(state, number) == 1  # was 3-4: the same job ran again meanwhile
    assert len(svc.job_records(pr=number)) == 1
    assert len(state.bot_comments(REPO, number, BOT)) == 1


# --- item 11: 404/410/422 are permanent; /readyz sees a database it cannot write ---------


@pytest.mark.parametrize(("number", "status"), [(861, 404), (862, 410), (863, 422)])
def test_a_permanent_github_answer_parks_the_job_at_once(
    state: FakeGitHubState, svc: ServiceProcess, number: int, status: int
) -> None:
    state.add_pull(REPO, number, title="x", files=["docs/a.md"], author="alice")
    state.fail_next("GET", f"*/pulls/{number}", status, times=20)
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number, outcome="parked", timeout=10)
    time.sleep(1.0)  # three backoffs of the retry path would have run by now

    assert _pull_reads(state, number) == 1
    assert svc.job_records(pr=number, outcome="retry") == []


def test_readyz_fails_while_the_database_cannot_be_written(svc: ServiceProcess) -> None:
    assert svc.get("/readyz").status_code == 200
    pid = svc.pid
    assert pid is not None
    # A full disk, for this process only: every write to a file fails with EFBIG.
    soft, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))
    try:
        reply = svc.get("/readyz")
        assert reply.status_code == 503, reply.text
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (soft, hard))
    wait_until(lambda: svc.get("/readyz").status_code == 200, 5, message="ready again")
