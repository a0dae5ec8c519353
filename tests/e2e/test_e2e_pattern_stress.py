"""Issue 8 item 2 against the real `digest-bot serve` process: a PR built to make every
rule pattern backtrack, plus a repository override with catastrophic-for-backtracking
patterns, cannot stall the service.

Before (2a297d3, Python `re` with MULTILINE): `(?i)^\\s*(...)` over 30,000 blank added
lines was quadratic, and `^(a|aa)+$` / `(x+x+)+y` are exponential; the job held the GIL
for tens of seconds and every ack and `/healthz` waited behind it. Now every rule
pattern runs on RE2 (linear, releases the GIL) within byte budgets, so acks stay fast
while the hostile job runs, and that job still finishes and posts its digest.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)
from tests.signing import signed_headers

pytestmark = [pytest.mark.slow, pytest.mark.timing]

STRESSED_PR = 8200
FIRST_OTHER_PR = 8201
WARM_UP_PR = 8199
STRESS_SECONDS = 5.0
# 100 ms for 95% of answers; no single answer over 300 ms. On 2a297d3 the first ack sent
# during the hostile job got no answer within 30 s. The slack above 100 ms is for the
# shared CI host: single 100-150 ms outliers were measured outside the job's window too.
ACK_BOUND_SECONDS = 0.100
STALL_BOUND_SECONDS = 0.300
JOB_BOUND_SECONDS = 20.0

OVERRIDE = """\
areas:
  - id: backtracker
    title: Backtracker
    audience: whoever reads catastrophic regexes
    criticality: low
    match:
      any:
        - body: '^(a|aa)+$'
        - title: '^(a|aa)+$'
        - added: '(x+x+)+y'
