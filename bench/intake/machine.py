"""What the benchmark ran on: enough to tell two reports' machines apart."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
from pathlib import Path

from bench.intake.targets import PROBOT_DIR, REPO_ROOT


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _output(command: list[str]) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=10, check=False, cwd=REPO_ROOT
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _probot_version() -> str:
    package = PROBOT_DIR / "node_modules/probot/package.json"
    if not package.exists():
        return "not installed"
    version: str = json.loads(package.read_text())["version"]
    return version


def describe_machine() -> dict[str, str]:
    node = shutil.which("node")
    return {
        "nproc": str(os.cpu_count()),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "node": _output([node, "--version"]) if node else "not installed",
        "uvicorn": importlib.metadata.version("uvicorn"),
        # uvicorn's `auto` picks httptools/uvloop only when installed.
        "uvicorn_http": "httptools" if importlib.util.find_spec("httptools") else "h11",
        "uvicorn_loop": "uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        "starlette": importlib.metadata.version("starlette"),
        "probot": _probot_version(),
        "pr_digest_commit": _output(["git", "rev-parse", "--short", "HEAD"]),
    }
