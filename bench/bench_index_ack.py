"""Webhook ack latency while the real service builds the symbol index of a big tarball.

Run: python -m bench.bench_index_ack [--files 600] [--big 6] [--json out.json]
The real `digest-bot serve` process and the fake GitHub on loopback: idle acks first
(the baseline, same run), then a signed default-branch push; while the index job
downloads and builds the tarball (synthetic tree from bench/index_tree.py plus a few
~1.8 MB modules, each one long `ast.parse` call), signed `pull_request` deliveries are
sent one after another and timed until the job's record says it finished.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import statistics
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.index_tree import TOP, files
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.service_harness import (
    INSTALLATION_ID,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)
from tests.signing import signed_headers

FIRST_PR = 3000
HEAD = "b1d" + "0" * 37


def big_module(index: int, target_bytes: int = 1_800_000) -> str:
    """One generated module just under the 2 MB per-file cap: thousands of functions."""
    parts: list[str] = []
    size = 0
    for n in itertools.count():
        text = (f"def big{index}_fn{n}(inputs, scale={n}, *, strict=False):\n"
                f"    value = helper(inputs, scale)\n"
                f"    if value is None:\n        raise ValueError('missing {n}')\n"
                f"    return [v * {n} for v in value if v]\n\n")
        if size + len(text) > target_bytes:
            break
        parts.append(text)
        size += len(text)
    return "".join(parts)


def tree_tarball(small: int, big: int) -> tuple[bytes, int]:
    buffer = io.BytesIO()
    count = 0
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        members = [*itertools.islice(files(0), small),
                   *((f"vllm/generated/big{i}.py", big_module(i)) for i in range(big))]
        for path, text in members:
            data = text.encode()
            info = tarfile.TarInfo(f"{TOP}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
            count += 1
    return buffer.getvalue(), count


def _push() -> dict[str, Any]:
    return {
        "ref": "refs/heads/main", "before": "0" * 40, "after": HEAD, "created": False,
        "deleted": False, "commits": [],
        "repository": {"full_name": REPO, "default_branch": "main"},
        "installation": {"id": INSTALLATION_ID}, "sender": {"login": "merger", "type": "User"},
    }


def _summary(latencies_ms: list[float]) -> dict[str, float | int]:
    ordered = sorted(latencies_ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered), 2),
            "p99_ms": round(p99, 2), "max_ms": round(ordered[-1], 2)}


class Deliveries:
    """Signed `pull_request.synchronize` deliveries over a few PRs, each a new head."""

    def __init__(self, svc: ServiceProcess, state: FakeGitHubState, prs: int) -> None:
        self.svc, self.state = svc, state
        self.numbers = [FIRST_PR + i for i in range(prs)]
        for number in self.numbers:
            state.add_pull(REPO, number, title="[torch.compile] x", body=UNTESTED_BODY,
                           files=list(COMPILE_FILES))
        self.sent = 0

    def one(self) -> tuple[float, int]:
        number = self.numbers[self.sent % len(self.numbers)]
        self.sent += 1
        sha = f"{self.sent:040x}"
        self.state.pulls[(REPO, number)].head_sha = sha
        body = json.dumps(pr_event("synchronize", number, head_sha=sha)).encode()
        headers = signed_headers("pull_request", body, self.svc.secret)
        t0 = time.perf_counter()
        response = self.svc.post_raw(body, headers)
        return (time.perf_counter() - t0) * 1000, response.status_code


def measure(svc: ServiceProcess, state: FakeGitHubState, *, idle: int = 60, prs: int = 10,
            interval_ms: float = 10.0, timeout: float = 600.0) -> dict[str, Any]:
    wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
    deliveries = Deliveries(svc, state, prs)
    for _ in range(10):
        deliveries.one()  # warm-up: first connections, first jobs
    baseline: list[float] = []
    for _ in range(idle):
        baseline.append(deliveries.one()[0])
        time.sleep(interval_ms / 1000)
    during: list[float] = []
    statuses: dict[int, int] = {}
    started = time.monotonic()
    assert svc.send("push", _push()).status_code == 202
    while not svc.job_records(kind="index"):
        if time.monotonic() - started > timeout:
            raise TimeoutError("the index job did not finish")
        latency, status = deliveries.one()
        during.append(latency)
        statuses[status] = statuses.get(status, 0) + 1
        time.sleep(interval_ms / 1000)
    build_s = time.monotonic() - started
    (job,) = svc.job_records(kind="index")
    built = [r for r in svc.log_records() if r.get("msg") == "index built"]
    return {
        "idle": _summary(baseline), "during_build": _summary(during),
        "statuses_during_build": statuses, "index_job": job.get("outcome"),
        "files_indexed": built[0].get("files") if built else None,
        "build_wall_s": round(build_s, 1),
    }


def run(small: int, big: int, interval_ms: float) -> dict[str, Any]:
    data, count = tree_tarball(small, big)
    state = e2e_state()
    state.repos[REPO].head_sha = HEAD
    state.repos[REPO].tarball = data
    with tempfile.TemporaryDirectory() as workdir, FakeGitHubServer(state) as url, \
            ServiceProcess(url, Path(workdir),
                           extra_env={"DIGEST_INDEX_SETTLE_SECONDS": "0"}) as svc:
        report = measure(svc, state, interval_ms=interval_ms)
    report.update({"tarball_bytes": len(data), "tarball_files": count})
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else "")
    parser.add_argument("--files", type=int, default=600, help="files of the synthetic tree")
    parser.add_argument("--big", type=int, default=6, help="~1.8 MB modules added")
    parser.add_argument("--interval-ms", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report = run(args.files, args.big, args.interval_ms)
    idle, during = report["idle"], report["during_build"]
    print(f"tarball: {report['tarball_files']} files, {report['tarball_bytes']:,} bytes; "
          f"index job {report['index_job']}, {report['files_indexed']} files, "
          f"{report['build_wall_s']} s from push to job record")
    print(f"ack idle (same run):  n={idle['n']} p50 {idle['p50_ms']} ms, "
          f"p99 {idle['p99_ms']} ms, max {idle['max_ms']} ms")
    print(f"ack during the build: n={during['n']} p50 {during['p50_ms']} ms, "
          f"p99 {during['p99_ms']} ms, max {during['max_ms']} ms; "
          f"statuses {report['statuses_during_build']}")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