"""

BLANK_LINES = 30_000


def _patch(lines: list[str]) -> str:
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines)


def _blank_run_then(*tail: str) -> str:
    """30,000 blank added lines, a near miss, then the keyword lines: `^\\s*(...)`
    under MULTILINE retries its whole run of blanks from every line start."""
    return _patch([""] * BLANK_LINES + ["x", *tail])


def _hostile_files() -> list[FakeFile]:
    keywords = ("transformers>=4.57", "mistral_common>=1.8", "tokenizer_mode = 'auto'",
                "AttentionBackend", "support_torch_compile", "cudagraph_mode")
    files = [
        FakeFile("requirements/common.txt", additions=BLANK_LINES + 3,
                 patch=_blank_run_then("transformers>=4.57", "tiktoken")),
    ]
    # Blank runs in every area's code paths, each ending in a keyword line, so every
    # bundled `added:` pattern's literal prefilter lets it search the whole text.
    for n, directory in enumerate(("vllm/tokenizers", "vllm/v1/attention/backends",
                                   "vllm/compilation", "vllm/v1/worker",
                                   "vllm/model_executor/layers", "vllm/distributed")):
        files.append(FakeFile(f"{directory}/stress_{n}.py", additions=BLANK_LINES + 2,
                              patch=_blank_run_then(*keywords)))
    # Near misses for `\b(word|word)\b` alternations: long runs that almost spell them.
    near = " ".join(["tokenizer_mod", "AttentionBacken", "cudagraph_mod", "torch_compil"])
    files.append(FakeFile("vllm/config/stress_near.py", additions=20_000,
                          patch=_patch([near] * 20_000)))
    # `(x+x+)+y`: a `y` first (so its literal prefilter passes), then runs of x and no y.
    files.append(FakeFile("vllm/utils/stress_x.py", additions=2_001,
                          patch=_patch(["y"] + ["x" * 60] * 2_000)))
    return files


@pytest.fixture
def world() -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": OVERRIDE})
    with FakeGitHubServer(state) as url:
        yield state, url


def _timed(call: Callable[[], httpx.Response], sent_at: list[float]) -> float:
    sent_at.append(time.time())
    started = time.perf_counter()
    response = call()
    elapsed = time.perf_counter() - started
    return elapsed if response.status_code in (200, 202) else float("inf")


def _job_window(record: dict[str, object]) -> tuple[float, float]:
    """(start, end) wall-clock seconds of a "job <outcome>" log line."""
    end = datetime.fromisoformat(str(record["ts"])).timestamp()
    return end - float(str(record["duration_ms"])) / 1000, end


def test_a_pr_built_to_backtrack_every_pattern_never_delays_acks_or_healthz(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    body = ("a" * 40 + "!\n") * 2_000  # `^(a|aa)+$` fails at the '!' of every line
    files = _hostile_files()
    payload_bytes = len(body) + sum(len(f.patch or "") for f in files)
    assert 1_000_000 < payload_bytes < 8_000_000, payload_bytes
    state.add_pull(REPO, STRESSED_PR, title="a" * 40 + "!", body=body, files=files)

    with ServiceProcess(url, tmp_path) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        client = httpx.Client(base_url=svc.url, timeout=30.0)
        # Warm the connection and the ack path (first write to the queue) first, so the
        # measurement sees the hostile job, not start-up.
        state.add_pull(REPO, WARM_UP_PR, files=["docs/usage/faq.md"])
        assert svc.send("pull_request", pr_event("opened", WARM_UP_PR)).status_code == 202
        assert client.get("/healthz").status_code == 200
        svc.wait_for_job(WARM_UP_PR)

        ack = svc.send("pull_request", pr_event("opened", STRESSED_PR))
        assert ack.status_code == 202
        files_route = f"/repos/{REPO}/pulls/{STRESSED_PR}/files"
        # Start measuring once the worker has the hostile patches in hand.
        wait_until(lambda: any(c.path == files_route for c in list(state.calls)), 10,
                   message="the stressed PR's files fetched")

        acks: list[float] = []
        health: list[float] = []
        statuses: list[int] = []
        sent_at: list[float] = []
        number = FIRST_OTHER_PR
        stop_at = time.monotonic() + STRESS_SECONDS
        try:
            while time.monotonic() < stop_at:
                state.add_pull(REPO, number, files=["docs/usage/faq.md"])
                delivery = pr_event("opened", number)
                raw = httpx.Request("POST", "/", json=delivery).content
                headers = signed_headers("pull_request", raw, svc.secret, None)

                def post(raw: bytes = raw, headers: dict[str, str] = headers) -> httpx.Response:
                    response = client.post("/webhook", content=raw, headers=headers)
                    statuses.append(response.status_code)
                    return response

                acks.append(_timed(post, sent_at))
                health.append(_timed(lambda: client.get("/healthz"), sent_at))
                number += 1
                time.sleep(0.02)
        finally:
            client.close()

        window = (f"{len(acks)} acks p50 {statistics.median(acks) * 1000:.1f} ms max "
                  f"{max(acks) * 1000:.1f} ms; {len(health)} /healthz p50 "
                  f"{statistics.median(health) * 1000:.1f} ms max "
                  f"{max(health) * 1000:.1f} ms")
        print(window)
        jobs = svc.wait_for_job(STRESSED_PR, timeout=JOB_BOUND_SECONDS)
        wait_until(lambda: len(state.bot_comments(REPO, STRESSED_PR, BOT)) == 1, 10,
                   message="the stressed PR's digest posted")
        assert svc.get("/healthz").status_code == 200

    every = acks + health
    p95 = statistics.quantiles(every, n=20)[-1]
    job_start, job_end = _job_window(jobs[0])
    # Slack for the log's millisecond timestamps: a request counts if sent in the job.
    during_job = sum(job_start - 0.01 <= at <= job_end for at in sent_at)
    report = (f"{window}; p95 of all {p95 * 1000:.1f} ms; stressed job {jobs[0]['duration_ms']} ms "
              f"({during_job} of the {len(sent_at)} requests sent while it ran); "
              f"payload {payload_bytes // 1024} KiB")
    print(report)
    assert set(statuses) == {202}, statuses
    assert len(acks) >= 20, report
    assert during_job >= 10, report  # the measurement did overlap the hostile job
    assert p95 < ACK_BOUND_SECONDS, report
    assert max(every) < STALL_BOUND_SECONDS, report
    assert jobs[0]["duration_ms"] < JOB_BOUND_SECONDS * 1000, report

