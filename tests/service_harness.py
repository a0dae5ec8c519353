"""Run the real `python -m bot serve` against the shared fake GitHub and drive it with
signed webhook deliveries. For end-to-end tests and benchmarks that assert GitHub's
END STATE (comments, reactions, review requests, call counts), not internals.

Typical use (one fake GitHub + one service per test module; a PR number per test)::

    state = e2e_state()                              # App key, installation, repo
    with FakeGitHubServer(state) as url, ServiceProcess(url, tmp_dir) as svc:
        state.add_pull(REPO, 7, files=COMPILE_FILES)
        svc.send("pull_request", pr_event("opened", 7))          # -> httpx.Response
        wait_until(lambda: len(state.bot_comments(REPO, 7)) == 1, timeout=10)
        svc.wait_for_job(pr=7)                       # a "job ok" log line for PR 7

API
- `e2e_state(**kw) -> FakeGitHubState`: the fake GitHub every e2e test starts from:
  `app_public_key_pem` set (JWTs verify), `installations = {INSTALLATION_ID: "vllm-project"}`,
  repo `REPO` added.
- `ServiceProcess(github_url, workdir, *, secret=SECRET, settle_seconds=0.3,
  write_interval_seconds=0.01, reconcile_on_startup=False, skip_drafts=True,
  db_path=None, extra_env=None, name="service", wait_for_worker=True)`: a context
  manager. `start()` spawns the subprocess on a free loopback port with env DIGEST_*
  (App id/key of the fake, temp DB under `workdir`, webhook secret, ...) and waits for
  `GET /healthz` and, unless `wait_for_worker=False`, for `/readyz` to stop saying
  "starting" (the worker side is built after the port opens); the
  subprocess's stderr (JSON log lines) goes to `log_path`
  (`workdir/<name>-<n>.log`, one file per start). `stop(timeout=15)` sends SIGTERM
  and waits (returns the exit code); `kill()` sends SIGKILL (no drain, no cleanup);
  `restart(**overrides)` starts again on the same DB, changing any constructor
  keyword (e.g. `settle_seconds`). Attributes: `url`, `webhook_url`, `db_path`,
  `log_path`, `pid`, `settle_seconds`.
- `svc.send(event, payload, *, delivery=None, secret=None) -> httpx.Response`: sign
  (with the service's secret unless `secret` is given) and POST a delivery;
  `payload` is a dict (compact JSON) or raw bytes. `svc.post_raw(body, headers)`
  posts exactly what it is given (unsigned/forged deliveries).
- `svc.log_records() -> list[dict]`: every JSON log line so far (all starts);
  `svc.job_records(pr=None, kind=None, outcome=None)`: the worker's "job <outcome>"
  lines; `svc.wait_for_job(pr, *, kind="pr", outcome="ok", count=1, timeout=10)`
  waits until at least `count` such lines exist and returns them.
- Payload builders from the real fixtures in tests/fixtures/webhooks:
  `fixture(name) -> dict`; `pr_event(action, number, *, head_sha=None, draft=False,
  label=None, sender=None, author=None, changes=None)`;
  `comment_event(number, comment_id, body, *, author="Codertocat",
  author_type="User", association="NONE", action="created")`;
  `review_event(number, review_id, body, *, author, author_type, state, action)` and
  `review_comment_event(number, comment_id, body, *, author, author_type, action)`.
- `service_for(state, github_url, workdir, **options)`: a context manager: a started
  `ServiceProcess` that has learned its own login (GET /app), settled for a first delivery.
- `wait_until(predicate, timeout=10, interval=0.02, message="") -> None`: polls;
  raises AssertionError (with `message`) on timeout.
- `writes_for(state, number)` / `calls_for(state, number)`: the fake's call records
  that touch PR `number` (its pull, issue, files, labels and reviewers routes);
  `count_by_route(records) -> Counter[(method, route)]`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from tests.fakes.github_state import CallRecord, FakeGitHubState
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM
from tests.signing import signed_headers

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "webhooks"
REPO = "vllm-project/vllm"
INSTALLATION_ID = 41723890  # what every fixture payload carries
SECRET = "e2e-webhook-secret"
BOT = "pr-digest[bot]"  # the fake's app slug + [bot]: what GET /app teaches the service
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
_START_TIMEOUT = 20.0


def e2e_state(**overrides: Any) -> FakeGitHubState:
    state = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, **overrides)
    state.installations = {INSTALLATION_ID: REPO.split("/", 1)[0]}
    state.add_repo(REPO)
    return state


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(
    predicate: Callable[[], object], timeout: float = 10.0, interval: float = 0.02,
    message: str = "",
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except RuntimeError as exc:
            # The fake serves from its own thread: a dict may change size while the
            # test iterates it. Look again on the next poll.
            if "changed size during iteration" not in str(exc):
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting: {message}")
        time.sleep(interval)


# --- payloads ------------------------------------------------------------------


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded


def pr_event(
    action: str,
    number: int,
    *,
    head_sha: str | None = None,
    draft: bool = False,
    label: str | None = None,
    sender: str | None = None,
    sender_type: str = "User",
    author: str | None = None,
    changes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A real `pull_request.opened` payload retargeted at PR `number` with `action`."""
    payload = fixture("pull_request.opened")
    payload["action"] = action
    payload["number"] = number
    pr = payload["pull_request"]
    pr["number"] = number
    pr["id"] = 1_000_000 + number
    pr["draft"] = draft
    pr["head"]["sha"] = head_sha or f"{number:040x}"
    for key in ("url", "html_url", "issue_url", "comments_url", "commits_url",
                "review_comments_url", "statuses_url", "diff_url", "patch_url"):
        if isinstance(pr.get(key), str):
            pr[key] = pr[key].replace("/2", f"/{number}")
    if author is not None:
        pr["user"]["login"] = author
    if sender is not None:
        payload["sender"]["login"] = sender
        payload["sender"]["type"] = sender_type
    if label is not None:
        labeled = fixture("pull_request.labeled")["label"]
        payload["label"] = {**labeled, "name": label}
    if changes is not None:
        payload["changes"] = changes
    elif action == "edited":
        payload["changes"] = copy.deepcopy(fixture("pull_request.edited")["changes"])
    return payload


