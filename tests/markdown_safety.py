"""What in a piece of GitHub Markdown would render *live*: a mention, a link, an image,
raw HTML or an autolinked URL. A conservative reading of CommonMark + GFM, for tests
of text the bot posts: code spans are inert, backslash-escaped punctuation is literal
text (still able to mention), entities are decoded before mentions are looked for
(GitHub resolves `@user` on the rendered text, see bot/core/render/escape.py)."""

from __future__ import annotations

import html
import re

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]")
_AUTOLINK = re.compile(r"(?i)\b(?:https?://|www\.)")
_ESCAPED = "\x00"  # stands for a backslash-escaped character in the syntax view


def _outside_code(markdown: str) -> tuple[str, str]:
    """(syntax, rendered): the text outside code spans; in `syntax` every escaped
    character is a placeholder (it cannot open markup), in `rendered` it is itself."""
    syntax: list[str] = []
    rendered: list[str] = []
    i = 0
    n = len(markdown)
    while i < n:
        ch = markdown[i]
        if ch == "\\" and i + 1 < n and markdown[i + 1] in _ASCII_PUNCT:
            syntax.append(_ESCAPED)
            rendered.append(markdown[i + 1])
            i += 2
            continue
        if ch == "`":
            j = i
            while j < n and markdown[j] == "`":
                j += 1
            run = j - i
            close = j
            while True:
                close = markdown.find("`" * run, close)
                if close == -1:
                    break
                end = close + run
                if (close == 0 or markdown[close - 1] != "`") and (
                    end >= n or markdown[end] != "`"
                ):
                    break
                close = end
                while close < n and markdown[close] == "`":
                    close += 1
            if close == -1:  # no closer of the same length: literal backticks
                syntax.append("`" * run)
                rendered.append("`" * run)
                i = j
            else:  # a code span: inert
                syntax.append(" ")
                rendered.append(" ")
                i = close + run
            continue
        syntax.append(ch)
        rendered.append(ch)
        i += 1
    return "".join(syntax), "".join(rendered)


def live_markup(markdown: str) -> list[str]:
    """Each kind of live markup found (empty when the text is inert)."""
    syntax, rendered = _outside_code(markdown)
    found: list[str] = []
    if "<" in syntax:
        found.append("html")
    if "![" in syntax:
        found.append("image")
    if "[" in syntax or "](" in syntax:
        found.append("link")
    text = html.unescape(rendered)
    if _MENTION.search(text):
        found.append("mention")
    if _AUTOLINK.search(text):
        found.append("autolink")
    return found
