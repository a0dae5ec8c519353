"""The test oracle itself: it must see live markup where GitHub would render it."""

from __future__ import annotations

import pytest

from bot.core.render.escape import escape_code, escape_text
from tests.markdown_safety import live_markup

HOSTILE = "x`@vllm-project/maintainers,@alice,[login](https://evil.example/login),![t](https://evil.example/p.png)"


@pytest.mark.parametrize(("text", "kind"), [
    ("hi @alice", "mention"),
    ("`a` @alice", "mention"),
    ("\\@alice", "mention"),
    ("&#64;alice", "mention"),
    ("[login](https://e.example)", "link"),
    ("![t](https://e.example/p.png)", "image"),
    ("<img src=x>", "html"),
    ("see https://e.example", "autolink"),
    ("`/digest x`@alice`", "mention"),  # one backtick closes the span
    (f"Unknown command `/digest {HOSTILE}`", "mention"),
])
def test_sees_live_markup(text: str, kind: str) -> None:
    assert kind in live_markup(text)


@pytest.mark.parametrize("text", [
    "`@alice`", "``a`@alice``", "\\[x\\]\\(y\\)", "plain words", "&lt;img&gt;",
    escape_text(HOSTILE), escape_code("/digest " + HOSTILE), "@\u2060alice",
])
def test_inert_text_is_inert(text: str) -> None:
    assert live_markup(text) == []
