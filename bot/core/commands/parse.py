"""Find `/digest` commands in a comment body (the help table for them is rendering's:
bot/core/render/commands.py).

A command is a line that *renders* as plain text starting with `/digest`: the parser
follows CommonMark far enough to ignore quotes, fenced and indented code, code spans
and HTML comments (PEERS.md lesson 8), so quoting a command, documenting one in a
code block, or the PR template's `<!-- ... -->` blocks never trigger anything.
Everything here is linear in the body's length.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

COMMAND_WORD = "/digest"
# Bare `/digest` means refresh; `/digest refresh` is accepted as its long form.
DEFAULT_COMMAND_NAMES: frozenset[str] = frozenset(
    {"refresh", "explain", "en", "zh", "route", "mute", "unmute", "help"}
)
MAX_COMMANDS = 10  # per comment; more is abuse or a paste accident
MAX_ARGS = 8
MAX_ARG_CHARS = 64
MAX_LINE_CHARS = 200

Who = Literal["anyone-with-write", "author-or-write"]


class Command(BaseModel):
    """One parsed command.

    An unknown subcommand keeps its (lower-cased) word as `name` with `known=False`,
    so the refusal can quote what the user typed.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    args: tuple[str, ...] = ()
    line: str  # the command line as written (stripped, cut to MAX_LINE_CHARS)
    known: bool = True


class CommandSpec(BaseModel):
    """Help for one command, declared by the handler module that implements it."""

    model_config = ConfigDict(frozen=True)

    name: str  # as in Command.name: "refresh" for bare /digest
    usage: str  # e.g. "/digest explain"
    summary_key: str  # i18n key of the one-line description
    who: Who


# ---------------------------------------------------------------------------
# Block structure: which lines are ordinary paragraph text.

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_COMMAND = re.compile(r"/digest(?=\s|$)", re.IGNORECASE)


def _indent(line: str) -> tuple[int, int]:
    """(columns, characters) of leading blanks; a tab advances to the next stop of 4."""
    cols = 0
    for i, ch in enumerate(line):
        if ch == " ":
            cols += 1
        elif ch == "\t":
            cols += 4 - cols % 4
        else:
            return cols, i
    return cols, len(line)


