"""A deterministic token estimate: the same text always costs the same, whatever model reads it.

Byte-pair tokenizers average about four bytes of English a token and fewer on code and
CJK text; three bytes a token over-counts prose a little, so a packet within budget
stays within the model's context."""

from __future__ import annotations

BYTES_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)
