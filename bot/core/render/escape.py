"""Make strings safe to place in the digest comment's Markdown.

Three entry points, by how much we trust the text:

- `escape_text` for anything from the PR (title, body snippets, file names, labels,
  branch names, logins) placed in prose, list items or table cells: it renders
  literally and can never mention, cross-reference, open HTML or break the line.
- `escape_code` for an inline code span (file paths, labels, rule ids).
- `sanitize_trusted` for our own catalogue and rule texts: Markdown is kept, but the
  same hard guarantees hold (no mention, no HTML, one line), so a careless rule
  author cannot ping people either.

Mentions and references are broken with U+2060 WORD JOINER rather than HTML
entities or backslashes: GitHub resolves `@user` and `#123` on the *rendered* text
nodes (after entities and escapes are decoded), so only a character that survives
rendering stops them. The joiner is invisible and does not wrap.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Literal

WORD_JOINER = "\u2060"
ELLIPSIS = "…"

# Bidi embeddings/overrides/isolates and marks: they can make a file name display
# as something else ("Trojan Source", CVE-2021-42574).
_BIDI = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C])
_LINE_BREAKS = frozenset("\n\r\t\v\f\u0085\u2028\u2029")
# Backslash-escaped everywhere: the characters that open emphasis, code, links,
# tables, strikethrough or headings in GitHub Markdown.
_MD_ALWAYS = frozenset("\\`*_[]()|~")
_MD_AT_START = frozenset("-+=")
# Characters of cleaned text we look past `limit`: room for the lookahead in
# `_text_tokens` and to know whether anything was cut.
_LOOKAHEAD = 4
# Texts up to this long may be cleaned whole by `str` methods; a longer one is walked
# lazily, so a 25 MB body costs no more than the characters kept.
_FAST_CHARS = 4096


def _clean_chars(chars: Iterable[str]) -> Iterator[str]:
    pending_space = False
    started = False
    for ch in chars:
        if ch in _LINE_BREAKS or ch.isspace():
            pending_space = started
        elif ord(ch) in _BIDI or unicodedata.category(ch) in ("Cc", "Cs"):
            continue
        else:
            if pending_space:
                yield " "
                pending_space = False
            started = True
            yield ch


def clean_line(s: Iterable[str], max_chars: int | None = None) -> tuple[str, bool]:
    """Drop control and bidi characters, fold line breaks and whitespace runs into one
    space, trim. Lazily: stops after `max_chars` (and says whether more followed), so
    a 25 MB body costs no more than its first few hundred characters."""
    if isinstance(s, str) and len(s) <= _FAST_CHARS and s.isascii() and s.isprintable():
        # No control, bidi or break character, and " " the only whitespace: cleaning
        # only folds space runs and trims (a digest cleans thousands of lines).
        folded = " ".join(s.split())
        if max_chars is None:
            return folded, False
        return folded[:max_chars], len(folded) > max_chars
    cleaned = _clean_chars(s)
    if max_chars is None:
        return "".join(cleaned), False
    head = "".join(islice(cleaned, max_chars))
    return head, next(cleaned, None) is not None


def _text_tokens(s: str) -> Iterator[str]:
    for i, ch in enumerate(s):
        if ch == "&":
            yield "&amp;"
        elif ch == "<":
            yield "&lt;"
        elif ch == ">":
            yield "&gt;"
        elif ch == "@":
            yield "@" + WORD_JOINER
        elif ch == "#":
            # The backslash stops a heading; the joiner stops `#123`/`owner/repo#123`.
            yield "\\#" + WORD_JOINER
        elif ch in _MD_ALWAYS:
            yield "\\" + ch
        elif ch == ":" and s.startswith("//", i + 1):
            # No autolinked URLs: an issue URL would add a timeline backlink.
            yield ":" + WORD_JOINER
        elif ch == "." and s[max(0, i - 3) : i].lower() == "www":
            yield WORD_JOINER + "."
        elif ch == "-" and i >= 2 and s[i - 2 : i].upper() == "GH" and s[i + 1 : i + 2].isdigit():
            yield "-" + WORD_JOINER  # GH-123 is a reference too
        elif ch == "!" and s.startswith("[", i + 1):
            yield "\\!"
        elif i == 0 and ch in _MD_AT_START:
            yield "\\" + ch
        elif ch == "." and i > 0 and s[:i].isdigit():
            yield "\\."  # "1. " would start an ordered list
        else:
            yield ch


def _fit(tokens: list[str], limit: int, truncated: bool) -> str:
    """Join whole tokens so the result (with an ellipsis if cut) is at most `limit`."""
    total = sum(len(tok) for tok in tokens)
    if total <= limit and not truncated:
        return "".join(tokens)
    room = max(0, limit - len(ELLIPSIS))
    out: list[str] = []
    used = 0
    for tok in tokens:
        if used + len(tok) > room:
            break
        out.append(tok)
        used += len(tok)
    return "".join(out).rstrip() + ELLIPSIS


def escape_text(s: str, limit: int = 200) -> str:
    """Untrusted text as one line of literal Markdown, at most `limit` characters."""
    limit = max(1, limit)
    text, cut = clean_line(s, limit + _LOOKAHEAD)
    return _fit(list(_text_tokens(text)), limit, cut)


def _code_tokens(s: str) -> Iterator[str]:
    for ch in s:
        if ch == "<":
            yield "<" + WORD_JOINER  # `<!--`, `<img`: never a tag or comment opener
        elif ch == ">":
            yield WORD_JOINER + ">"  # `-->`: never closes the marker
        elif ch == "@":
            yield "@" + WORD_JOINER
        else:
            yield ch


def _code_token_list(s: str) -> list[str]:
    if "<" in s or ">" in s or "@" in s:
        return list(_code_tokens(s))
    return list(s)  # every character is its own token


def escape_code(s: str, limit: int = 200, *, keep: Literal["head", "tail"] = "tail") -> str:
    """Untrusted text as one inline code span of at most `limit` characters plus the
    fence. Long values keep their tail by default (the file name is the informative
    end of a path); phrases keep their head. Not for GFM table cells (`|` splits them)."""
    limit = max(2, limit)
    if keep == "tail":
        source = s[::-1] if len(s) <= _FAST_CHARS else reversed(s)
        backwards, cut = clean_line(source, limit + _LOOKAHEAD)
        tokens = list(reversed(_code_token_list(backwards[::-1])))
    else:
        text, cut = clean_line(s, limit + _LOOKAHEAD)
        tokens = _code_token_list(text)
    if cut or sum(len(tok) for tok in tokens) > limit:
        kept: list[str] = []
        used = len(ELLIPSIS)
        for tok in tokens:
            if used + len(tok) > limit:
                break
            kept.append(tok)
            used += len(tok)
        tokens = [*kept, ELLIPSIS]
    if keep == "tail":
        tokens.reverse()
    content = "".join(tokens)
    if not content:
        return "` `"
    longest = _longest_backtick_run(content)
    fence = "`" * (longest + 1)
    # CommonMark strips one space on each side, so padding lets content start or
    # end with a backtick.
    pad = " " if content[0] == "`" or content[-1] == "`" else ""
    return f"{fence}{pad}{content}{pad}{fence}"


def _longest_backtick_run(s: str) -> int:
    if "`" not in s:
        return 0
    best = run = 0
    for ch in s:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def _trusted_tokens(s: str) -> Iterator[str]:
    for i, ch in enumerate(s):
        nxt = s[i + 1 : i + 2]
        if ch == "<":
            yield "&lt;"
        elif ch == ">":
            yield "&gt;"
        elif ch in "@#" and nxt != WORD_JOINER:
            yield ch + WORD_JOINER
        else:
            yield ch


def sanitize_trusted(s: str, limit: int = 500) -> str:
    """Our own (catalogue or rule) text: Markdown kept, but one line, no HTML, no
    mentions or references. Idempotent on `escape_text` output."""
    limit = max(1, limit)
    text, cut = clean_line(s, limit + _LOOKAHEAD)
    return _fit(list(_trusted_tokens(text)), limit, cut)
