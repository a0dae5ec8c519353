"""`status` deliveries at the intake: vLLM's Buildkite posts one per job (~100 a build)
and one for the build; only the build's own status, reaching a new state, is a job.
The step statuses are answered at once: no validation beyond the context, no row."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.intake.webhooks import ci_state
from tests.intake.test_app import Service, body_of

SHA = "6113728f27ae82c7b1a177c8d03f9e96e0adf246"  # the fixture's commit


def status_body(context: str = "buildkite/ci/pr", state: str = "pending",
                description: str | None = "Build #64532 is running", **changes: Any) -> bytes:
    payload = json.loads(body_of("status"))
    payload.update(context=context, state=state, description=description, **changes)
    return json.dumps(payload).encode()


def delivery_rows(svc: Service) -> int:
    with sqlite3.connect(svc.settings.db_path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0])


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[Service]:
    service = Service(tmp_path)
    yield service
    await service.http.aclose()
    service.store.close()


async def test_the_builds_own_status_is_a_status_job(svc: Service) -> None:
    response = await svc.post("status", body_of("status"), delivery="s-1")
    assert response.status_code == 202
    job = await svc.store.get(response.json()["job"])
    assert job is not None
    assert (job.kind, job.repo, job.number, job.installation_id) == (
        "status", "vllm-project/vllm", None, 41723890)
    # The fixture's build "passed and blocked": pending, waiting on a block step.
    assert job.payload == {"sha": SHA, "state": "blocked"}
    assert job.key == f"status:vllm-project/vllm@{SHA}"


async def test_a_step_status_is_answered_without_a_row(svc: Service) -> None:
    before = delivery_rows(svc)
    for name in ("buildkite/ci/pr/amd-mi355-e2e-core-large-memory",
                 "buildkite/ci/pr/bootstrap", "DCO", "buildkite/ci-amd/pr"):
        response = await svc.post("status", status_body(context=name, state="success"))
        assert response.status_code == 202
        assert response.json() == {"ignored": "status of another context"}
    assert delivery_rows(svc) == before
    assert (await svc.store.counts())["queued"] == 0


async def test_a_repeated_state_is_no_new_job_a_new_state_is(svc: Service) -> None:
    first = await svc.post("status", status_body(), delivery="s-1")
    again = await svc.post("status", status_body(description="Build #64532 is running (2/90)"),
                           delivery="s-2")
    assert again.json() == {"ignored": "CI state unchanged"}
    blocked = await svc.post(
        "status", status_body(description="Build #64532 passed and blocked"), delivery="s-3")
    assert blocked.json()["job"] == first.json()["job"]  # merged into the pending job
    job = await svc.store.get(first.json()["job"])
    assert job is not None
    assert job.payload["state"] == "blocked"
    passed = await svc.post("status", status_body(state="success", description="Passed"),
                            delivery="s-4")
    assert passed.status_code == 202
    assert "job" in passed.json()


async def test_another_commit_is_its_own_job(svc: Service) -> None:
    one = await svc.post("status", status_body(), delivery="s-1")
    two = await svc.post("status", status_body(sha="a" * 40), delivery="s-2")
    assert one.json()["job"] != two.json()["job"]


@pytest.mark.parametrize("changes", [{"sha": "not-a-sha"}, {"state": "weird"},
                                     {"repository": {"full_name": "no slash"}}])
async def test_a_bad_build_status_is_400(svc: Service, changes: dict[str, Any]) -> None:
    response = await svc.post("status", status_body(**changes))
    assert response.status_code == 400
    assert response.json()["error"].startswith("bad status payload")


async def test_without_a_ci_context_every_status_is_ignored(tmp_path: Path) -> None:
    svc = Service(tmp_path, ci_status_context="")
    try:
        response = await svc.post("status", body_of("status"))
        assert response.json() == {"ignored": "status of another context"}
        assert (await svc.store.counts())["queued"] == 0
    finally:
        await svc.http.aclose()
        svc.store.close()


@pytest.mark.parametrize(("state", "description", "expected"), [
    ("pending", "Build #64532 passed and blocked", "blocked"),
    ("pending", "Build #64532 is running (unblocked by @maintainer)", "pending"),
    ("pending", None, "pending"),
    ("success", "Build #64532 passed (blocked steps skipped)", "success"),
])
def test_the_state_a_build_status_reaches(state: str, description: str | None,
                                          expected: str) -> None:
    assert ci_state(state, description) == expected
