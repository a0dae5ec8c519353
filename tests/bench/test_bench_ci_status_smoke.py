"""The CI-status bench's in-process part runs, and measures what it says it does: a step
status is answered at once, a synchronize is a job to store first."""

from __future__ import annotations

from bench.bench_ci_status import micro


def test_micro_decides_a_step_status_at_once_and_a_synchronize_as_a_job() -> None:
    found = micro(20)
    assert found["step status answer"] == "Reply"
    assert found["pull_request.synchronize answer"] == "Accept"
    assert found["step status"] > 0
    assert found["pull_request.synchronize"] > 0
    assert found["step status bytes"] > 5_000  # a real-sized payload, not a stub
