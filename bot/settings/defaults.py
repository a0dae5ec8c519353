"""The defaults `digest-bot digest` reads from the settings, without the settings model.

`bot/settings/model.py` declares its fields with these, so they are the one source of both;
the digest command uses them directly when no DIGEST_* variable is set at all (then
`Settings()` could only hold its defaults), which spares a local digest importing
pydantic-settings (and asyncio, which it pulls in): ~60 ms of a ~0.5 s command.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

ENV_PREFIX: Final = "DIGEST_"
_BOT_DIR: Final = Path(__file__).resolve().parents[1]


def bundled_rules_dir(bot_dir: Path = _BOT_DIR) -> Path:
    """The checkout's top-level rules/ when `bot/` sits in a checkout (an editable install
    too: the files being edited), else the copy an installed wheel holds as the package
    bot.bundled_rules (pyproject.toml maps that package to rules/)."""
    checkout = bot_dir.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "rules").is_dir():
        return checkout / "rules"
    return bot_dir / "bundled_rules"


DEFAULT_RULES_DIR: Final = bundled_rules_dir()
DEFAULT_LANGUAGE: Final[Literal["en", "zh"]] = "en"


def any_setting_in_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment sets any DIGEST_* variable. pydantic-settings lowercases
    names before it looks (`digest_language` counts too), and so does this."""
    names = os.environ if environ is None else environ
    prefix = ENV_PREFIX.lower()
    return any(name.lower().startswith(prefix) for name in names)
