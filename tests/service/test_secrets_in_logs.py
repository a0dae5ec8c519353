"""No secret reaches a log line or an error (issue 5, "Prove it"; docs/architecture.md).

Representative flows run with real secrets configured: the webhook intake (good and
forged signatures), the githubkit adapter against the fake GitHub server (tokens,
a wrong App key, 502s, rate limits, a revoked token) and the worker that logs job
failures. Every log record of every logger is captured at DEBUG twice: as emitted
(before any redaction) and as the service's JSON lines. Both, and every exception
text, are scanned for the webhook secret, the private key, JWTs and tokens.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from bot.github.protocol import GitHubError
from bot.intake.app import create_app
from bot.observe.logs import configure_logging, register_secret
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore
from bot.settings.model import Settings
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import factory_for
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM
from tests.signing import sign, signed_headers

REPO = "vllm-project/vllm"
WEBHOOK_SECRET = "wh-secret-5b9e1d7c4a2f"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "webhooks"
PULL = "/repos/{owner}/{repo}/pulls/{number}"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
_JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+")
_TOKEN_SHAPE = re.compile(r"\b(?:ghs|ghp|gho|ghu|ghr)_[A-Za-z0-9]{8,}|github_pat_\w{8,}")


def key_lines(pem: str) -> list[str]:
    return [line for line in pem.strip().splitlines() if line and not line.startswith("-----")]


@dataclass
class Scanner:
    """Finds known secret values and secret shapes in text."""

    values: set[str] = field(default_factory=set)

    def add(self, *values: str) -> None:
        self.values.update(v for v in values if len(v) >= 8)

    def leaks(self, text: str) -> list[str]:
        found = [f"value {v[:6]}…" for v in self.values if v in text]
        found += [f"jwt {m[:10]}…" for m in _JWT.findall(text)]
        found += [f"token {m[:6]}…" for m in _TOKEN_SHAPE.findall(text)]
        return found


class RawRecords(logging.Handler):
    """Every record as emitted, formatted at once (later filters rewrite records)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        extras = {k: v for k, v in record.__dict__.items() if k not in _STANDARD_ATTRS}
        self.texts.append(f"{self.format(record)} {extras!r}")


