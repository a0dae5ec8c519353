"""A gitignore-style glob list (pathspec's GitIgnoreSpec) that answers `match_file` fast.

The risk checks ask a dozen specs about every file of a PR: ~27,000 questions on a
3,000-file PR, each going through pathspec's path normalisation and one wrapped regex
search per glob (~80 ms in all). When no glob is a negation (`!x`), the spec's answer is
simply "some glob's regex finds the path", so all the globs are folded into one regex
and asked once. A list with a negation keeps pathspec's own last-match-wins walk.
tests/core/rules/test_globset.py checks the answers against `GitIgnoreSpec.match_file`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from operator import methodcaller
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

# A glob naming a path: it matches that file, or a directory of that name.
_FILE_OR_DIR = "(?:(?P<ps_d>/)|$)"
# pathspec marks "matched as a directory" with this named group; folding the globs into
# one alternation would repeat the name, and "does any glob match" never reads it.
_DIR_MARK_GROUP = "(?P<ps_d>"
# pathspec.util.NORMALIZE_PATH_SEPS: separators other than "/" that it rewrites. pathspec
# itself (~15 ms to import) is only imported to build a list, not to answer from a
# cached one (bot/rulebook/cache.py).
_OTHER_SEPS = [sep for sep in (os.sep, os.altsep) if sep and sep != "/"]


class GlobSet:
    """`match_file(path)` is exactly `GitIgnoreSpec.from_lines(globs).match_file(path)`."""

    __slots__ = ("_contains", "_exact", "_prefixes", "_rest", "_search", "_spec", "_sure",
                 "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs: tuple[str, ...] = tuple(globs)
        spec = self._build_spec()
        self._spec: GitIgnoreSpec | None = spec
        self._search: Callable[[str], object] | None = _folded_search(spec)
        self._set_parts(_parts(spec) if self._search else _NO_PARTS)

    def _set_parts(self, parts: _Parts) -> None:
        sure, exact, rest, self._prefixes, self._contains = parts
        self._sure: tuple[str, ...] = sure
        self._exact: frozenset[str] = exact
        self._rest: Callable[[str], object] | None = (
            None if rest is None else re.compile(*rest).search
        )

    def _build_spec(self) -> GitIgnoreSpec:
        from pathspec import GitIgnoreSpec

        # pathspec prefers RE2 once google-re2 is installed (bot/core/rules/patterns.py), and its
        # RE2 backend raises on a file name holding a lone surrogate, which JSON allows.
        return GitIgnoreSpec.from_lines(self.globs, backend="simple")

    @property
    def spec(self) -> GitIgnoreSpec:
        if self._spec is None:
            self._spec = self._build_spec()
        return self._spec

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (bot/rulebook/cache.py) as the globs and the folded regexes: loading it
        # needs neither pathspec nor a rebuild.
        search = self._search
        folded = getattr(search, "__self__", None)
        if isinstance(folded, re.Pattern):
            rest = getattr(self._rest, "__self__", None)
            parts: _Parts = (
                self._sure, self._exact,
                (rest.pattern, rest.flags) if isinstance(rest, re.Pattern) else None,
                self._prefixes, self._contains,
            )
            return _folded_globset, (self.globs, folded.pattern, folded.flags, parts)
        return GlobSet, (self.globs,)

    def match_file(self, path: str) -> bool:
        if self._search is None:
            return self.spec.match_file(path)
        if _OTHER_SEPS or path[:1] == "/" or path[:2] == "./":
            from pathspec.util import normalize_file

            path = normalize_file(path)
        # Most globs are a directory (`docs/**`) or one file: a prefix or an equality
        # answers for them; the rest are asked of their folded regex, and only about
        # paths holding one of the literals they need (a substring test costs a tenth
        # of a regex search).
        if path.startswith(self._sure) or path in self._exact:
            return True
        rest, prefixes = self._rest, self._prefixes
        if rest is None:
            return False
        if (
            prefixes is not None
            and not path.startswith(prefixes)
            and not any(map(path.__contains__, self._contains))
        ):
            return False
        return rest(path) is not None

    def select(self, paths: Iterable[str] | PathGroups) -> set[str]:
        """The paths `match_file` says yes to. A PR's checks ask a dozen lists about each
        of up to 3,000 files, which sit in a few dozen directories: a prefix is asked of
        each directory, and of a path only where the directory cannot tell; a regex only
        of the paths holding a literal it needs."""
        groups = paths if isinstance(paths, PathGroups) else PathGroups(paths)
        if self._search is None or _OTHER_SEPS or not groups.plain:
            return {path for path in groups.paths if self.match_file(path)}
        found = set(groups.starting_with(self._sure))
        found.update(self._exact.intersection(groups.paths))
        rest, prefixes = self._rest, self._prefixes
        if rest is not None:
            asked: Iterable[str] = groups.paths
            if prefixes is not None:
                kept = set(groups.starting_with(prefixes))
                for needle in self._contains:
                    if needle in groups.joined:  # most never occur: one scan says so
                        kept.update(filter(methodcaller("__contains__", needle), groups.paths))
                asked = kept
            found.update(filter(rest, asked))
        return found


class PathGroups:
    """Paths grouped by their directory, to ask many glob lists about (`GlobSet.select`)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = tuple(dict.fromkeys(paths))
        self.dirs: dict[str, list[str]] = {}
        for path in self.paths:
            self.dirs.setdefault(path[: path.rfind("/") + 1], []).append(path)
        # A path `match_file` would normalise first ("/x", "./x") is asked one by one.
        special = filter(methodcaller("startswith", ("/", "./")), self.paths)
        self.plain = next(special, None) is None
        self._joined: str | None = None

    @property
    def joined(self) -> str:
        """Every path, one text: a string in none of them is in no path."""
        if self._joined is None:
            self._joined = "\n".join(self.paths)
        return self._joined

    def starting_with(self, prefixes: tuple[str, ...]) -> list[str]:
        """The paths starting with one of `prefixes`."""
        found: list[str] = []
        for directory, paths in self.dirs.items():
            if directory.startswith(prefixes):
                found.extend(paths)  # each is the directory and a name
            elif any(prefix.startswith(directory) for prefix in prefixes):
                # Only a prefix running past the directory into the name can hold.
                found.extend(filter(methodcaller("startswith", prefixes), paths))
        return found


