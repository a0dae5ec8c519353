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
DEFAULT_RULES_DIR: Final = Path(__file__).resolve().parents[2] / "rules"
DEFAULT_LANGUAGE: Final[Literal["en", "zh"]] = "en"


def any_setting_in_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment sets any DIGEST_* variable. pydantic-settings lowercases
    names before it looks (`digest_language` counts too), and so does this."""
    names = os.environ if environ is None else environ
    prefix = ENV_PREFIX.lower()
    return any(name.lower().startswith(prefix) for name in names)
