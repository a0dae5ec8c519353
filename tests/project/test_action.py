"""action.yml (issue 43 item 2): the composite action a config PR's workflow uses. Its
check step is run as written, on a bad override, and must leave GitHub annotations; its
install step asks for nothing beyond what check-config imports, at pyproject's bounds."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
BIN_DIR = Path(sys.executable).parent


def _step(name: str) -> dict[str, Any]:
    [step] = [s for s in STEPS if s.get("name") == name]
    return step


def _env(step: dict[str, Any]) -> dict[str, str]:
    """The step's env with `${{ inputs.X }}` replaced by the input's default."""
    defaults = {key: str(spec["default"]) for key, spec in ACTION["inputs"].items()}
    return {key: re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: defaults[m[1]], value)
            for key, value in step.get("env", {}).items()}


def test_the_check_step_annotates_a_bad_override(tmp_path: Path) -> None:
    step = _step("Check the override")
    assert step["shell"] == "bash"
    assert "${{" not in step["run"]  # inputs reach the script through env, never spliced
    config = tmp_path / ".github" / "pr-digest.yml"
    config.parent.mkdir()
    config.write_text("disable: [docs]\nroutng: {}\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("DIGEST_")}
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, capture_output=True,
                            text=True, env={**env, **_env(step)}, timeout=60, check=False)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "::error file=.github/pr-digest.yml,line=2::unknown key 'routng' "
        "(did you mean 'routing'?)"]


def test_the_check_step_passes_a_good_override(tmp_path: Path) -> None:
    step = _step("Check the override")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "pr-digest.yml").write_text("disable: [docs]\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("DIGEST_")}
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, capture_output=True,
                            text=True, env={**env, **_env(step)}, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "override OK" in result.stdout


def test_the_install_step_takes_the_package_without_the_services_dependencies() -> None:
    run = _step("Install check-config")["run"]
    commands = [shlex.split(line) for line in run.replace("\\\n", " ").splitlines() if line]
    package, deps = commands
    assert package[-2:] == ["--no-deps", "$GITHUB_ACTION_PATH"]
    wanted = [arg for arg in deps if not arg.startswith("-") and arg not in (
        "python", "pip", "install")]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = set(pyproject["project"]["dependencies"])
    assert set(wanted) <= declared  # the same bounds the package declares
    assert len(wanted) < len(declared) / 2
