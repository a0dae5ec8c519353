"""A normal install carries the bundled rules (issue 31).

Before: the wheel held no rules and the default rules directory was computed as
`<site-packages>/rules`, so an installed `digest-bot check-rules`, `check-config FILE` and
`digest --event` all failed with "cannot read the bundled rules"; the Dockerfile hid it
with DIGEST_RULES_DIR. Now rules/ ships as the package bot.bundled_rules
(pyproject.toml), and bot/settings/defaults.py picks the checkout's rules/ or that copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from bot.rulebook.files import load_rules
from bot.settings.defaults import DEFAULT_RULES_DIR, bundled_rules_dir

ROOT = Path(__file__).resolve().parents[2]
CLI_FIXTURES = ROOT / "tests" / "fixtures" / "cli"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _build_stage_copies() -> list[str]:
    """What the Dockerfile's build stage copies in before `pip install .`."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    build_stage = dockerfile.split("\nFROM ")[1]  # after the header, before the 2nd stage
    sources: list[str] = []
    for line in build_stage.splitlines():
        words = line.split()
        if words[:1] == ["COPY"]:
            sources += [w for w in words[1:-1] if not w.startswith("--")]
    return sources


# --- fast: the configuration the wheel test relies on ---------------------------------

def test_every_folder_of_bot_is_a_listed_package_and_rules_is_the_bundled_one() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    on_disk = {
        ".".join(path.relative_to(ROOT).parts)
        for path in [ROOT / "bot", *(ROOT / "bot").rglob("*")]
        if path.is_dir() and path.name != "__pycache__"
    }
    assert set(setuptools["packages"]) == on_disk | {"bot.bundled_rules"}
    assert setuptools["package-dir"] == {"bot.bundled_rules": "rules"}
    assert "*.yaml" in setuptools["package-data"]["bot.bundled_rules"]


def test_the_default_rules_dir_is_the_checkout_s_or_else_the_packaged_copy(
    tmp_path: Path,
) -> None:
    assert DEFAULT_RULES_DIR == ROOT / "rules"  # this checkout (an editable install)
    checkout = tmp_path / "checkout"
    (checkout / "bot").mkdir(parents=True)
    (checkout / "rules").mkdir()
    (checkout / "pyproject.toml").write_text("", encoding="utf-8")
    assert bundled_rules_dir(checkout / "bot") == checkout / "rules"
    # site-packages: no pyproject.toml beside bot/, and a top-level `rules` package of
    # some other distribution must not be taken for ours.
    site = tmp_path / "site-packages"
    (site / "bot" / "bundled_rules").mkdir(parents=True)
    (site / "rules").mkdir()
    assert bundled_rules_dir(site / "bot") == site / "bot" / "bundled_rules"


def test_the_image_builds_from_the_rules_and_needs_no_rules_dir_setting() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "DIGEST_RULES_DIR" not in dockerfile
    assert {"pyproject.toml", "README.md", "bot", "rules"} <= set(_build_stage_copies())


# --- slow: build the wheel, install it in a fresh venv, run it elsewhere ----------------

def _build_requirements_met() -> bool:
    """Whether this interpreter can build the wheel itself (no download of setuptools)."""
    for text in PYPROJECT["build-system"]["requires"]:
        requirement = Requirement(text)
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            return False
        if not requirement.specifier.contains(installed, prereleases=True):
            return False
    return True


def _run(argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DIGEST_") and k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def _wheel(tmp_path: Path) -> tuple[Path, Path]:
    """(the wheel, the source tree it was built from): the build stage's files only."""
    src = tmp_path / "src"
    src.mkdir()
    for name in _build_stage_copies():
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    dist = tmp_path / "dist"
    offline = ["--no-build-isolation", "--no-index"] if _build_requirements_met() else []
    _ok(_run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *offline,
              "-w", dist, src], cwd=tmp_path))
    [wheel] = dist.glob("pr_digest-*.whl")
    return wheel, src


@pytest.mark.slow
def test_an_installed_wheel_finds_its_bundled_rules_from_any_directory(tmp_path: Path) -> None:
    wheel, src = _wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p.name for p in (src / "rules").iterdir())
    assert {f"bot/bundled_rules/{name}" for name in shipped} <= names
    code = {path.relative_to(src).as_posix() for path in (src / "bot").rglob("*.py")}
    assert code <= names, f"not in the wheel: {sorted(code - names)}"

    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path))
    python = venv / "bin" / "python"
    _ok(_run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
              "--no-index", wheel], cwd=tmp_path))
    site = Path(_ok(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         cwd=tmp_path)).strip())
    # The dependencies, from this environment's site-packages, without a download. A
    # directory named in a .pth is only appended to sys.path: its own .pth files (this
    # checkout's editable install) are not run, so `bot` can only come from the wheel.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_deps_from_the_dev_venv.pth").write_text("\n".join(sorted(ours)) + "\n",
                                                       encoding="utf-8")

    work = tmp_path / "elsewhere"
    work.mkdir()
    for name in ("pr-digest.yml", "pr_56904.json", "pr_56904_files.json"):
        shutil.copy2(CLI_FIXTURES / name, work / name)
    where = _ok(_run([python, "-c", "import bot; print(bot.__file__)"], cwd=work)).strip()
    assert Path(where).resolve().is_relative_to(venv.resolve())

    bot = venv / "bin" / "digest-bot"
    rules = load_rules(src / "rules")
    packaged = site.resolve() / "bot" / "bundled_rules"
    areas = len(rules.areas)
    assert areas > 0
    checked = _run([bot, "check-rules"], cwd=work)
    assert _ok(checked) == f"{packaged}: rules OK ({areas} areas loaded)\n"
    assert checked.stderr == ""

    config = _run([bot, "check-config", "pr-digest.yml"], cwd=work)
    assert _ok(config) == (
        f"pr-digest.yml: override OK ({areas - 1} areas in force: "
        "0 added, 0 replaced, 1 disabled)\n")
    assert config.stderr == ""

    digest = _run([bot, "digest", "--event", "pr_56904.json", "--files", "pr_56904_files.json",
                   "--format", "json"], cwd=work)
    payload = json.loads(_ok(digest))
    assert payload["verdict"] in {"deep-read", "read", "skim", "quiet"}
    assert "compile" in {area["id"] for area in payload["areas"]}
    # The marker names the rules version: the packaged files are the checkout's rules/.
    assert re.search(rf"\brules={rules.version}\b", payload["markdown"].splitlines()[0])
