"""Reliability of the real service against a misbehaving GitHub and a crashing host
(issue 5): kill -9 mid-burst, 5xx storms, rate limits, timeouts, token-mint failures
and write pacing. Every scenario ends on GitHub's END STATE: each open PR has exactly
one digest comment whose marker carries the PR's current head SHA, and nothing came
from a forged delivery.

Each test prints what it measured (time to converge, retries, calls); run with `-s`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from bot.core.render.marker import parse_marker
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import CallRecord, FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    calls_for,
    count_by_route,
    e2e_state,
    pr_event,
    wait_until,
    writes_for,
)

pytestmark = pytest.mark.slow

COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
FILES = "/repos/{owner}/{repo}/pulls/{number}/files"
TOKENS = "/app/installations/{installation_id}/access_tokens"
CONTENT_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# Short store backoff so a failed job is retried within a second, not 2.5-5 s.
FAST_RETRY = {"DIGEST_BACKOFF_BASE_SECONDS": "0.2"}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[FakeGitHubServer, str]]:
    fake = FakeGitHubServer(e2e_state())
    with fake as url:
        yield fake, url


@pytest.fixture
def state(server: tuple[FakeGitHubServer, str]) -> FakeGitHubState:
    """A fresh GitHub per test, served by the module's fake server."""
    fresh = e2e_state()
    server[0].use(fresh)
    return fresh


@pytest.fixture
def url(server: tuple[FakeGitHubServer, str]) -> str:
    return server[1]


def _start(svc: ServiceProcess, state: FakeGitHubState) -> ServiceProcess:
    """Start (or restart) and wait until it has read GET /app (its own login)."""
    seen = state.count("GET", "/app")
    svc.start()
    wait_until(lambda: state.count("GET", "/app") > seen, 10, message="GET /app")
    return svc


def _open(state: FakeGitHubState, numbers: Iterable[int]) -> None:
    for number in numbers:
        state.add_pull(REPO, number, title=f"[torch.compile] Fix graph break {number}",
                       body=UNTESTED_BODY, files=list(COMPILE_FILES))


def _push(state: FakeGitHubState, number: int, sha: str) -> dict[str, object]:
    """Move PR `number`'s head (as a force-push would) and return its webhook payload."""
    state.pull(REPO, number).head_sha = sha
    return pr_event("synchronize", number, head_sha=sha)


def _problems(state: FakeGitHubState, numbers: Iterable[int]) -> list[str]:
    """Why the end state is not reached yet: one line per PR that is off."""
    found: list[str] = []
    for number in numbers:
        bodies = state.bot_comments(REPO, number, BOT)
        head = state.pull(REPO, number).head_sha
        if len(bodies) != 1:
            found.append(f"#{number}: {len(bodies)} digest comments")
            continue
        marker = parse_marker(bodies[0].split("\n", 1)[0])
        if marker is None:
            found.append(f"#{number}: no marker on the first line")
        elif marker.head_sha != head:
            found.append(f"#{number}: marker {marker.head_sha[:8]} != head {head[:8]}")
    return found


def _converge(state: FakeGitHubState, numbers: list[int], timeout: float,
              since: float) -> float:
    """Wait for the end state, hold it through a quiet second (no late duplicate),
    and return the seconds from `since` until it was first reached."""
    try:
        wait_until(lambda: not _problems(state, numbers), timeout, interval=0.05)
    except AssertionError:
        raise AssertionError(f"not converged after {timeout}s: "
                             f"{_problems(state, numbers)}") from None
    reached = time.monotonic() - since
    time.sleep(1.0)
    assert _problems(state, numbers) == []
    return reached


def _content_writes(state: FakeGitHubState) -> list[CallRecord]:
    """Content-creating requests (minting a token creates no content)."""
    return sorted((c for c in list(state.calls)
                   if c.method in CONTENT_METHODS and c.route != TOKENS),
                  key=lambda c: c.at)


def _status_count(state: FakeGitHubState, status: int, route: str | None = None) -> int:
    return sum(1 for c in list(state.calls)
               if c.status == status and (route is None or c.route == route))


def _report(name: str, **measured: object) -> None:
    print(f"\n[reliability] {name}: " + ", ".join(f"{k}={v}" for k, v in measured.items()))


# --- 1. kill -9 mid-burst, with forgeries ------------------------------------------


