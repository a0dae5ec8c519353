"""Names the author points at: backticked identifiers, dotted paths and file paths in
the description that the patch or the file list actually contains.

A name the author wrote *and* the patch touches is where the reader should look
first; a name only in prose (a model, a flag of another tool) is not. Line by line,
bounded: the body is untrusted.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from bot.core.facts import ChangedFile
from bot.core.reading.prose import body_lines
from bot.core.reading.specifics import Mention
from bot.core.vocabulary import Symbol

MAX_MENTIONS = 8
_MAX_CANDIDATES = 400
_MAX_PATCH_LINES = 20_000
_MAX_LINE = 400
_BACKTICKED = re.compile(r"`([^`\n]{1,160})`")
# A bare path or dotted name outside backticks: "vllm/config/model.py", "a.b.c".
_BARE_PATH = re.compile(r"(?<![\w/.])((?:[\w.-]{1,80}/){1,12}[\w.-]{1,80}\.[a-z]{1,5})\b")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,80}")
_NAME_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Common words that are identifiers too: never a reason to point at a line.
_TOO_COMMON = frozenset(
    [
        "None",
        "True",
        "False",
        "self",
        "cls",
        "main",
        "args",
        "kwargs",
        "torch",
        "vllm",
        "str",
        "int",
        "float",
        "bool",
        "list",
        "dict",
        "tuple",
        "type",
        "test",
        "tests",
        "model",
        "config",
        "value",
        "name",
        "data",
        "input",
        "output",
        "init",
        "forward",
        "return",
        "import",
        "from",
        "cuda",
        "cpu",
        "gpu",
        "json",
        "yaml",
        "true",
        "false",
        "none",
        "pytest",
        "python",
        "and",
        "the",
        "for",
        "not",
        "with",
        "this",
    ]
)


def body_names(body: str | None) -> tuple[str, ...]:
    """Identifier-like names the description mentions in prose, in order, deduplicated."""
    seen: dict[str, None] = {}
    for line in body_lines(body):
        if line.in_fence:
            continue
        for raw in _candidates(line.text):
            name = _normalize(raw)
            if name and name not in seen:
                seen[name] = None
                if len(seen) >= _MAX_CANDIDATES:
                    return tuple(seen)
    return tuple(seen)


def find_mentions(
    body: str | None, files: Sequence[ChangedFile], symbols: Sequence[Symbol]
) -> tuple[Mention, ...]:
    """Names the body mentions that the patch or the file list contains, defined ones first."""
    names = body_names(body)
    if not names:
        return ()
    defined = {s.name: s.file for s in symbols}
    where = _identifier_files(files)
    filenames = [f.filename for f in files]
    found: list[Mention] = []
    taken: set[tuple[str, str]] = set()
    for name in names:
        mention = _resolve(name, defined, where, filenames)
        if mention is None or (mention.name, mention.file) in taken:
            continue
        if any(m.file == mention.file and m.kind == "file" for m in found) and (
            mention.kind == "file"
        ):
            continue
        taken.add((mention.name, mention.file))
        found.append(mention)
    found.sort(key=lambda m: (not m.defined, m.kind == "file"))
    return tuple(found[:MAX_MENTIONS])


def _candidates(line: str) -> Iterator[str]:
    for match in _BACKTICKED.finditer(line):
        # "path/to/file.py::function" names both a file and a symbol in it.
        yield from match.group(1).split("::", 1) if "/" in match.group(1) else (match.group(1),)
    outside = _BACKTICKED.sub(" ", line)
    yield from (m.group(1) for m in _BARE_PATH.finditer(outside))


def _normalize(raw: str) -> str:
    """`foo.bar()` -> foo.bar; `--flag` and prose in backticks -> ""."""
    text = raw.strip().rstrip(".,;:")
    if text.startswith(("@", "-", "$")) or " " in text.split("(", 1)[0]:
        return ""
    text = text.split("(", 1)[0].split("[", 1)[0].strip()
    if _has_file_suffix(text):
        return text if _looks_like_path(text) else ""
    text = text.replace("::", ".") if "/" not in text else text
    if "/" in text:
        return text if _looks_like_path(text) else ""
    parts = text.split(".")
    if not all(_NAME_PART.fullmatch(p) for p in parts):
        return ""
    last = parts[-1]
    if last in _TOO_COMMON or len(last) < 3:
        return ""
    return text


def _looks_like_path(text: str) -> bool:
    if text.startswith(("http", "/")) or ".." in text:
        return False
    return "." in text.rsplit("/", 1)[-1] or text.endswith("/")


def _identifier_files(files: Iterable[ChangedFile]) -> dict[str, Counter[str]]:
    """identifier -> how often each file's patch uses it (changed lines count double)."""
    where: dict[str, Counter[str]] = {}
    budget = _MAX_PATCH_LINES
    for changed in files:
        if not changed.patch:
            continue
        for raw in changed.patch.split("\n"):
            budget -= 1
            if budget < 0:
                return where
            line = raw[:_MAX_LINE]
            weight = 2 if line[:1] in "+-" else 1
            for ident in set(_IDENT.findall(line)):
                where.setdefault(ident, Counter())[changed.filename] += weight
    return where


def _resolve(
    name: str,
    defined: dict[str, str],
    where: dict[str, Counter[str]],
    filenames: Sequence[str],
) -> Mention | None:
    if "/" in name or _has_file_suffix(name):
        for filename in filenames:
            if filename == name or filename.endswith("/" + name.lstrip("./")):
                return Mention(name, filename, "file", False)
        return None
    last = name.rsplit(".", 1)[-1]
    if last in defined:
        return Mention(name, defined[last], "symbol", True)
    counts = where.get(last)
    if counts:
        return Mention(name, counts.most_common(1)[0][0], "symbol", False)
    return None


def _has_file_suffix(name: str) -> bool:
    return name.endswith((".py", ".yaml", ".yml", ".cu", ".cuh", ".cpp", ".h", ".md", ".txt"))
