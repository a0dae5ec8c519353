"""Whether a Python patch changes only prose: comments, docstrings and blank lines.

A test cannot fail on a docstring, and no GPU evaluation moves with a comment: the
risks that ask for them read this. From the patch alone (fragments, no parser), one
hunk at a time and one side at a time: the added lines with the context are the new
text, the removed lines with the context the old one. A hunk may start inside a
docstring, so the first triple quote's role is read from the line that holds it: a
quote before the text or after `x =` opens one, a quote after the text closes one; a
hunk with no quote at all is prose only when every line of it reads as words.
Anything unclear counts as code, so the answer errs towards "code changed". Line by
line, capped: patches are untrusted.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.facts import ChangedFile

MAX_PATCH_LINES = 4_000
MAX_LINE = 400
_QUOTES = ('"""', "'''")
_PYTHON = (".py", ".pyi")
_STRING_PREFIXES = frozenset({"r", "b", "f", "u", "rb", "br", "fr", "rf"})
_CODE_STARTS = (
    "def ", "class ", "return", "if ", "elif ", "else:", "for ", "while ", "import ",
    "from ", "raise", "assert ", "with ", "try:", "except", "finally:", "yield", "await ",
    "self.", "@", "async ", "lambda", "pass", "break", "continue",
)
_CODE_ENDS = (":", "(", "[", "{", ")", "]", "}", "\\")


def prose_only(files: Iterable[ChangedFile]) -> bool:
    """Every changed line of every file is a comment, a docstring line or blank; False
    when a file is not Python, has no patch (unknown), or the patch is too long to read."""
    seen = False
    for changed in files:
        if not changed.filename.endswith(_PYTHON) or not changed.patch:
            return False
        if not patch_is_prose(changed.patch):
            return False
        seen = True
    return seen


def patch_is_prose(patch: str) -> bool:
    lines = patch.split("\n", MAX_PATCH_LINES)
    if len(lines) > MAX_PATCH_LINES:
        return False
    hunk: list[str] = []
    hunks = 0
    for line in lines:
        if line.startswith("@@"):
            if hunk and not _hunk_is_prose(hunk):
                return False
            hunk, hunks = [], hunks + 1
        elif line.startswith(("+", "-", " ")) or line == "":
            hunk.append(line[:MAX_LINE])
    return hunks > 0 and (not hunk or _hunk_is_prose(hunk))


def _hunk_is_prose(hunk: list[str]) -> bool:
    return _side_is_prose(hunk, "+") and _side_is_prose(hunk, "-")


def _side_is_prose(hunk: list[str], marker: str) -> bool:
    side = [(line[:1] == marker, line[1:]) for line in hunk if line[:1] in (marker, " ", "")]
    changed = [code.strip() for is_changed, code in side if is_changed]
    if all(not text or text.startswith("#") for text in changed):
        return True  # nothing, or only comments and blank lines, changed on this side
    if not any(q in code for _, code in side for q in _QUOTES):
        # No quote at all: a hunk in the middle of a long docstring, or of code.
        return all(_reads_as_prose(code) for _, code in side)
    inside = _starts_inside(code for _, code in side)
    if inside is None:
        return False
    for is_changed, code in side:
        text = code.strip()
        quotes = sum(text.count(q) for q in _QUOTES)
        line_is_prose = inside or text.startswith(_QUOTES) or not text or text.startswith("#")
        if quotes % 2 == 1:
            inside = not inside
        elif quotes and not inside:
            # A one-line docstring: prose only when it is the whole line.
            line_is_prose = text.startswith(_QUOTES) and text.endswith(_QUOTES)
        if is_changed and not line_is_prose:
            return False
    return True


def _starts_inside(codes: Iterable[str]) -> bool | None:
    """Whether the side starts inside a docstring, from its first line with a triple
    quote; None when that line cannot tell."""
    for code in codes:
        text = code.strip()
        found = [i for i in (text.find(q) for q in _QUOTES) if i >= 0]
        if not found:
            continue
        at = min(found)
        before = text[:at].rstrip()
        if sum(text.count(q) for q in _QUOTES) % 2 == 0:
            return False  # opens and closes on one line: it starts outside
        if before == "" or before in _STRING_PREFIXES or before.endswith(("=", "(", ",")):
            if text[at + 3 :].strip() or before:
                return False  # quotes then a summary, or `x =` then quotes: opens
            return None  # the quotes alone: they open or close
        return True  # text then quotes: closes
    return False


def _reads_as_prose(code: str) -> bool:
    """A line that reads as words, not code: blank, a comment, three or more words or a
    word ending a sentence, with no assignment, comparison or code punctuation."""
    text = code.strip()
    if not text or text.startswith("#"):
        return True
    words = " ".join(part for i, part in enumerate(text.split("``")) if i % 2 == 0)
    words = " ".join(part for i, part in enumerate(words.split("`")) if i % 2 == 0)
    if words.startswith(_CODE_STARTS) or words.endswith(_CODE_ENDS):
        return False
    if " = " in words or "==" in words or "!=" in words or "->" in words:
        return False
    return words.count(" ") >= 2 or (words[-1:] in (".", ",", ";") and words[:1].isalpha())
