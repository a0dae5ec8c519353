"""The base source of each function a patch changes: the model reads the whole function
as it was, not only the hunk (issue 41: a hunk read as the file called a symbol
unimported that the base file imports)."""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.repo_index.locate import locate
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import parse_python

MAX_FUNCTIONS = 12  # per file


def changed_functions(
    path: str, base_text: str, patch: str
) -> Iterator[tuple[str, int, list[str]]]:
    """(qualname, first line, base lines) of each outermost function the patch changes."""
    record = parse_python(path, base_text.encode("utf-8"))
    if not isinstance(record, FileRecord):
        return
    lines = base_text.split("\n")
    located = locate(record, patch, exact=True)
    touched = sorted(located.touched, key=lambda t: t.fn.start)
    for entry in touched[:MAX_FUNCTIONS]:
        fn = entry.fn
        yield fn.qualname, fn.start, lines[fn.start - 1 : fn.end_line]
