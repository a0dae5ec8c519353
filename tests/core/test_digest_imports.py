"""`digest-bot digest` imports what a digest needs and nothing of the service: checked
in a fresh interpreter through `sys.modules`, not with a clock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"
# The service's stack and the online client: a local digest needs none of them.
SERVICE_ONLY = ("githubkit", "starlette", "uvicorn", "httpx", "markdown_it", "msgspec")
# The settings model, needed only when a DIGEST_* variable is set (none is here), and
# what pydantic-settings pulls in.
SETTINGS_ONLY = ("pydantic_settings", "asyncio", "ssl")

_PROBE = """
import contextlib, io, json, sys
from bot.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(),
                  "modules": sorted({name.split(".")[0] for name in sys.modules})}))
"""


def _digest_modules(cache_home: Path, *args: str) -> tuple[set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=120,
        env={"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin"},
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0, done.stderr
    return set(result["modules"]), result["out"]


def test_offline_digest_imports_nothing_of_the_service(tmp_path: Path) -> None:
    args = ("digest", "--event", str(EVENT), "--files", str(FILES), "--format", "json")
    first, first_out = _digest_modules(tmp_path, *args)  # builds the rules cache
    second, second_out = _digest_modules(tmp_path, *args)  # reads it
    assert second_out == first_out
    assert json.loads(second_out)["verdict"]  # it did digest
    for modules in (first, second):
        assert not modules & set(SERVICE_ONLY), modules & set(SERVICE_ONLY)
        assert not modules & set(SETTINGS_ONLY), modules & set(SETTINGS_ONLY)
    assert "yaml" in first  # the rule files were read...
    assert "yaml" not in second  # ...and then came compiled from the cache,
    assert "pathspec" not in second  # globs and the risk checks' glob lists included


def test_digest_help_imports_no_engine(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys, contextlib, io\nfrom bot.cli.main import _parser\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n"
         "    try:\n        _parser().parse_args(['digest', '--help'])\n"
         "    except SystemExit:\n        pass\n"
         "print(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=120,
        env={"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    modules = set(done.stdout.split())
    assert "bot.cli.main" in modules
    assert not {"bot.core.digest", "bot.core.rules", "yaml", *SERVICE_ONLY} & modules