def _forge(svc: ServiceProcess, number: int) -> int:
    return svc.send("pull_request", pr_event("opened", number),
                    secret="not-the-secret").status_code


def test_kill_9_with_a_burst_queued_loses_no_accepted_delivery_and_forgeries_leave_no_trace(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    older, newer = list(range(201, 211)), list(range(211, 221))
    forged = [231, 232, 233]
    _open(state, older + newer + forged)
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY,
                                name="crashing"), state)
    try:
        for number in older:  # these already have their digest before the crash
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        _converge(state, older, timeout=15, since=time.monotonic())
        svc.restart(settle_seconds=1.5)  # long enough that the burst is still queued
        statuses: list[int] = []
        for i, number in enumerate(newer):
            statuses.append(svc.send("pull_request", pr_event("opened", number)).status_code)
            if i % 4 == 1:
                statuses.append(_forge(svc, forged[i // 4]))
        for number in older + newer:
            statuses.append(svc.send("pull_request",
                                     _push(state, number, f"{number:x}".rjust(40, "a")))
                            .status_code)
        svc.kill()
        assert statuses.count(202) == len(newer) + len(older + newer)
        assert statuses.count(401) == len(forged)
        queued_at_kill = _jobs_in(svc.db_path, "queued")

        restarted_at = time.monotonic()
        svc.restart(settle_seconds=0.1)
        took = _converge(state, older + newer, timeout=20, since=restarted_at)
    finally:
        svc.stop()

    for number in forged:
        assert calls_for(state, number) == []
        assert state.comments_on(REPO, number) == []
    refused = [r for r in svc.log_records()
               if str(r.get("msg", "")).startswith("delivery ") and r.get("status") == 401]
    assert len(refused) == len(forged)
    patch = ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
    for number in older:  # the push queued before the crash updated the old digest
        assert count_by_route(writes_for(state, number)) == {("POST", COMMENTS): 1}
        assert count_by_route(calls_for(state, number))[("GET", FILES)] == 2
    assert sum(1 for c in state.calls if (c.method, c.route) == patch) == len(older)
    _report("kill -9 with 40 deliveries queued", prs=len(older + newer),
            queued_at_kill=queued_at_kill, converge_after_restart_s=round(took, 2),
            api_calls=len(state.calls), refused_401=len(refused))


def test_kill_9_while_jobs_run_converges_soon_after_restart(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    numbers = list(range(241, 249))
    _open(state, numbers)
    state.latency = 0.05  # each job takes a while, so some are mid-flight at the kill
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY,
                                name="crashing"), state)
    try:
        for number in numbers:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        wait_until(lambda: len({c.path for c in list(state.calls) if "/pulls/" in c.path})
                   >= 2, 10, message="jobs running")
        for number in numbers:
            assert svc.send("pull_request",
                            _push(state, number, f"{number:x}".rjust(40, "b"))
                            ).status_code == 202
        svc.kill()
        running_at_kill = _jobs_in(svc.db_path, "running")
        state.latency = 0.0
        _report("kill -9 while jobs run", running_at_kill=running_at_kill)
        assert running_at_kill > 0
        restarted_at = time.monotonic()
        svc.restart(settle_seconds=0.1)
        _converge(state, numbers, timeout=6, since=restarted_at)
    finally:
        svc.stop()


def _jobs_in(db_path: Path, job_state: str) -> int:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT COUNT(*) FROM jobs WHERE state = ?",
                           (job_state,)).fetchone()
    return int(row[0])


# --- 2. a 5xx storm, then calm ------------------------------------------------------


def test_random_5xx_on_every_route_then_calm_converges(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    numbers = list(range(251, 263))
    _open(state, numbers)
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY),
                 state)
    try:
        state.seed = 5
        state.fail_randomly(0.2, 502, methods=("GET", "POST", "PATCH", "DELETE"))
        started = time.monotonic()
        for number in numbers:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        for number in numbers[::2]:  # half of them are force-pushed mid-storm
            time.sleep(0.1)
            assert svc.send("pull_request",
                            _push(state, number, "b" * 32 + f"{number:08x}")).status_code == 202
        time.sleep(3.0)
        state.fail_randomly(0.0)  # the storm is over
        calm = time.monotonic()
        took = _converge(state, numbers, timeout=30, since=started)
        retries = len(svc.job_records(outcome="retry"))
        parked = len(svc.job_records(outcome="parked"))
    finally:
        svc.stop()
    injected = sum(1 for c in state.calls if c.status == 502)
    assert injected > 0  # the storm did hit
    assert parked == 0
    _report("20% 5xx for 3 s", prs=len(numbers), injected_502=injected, job_retries=retries,
            converge_s=round(took, 2), after_calm_s=round(max(0.0, started + took - calm), 2),
            api_calls=len(state.calls))