_STANDARD_ATTRS = frozenset(logging.LogRecord("x", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName"}


@dataclass
class Capture:
    raw: RawRecords
    json_out: io.StringIO
    errors: list[str]

    def add_error(self, exc: BaseException) -> None:
        self.errors.append("".join(traceback.format_exception(exc)))

    def json_lines(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.json_out.getvalue().splitlines() if line]

    def assert_clean(self, scanner: Scanner) -> None:
        assert self.raw.texts, "nothing was logged: the flow did not run"
        for source, texts in (("record", self.raw.texts), ("json", self.json_lines_text()),
                              ("error", self.errors)):
            for text in texts:
                leaks = scanner.leaks(text)
                assert not leaks, f"{source} leaks {leaks}: {text[:300]!r}"

    def json_lines_text(self) -> Iterable[str]:
        return self.json_out.getvalue().splitlines()


@pytest.fixture
def capture(capsys: pytest.CaptureFixture[str]) -> Iterator[Capture]:
    root = logging.getLogger()
    level = root.level
    raw = RawRecords()
    # First on the root, so it sees each record before our RedactingFilter rewrites it.
    root.handlers.insert(0, raw)
    ours = configure_logging("DEBUG")
    out = io.StringIO()
    assert isinstance(ours, logging.StreamHandler)
    ours.setStream(out)
    try:
        yield Capture(raw, out, [])
    finally:
        root.removeHandler(ours)
        root.removeHandler(raw)
        root.setLevel(level)


def app_settings(url: str, tmp_path: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "app_id": 4242, "private_key": PRIVATE_KEY_PEM, "github_api_url": url,
        "webhook_secret": WEBHOOK_SECRET, "db_path": tmp_path / "jobs.db",
        "write_interval_seconds": 0.0, "max_retry_wait_seconds": 2.0,
        "http_timeout_seconds": 1.0, "settle_seconds": 0.0,
    }
    values.update(overrides)
    return Settings.model_validate(values)


def base_scanner() -> Scanner:
    scanner = Scanner()
    scanner.add(WEBHOOK_SECRET, *key_lines(PRIVATE_KEY_PEM))
    return scanner


# -- the scanner itself ---------------------------------------------------------------


def test_the_scanner_catches_planted_secrets(capture: Capture) -> None:
    scanner = base_scanner()
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI0MjQyIn0.c2lnbmF0dXJl"
    planted = [f"secret={WEBHOOK_SECRET}", key_lines(PRIVATE_KEY_PEM)[3], f"auth {jwt}",
               "token ghs_" + "a" * 36, "pat ghp_" + "B" * 36]
    for text in planted:
        assert scanner.leaks(text), text
    assert scanner.leaks("ok: pull_request#2 sha256=deadbeef") == []
    register_secret(WEBHOOK_SECRET)  # as create_app does with the configured secret
    # Logged for real: the raw record holds it, so the scan must fail...
    logging.getLogger("test.planted").warning("leaking %s", WEBHOOK_SECRET)
    with pytest.raises(AssertionError, match="record leaks"):
        capture.assert_clean(scanner)
    # ...while the JSON line the service writes has it masked.
    assert WEBHOOK_SECRET not in capture.json_out.getvalue()
    assert "[REDACTED]" in capture.json_out.getvalue()


# -- the intake --------------------------------------------------------------------


async def test_intake_logs_no_secret_and_no_signature(
    tmp_path: Path, capture: Capture
) -> None:
    settings = app_settings("http://127.0.0.1:9", tmp_path)
    store = SqliteJobStore.from_settings(settings)
    app = create_app(settings, store, Metrics())
    body = (FIXTURES / "pull_request.opened.json").read_bytes()
    scanner = base_scanner()
    forged = [sign(body, "not-the-secret"), sign(body, WEBHOOK_SECRET).upper(),
              "sha256=" + WEBHOOK_SECRET, WEBHOOK_SECRET, "sha1=" + "ab" * 20,
              sign(body, WEBHOOK_SECRET)[:30], "ghs_" + "q" * 36]
    # A forged header is attacker text, but logging it verbatim would still hand out
    # a signature (or whatever secret a misconfigured sender put there).
    scanner.add(*forged, sign(body, WEBHOOK_SECRET))
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url="http://testserver") as http:
            good = signed_headers("pull_request", body, WEBHOOK_SECRET, "good-1")
            assert (await http.post("/webhook", content=body, headers=good)).status_code == 202
            for i, value in enumerate(forged):
                headers = signed_headers("pull_request", body, WEBHOOK_SECRET, f"bad-{i}")
                headers["X-Hub-Signature-256"] = value
                response = await http.post("/webhook", content=body, headers=headers)
                assert response.status_code == 401
                assert WEBHOOK_SECRET not in response.text
            store.close()  # the 503 path logs the store error
            response = await http.post("/webhook", content=body, headers=good)
            assert response.status_code == 503
    finally:
        store.close()
    outcomes = [line.get("outcome") for line in capture.json_lines()]
    assert outcomes.count("unauthorized") == len(forged)
    capture.assert_clean(scanner)


# -- the GitHub adapter and the worker ------------------------------------------------


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py"])
    server.use(s)
    return s


async def test_adapter_failures_log_and_raise_no_key_jwt_or_token(
    tmp_path: Path, server: FakeGitHubServer, state: FakeGitHubState, capture: Capture
) -> None:
    settings = app_settings(server.url, tmp_path)
    factory = factory_for(settings)
    async with factory.for_installation(1) as gh:
        assert (await gh.get_pull(REPO, 1)).number == 1
        await gh.create_comment(REPO, 1, "hello")
        state.fail_next("GET", PULL, 502, times=5)
        state.fail_next("POST", COMMENTS, 502)
        state.fail_next("GET", PULL, 429, headers={"Retry-After": "120"})
        state.secondary_rate_limit_next("GET", PULL, retry_after=1)
        state.secondary_rate_limit_next("POST", COMMENTS, retry_after=3600)
        for call in (lambda: gh.get_pull(REPO, 1), lambda: gh.create_comment(REPO, 1, "x"),
                     lambda: gh.get_pull(REPO, 1), lambda: gh.get_pull(REPO, 1),
                     lambda: gh.create_comment(REPO, 1, "y")):
            try:
                await call()
            except GitHubError as exc:
                capture.add_error(exc)
                logging.getLogger("bot.queue.jobs").warning("job failed: %s", exc, exc_info=exc)
        state.rate_limit_remaining = 0
        with pytest.raises(GitHubError) as exhausted:
            await gh.get_pull(REPO, 1)
        capture.add_error(exhausted.value)
        state.rate_limit_remaining = 5000
    issued = set(state.tokens)
    state.tokens.clear()  # revoked: the next call is a 401 with the old token
    with pytest.raises(GitHubError) as revoked:
        async with factory.for_installation(1) as gh:
            await gh.get_pull(REPO, 1)
    capture.add_error(revoked.value)
    async with factory.for_installation(1) as gh:  # mints a fresh one
        await gh.get_pull(REPO, 1)

    wrong_key = app_settings(server.url, tmp_path, private_key=OTHER_KEY_PEM)
    with pytest.raises(GitHubError) as unauthorized:
        async with factory_for(wrong_key).for_installation(1):
            pass
    assert unauthorized.value.status == 401
    capture.add_error(unauthorized.value)
    logging.getLogger("bot.queue.jobs").exception("job failed", exc_info=unauthorized.value)

    issued.update(state.tokens)
    assert len(issued) == 2
    assert len(capture.errors) >= 6
    scanner = base_scanner()
    scanner.add(*issued, *key_lines(OTHER_KEY_PEM))
    capture.assert_clean(scanner)


async def test_worker_failure_logs_and_stored_errors_hold_no_secret(
    tmp_path: Path, server: FakeGitHubServer, state: FakeGitHubState, capture: Capture
) -> None:
    settings = app_settings(server.url, tmp_path, max_attempts=2)
    factory = factory_for(settings)
    store = SqliteJobStore.from_settings(settings)
    finished = asyncio.Event()
    seen: list[Job] = []

    async def process(job: Job) -> None:
        seen.append(job)
        try:
            token = await factory.installation_token(1)
            # The worst case: an exception whose text carries the token itself.
            state.fail_next("GET", PULL, 503, times=5)
            async with factory.for_installation(1) as gh:
                try:
                    await gh.get_pull(REPO, 1)
                except GitHubError as exc:
                    raise RuntimeError(f"with token {token} and key {PRIVATE_KEY_PEM}") from exc
        finally:
            finished.set()

    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.05)
    try:
        await store.enqueue(NewJob(kind="pr", key="pr:x#1", installation_id=1, repo=REPO,
                                   number=1, payload={"actions": ["opened"], "labels": []}))
        await worker.start()
        await asyncio.wait_for(finished.wait(), 10)
        await worker.stop(2.0)
        jobs = await store.list_jobs()
    finally:
        store.close()
    assert seen
    assert jobs[0].last_error is not None
    assert "RuntimeError" in jobs[0].last_error
    scanner = base_scanner()
    scanner.add(*state.tokens)
    capture.errors.append(jobs[0].last_error)
    capture.assert_clean(scanner)


def _other_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


OTHER_KEY_PEM = _other_key()
