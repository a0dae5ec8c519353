"""The image installs pinned dependencies and documents how long `docker stop` must wait."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from bot.settings.model import Settings

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    bare = re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare).lower()


def test_every_runtime_dependency_is_pinned_for_the_image() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[_name(name)] = version
    missing = [d for d in project["dependencies"] if _name(d) not in pins]
    assert missing == [], f"not pinned in constraints.txt (run `make constraints`): {missing}"


def test_dockerfile_uses_the_constraints_and_documents_the_stop_grace() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "--constraint constraints.txt" in dockerfile
    assert "EXPOSE 8000" in dockerfile
    grace = int(re.search(r"--stop-timeout (\d+)", dockerfile)[1])  # type: ignore[index]
    drain = Settings().drain_seconds
    # uvicorn waits drain + 5 s for connections (bot/service/wiring.py); Docker must wait longer.
    assert grace > drain + 5
    deploying = (ROOT / "docs" / "deploy" / "README.md").read_text(encoding="utf-8")
    assert f"--stop-timeout {grace}" in deploying