def comment_event(
    number: int,
    comment_id: int,
    body: str,
    *,
    author: str = "Codertocat",
    author_type: str = "User",
    association: str = "NONE",
    action: str = "created",
) -> dict[str, Any]:
    """A real `issue_comment.created` payload (on a PR) for comment `comment_id`."""
    payload = fixture("issue_comment.created")
    payload["action"] = action
    payload["issue"]["number"] = number
    comment = payload["comment"]
    comment["id"] = comment_id
    comment["body"] = body
    comment["user"]["login"] = author
    comment["user"]["type"] = author_type
    comment["author_association"] = association
    comment["performed_via_github_app"] = None
    payload["sender"]["login"] = author
    payload["sender"]["type"] = author_type
    return payload


def review_event(
    number: int,
    review_id: int,
    body: str,
    *,
    author: str = "Codertocat",
    author_type: str = "User",
    state: str = "commented",
    action: str = "submitted",
) -> dict[str, Any]:
    """A `pull_request_review` payload (tests/fixtures/webhooks) for PR `number`."""
    payload = fixture("pull_request_review.submitted")
    payload["action"] = action
    payload["pull_request"]["number"] = number
    review = payload["review"]
    review.update(id=review_id, body=body, state=state)
    review["user"]["login"] = author
    review["user"]["type"] = author_type
    payload["sender"] = copy.deepcopy(review["user"])
    return payload


def review_comment_event(
    number: int,
    comment_id: int,
    body: str,
    *,
    author: str = "Codertocat",
    author_type: str = "User",
    action: str = "created",
) -> dict[str, Any]:
    """A `pull_request_review_comment` payload (tests/fixtures/webhooks) for PR `number`."""
    payload = fixture("pull_request_review_comment.created")
    payload["action"] = action
    payload["pull_request"]["number"] = number
    comment = payload["comment"]
    comment.update(id=comment_id, body=body)
    comment["user"]["login"] = author
    comment["user"]["type"] = author_type
    payload["sender"] = copy.deepcopy(comment["user"])
    return payload


# --- the fake's call log -------------------------------------------------------


def _touches(record: CallRecord, number: int) -> bool:
    return re.search(rf"/(?:pulls|issues)/{number}(?:/|$)", record.path) is not None


def calls_for(state: FakeGitHubState, number: int) -> list[CallRecord]:
    """The fake's records for PR `number`'s own routes (not comment-id routes)."""
    return [c for c in list(state.calls) if _touches(c, number)]


def writes_for(state: FakeGitHubState, number: int) -> list[CallRecord]:
    return [c for c in calls_for(state, number) if c.method in WRITE_METHODS]


def count_by_route(records: Iterable[CallRecord]) -> Counter[tuple[str, str]]:
    return Counter((c.method, c.route) for c in records)


# --- the service process ---------------------------------------------------------