# (prefixes that match, paths that match, the other globs' folded regex (source, flags)
# or None, and the literals those need: prefixes and substrings, or None for "any path").
_Parts = tuple[
    tuple[str, ...], frozenset[str], "tuple[str, int] | None", "tuple[str, ...] | None",
    tuple[str, ...],
]
_NO_PARTS: _Parts = ((), frozenset(), None, None, ())


def _folded_globset(
    globs: tuple[str, ...], pattern: str, flags: int, parts: _Parts = _NO_PARTS
) -> GlobSet:
    globset = GlobSet.__new__(GlobSet)
    globset.globs = globs
    globset._spec = None
    globset._search = re.compile(pattern, flags).search
    globset._set_parts(parts)
    return globset


def _parts(spec: GitIgnoreSpec) -> _Parts:
    """The spec's globs split by how a path is asked about them: `dir/**` is a prefix
    test, `path/to/file` an equality (or a prefix: it may be a directory), the others
    a regex, after a test for the literals every match of theirs holds."""
    from bot.core.rules.globs import literal_prefix, required_substring

    sure: list[str] = []
    exact: set[str] = set()
    rest: list[str] = []
    prefixes: list[str] | None = []
    contains: list[str] = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or not isinstance(regex, re.Pattern):
            continue  # a comment or blank line (`_folded_search` refused anything else)
        source = regex.pattern
        prefix = literal_prefix(source)
        if prefix and source == "^" + re.escape(prefix):
            sure.append(prefix)
            continue
        if prefix and source == "^" + re.escape(prefix) + _FILE_OR_DIR:
            # `$` also matches before a final newline, which a JSON file name may hold.
            exact.update((prefix, prefix + "\n"))
            sure.append(prefix + "/")
            continue
        rest.append(source.replace(_DIR_MARK_GROUP, "(?:"))
        needle = None if prefix else required_substring(regex)
        if prefix and prefixes is not None:
            prefixes.append(prefix)
        elif needle:
            contains.append(needle)
        else:
            prefixes, contains = None, []
    folded = "|".join(f"(?:{source})" for source in rest)
    return (
        tuple(sure), frozenset(exact), (folded, 0) if rest else None,
        None if prefixes is None else tuple(prefixes), tuple(contains),
    )


def _folded_search(spec: GitIgnoreSpec) -> Callable[[str], object] | None:
    """One regex search equivalent to the spec, or None when the spec has a negation
    (or a regex that cannot be folded): then the spec itself must answer."""
    sources: list[str] = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or regex is None:
            continue  # a comment or blank line: pathspec skips it too
        if not pattern.include or not isinstance(regex, re.Pattern) or regex.flags & ~re.UNICODE:
            return None
        sources.append(regex.pattern.replace(_DIR_MARK_GROUP, "(?:"))
    if not sources:
        sources = ["(?!)"]  # nothing matches, as pathspec says for an empty list
    try:
        folded = re.compile("|".join(f"(?:{source})" for source in sources))
    except re.error:
        return None
    return folded.search
