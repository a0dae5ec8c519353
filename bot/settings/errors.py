"""Reading `Settings` from the environment with errors a person can act on.

pydantic reports a bad `DIGEST_WORKERS=0` as a multi-line `ValidationError` naming the
field `workers`; the operator set an environment variable, so each problem becomes one
line naming that variable, its value (never a secret's) and what is expected.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr, ValidationError

from bot.settings.defaults import ENV_PREFIX

if TYPE_CHECKING:
    from bot.settings.model import Settings

_MAX_VALUE_CHARS = 60

# pydantic's wording for the common constraint errors, made short; anything else
# (validators' own messages included) keeps pydantic's message.
_CONSTRAINTS = {
    "greater_than_equal": ("ge", "must be ≥ {}"),
    "greater_than": ("gt", "must be > {}"),
    "less_than_equal": ("le", "must be ≤ {}"),
    "less_than": ("lt", "must be < {}"),
}


class SettingsError(Exception):
    """One line per bad setting; the CLI prints them and exits 2."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def load_settings(**overrides: Any) -> Settings:
    # Imported here: `SettingsError` is caught by every command, and pydantic-settings
    # (with the asyncio it pulls in) is only needed by those that read settings.
    from bot.settings.model import Settings

    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(settings_error_lines(exc)) from None


def env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


def _is_secret(field: str) -> bool:
    from bot.settings.model import Settings

    info = Settings.model_fields.get(field)
    return info is not None and "SecretStr" in repr(info.annotation)


def _shown_value(field: str, value: object) -> str:
    if _is_secret(field) or isinstance(value, SecretStr):
        return "(hidden)"
    text = value if isinstance(value, str) else repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 1] + "…"
    return text


def _message(error: Any) -> str:
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    if kind in _CONSTRAINTS:
        key, template = _CONSTRAINTS[kind]
        if key in ctx:
            return template.format(ctx[key])
    message = str(error.get("msg", "invalid value"))
    # A field_validator's ValueError arrives as "Value error, <its message>".
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    return message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message


def settings_error_lines(exc: ValidationError) -> list[str]:
    lines: list[str] = []
    for error in exc.errors():
        loc = error.get("loc") or ()
        field = str(loc[0]) if loc else ""
        name = env_name(field) if field else "settings"
        if "input" in error and field:
            lines.append(f"{name}={_shown_value(field, error['input'])}: {_message(error)}")
        else:
            lines.append(f"{name}: {_message(error)}")
    return lines


def _unknown_names(environ: Mapping[str, str] | None) -> list[tuple[str, str | None]]:
    """(name, the closest setting's name or None) of each DIGEST_* variable that is no
    setting. Names are compared as pydantic-settings reads them, ignoring case."""
    from bot.settings.model import Settings

    names = os.environ if environ is None else environ
    known = [env_name(field) for field in Settings.model_fields]
    found: list[tuple[str, str | None]] = []
    for name in sorted(names):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in known:
            continue
        # Compared without the prefix every name shares, which would make any two close.
        close = difflib.get_close_matches(upper[len(ENV_PREFIX):],
                                          [k[len(ENV_PREFIX):] for k in known], n=1)
        found.append((name, ENV_PREFIX + close[0] if close else None))
    return found


def misspelt_safety_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per DIGEST_* variable that is no setting but is closest to one that holds
    writes back (WRITE_SAFETY_SETTINGS): `serve` must not start on it, since ignoring a
    misspelt `DIGEST_DRYRUN=1` would leave the service live. Values are never shown."""
    from bot.settings.model import WRITE_SAFETY_SETTINGS

    safety = {env_name(field) for field in WRITE_SAFETY_SETTINGS}
    return [
        f"{name}: not a setting; did you mean {close}? It holds writes back, so `serve` "
        "does not start while it may be misspelt"
        for name, close in _unknown_names(environ) if close in safety
    ]


def unknown_setting_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per other DIGEST_* variable that is no setting (pydantic-settings ignores
    it), naming the closest setting; values are never shown (a misspelt secret's would
    be)."""
    from bot.settings.model import WRITE_SAFETY_SETTINGS

    safety = {env_name(field) for field in WRITE_SAFETY_SETTINGS}
    lines: list[str] = []
    for name, close in _unknown_names(environ):
        if close in safety:
            continue
        hint = f"did you mean {close}?" if close else "`digest-bot settings-table` lists them"
        lines.append(f"{name}: not a setting, ignored; {hint}")
    return lines
