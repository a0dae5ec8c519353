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

    __slots__ = ("_search", "_spec", "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs: tuple[str, ...] = tuple(globs)
        spec = self._build_spec()
        self._spec: GitIgnoreSpec | None = spec
        self._search: Callable[[str], object] | None = _folded_search(spec)

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
            return _folded_globset, (self.globs, folded.pattern, folded.flags)
        return GlobSet, (self.globs,)

    def match_file(self, path: str) -> bool:
        if self._search is None:
            return self.spec.match_file(path)
        if _OTHER_SEPS or path[:1] == "/" or path[:2] == "./":
            from pathspec.util import normalize_file

            path = normalize_file(path)
        return self._search(path) is not None


def _folded_globset(globs: tuple[str, ...], pattern: str, flags: int) -> GlobSet:
    globset = GlobSet.__new__(GlobSet)
    globset.globs = globs
    globset._spec = None
    globset._search = re.compile(pattern, flags).search
    return globset


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
