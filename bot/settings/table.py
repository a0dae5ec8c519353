"""The settings table of docs/settings.md, generated from `Settings` so no variable goes missing.

Regenerate with `digest-bot settings-table` (or `python -m bot.settings.table`) and
paste it between the `settings:start` / `settings:end` markers; tests/project/test_readme.py
fails when that copy is stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bot.settings.errors import env_name
from bot.settings.model import DEFAULT_RULES_DIR, Settings


def _default_text(field: FieldInfo) -> str:
    value: Any = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, Path):
        return "the bundled `rules/`" if value == DEFAULT_RULES_DIR else f"`{value}`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    return f"`{value}`"


def render_settings_table() -> str:
    lines = ["| variable | meaning | default |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        meaning = (field.description or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{env_name(name)}` | {meaning} | {_default_text(field)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render_settings_table())
