"""A gitignore-style glob list (pathspec's GitIgnoreSpec) that answers `match_file` fast.

The risk checks ask a dozen specs about every file of a PR: ~27,000 questions on a
3,000-file PR, each going through pathspec's path normalisation and one wrapped regex
search per glob (~80 ms in all). When no glob is a negation (`!x`), the spec's answer is
simply "some glob's regex finds the path", so all the globs are folded into one regex
and asked once. A list with a negation keeps pathspec's own last-match-wins walk.
tests/test_globset.py checks the answers against `GitIgnoreSpec.match_file`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from operator import methodcaller
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

# pathspec marks "matched as a directory" with this named group; folding the globs into
# one alternation would repeat the name, and "does any glob match" never reads it.
_DIR_MARK_GROUP = "(?P<ps_d>"
# pathspec.util.NORMALIZE_PATH_SEPS: separators other than "/" that it rewrites. pathspec
# itself (~15 ms to import) is only imported to build a list, not to answer from a
# cached one (bot/rules_cache.py).
_OTHER_SEPS = [sep for sep in (os.sep, os.altsep) if sep and sep != "/"]


class GlobSet:
    """`match_file(path)` is exactly `GitIgnoreSpec.from_lines(globs).match_file(path)`."""

    __slots__ = ("_contains", "_prefixes", "_search", "_spec", "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs: tuple[str, ...] = tuple(globs)
        spec = self._build_spec()
        self._spec: GitIgnoreSpec | None = spec
        self._search: Callable[[str], object] | None = _folded_search(spec)
        self._prefixes, self._contains = _literals(spec) if self._search else (None, ())

    def _build_spec(self) -> GitIgnoreSpec:
        from pathspec import GitIgnoreSpec

        # pathspec prefers RE2 once google-re2 is installed (bot/core/patterns.py), and its
        # RE2 backend raises on a file name holding a lone surrogate, which JSON allows.
        return GitIgnoreSpec.from_lines(self.globs, backend="simple")

    @property
    def spec(self) -> GitIgnoreSpec:
        if self._spec is None:
            self._spec = self._build_spec()
        return self._spec

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (bot/rules_cache.py) as the globs and the folded regex: loading it
        # needs neither pathspec nor a rebuild.
        search = self._search
        folded = getattr(search, "__self__", None)
        if isinstance(folded, re.Pattern):
            literals = (self._prefixes, self._contains)
            return _folded_globset, (self.globs, folded.pattern, folded.flags, literals)
        return GlobSet, (self.globs,)

    def match_file(self, path: str) -> bool:
        if self._search is None:
            return self.spec.match_file(path)
        if _OTHER_SEPS or path[:1] == "/" or path[:2] == "./":
            from pathspec.util import normalize_file

            path = normalize_file(path)
        prefixes = self._prefixes
        # Most paths of a PR hold none of the literals the globs need: a substring test
        # (a tenth of a regex search) answers for them.
        if (
            prefixes is not None
            and not path.startswith(prefixes)
            and not any(map(path.__contains__, self._contains))
        ):
            return False
        return self._search(path) is not None


    def select(self, paths: Iterable[str]) -> set[str]:
        """The paths `match_file` says yes to, asked without a Python step per path: a
        PR's checks ask a dozen lists about each of up to 3,000 files."""
        paths = list(paths)
        search, prefixes = self._search, self._prefixes
        special = filter(methodcaller("startswith", ("/", "./")), paths)
        if search is None or _OTHER_SEPS or next(special, None) is not None:
            return {path for path in paths if self.match_file(path)}  # normalised one by one
        if prefixes is not None:
            kept = set(filter(methodcaller("startswith", prefixes), paths))
            for needle in self._contains:
                kept.update(filter(methodcaller("__contains__", needle), paths))
            paths = list(kept)
        return set(filter(search, paths))


def _folded_globset(
    globs: tuple[str, ...],
    pattern: str,
    flags: int,
    literals: tuple[tuple[str, ...] | None, tuple[str, ...]] = (None, ()),
) -> GlobSet:
    globset = GlobSet.__new__(GlobSet)
    globset.globs = globs
    globset._spec = None
    globset._search = re.compile(pattern, flags).search
    globset._prefixes, globset._contains = literals
    return globset


def _literals(spec: GitIgnoreSpec) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(prefixes, substrings): a path some glob matches starts with one of the prefixes
    (a glob anchored at the root) or holds one of the substrings (a literal every match
    of its glob contains). (None, ()) when some glob has neither: every path is asked."""
    from bot.core.rules.globs import _literal_prefix, _needle

    prefixes: list[str] = []
    contains: list[str] = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None or not isinstance(regex, re.Pattern):
            continue  # a comment or blank line (`_folded_search` refused anything else)
        prefix = _literal_prefix(regex.pattern)
        needle = None if prefix else _needle(regex)
        if prefix:
            prefixes.append(prefix)
        elif needle:
            contains.append(needle)
        else:
            return None, ()
    return tuple(prefixes), tuple(contains)


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
