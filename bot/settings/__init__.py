"""Settings from the environment (`DIGEST_*`): the model and its validation (model.py),
one-line errors naming the variable (errors.py), the defaults (defaults.py) and the
README's table (table.py). `from bot.settings import Settings` is the public name.

`Settings` is loaded on first use: the offline digest reads `defaults.py` alone and
must not pay for pydantic-settings (tests/core/test_digest_imports.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.settings.model import Settings

__all__ = ["Settings"]


def __getattr__(name: str) -> Any:
    if name == "Settings":
        from bot.settings.model import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
