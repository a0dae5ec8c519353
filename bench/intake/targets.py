"""The servers the intake benchmark compares, each started as its own process on loopback.

- pr-digest: `python -m bot serve` (same as `digest-bot serve`) with a temp database, dry
  run, GitHub pointed at a closed loopback port and a settle time longer than the run,
  so the worker never processes during the measurement: we measure intake only.
- bare: bench/intake/bare_app.py, starlette + uvicorn answering 202 with no work.
- bare-heap: the same, with the malloc trim threshold pr-digest sets for itself at start
  (bot/service/heap.py): the like-for-like floor.
- probot: bench/intake/probot_app, a no-op `pull_request` handler behind Probot's own
  signature check, with a throwaway App key made for this run.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.service.heap import TRIM_THRESHOLD_BYTES

REPO_ROOT = Path(__file__).resolve().parents[2]
PROBOT_DIR = Path(__file__).resolve().parent / "probot_app"
# Nothing listens on the discard port: any accidental GitHub call fails at once, locally.
DEAD_GITHUB = "127.0.0.1:9"
TARGET_NAMES = ("pr-digest", "bare", "bare-heap", "probot")


class TargetUnavailable(Exception):
    """A target could not be started here; the message says why."""


@dataclass(frozen=True)
class Target:
    name: str
    webhook_url: str
    health_url: str | None = None  # None: an external server, already running
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path = REPO_ROOT
    db_path: Path | None = None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _base_env() -> dict[str, str]:
    # The caller's own DIGEST_* settings (a real secret, a real API URL) must not leak in.
    return {k: v for k, v in os.environ.items() if not k.startswith("DIGEST_")}


def pr_digest_target(secret: str, workdir: Path) -> Target:
    port = free_port()
    db_path = workdir / "pr-digest.db"
    env = _base_env() | {
        "DIGEST_WEBHOOK_SECRET": secret,
        "DIGEST_DB_PATH": str(db_path),
        "DIGEST_DRY_RUN": "1",
        "DIGEST_GITHUB_API_URL": f"http://{DEAD_GITHUB}",
        "DIGEST_SETTLE_SECONDS": "3600",
        "DIGEST_RECONCILE_ON_STARTUP": "0",
    }
    return Target(
        name="pr-digest",
        webhook_url=f"http://127.0.0.1:{port}/webhook",
        health_url=f"http://127.0.0.1:{port}/healthz",
        command=[sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        db_path=db_path,
    )


def bare_target(access_log: bool = False) -> Target:
    port = free_port()
    flag = "--access-log" if access_log else "--no-access-log"
    return Target(
        name="bare",
        webhook_url=f"http://127.0.0.1:{port}/webhook",
        health_url=f"http://127.0.0.1:{port}/healthz",
        command=[sys.executable, "-m", "bench.intake.bare_app", "--port", str(port), flag],
        env=_base_env(),
    )


def probot_target(secret: str, workdir: Path) -> Target:
    node = shutil.which("node")
    if node is None:
        raise TargetUnavailable("node is not on PATH")
    ensure_probot_installed()
    key_path = workdir / "throwaway-app-key.pem"
    write_throwaway_key(key_path)
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(workdir)),
        "NODE_ENV": "production",  # JSON logs, as deployed
        "APP_ID": "1",
        "PRIVATE_KEY_PATH": str(key_path),
        "WEBHOOK_SECRET": secret,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "GHE_HOST": DEAD_GITHUB,
        "GHE_PROTOCOL": "http",
    }
    return Target(
        name="probot",
        webhook_url=f"http://127.0.0.1:{port}/api/github/webhooks",
        health_url=f"http://127.0.0.1:{port}/ping",
        command=[node, str(PROBOT_DIR / "node_modules/probot/bin/probot.js"), "run", "./index.js"],
        env=env,
        cwd=PROBOT_DIR,
    )


def ensure_probot_installed(timeout_s: float = 300.0) -> None:
    if (PROBOT_DIR / "node_modules/probot/package.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise TargetUnavailable("npm is not on PATH, and probot_app/node_modules is missing")
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=PROBOT_DIR, capture_output=True,
        text=True, timeout=timeout_s, check=False,
    )
    if done.returncode != 0:
        raise TargetUnavailable(f"npm ci failed: {done.stderr.strip()[-800:]}")


def write_throwaway_key(path: Path) -> None:
    """An RSA key that exists only for this run, so Probot starts in App mode."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    path.touch(mode=0o600)
    path.write_bytes(pem)


class RunningServer:
    """A target's process, from start until it answers its health URL, then stopped."""

    def __init__(self, target: Target, log_path: Path) -> None:
        self.target = target
        self.log_path = log_path
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, ready_timeout_s: float = 30.0) -> None:
        if self.target.health_url is None:
            return
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                self.target.command, cwd=self.target.cwd, env=self.target.env,
                stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + ready_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise TargetUnavailable(f"{self.target.name} exited: {self.log_tail()}")
            try:
                if httpx.get(self.target.health_url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise TargetUnavailable(f"{self.target.name} not ready in {ready_timeout_s}s")

    def stop(self, grace_s: float = 10.0) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(grace_s)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def cpu_seconds(self) -> float | None:
        """User + system CPU the server process has used so far (all its threads)."""
        fields = self._stat()
        # utime and stime are fields 14 and 15 of proc(5); fields[0] here is field 3.
        return None if fields is None else (
            (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))

    def minor_faults(self) -> int | None:
        """Minor page faults the server process has taken so far (field 10 of proc(5)):
        memory handed back to the kernel and faulted in again shows here."""
        fields = self._stat()
        return None if fields is None else int(fields[7])

    def _stat(self) -> list[str] | None:
        if self._process is None:
            return None
        try:
            return Path(f"/proc/{self._process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None

    def log_tail(self, chars: int = 800) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return text.strip()[-chars:]


def make_target(name: str, secret: str, workdir: Path) -> Target:
    if name == "pr-digest":
        return pr_digest_target(secret, workdir)
    if name == "bare":
        return bare_target()
    if name == "bare-heap":
        # The floor on pr-digest's own footing: the same malloc trim threshold that
        # `digest-bot serve` sets at start (bot/service/heap.py), which spares bare starlette
        # its page faults too.
        bare = bare_target()
        return dataclasses.replace(bare, name="bare-heap", env=bare.env | {
            "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD_BYTES)})
    if name == "probot":
        return probot_target(secret, workdir)
    raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGET_NAMES)}")