# --- 3. rate limits -----------------------------------------------------------------


def test_short_rate_limits_on_comment_and_files_converge_without_duplicates(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    numbers = [301, 302, 303, 304]
    _open(state, numbers)
    state.secondary_rate_limit_next("POST", f"/repos/{REPO}/issues/301/comments",
                                    retry_after=1)
    state.fail_next("POST", f"/repos/{REPO}/issues/302/comments", 429,
                    headers={"Retry-After": "1"})
    state.secondary_rate_limit_next("GET", f"/repos/{REPO}/pulls/303/files", retry_after=1)
    state.fail_next("GET", f"/repos/{REPO}/pulls/304/files", 429,
                    headers={"Retry-After": "1"})
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY),
                 state)
    try:
        started = time.monotonic()
        for number in numbers:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        took = _converge(state, numbers, timeout=15, since=started)
    finally:
        svc.stop()
    limited = _status_count(state, 403) + _status_count(state, 429)
    assert limited == 4
    for number in numbers:
        posts = [c for c in writes_for(state, number) if c.route == COMMENTS]
        assert [c.status for c in posts if c.status == 201] == [201]  # no duplicate
    _report("Retry-After: 1 (403 secondary, 429) on POST comment and GET files",
            prs=len(numbers), limited_responses=limited, converge_s=round(took, 2),
            job_retries=len(svc.job_records(outcome="retry")), api_calls=len(state.calls))


def test_a_long_retry_after_reschedules_the_job_instead_of_sleeping(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    limited, other = 311, 312
    _open(state, [limited, other])
    state.secondary_rate_limit_next("POST", f"/repos/{REPO}/issues/{limited}/comments",
                                    retry_after=3600)
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY),
                 state)
    try:
        sent = time.monotonic()
        reply = svc.send("pull_request", pr_event("opened", limited), delivery="rl-311")
        assert reply.status_code == 202
        [failed] = svc.wait_for_job(limited, outcome="retry", timeout=10)
        gave_up_s = time.monotonic() - sent
        assert "rate limited" in str(failed.get("error"))
        due_in = _not_before(svc.db_path, reply.json()["job"]) - time.time()
        assert 3000 < due_in <= 3600  # GitHub's wait, kept in the store, not slept

        # Meanwhile the service answers and other PRs get their digest.
        probe = time.monotonic()
        assert svc.get("/healthz").status_code == 200
        healthz_s = time.monotonic() - probe
        assert healthz_s < 1.0
        assert svc.send("pull_request", pr_event("opened", other)).status_code == 202
        _converge(state, [other], timeout=10, since=probe)
        assert state.bot_comments(REPO, limited, BOT) == []

        # An operator's redelivery runs it now; it converges with one comment.
        again = svc.send("pull_request", pr_event("opened", limited), delivery="rl-311")
        assert again.json().get("outcome") == "requeued"
        _converge(state, [limited, other], timeout=10, since=probe)
    finally:
        svc.stop()
    posts = [c.status for c in writes_for(state, limited) if c.route == COMMENTS]
    assert posts == [403, 201]
    _report("Retry-After: 3600", job_rescheduled_after_s=round(gave_up_s, 2),
            not_before_in_s=round(due_in), healthz_s=round(healthz_s, 3))


def _not_before(db_path: Path, job_id: int) -> float:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT not_before FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return float(row[0])


# --- 4. responses slower than the client timeout ----------------------------------


