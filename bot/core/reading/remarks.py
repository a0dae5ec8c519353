"""What one comment or review shows beyond asks: pasted test results, and whether a
reply only promises ("will add later") instead of answering.

The description's recognisers (bot/core/reading/body.py) read a remark's evidence; this
adds the one shape a comment has that a description rarely does: a test runner's
summary pasted on its own ("===== 12 passed, 1 skipped in 3.4s =====", "Ran 8 tests ...
OK"). Bounded like the rest: at most MAX_CHARS characters, one line at a time.
"""

from __future__ import annotations

import re

MAX_CHARS = 20_000
_MAX_LINE = 400
_MAX_LINES = 600

# pytest's summary ("12 passed", "3 passed, 1 skipped in 2.1s") and unittest's "Ran N tests".
_TEST_SUMMARY = re.compile(
    r"\b\d{1,6}\s+passed\b(?:[^\n]{0,80}?\bin\s+\d{1,6}(?:\.\d{1,3})?\s?s\b)?"
    r"|\bran\s+\d{1,6}\s+tests?\s+in\s+\d"
)
_DEFERRAL = re.compile(
    r"\b(?:will|i'll|we'll|going\s+to)\s+(?:do|add|fix|update|run|post|share|look|try|address)\b"
    r"|\blater\b|\bfollow[- ]?up\b|\btodo\b|\bworking\s+on\s+it\b|\bnot\s+yet\b|\bwip\b"
)


def pasted_test_summaries(text: str | None) -> tuple[str, ...]:
    """A test runner's summary lines pasted in `text`, verbatim and trimmed (at most 3)."""
    if not text:
        return ()
    found: list[str] = []
    for line in text[:MAX_CHARS].split("\n", _MAX_LINES)[:_MAX_LINES]:
        if _TEST_SUMMARY.search(line[:_MAX_LINE].lower()):
            found.append(line.strip().strip("=").strip()[:160])
            if len(found) >= 3:
                break
    return tuple(found)


def only_promises(text: str | None) -> bool:
    """True when a reply defers ("will add tests later", "TODO"): it does not answer."""
    return bool(text) and _DEFERRAL.search((text or "")[:2_000].lower()) is not None


_SENTENCE = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str | None, limit: int = 200) -> str:
    """The first sentence of someone's own words: quotes, code fences, HTML comments and
    headings skipped, whitespace folded, at most `limit` characters."""
    if not text:
        return ""
    fence = ""
    for line in text[:MAX_CHARS].split("\n", _MAX_LINES)[:_MAX_LINES]:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if not stripped or stripped.startswith((">", "#", "<!--", "|")):
            continue
        words = " ".join(stripped.lstrip("-*+ ").split())
        if words:
            return _SENTENCE.split(words[:limit * 2], maxsplit=1)[0][:limit]
    return ""
