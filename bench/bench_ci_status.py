"""CI statuses (issue 25, item 3): what reading the head's statuses costs in GitHub calls
per PR job, and what vLLM's flood of step `status` deliveries costs the ack path.

    python -m bench.bench_ci_status [--builds 20] [--steps 100] [--micro 20000] [--json F]

1. Calls per PR job, live service (`python -m bot serve`) against the fake GitHub, a PR
   whose base holds vLLM 0.34.0's config (tests/fixtures/vllm_config/0.34.0): BEFORE is
   the service with `DIGEST_CI_STATUS_CONTEXT=` (no status is read: the code path as it
   was), AFTER the default (`buildkite/ci/pr`). Events: a first `opened`, a
   `synchronize` with a new head, one that changes nothing, and (AFTER only) the
   build's own `status` event for the head (the status job and the PR job it queues).
2. Ack latency, same live service (AFTER): `--builds` rounds of one
   `pull_request.synchronize` followed by `--steps` step statuses
   (`buildkite/ci/pr/<step>`, dropped at the intake) and the build's own status; the
   client's send -> 202 time per kind, and the intake's own `duration_ms` per kind from
   its log lines. Baseline in the same run: the synchronize deliveries of a first phase
   with no status traffic at all.
3. In process: `_Intake._decide` on a verified body (no HTTP, no HMAC, no store), a
   step status vs a `pull_request.synchronize`, `--micro` times each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bot.intake.app import create_app
from bot.observe.metrics import Metrics
from bot.queue.store import SqliteJobStore
from bot.settings.model import Settings
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    FIXTURES as WEBHOOKS,
)
from tests.service_harness import (
    REPO,
    ServiceProcess,
    count_by_route,
    e2e_state,
    fixture,
    pr_event,
    wait_until,
)
from tests.signing import signed_headers

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "fixtures" / "vllm_config" / "0.34.0"
C = "buildkite/ci/pr"
NUMBER = 500
BODY = "## Purpose\nFix.\n\n## Test Plan\npytest tests/multimodal\n\n## Test Result\n12 passed\n"
FILE = FakeFile("vllm/multimodal/processing.py", additions=12, deletions=3,
                patch="@@ -1,2 +1,3 @@ def key():\n+    return (a, b)\n")


def _quiet(state: FakeGitHubState, seconds: float = 0.6) -> None:
    last, since = -1, time.monotonic()
    while time.monotonic() - since < seconds:
        if len(state.calls) != last:
            last, since = len(state.calls), time.monotonic()
        time.sleep(0.05)


def _status(sha: str, context: str, state: str, description: str) -> dict[str, Any]:
    payload = fixture("status")
    payload.update(sha=sha, context=context, state=state, description=description)
    payload["commit"]["sha"] = sha
    return payload


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"n": len(values), "p50_ms": round(statistics.median(values), 3),
            "p99_ms": round(_pct(values, 0.99), 3), "max_ms": round(max(values), 3)}


def calls_per_job(url: str, state: FakeGitHubState, workdir: Path, *, context: str,
                  number: int) -> dict[str, int]:
    base = state.add_commit(REPO, {str(p.relative_to(CONFIG)): p.read_text()
                                   for p in CONFIG.rglob("*") if p.is_file()})
    head = f"{number:040x}"
    pull = state.add_pull(REPO, number, title="[Multimodal] Fix the processor cache key",
                          body=BODY, files=[FILE], head_sha=head)
    pull.base_sha = base
    state.set_status(REPO, head, f"{C}/nvidia-h200-mig-35gb-v1-core", "success")
    state.set_status(REPO, head, C, "pending", "Build #1 passed and blocked")
    found: dict[str, int] = {}
    with ServiceProcess(url, workdir, name=f"calls-{number}",
                        extra_env={"DIGEST_CI_STATUS_CONTEXT": context}) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10)

        def one(label: str, event: str, payload: dict[str, Any], jobs: int) -> None:
            _quiet(state)
            before = len(state.calls)
            svc.send(event, payload)
            svc.wait_for_job(number, count=jobs)
            _quiet(state)
            found[label] = sum(count_by_route(state.calls[before:]).values())

        one("opened", "pull_request", pr_event("opened", number, head_sha=head), 1)
        pull.head_sha = head = f"{number + 1:040x}"
        state.set_status(REPO, head, C, "pending", "Build #2 is running")
        one("synchronize, new head", "pull_request",
            pr_event("synchronize", number, head_sha=head), 2)
        one("synchronize, nothing changed", "pull_request",
            pr_event("synchronize", number, head_sha=head), 3)
        if context:
            state.set_status(REPO, head, C, "failure", "Build #2 failed")
            one("the build's status (status job + PR job)", "status",
                _status(head, C, "failure", "Build #2 failed"), 4)
    return found


def ack_latency(url: str, state: FakeGitHubState, workdir: Path, builds: int,
                steps: int) -> dict[str, Any]:
    quiet_prs = [NUMBER + 10 + i for i in range(builds)]
    busy_prs = [NUMBER + 10 + builds + i for i in range(builds)]
    for number in (*quiet_prs, *busy_prs):
        state.add_pull(REPO, number, title="[torch.compile] x", body=BODY, files=[FILE])
    sent: dict[str, list[float]] = {"sync alone": [], "sync": [], "step status": [],
                                    "build status": []}
    codes: Counter[int] = Counter()
    with ServiceProcess(url, workdir, name="ack") as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10)

        def post(kind: str, event: str, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            headers = signed_headers(event, body, svc.secret)
            t0 = time.perf_counter()
            reply = svc.post_raw(body, headers)
            sent[kind].append((time.perf_counter() - t0) * 1000)
            codes[reply.status_code] += 1

        # Alternating rounds, so both kinds of synchronize see the same warm-up and the
        # same worker activity: one with no status traffic (the baseline), one followed
        # by its build's step statuses and the build's own status; which goes first
        # alternates too.
        def alone(round_: int, number: int) -> None:
            sha = f"{round_ + 1:08x}" + "0" * 32
            state.pulls[(REPO, number)].head_sha = sha
            post("sync alone", "pull_request", pr_event("synchronize", number, head_sha=sha))
            time.sleep(0.05)

        def busy(round_: int, number: int) -> None:
            sha = f"{round_ + 1:08x}" + "1" * 32
            state.pulls[(REPO, number)].head_sha = sha
            post("sync", "pull_request", pr_event("synchronize", number, head_sha=sha))
            for step in range(steps):
                post("step status", "status",
                     _status(sha, f"{C}/step-{step}", "success", "Passed"))
            post("build status", "status", _status(sha, C, "success", "Build passed"))
            time.sleep(0.05)

        for round_, (quiet, loaded) in enumerate(zip(quiet_prs, busy_prs, strict=True)):
            if round_ % 2:
                busy(round_, loaded)
                alone(round_, quiet)
            else:
                alone(round_, quiet)
                busy(round_, loaded)
        _quiet(state, 1.0)
        inside: dict[str, list[float]] = {"pull_request": [], "status": []}
        for record in svc.log_records():
            if record.get("logger") == "bot.intake.app" and "duration_ms" in record:
                event = record.get("event")
                if event in inside:
                    inside[event].append(float(record["duration_ms"]))
        status_jobs = len(svc.job_records(kind="status"))
    return {"client": {k: _summary(v) for k, v in sent.items()},
            "inside_intake": {k: _summary(v) for k, v in inside.items()},
            "codes": dict(codes), "status_jobs": status_jobs,
            "step_statuses_sent": builds * steps}


def micro(times: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as workdir:
        settings = Settings(webhook_secret="x" * 20, github_token="ghs_" + "x" * 36,
                            db_path=Path(workdir) / "m.db")
        store = SqliteJobStore.from_settings(settings)
        app = create_app(settings, store, Metrics())
        intake = app.ack_route
        step = json.dumps(_status("a" * 40, f"{C}/amd-mi355-e2e-core-large-memory",
                                  "success", "Passed")).encode()
        sync = (WEBHOOKS / "pull_request.synchronize.json").read_bytes()
        found: dict[str, Any] = {}
        for label, event, body in (("step status", "status", step),
                                   ("pull_request.synchronize", "pull_request", sync)):
            headers = {"x-github-event": event, "x-github-delivery": "d-1"}
            decided = intake._decide(headers, body)  # type: ignore[attr-defined]
            # _Reply: answered at once; _Accept: a job to store before the answer.
            found[label + " answer"] = type(decided).__name__.strip("_")
            for _ in range(200):
                intake._decide(headers, body)  # type: ignore[attr-defined]
            t0 = time.perf_counter()
            for _ in range(times):
                intake._decide(headers, body)  # type: ignore[attr-defined]
            found[label] = round((time.perf_counter() - t0) / times * 1e6, 2)
            found[label + " bytes"] = len(body)
        store.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else "")
    parser.add_argument("--builds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--micro", type=int, default=20_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    state = e2e_state()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as workdir, FakeGitHubServer(state) as url:
        report["calls_before"] = calls_per_job(url, state, Path(workdir), context="",
                                               number=NUMBER)
        report["calls_after"] = calls_per_job(url, state, Path(workdir), context=C,
                                              number=NUMBER + 2)
        report["ack"] = ack_latency(url, state, Path(workdir), args.builds, args.steps)
    report["decide_us"] = micro(args.micro)
    print("GitHub calls per PR job (vLLM 0.34.0 config at the base), before -> after:")
    for label, after in report["calls_after"].items():
        before = report["calls_before"].get(label, "-")
        print(f"    {label}: {before} -> {after}")
    ack = report["ack"]
    print(f"ack, client send->202 ({args.builds} builds x {args.steps} step statuses):")
    for kind, numbers in ack["client"].items():
        print(f"    {kind}: {numbers}")
    print("ack, inside the intake (duration_ms):")
    for kind, numbers in ack["inside_intake"].items():
        print(f"    {kind}: {numbers}")
    print(f"    codes {ack['codes']}; status jobs {ack['status_jobs']} for "
          f"{ack['step_statuses_sent']} step statuses")
    print(f"_decide in process (µs/delivery): {report['decide_us']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