def test_timeouts_on_files_and_on_a_created_comment_converge_to_one_comment(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    slow_files, slow_post = 401, 402
    _open(state, [slow_files, slow_post])
    # The files read answers after the client gave up; the comment POST is created
    # by GitHub 0.8 s in, after the client gave up at 0.5 s: the response is lost.
    state.slow_next("GET", f"/repos/{REPO}/pulls/{slow_files}/files", 1.0)
    state.slow_next("POST", f"/repos/{REPO}/issues/{slow_post}/comments", 0.8)
    env = {**FAST_RETRY, "DIGEST_HTTP_TIMEOUT_SECONDS": "0.5",
           # Longer than the slow POST: the retry re-reads after GitHub created it.
           "DIGEST_BACKOFF_BASE_SECONDS": "1.0"}
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=env), state)
    try:
        started = time.monotonic()
        for number in (slow_files, slow_post):
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        took = _converge(state, [slow_files, slow_post], timeout=15, since=started)
    finally:
        svc.stop()
    files_reads = count_by_route(calls_for(state, slow_files))[("GET", FILES)]
    assert files_reads == 2  # the timed-out read was retried in the client
    posts = count_by_route(writes_for(state, slow_post))[("POST", COMMENTS)]
    assert posts == 1  # the retry found the comment the lost response created
    _report("timeouts (client 0.5 s)", converge_s=round(took, 2), files_reads=files_reads,
            comment_posts=posts, job_retries=len(svc.job_records(outcome="retry")))


def test_a_comment_created_after_the_retry_looked_is_still_deduplicated(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    number = 403
    _open(state, [number])
    state.slow_next("POST", f"/repos/{REPO}/issues/{number}/comments", 3.0)
    # The retry of an unanswered create waits until the slow POST has landed (GitHub's
    # own 10 s timeout in production; 4 s here, beyond the 3 s the fake takes).
    env = {**FAST_RETRY, "DIGEST_HTTP_TIMEOUT_SECONDS": "0.5",
           "DIGEST_UNCERTAIN_WRITE_RECHECK_SECONDS": "4"}
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=env), state)
    try:
        started = time.monotonic()
        assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        svc.wait_for_job(number, outcome="ok", timeout=10)
        time.sleep(3.0)  # the slow POST has landed by now
        _converge(state, [number], timeout=3, since=started)
    finally:
        svc.stop()


# --- 5. installation-token mint failures ------------------------------------------


def test_token_mint_failures_converge(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    numbers = [501, 502, 503]
    _open(state, numbers)
    state.fail_next("POST", "/app/installations/*/access_tokens", 502, times=3)
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1, extra_env=FAST_RETRY),
                 state)
    try:
        started = time.monotonic()
        for number in numbers:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        took = _converge(state, numbers, timeout=20, since=started)
        retries = svc.job_records(outcome="retry")
    finally:
        svc.stop()
    mints = [c.status for c in state.calls if c.route == TOKENS]
    assert mints[:3] == [502, 502, 502]
    assert mints.count(201) == 1  # then one token, cached for every later job
    assert len(retries) == 3
    for number in numbers:
        assert count_by_route(writes_for(state, number)) == {("POST", COMMENTS): 1}
    _report("token mint 502 x3", converge_s=round(took, 2), job_retries=len(retries),
            mint_calls=len(mints))


# --- 6. write pacing ----------------------------------------------------------------


def test_content_creating_requests_are_paced(
    state: FakeGitHubState, url: str, tmp_path: Path
) -> None:
    numbers = list(range(601, 611))
    _open(state, numbers)
    svc = _start(ServiceProcess(url, tmp_path, settle_seconds=0.1,
                                write_interval_seconds=0.2), state)
    try:
        started = time.monotonic()
        for number in numbers:
            assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
        _converge(state, numbers, timeout=15, since=started)
        for number in numbers:  # every PR is pushed again: ten updates
            assert svc.send("pull_request",
                            _push(state, number, "c" * 32 + f"{number:08x}")).status_code == 202
        took = _converge(state, numbers, timeout=15, since=started)
    finally:
        svc.stop()
    writes = _content_writes(state)
    assert count_by_route(writes) == {("POST", COMMENTS): 10,
                                      ("PATCH", "/repos/{owner}/{repo}/issues/comments/"
                                                "{comment_id}"): 10}
    gaps = [b.at - a.at for a, b in pairwise(writes)]
    # Timed where the fake answers, not where the pacer releases: allow jitter. Without
    # pacing the gaps would be a few milliseconds.
    assert min(gaps) >= 0.15, sorted(gaps)[:5]
    busiest = max(sum(1 for w in writes if a.at <= w.at < a.at + 60) for a in writes)
    assert busiest <= 80
    _report("pacing 0.2 s", writes=len(writes), min_gap_s=round(min(gaps), 3),
            mean_gap_s=round(sum(gaps) / len(gaps), 3), busiest_60s=busiest,
            total_s=round(took, 2))
