"""Chinese typography for the digest, as vLLM's Chinese docs write it: full-width
punctuation in Chinese sentences and a space between Chinese and Latin words or digits
("在 GPU 上运行 3 次"). Applied to our own catalogue and rule texts, never inside code."""

from __future__ import annotations

import re

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_THEN_LATIN = re.compile(rf"([{_HAN}])([A-Za-z0-9])")
_LATIN_THEN_HAN = re.compile(rf"([A-Za-z0-9%])([{_HAN}])")
_FULL_WIDTH = str.maketrans({",": "，", ";": "；", ":": "：", "(": "（", ")": "）"})
# Format fields ("{count:,}") and code spans keep their ASCII.
_PROTECTED = re.compile(r"(\{[^{}\n]*\}|`[^`\n]*`)")


_ANY_HAN = re.compile(rf"[{_HAN}]")


def has_han(text: str) -> bool:
    """Whether the text holds a Chinese character (an author who wrote in Chinese)."""
    return _ANY_HAN.search(text) is not None


def full_width(text: str) -> str:
    """ASCII , ; : ( ) become full-width outside format fields and code spans."""
    parts = _PROTECTED.split(text)
    return "".join(p if i % 2 else p.translate(_FULL_WIDTH) for i, p in enumerate(parts))


def space_mixed(text: str) -> str:
    """A space between Chinese and Latin letters or digits, outside code spans."""
    parts = re.split(r"(`[^`\n]*`)", text)
    return "".join(
        p if i % 2 else _LATIN_THEN_HAN.sub(r"\1 \2", _HAN_THEN_LATIN.sub(r"\1 \2", p))
        for i, p in enumerate(parts)
    )
