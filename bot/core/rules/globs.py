"""Gitignore-style path globs, indexed once across all rules.

Each glob becomes pathspec's GitIgnoreSpecPattern regex (the CODEOWNERS mental model:
`*` stays inside one directory, `**` crosses them, `docs/` is a directory at any depth).
Instead of asking every rule's spec about every file, the index buckets the regexes by
the literal directory prefix they start with, so a file is tested only against globs
that could match it. A test checks the index against `GitIgnoreSpec.match_file`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_REGEX_META = set(".^$*+?{}[]|()")
_QUANTIFIERS = set("*+?{")
_BRACES = re.compile(r"\{[^{}]*,[^{}]*\}")


def _pattern_regex(glob: str) -> re.Pattern[str] | None:
    # Imported here: a rule set from the cache (bot/rulebook/cache.py) needs no pathspec.
    from pathspec import GitIgnoreSpec

    pattern = GitIgnoreSpec.from_lines([glob]).patterns[0]
    regex = pattern.regex
    return regex if isinstance(regex, re.Pattern) else None


def glob_problem(glob: str) -> str | None:
    """Why `glob` is not usable as a rule path glob, or None."""
    if not glob.strip():
        return "empty glob"
    if glob.startswith("!"):
        return "negation is not supported here; use `exclude:`"
    if glob.startswith("#"):
        return "a leading '#' makes it a gitignore comment"
    if _BRACES.search(glob):
        return "brace expansion {a,b} is not gitignore syntax; list each glob"
    try:
        regex = _pattern_regex(glob)
    except (ValueError, re.error) as exc:
        return str(exc)
    if regex is None:
        return "matches nothing"
    return None


def literal_prefix(regex: str) -> str:
    """The literal text every match of an anchored pathspec regex starts with."""
    if not regex.startswith("^"):
        return ""
    out: list[str] = []
    i = 1
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            if i + 1 >= len(regex) or regex[i + 1].isalnum():
                break
            char, width = regex[i + 1], 2
        elif char in _REGEX_META:
            break
        else:
            width = 1
        if i + width < len(regex) and regex[i + width] in _QUANTIFIERS:
            break
        out.append(char)
        i += width
    return "".join(out)


def _ancestors(path: str) -> Iterable[str]:
    yield ""
    index = path.find("/")
    while index != -1:
        yield path[: index + 1]
        index = path.find("/", index + 1)


class PathIndex:
    """All distinct globs of a rule set; `match` says which files each glob matches."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs: tuple[str, ...] = tuple(dict.fromkeys(globs))
        self.ids: dict[str, int] = {glob: i for i, glob in enumerate(self.globs)}
        regexes: list[re.Pattern[str]] = []
        buckets: dict[str, list[int]] = {}
        for i, glob in enumerate(self.globs):
            regex = _pattern_regex(glob)
            if regex is None:  # rejected at validation; keep ids aligned anyway
                regex = re.compile(r"(?!)")
            regexes.append(regex)
            prefix = literal_prefix(regex.pattern)
            buckets.setdefault(prefix[: prefix.rfind("/") + 1], []).append(i)
        # Compiled on first use (`_regex`): a rule set loaded from the cache
        # (bot/rulebook/cache.py) recompiles no glob a PR's directories never ask about.
        self._sources: tuple[tuple[str, int], ...] = tuple((r.pattern, r.flags) for r in regexes)
        self._regexes: list[re.Pattern[str] | None] = list(regexes)
        self._buckets = {key: tuple(ids) for key, ids in buckets.items()}
        # Most (file, glob) pairs do not match, and a regex call costs ~10x a substring
        # test: a glob whose every match holds one literal (`/aiter`, `.md`,
        # `torch_bindings.cpp`) asks its regex only about names holding it.
        self._needles: tuple[str | None, ...] = tuple(
            required_substring(regex) for regex in regexes)
        # A directory glob (`docs/**`: its regex is its prefix) matches every file of every
        # directory it is asked about: those are the directories under its bucket.
        self._always: tuple[bool, ...] = tuple(
            regex.pattern == "^" + re.escape(prefix) and prefix.endswith("/")
            for regex in regexes
            for prefix in (literal_prefix(regex.pattern),)
        )

    def match(self, files: Sequence[str]) -> dict[int, list[str]]:
        """Glob id -> the files it matches, in the order given."""
        hits: dict[int, list[str]] = {}
        # The globs a file is asked about depend only on its directory (the buckets of
        # its ancestors): a big PR's thousands of files share a few dozen directories.
        # A glob whose needle none of a directory's names holds is not asked about any
        # of them: one substring test of their names joined, not one per file.
        directories = [name[: name.rfind("/") + 1] for name in files]
        names_in: dict[str, list[str]] = {}
        for name, directory in zip(files, directories, strict=True):
            names_in.setdefault(directory, []).append(name)
        asked = {
            directory: [
                glob for glob in self._asked(directory)
                if glob[1] is None or glob[1] in joined
            ]
            for directory, names in names_in.items()
            for joined in ("\n".join(names),)
        }
        for name, directory in zip(files, directories, strict=True):
            for glob_id, needle, regex in asked[directory]:
                if needle is not None and needle not in name:
                    continue
                if regex is None or regex.match(name):
                    hits.setdefault(glob_id, []).append(name)
        return hits

    def _asked(self, directory: str) -> list[tuple[int, str | None, re.Pattern[str] | None]]:
        """(glob, needle, regex) of each glob a file of `directory` is asked about; no
        needle nor regex for one that matches all of them."""
        return [
            (glob_id, None, None) if self._always[glob_id]
            else (glob_id, self._needles[glob_id], self._regex(glob_id))
            for ancestor in _ancestors(directory)
            for glob_id in self._buckets.get(ancestor, ())
        ]

    def _regex(self, glob_id: int) -> re.Pattern[str]:
        regex = self._regexes[glob_id]
        if regex is None:
            regex = self._regexes[glob_id] = re.compile(*self._sources[glob_id])
        return regex

    def __getstate__(self) -> dict[str, object]:
        # Pickled without the compiled regexes: their sources rebuild them on use.
        return {**self.__dict__, "_regexes": None}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._regexes = [None] * len(self._sources)

    def match_plain(self, files: Sequence[str]) -> dict[int, list[str]]:
        """`match` asking every glob of every bucket: the definition it answers like."""
        hits: dict[int, list[str]] = {}
        for name in files:
            for directory in _ancestors(name):
                for glob_id in self._buckets.get(directory, ()):
                    if self._regex(glob_id).match(name):
                        hits.setdefault(glob_id, []).append(name)
        return hits


def required_substring(regex: re.Pattern[str]) -> str | None:
    """A string every match of `regex` contains, or None when none is known."""
    from bot.core.rules.literals import required_literals

    found = required_literals(regex.pattern, regex.flags)
    if found is None or found.ignore_case or len(found.options) != 1:
        return None
    return found.options[0] or None
