"""`digest-bot digest` reads its two settings (language, rules directory) without the
settings model when no DIGEST_* variable is set (bot/settings/defaults.py). Held equal to
the model here: the same defaults, the same idea of "a variable is set", and a bad value
still the model's one-line error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.settings.defaults import DEFAULT_LANGUAGE, DEFAULT_RULES_DIR, any_setting_in_env
from bot.settings.model import Settings

ROOT = Path(__file__).resolve().parents[2]
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"


def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().startswith("digest_"):
            monkeypatch.delenv(name)


def test_the_defaults_are_the_models(monkeypatch: pytest.MonkeyPatch) -> None:
    _clean_env(monkeypatch)
    assert not any_setting_in_env()
    settings = Settings()
    assert (settings.language, settings.rules_dir) == (DEFAULT_LANGUAGE, DEFAULT_RULES_DIR)


@pytest.mark.parametrize("name", [
    "DIGEST_LANGUAGE", "digest_language", "Digest_Language", "XDIGEST_LANGUAGE",
    "DIGESTLANGUAGE", "LANGUAGE", "DIGEST_", "DIGEST_NOT_A_SETTING",
])
def test_a_variable_counts_exactly_when_the_model_reads_it(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A bad language under `name` fails the model iff `any_setting_in_env` sees it (a
    variable the model ignores, like DIGEST_NOT_A_SETTING, may count: that only costs
    building the model)."""
    _clean_env(monkeypatch)
    monkeypatch.setenv(name, "fr")
    try:
        Settings()
        model_read_it = False
    except ValidationError:
        model_read_it = True
    if model_read_it:
        assert any_setting_in_env()
    if not name.lower().startswith("digest_"):
        assert not any_setting_in_env()


def _digest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.lower().startswith("digest_")}
    return subprocess.run(
        [sys.executable, "-m", "bot", "digest", "--event", str(EVENT), "--files", str(FILES),
         *args],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env={**clean, **env},
    )


def test_a_bad_language_is_still_one_line_naming_it() -> None:
    done = _digest({"DIGEST_LANGUAGE": "fr"})
    assert done.returncode == 2
    assert done.stderr.startswith("digest-bot: bad setting: DIGEST_LANGUAGE=fr: ")
    assert len(done.stderr.strip().splitlines()) == 1


def test_any_bad_setting_still_stops_a_digest() -> None:
    # As before: with a DIGEST_* variable set, the whole model is validated.
    done = _digest({"DIGEST_WORKERS": "0"})
    assert done.returncode == 2
    assert done.stderr.strip() == "digest-bot: bad setting: DIGEST_WORKERS=0: must be ≥ 1"


def test_the_settings_are_read_when_set(tmp_path: Path) -> None:
    default = _digest({})
    chinese = _digest({"digest_language": "zh"})
    assert default.returncode == chinese.returncode == 0
    assert default.stdout != chinese.stdout
    assert chinese.stdout == _digest({}, "--lang", "zh").stdout
    missing = _digest({"DIGEST_RULES_DIR": str(tmp_path / "nowhere")})
    assert missing.returncode == 2
    assert "nowhere" in missing.stderr