def _paragraphs(lines: Sequence[str]) -> list[list[str]]:
    """Group paragraph lines; drop fenced/indented code, quotes and HTML comment blocks."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    fence: tuple[str, int] | None = None  # (char, run length) of the open fence
    in_comment_block = False

    def flush() -> None:
        nonlocal current
        if current:
            paragraphs.append(current)
            current = []

    for line in lines:
        cols, chars = _indent(line)
        rest = line[chars:]
        if fence is not None:
            char, length = fence
            if cols < 4 and rest.startswith(char * length) and not rest.lstrip(char).strip():
                fence = None
            continue
        if in_comment_block:
            in_comment_block = "-->" not in line
            continue
        if not rest:
            flush()
            continue
        if cols >= 4:
            # Indented code cannot interrupt a paragraph: inside one this is a lazy
            # continuation line (which, indented, can't be a command anyway).
            if current:
                current.append(line)  # kept indented so it never matches
            continue
        fence_match = _FENCE.match(rest)
        if fence_match and not (rest[0] == "`" and "`" in fence_match.group(2)):
            flush()
            run = fence_match.group(1)
            fence = (run[0], len(run))
            continue
        if rest.startswith("<!--"):
            flush()
            in_comment_block = "-->" not in rest[4:]
            continue
        if rest.startswith(">"):
            # A quote. A following unprefixed line is a lazy continuation for
            # CommonMark, but GitHub's "Quote reply" prefixes every line, so an
            # unprefixed line is the commenter's own text: it may be a command.
            flush()
            continue
        current.append(rest)
    flush()
    return paragraphs


# ---------------------------------------------------------------------------
# Inline structure: code spans and HTML comments inside one paragraph.


def _hidden_spans(text: str) -> list[tuple[int, int]]:
    """Half-open ranges of `text` inside code spans or HTML comments, left to right."""
    runs_by_length: dict[int, list[int]] = {}  # backtick run starts, per run length
    i = 0
    while i < len(text):
        if text[i] == "`":
            j = i
            while j < len(text) and text[j] == "`":
                j += 1
            runs_by_length.setdefault(j - i, []).append(i)
            i = j
        else:
            i += 1
    cursor = {length: 0 for length in runs_by_length}  # next unused run per length

    spans: list[tuple[int, int]] = []
    unclosed_comment_seen = False  # then no later "<!--" can close either
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            j = i
            while j < len(text) and text[j] == "`":
                j += 1
            length = j - i
            starts = runs_by_length[length]
            k = cursor[length]
            while k < len(starts) and starts[k] <= i:
                k += 1
            cursor[length] = k
            if k < len(starts):  # a closing run of exactly the same length
                end = starts[k] + length
                spans.append((i, end))
                i = end
            else:
                i = j  # unmatched backticks are literal text
            continue
        if ch == "<" and not unclosed_comment_seen and text.startswith("<!--", i):
            close = text.find("-->", i + 4)
            if close == -1:
                unclosed_comment_seen = True  # literal text, as CommonMark renders it
                i += 4
            else:
                spans.append((i, close + 3))
                i = close + 3
            continue
        i += 1
    return spans


def _visible_command_texts(paragraph: list[str]) -> list[str]:
    """The text of each line that starts as plain text with /digest, up to hidden text."""
    text = "\n".join(paragraph)
    spans = _hidden_spans(text)
    found: list[str] = []
    span_index = 0
    offset = 0
    for line in paragraph:
        start, end = offset, offset + len(line)
        offset = end + 1
        while span_index < len(spans) and spans[span_index][1] <= start:
            span_index += 1
        cut = end
        if span_index < len(spans):
            span_start, _ = spans[span_index]
            if span_start <= start:
                continue  # the line begins inside a code span or comment
            cut = min(cut, span_start)
        if _COMMAND.match(line):
            found.append(text[start:cut])
    return found


# Lone surrogates and control characters (Unicode categories Cs and Cc, tab aside): a
# lone surrogate cannot be encoded as UTF-8, so a reply quoting it would fail on every
# retry (issue 8, item 10). Dropped before the line is split into words.
_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")


def _to_command(visible: str, known: Collection[str]) -> Command:
    visible = _UNPRINTABLE.sub("", visible)
    words = visible.split()[1:]
    shown = visible.strip()[:MAX_LINE_CHARS]
    if not words:
        return Command(name="refresh", line=shown)
    name = words[0].lower()
    args = tuple(word[:MAX_ARG_CHARS] for word in words[1 : 1 + MAX_ARGS])
    return Command(name=name, args=args, line=shown, known=name in known)


def parse_commands(
    body: str, known: Collection[str] = DEFAULT_COMMAND_NAMES
) -> tuple[Command, ...]:
    """Each distinct command in `body`, in order, at most MAX_COMMANDS.

    Identical commands (same name and args) count once. `known` is the vocabulary:
    the handlers may pass the names of their CommandSpecs.
    """
    if "/" not in body:
        return ()
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    commands: list[Command] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for paragraph in _paragraphs(lines):
        if not any(_COMMAND.match(line) for line in paragraph):
            continue
        for visible in _visible_command_texts(paragraph):
            command = _to_command(visible, known)
            key = (command.name, command.args)
            if key in seen:
                continue
            seen.add(key)
            commands.append(command)
            if len(commands) == MAX_COMMANDS:
                return tuple(commands)
    return tuple(commands)


def _keys(commands: Sequence[Command]) -> list[tuple[str, tuple[str, ...]]]:
    return [(command.name, command.args) for command in commands]


def command_lines_changed(old_body: str, new_body: str) -> bool:
    """On an `edited` event: did the edit change the commands (not just the prose)?"""
    return _keys(parse_commands(old_body)) != _keys(parse_commands(new_body))


def commands_added(old_body: str, new_body: str) -> tuple[Command, ...]:
    """Commands in the edited body that the previous body did not have (to run once)."""
    before = set(_keys(parse_commands(old_body)))
    return tuple(c for c in parse_commands(new_body) if (c.name, c.args) not in before)


def find_spec(specs: Sequence[CommandSpec], name: str) -> CommandSpec | None:
    """The spec declared for a command name, if any handler declares one."""
    return next((spec for spec in specs if spec.name == name), None)


def nearest_spec(specs: Sequence[CommandSpec], name: str) -> CommandSpec | None:
    """The command a mistyped `name` most likely meant (`refersh` -> refresh), if any is
    close; `name` is cut first, so a pasted paragraph costs no more than a word."""
    names = [spec.name for spec in specs]
    found = difflib.get_close_matches(name[:MAX_ARG_CHARS], names, n=1, cutoff=0.6)
    return find_spec(specs, found[0]) if found else None