class ServiceProcess:
    def __init__(
        self,
        github_url: str,
        workdir: Path,
        *,
        secret: str = SECRET,
        settle_seconds: float = 0.3,
        write_interval_seconds: float = 0.01,
        reconcile_on_startup: bool = False,
        skip_drafts: bool = True,
        db_path: Path | None = None,
        extra_env: dict[str, str] | None = None,
        name: str = "service",
        wait_for_worker: bool = True,
    ) -> None:
        self.github_url = github_url
        self.wait_for_worker = wait_for_worker
        self.workdir = workdir
        self.secret = secret
        self.settle_seconds = settle_seconds
        self.write_interval_seconds = write_interval_seconds
        self.reconcile_on_startup = reconcile_on_startup
        self.skip_drafts = skip_drafts
        self.db_path = db_path or workdir / f"{name}.db"
        self.extra_env = dict(extra_env or {})
        self.name = name
        self.url = ""
        self.webhook_url = ""
        self.log_path = workdir / f"{name}-0.log"
        self._logs: list[Path] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._client: httpx.Client | None = None

    # lifecycle

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def env(self) -> dict[str, str]:
        # The caller's own DIGEST_* settings (a real secret or API URL) must not leak in.
        env = {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}
        env.update({
            "DIGEST_APP_ID": "4242",
            "DIGEST_PRIVATE_KEY": PRIVATE_KEY_PEM,
            "DIGEST_WEBHOOK_SECRET": self.secret,
            "DIGEST_GITHUB_API_URL": self.github_url,
            "DIGEST_DB_PATH": str(self.db_path),
            "DIGEST_SETTLE_SECONDS": str(self.settle_seconds),
            "DIGEST_WRITE_INTERVAL_SECONDS": str(self.write_interval_seconds),
            "DIGEST_RECONCILE_ON_STARTUP": "1" if self.reconcile_on_startup else "0",
            "DIGEST_SKIP_DRAFTS": "1" if self.skip_drafts else "0",
            "DIGEST_DRAIN_SECONDS": "5",
            "DIGEST_LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        })
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            raise RuntimeError("service already running")
        for _ in range(3):
            if self._spawn():
                return
        raise RuntimeError("no free port for the service after 3 tries")

    def _spawn(self) -> bool:
        """Start on a free port and wait for /healthz; False if the port was taken
        between choosing and binding it (other test processes share this host)."""
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.webhook_url = f"{self.url}/webhook"
        self.log_path = self.workdir / f"{self.name}-{len(self._logs)}.log"
        self._logs.append(self.log_path)
        with self.log_path.open("wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1",
                 "--port", str(port)],
                cwd=self.workdir, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
            )
        self._client = httpx.Client(base_url=self.url, timeout=10.0)
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self._proc.poll() is not None:
                self._close_client()
                output = self.log_path.read_text(errors="replace")
                if "address already in use" in output.lower():
                    return False
                raise RuntimeError(f"service exited with {self._proc.returncode}: "
                                   f"{output[-3000:]}")
            try:
                if self._client.get("/healthz").status_code == 200 and (
                        not self.wait_for_worker or self._worker_started()):
                    return True
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"service not healthy after {_START_TIMEOUT}s")
            time.sleep(0.05)

    def _worker_started(self) -> bool:
        """The port opens before the worker side is built; /readyz says "starting"
        until it is (any other answer: started, or not ready for another reason)."""
        assert self._client is not None
        reply = self._client.get("/readyz")
        return not (reply.status_code == 503 and reply.json().get("reason") == "starting")

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait (graceful drain); SIGKILL if it does not exit in time."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._close_client()
        return proc.returncode

    def kill(self) -> None:
        """SIGKILL: no drain, no cleanup, exactly like a crashed host."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        self._close_client()

    def restart(self, **overrides: Any) -> None:
        """Start again on the same database (stop first if still running)."""
        self.stop()
        for key, value in overrides.items():
            if not hasattr(self, key) or key in ("url", "webhook_url", "log_path"):
                raise TypeError(f"unknown setting {key!r}")
            setattr(self, key, value)
        self.start()

    def _close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # deliveries

    def send(
        self, event: str, payload: dict[str, Any] | bytes, *, delivery: str | None = None,
        secret: str | None = None,
    ) -> httpx.Response:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = signed_headers(event, body, secret or self.secret, delivery)
        return self.post_raw(body, headers)

    def post_raw(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        if self._client is None:
            raise RuntimeError("service not running")
        return self._client.post("/webhook", content=body, headers=headers)

    def get(self, path: str) -> httpx.Response:
        if self._client is None:
            raise RuntimeError("service not running")
        return self._client.get(path)

    # logs

    def log_records(self) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        for path in self._logs:
            if not path.exists():
                continue
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("{"):
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue  # a line still being written
        return records

    def job_records(
        self, pr: int | None = None, kind: str | None = None, outcome: str | None = None,
    ) -> list[dict[str, Any]]:
        return [
            r for r in self.log_records()
            if r.get("logger") == "bot.queue.jobs" and str(r.get("msg", "")).startswith("job ")
            and (pr is None or r.get("pr") == pr)
            and (kind is None or r.get("kind") == kind)
            and (outcome is None or r.get("outcome") == outcome)
        ]

    def wait_for_job(
        self, pr: int, *, kind: str = "pr", outcome: str = "ok", count: int = 1,
        timeout: float = 10.0,
    ) -> list[dict[str, Any]]:
        wait_until(lambda: len(self.job_records(pr, kind, outcome)) >= count, timeout,
                   interval=0.05, message=f"{count} '{kind}' job(s) {outcome} for PR {pr}")
        return self.job_records(pr, kind, outcome)


@contextmanager
def service_for(state: FakeGitHubState, github_url: str, workdir: Path,
                **options: Any) -> Iterator[ServiceProcess]:
    """A started `ServiceProcess` (same options) that has learned its own login: it asks
    GET /app right after start, and the intake needs the login to recognise its own
    events. The short settle after it lets that answer land before a first delivery."""
    with ServiceProcess(github_url, workdir, **options) as service:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        time.sleep(0.2)
        yield service
