"""Issue 14, service side: which mode and why, credentials checked at start, /readyz
honest about them, permanent 401s parked, dry-run previews readable in the log."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.github.dry_run import DryRunGitHub, RecordedWrite
from bot.github.protocol import BadCredentials, GitHubError
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key
from bot.service.credentials import CredentialCheck
from bot.settings.model import Settings
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import factory_for, make_settings
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM
from tests.service_harness import ServiceProcess, e2e_state, wait_until

REPO = "vllm-project/vllm"


# --- item 3: a token alone never makes the service live -------------------------------

def test_a_token_alone_is_dry_run_and_says_why() -> None:
    token_only = Settings(github_token="ghp_" + "a" * 36)
    assert token_only.effective_dry_run
    assert "only DIGEST_GITHUB_TOKEN is set" in token_only.mode_reason()
    app = Settings(app_id=1, private_key=PRIVATE_KEY_PEM)
    assert not app.effective_dry_run
    assert "App credentials" in app.mode_reason()
    assert Settings(app_id=1, private_key=PRIVATE_KEY_PEM, dry_run=True).effective_dry_run


# --- item 4: credentials are checked at start -----------------------------------------

def _other_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _state() -> FakeGitHubState:
    state = FakeGitHubState()
    state.app_public_key_pem = PUBLIC_KEY_PEM
    return state


async def test_working_credentials_make_the_check_pass() -> None:
    with FakeGitHubServer(_state()) as url:
        check = CredentialCheck(make_settings(url), factory_for(make_settings(url)))
        assert check.reason is not None  # not ready until checked
        permanent = await check.check_once()
    assert check.reason is None
    assert not permanent
    assert check.bot_login is not None
    assert check.bot_login.endswith("[bot]")


async def test_a_key_github_rejects_is_permanent() -> None:
    with FakeGitHubServer(_state()) as url:
        settings = make_settings(url, private_key=_other_key())
        check = CredentialCheck(settings, factory_for(settings))
        permanent = await check.check_once()
    assert permanent
    assert check.reason is not None
    assert check.reason.startswith("GitHub rejected the App credentials")
    assert "HTTP 401" in check.reason


async def test_an_unreadable_key_path_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "key.pem"
    settings = Settings(app_id=1, private_key_path=missing)
    check = CredentialCheck(settings, factory_for(settings))
    assert await check.check_once()
    assert check.reason == (f"DIGEST_PRIVATE_KEY_PATH={missing}: cannot read the private key "
                            "(No such file or directory)")


async def test_a_malformed_key_is_named_without_quoting_it() -> None:
    settings = Settings(app_id=1, private_key="-----BEGIN RSA PRIVATE KEY-----\nnope\n")
    check = CredentialCheck(settings, factory_for(settings))
    assert await check.check_once()
    assert check.reason is not None
    assert check.reason.startswith("the App private key is not a usable RSA PEM key")
    assert "nope" not in check.reason


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_github_is_transient_with_the_cause() -> None:
    settings = make_settings(f"http://127.0.0.1:{_closed_port()}")
    check = CredentialCheck(settings, factory_for(settings))
    assert not await check.check_once()
    assert check.reason is not None
    assert "/app: cannot connect (" in check.reason


@pytest.mark.slow
def test_a_key_github_rejects_starts_not_ready_with_the_reason(tmp_path: Path) -> None:
    # A key path that cannot be read no longer starts at all (issue 31:
    # tests/service/test_fail_fast_start.py); a well-formed RSA key that is not the App's
    # can only be found out by asking GitHub, after the port is open.
    key_path = tmp_path / "other.pem"
    key_path.write_text(_other_key())
    with FakeGitHubServer(e2e_state()) as url, ServiceProcess(
        url, tmp_path,
        extra_env={"DIGEST_PRIVATE_KEY": "", "DIGEST_PRIVATE_KEY_PATH": str(key_path)},
    ) as svc:
        def not_ready() -> bool:
            response = httpx.get(f"{svc.url}/readyz", timeout=2)
            return response.status_code == 503 and "rejected" in response.text
        wait_until(not_ready, timeout=10, message="readyz never said why")
        reason = httpx.get(f"{svc.url}/readyz", timeout=2).json()["reason"]
        assert reason.startswith("GitHub rejected the App credentials (DIGEST_APP_ID, key)")
        assert httpx.get(f"{svc.url}/healthz", timeout=2).status_code == 200
    messages = [r.get("msg", "") for r in svc.log_records()]
    assert any("(live: App credentials" in m for m in messages)
    assert any(m.startswith("GitHub App credentials do not work: GitHub rejected")
               for m in messages)


@pytest.mark.slow
def test_working_credentials_are_ready_and_a_token_alone_is_dry_run(tmp_path: Path) -> None:
    with FakeGitHubServer(e2e_state()) as url:
        with ServiceProcess(url, tmp_path) as svc:
            wait_until(lambda: httpx.get(f"{svc.url}/readyz", timeout=2).status_code == 200,
                       timeout=10, message="never ready with working credentials")
        with ServiceProcess(url, tmp_path, name="token", extra_env={
                "DIGEST_APP_ID": "", "DIGEST_PRIVATE_KEY": "",
                "DIGEST_GITHUB_TOKEN": "ghp_" + "b" * 36}) as token_svc:
            assert httpx.get(f"{token_svc.url}/readyz", timeout=2).status_code == 200
        messages = [r.get("msg", "") for r in token_svc.log_records()]
    assert any("(dry-run: only DIGEST_GITHUB_TOKEN is set" in m for m in messages)


# --- item 2: a 401 is parked at once, with its reason ----------------------------------

async def test_bad_credentials_park_the_job_at_once(tmp_path: Path) -> None:
    store = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0, max_attempts=8)

    async def process(job: Job) -> None:
        raise BadCredentials("GET https://api.github.com/app: HTTP 401 (Bad credentials)",
                             status=401)

    job_id = await store.enqueue(NewJob(kind="pr", key=pr_key(REPO, 1), installation_id=1,
                                        repo=REPO, number=1))
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    await worker.start()
    try:
        for _ in range(300):
            job = await store.get(job_id)
            if job is not None and job.state == "parked":
                break
            await asyncio.sleep(0.01)
    finally:
        await worker.stop(1.0)
        store.close()
    assert job is not None
    assert job.state == "parked"
    assert job.attempts == 1
    assert job.last_error == (
        "BadCredentials: GET https://api.github.com/app: HTTP 401 (Bad credentials)")


async def test_a_transient_error_is_not_parked_early(tmp_path: Path) -> None:
    store = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0, max_attempts=8)
    job_id = await store.enqueue(NewJob(kind="pr", key=pr_key(REPO, 2), installation_id=1,
                                        repo=REPO, number=2))
    claimed = await store.claim()
    assert claimed is not None
    failed = await store.fail(job_id, str(GitHubError("GET x: timed out")))
    store.close()
    assert failed is not None
    assert failed.state == "failed"


# --- item 1: dry-run's would-be comment is visible in the log --------------------------

async def test_dry_run_logs_the_first_lines_of_the_comment(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.github.dry_run")
    recorded: list[RecordedWrite] = []

    async def keep(write: RecordedWrite) -> None:
        recorded.append(write)

    gh = DryRunGitHub(MemoryGitHub(FakeGitHubState()), keep, "pr-digest[bot]")
    body = "### 🔎 Deep read · ~9 min\nline two\nline three\nline four\nline five\nline six"
    await gh.create_comment(REPO, 7, body)
    message = caplog.records[-1].getMessage()
    assert message.startswith(f"dry-run: would create_comment on {REPO}#7:\n### 🔎 Deep read")
    assert "line four" in message
    assert "line five" not in message
    assert recorded == [RecordedWrite(REPO, 7, "create_comment", body)]
