"""The one string catalogue (English and Chinese). Code refers to keys, never to prose.

Sections are grouped by the module that uses them; keep every key in both languages
(a test checks that). Parameters use str.format names: "{minutes}".
"""

from __future__ import annotations

from bot.core.findings import Lang

CATALOGUE: dict[str, dict[Lang, str]] = {
    # --- verdicts (bot/core/verdict.py) -------------------------------------
    # --- risks (bot/core/risks.py) ------------------------------------------
    # --- rendering (bot/core/render.py) -------------------------------------
    # --- commands and routing (bot/core/commands.py, bot/core/routing.py) ----
}


def t(lang: Lang, key: str, **params: object) -> str:
    """The text for `key` in `lang` (English when a translation is missing)."""
    entry = CATALOGUE[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**params) if params else text
