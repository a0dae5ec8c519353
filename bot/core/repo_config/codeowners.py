"""Who owns each changed path, by the repository's CODEOWNERS file, as GitHub reads it.

Semantics (GitHub's "About code owners"):
- A line is `pattern owner owner ...`, split on spaces and tabs. A line whose first
  character is `#` is a comment, and so is everything from an owner-position token that
  starts with `#`; blank lines are ignored. `\\ ` escapes a space inside a pattern.
- Patterns are gitignore patterns, compiled by pathspec (GitIgnoreSpecPattern): a
  leading `/` or a slash inside anchors to the root, a pattern without one matches at
  any depth, `dir/` matches everything under a `dir` directory, `*` and `?` stay inside
  one component, `**` crosses them. One difference from gitignore, which GitHub
  documents: a last component that is a lone `*` (`docs/*`) matches only the direct
  children, not the files of nested directories.
- GitHub documents three gitignore features as not working in CODEOWNERS: `!`
  negation, `[ ]` character ranges and escaping a leading `#` with `\\`. A line using
  one is reported and skipped, as GitHub skips a line it cannot read; so is a line with
  an owner that is neither `@user`, `@org/team` nor an e-mail address.
- The LAST matching line wins; a matching line without owners leaves the path un-owned.
- `@user` counts as a user login (kept without the `@`), `@org/team` as a team (kept as
  `org/team`), both deduplicated case-insensitively as GitHub's names are; an e-mail
  address names no GitHub account we can route to, so it goes to its own bucket,
  `FileOwners.emails`, and is kept as written in `by_file`.
- A path is matched as given, repository-relative. A string GitHub never sends as a
  path (empty, absolute, with an empty component or a trailing `/`, or holding a line
  break) is owned by nobody.

The file comes from the repository, so it is hostile input: the text is capped at 512 KiB
(UTF-8), the rules at 5,000 and a line at 4,096 characters; whatever is past a cap, or
cannot be read, is a problem line `"{source}:{line}: {message}"`, never an exception.
Globs run on RE2 (bot/core/rules/patterns.py), whose time is linear in the path:
Python's `re` takes seconds on `*a*a*a*b` against one long file name.

Matching is fast: a literal pattern (most lines: `/vllm/lora`, `mkdocs.yaml`) is a dict
lookup per component of the path, and only the globs bucketed under the path's
directories (by their literal prefix, as bot/core/rules/globs.py does) are asked, from
the last line down, stopping below the best literal line found. And it is bounded: one
PR's paths may spend MAX_MATCH_COST asking globs; past it a path that needs a glob asked
is `unmatched` (its owners unknown), so 5,000 `**` globs cost a PR about a second, not
minutes. One RE2 set of every glob was tried instead: its DFA has a state per set of
live globs, so on such a file it took 80-200 s for 3,000 paths and never gave up.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from bot.core.rules.globs import literal_prefix
from bot.core.rules.patterns import LinePattern, PatternError

# GitHub's lookup order: the first of these that exists at the base is the one it uses.
CODEOWNERS_PATHS: tuple[str, ...] = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")

MAX_TEXT_BYTES = 512 * 1024
MAX_RULES = 5_000
MAX_LINE_CHARS = 4_096
# A file of 100,000 broken lines should cost its author one screen, not us 100,000 strings.
MAX_PROBLEMS = 50
# What matching one PR's paths may spend, in units of roughly a microsecond: a glob asked
# about a path costs one unit (its prefix and literal checks), and RE2 searching the path
# its cost_weight (bot/core/rules/patterns.py) per 256 bytes more. vLLM's file spends
# 32,000-36,000 on a 3,000-file PR (bench/bench_match.py's synthetic and vendored ones);
# 5,000 `**` globs that no literal rules out would spend 30 million (minutes, issue 38).
# Past the budget the remaining paths are left unmatched, and the digest says so.
MAX_MATCH_COST = 300_000

_PATTERN_TOKEN = re.compile(r"(?:\\.|\\\Z|[^ \t\\])+")
_SPACES = re.compile(r"[ \t]+")
_USER = re.compile(r"@[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_TEAM = re.compile(r"@[A-Za-z0-9][A-Za-z0-9_-]{0,99}/[A-Za-z0-9_.-]{1,100}")
_EMAIL = re.compile(r"[A-Za-z0-9.!$%&'*+=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")

# The two endings pathspec gives a pattern: file-or-directory, and directory only.
_ANY_END = "(?:(?P<ps_d>/)|$)"
_DIR_END = "(?P<ps_d>/)"
_ANY_DEPTH = "^(?:.+/)?"
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


@dataclass(frozen=True)
class OwnerRule:
    pattern: str
    owners: tuple[str, ...]  # as written, e.g. ("@WoosukKwon", "@vllm-project/ci")
    line: int


@dataclass(frozen=True)
class _Glob:
    """A wildcard pattern: every path it matches starts with `prefix` and, when it is
    not None, holds `needle`; both are cheap to test before RE2 is asked."""

    pattern: LinePattern
    prefix: str
    needle: str | None


@dataclass(frozen=True)
class _Literal:
    """A pattern without wildcards: `key` is a path (anchored) or one component."""

    key: str
    anchored: bool
    dir_only: bool


_Compiled = _Literal | _Glob


_Buckets = tuple[tuple[tuple[int, _Glob], ...], ...]


def _last_first(item: tuple[int, _Glob]) -> int:
    return -item[0]


class _Exhausted(Exception):
    """The PR's matching budget ran out."""


_UNBOUNDED = 1 << 62


class _Budget:
    def __init__(self, units: int) -> None:
        self.left = units

    def charge(self, units: int) -> None:
        self.left -= units
        if self.left < 0:
            raise _Exhausted


@lru_cache(maxsize=8192)
def _compile(pattern: str) -> _Compiled | str:
    """The matcher of one CODEOWNERS pattern, or why it has none."""
    if pattern.startswith("!"):
        return "`!` negation is not supported in CODEOWNERS; line skipped"
    if pattern.startswith("\\#"):
        return "escaping a leading `#` is not supported in CODEOWNERS; line skipped"
    if "[" in _ESCAPED.sub("", pattern):
        return "`[ ]` character ranges are not supported in CODEOWNERS; line skipped"
    try:
        # The regex's text only: compiling it with Python's `re` too, as pathspec's
        # pattern objects do, cost ~1 ms a line (5 s for a file of 5,000 globs).
        source, _ = GitIgnoreSpecPattern.pattern_to_regex(pattern)
    # pathspec's own error types differ between versions; any of them means "unusable".
    except Exception as exc:
        return f"invalid pattern: {_shorten(str(exc))}"
    if not isinstance(source, str):
        return "pattern matches no path; line skipped"
    literal = _literal(source)
    if literal is not None:
        return literal
    if pattern.endswith("/*") and source.endswith(_ANY_END):
        # GitHub: `docs/*` owns docs/a.md but not docs/sub/b.md, where gitignore would
        # match the directory docs/sub and so everything in it.
        source = source[: -len(_ANY_END)] + "$"
    try:
        compiled = LinePattern(source)
    except PatternError as exc:
        return f"pattern cannot be matched: {_shorten(str(exc))}"
    return _Glob(compiled, literal_prefix(source), _needle(pattern))


def _source(pattern: str) -> str | None:
    """The regex a glob line runs (None for a literal or an unusable line)."""
    compiled = _compile(pattern)
    return compiled.pattern.source if isinstance(compiled, _Glob) else None


def _needle(pattern: str) -> str | None:
    """The longest literal run of the pattern's last component (`rocm` in `/vllm/**/*rocm*`):
    a matching path has a component that last component matched, so it holds the run."""
    last = pattern.rstrip("/").rsplit("/", 1)[-1]
    if "\\" in last:
        return None
    return max(re.split(r"[*?]", last), key=len) or None


def _literal(source: str) -> _Literal | None:
    """The literal a pathspec regex stands for, when it is one; else None."""
    for end, dir_only in ((_ANY_END, False), (_DIR_END, True)):
        if not source.endswith(end):
            continue
        body = source[: -len(end)]
        anchored = not body.startswith(_ANY_DEPTH)
        escaped = body[1:] if anchored else body[len(_ANY_DEPTH):]
        if not body.startswith("^") or not escaped:
            return None
        key = _ESCAPED.sub(r"\1", escaped)
        # Only when re-escaping gives back pathspec's text exactly is the regex plain
        # text: anything else (a class, a group, a quantifier) stays a regex.
        if re.escape(key) != escaped or (not anchored and "/" in key):
            return None
        return _Literal(key, anchored, dir_only)
    return None


class _Index:
    """Rule ids by how they match: literal keys in dicts, globs in directory buckets."""

    def __init__(self, rules: Sequence[OwnerRule]) -> None:
        self.exact: dict[str, int] = {}  # a path that is this literal file-or-directory
        self.under: dict[str, int] = {}  # a directory whose whole contents match
        self.name: dict[str, int] = {}  # a last component, at any depth
        self.dir_name: dict[str, int] = {}  # a directory component, at any depth
        buckets: dict[str, list[tuple[int, _Glob]]] = {}
        # A glob whose regex a later line repeats can never be the last match: skipped,
        # so 5,000 copies of `**/*.py` cost what one does.
        last_of = {_source(rule.pattern): rule_id for rule_id, rule in enumerate(rules)}
        for rule_id, rule in enumerate(rules):
            compiled = _compile(rule.pattern)
            if isinstance(compiled, str):
                continue
            if isinstance(compiled, _Glob):
                if last_of[compiled.pattern.source] != rule_id:
                    continue
                bucket = compiled.prefix[: compiled.prefix.rfind("/") + 1]
                buckets.setdefault(bucket, []).append((rule_id, compiled))
                continue
            # Later ids overwrite earlier ones: the dicts hold the last line per key.
            if compiled.anchored:
                self.under[compiled.key] = rule_id
                if not compiled.dir_only:
                    self.exact[compiled.key] = rule_id
            else:
                self.dir_name[compiled.key] = rule_id
                if not compiled.dir_only:
                    self.name[compiled.key] = rule_id
        self.buckets = {key: tuple(reversed(ids)) for key, ids in buckets.items()}

    def buckets_for(self, directory: str) -> _Buckets:
        """The glob buckets a file of `directory` ("" or "a/b/") may match, each last
        line first. Merged lazily by `rule_of`: building one sorted list per directory
        would cost all the globs, asked or not."""
        found: list[tuple[tuple[int, _Glob], ...]] = []
        end = 0
        while True:
            bucket = self.buckets.get(directory[:end])
            if bucket:
                found.append(bucket)
            end = directory.find("/", end) + 1
            if end == 0:
                break
        return tuple(found)

    def rule_of(self, path: str, buckets: _Buckets, budget: _Budget) -> int:
        """The id of the last rule matching `path` (an ordinary path), or -1. Raises
        _Exhausted when asking the globs would spend more than `budget` has left."""
        globs: Iterable[tuple[int, _Glob]] = (
            buckets[0] if len(buckets) == 1 else heapq.merge(*buckets, key=_last_first))
        best = self.exact.get(path, -1)
        parts = path.split("/")
        best = max(best, self.name.get(parts[-1], -1))
        end = -1
        for part in parts[:-1]:
            end += len(part) + 1
            best = max(best, self.under.get(path[:end], -1), self.dir_name.get(part, -1))
        data: bytes | None = None
        for rule_id, glob in globs:
            if rule_id <= best:
                break
            budget.charge(1)
            if not path.startswith(glob.prefix) or (
                    glob.needle is not None and glob.needle not in path):
                continue
            if data is None:
                data = path.encode("utf-8", "replace")
            budget.charge((1 + len(data) // 256) * glob.pattern.cost_weight)
            if glob.pattern.search_bytes(data) is not None:
                return rule_id
        return best


@dataclass(frozen=True)
class CodeOwners:
    source: str
    rules: tuple[OwnerRule, ...]
    problems: tuple[str, ...]
    _index: _Index = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", _Index(self.rules))

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of `path` as written on its last matching line; () when none.
        One path costs at most MAX_RULES glob checks: no budget applies."""
        rule = self._rule_of(path, {}, _Budget(_UNBOUNDED))
        return () if rule is None else rule.owners

    def _rule_of(
        self, path: str, cache: dict[str, _Buckets], budget: _Budget,
    ) -> OwnerRule | None:
        if not _is_path(path):
            return None
        directory = path[: path.rfind("/") + 1]
        buckets = cache.get(directory)
        if buckets is None:
            buckets = cache[directory] = self._index.buckets_for(directory)
        rule_id = self._index.rule_of(path, buckets, budget)
        return None if rule_id < 0 else self.rules[rule_id]


@dataclass(frozen=True)
class FileOwners:
    users: tuple[str, ...]  # logins without '@', first seen first, case-insensitively unique
    teams: tuple[str, ...]  # "org/team"
    # (path, owners as written) for each owned path, in the order given; a tuple of pairs
    # so that the whole value stays immutable (`dict(by_file)` for lookups).
    by_file: tuple[tuple[str, tuple[str, ...]], ...]
    unowned: tuple[str, ...]  # the changed paths nobody owns, in the order given
    emails: tuple[str, ...] = ()  # e-mail owners, as written: no account to route to
    # The paths left when the matching budget ran out, in the order given: their owners
    # are unknown (neither owned nor un-owned).
    unmatched: tuple[str, ...] = ()


def _is_path(path: str) -> bool:
    return bool(path) and not (
        path.startswith("/") or path.endswith("/") or "//" in path or "\n" in path
    )


def _shorten(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _owner_problem(owner: str) -> str | None:
    if _USER.fullmatch(owner) or _TEAM.fullmatch(owner) or _EMAIL.fullmatch(owner):
        return None
    return f"owner {_shorten(owner)} is not @user, @org/team or an e-mail address; line skipped"


def _capped(text: str) -> tuple[str, bool]:
    """`text` cut to MAX_TEXT_BYTES of UTF-8 at a line break, and whether it was cut."""
    # A character is at least one byte: a longer text is over the cap before encoding.
    head = text[: MAX_TEXT_BYTES + 1]
    data = head.encode("utf-8", "replace")
    if len(data) <= MAX_TEXT_BYTES:
        return head, False
    kept = data[:MAX_TEXT_BYTES].decode("utf-8", "ignore")
    return kept[: kept.rfind("\n") + 1], True


def parse_codeowners(text: str, *, source: str = ".github/CODEOWNERS") -> CodeOwners:
    """Read a CODEOWNERS file; every line it cannot use is a problem, never an error."""
    problems: list[tuple[int, str]] = []
    rules: list[OwnerRule] = []
    kept, cut = _capped(text)
    lines = kept.split("\n")
    if kept.endswith("\n"):
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_CHARS:
            problems.append((number, f"line longer than {MAX_LINE_CHARS:,} characters; skipped"))
            continue
        rule, problem = _parse_line(raw.rstrip("\r").lstrip(" \t"), number)
        if problem is not None:
            problems.append((number, problem))
        elif rule is not None and len(rules) >= MAX_RULES:
            problems.append(
                (number, f"more than {MAX_RULES:,} rules; this line and the rest are ignored"))
            break
        elif rule is not None:
            rules.append(rule)
    else:
        if cut:
            problems.append((
                len(lines) + 1,
                f"the file is over {MAX_TEXT_BYTES // 1024} KiB; this line and the rest "
                "are ignored",
            ))
    shown = [f"{source}:{number}: {message}" for number, message in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(
            f"{source}:{problems[MAX_PROBLEMS][0]}: "
            f"{len(problems) - MAX_PROBLEMS:,} more problems from here on")
    return CodeOwners(source, tuple(rules), tuple(shown))


def _parse_line(line: str, number: int) -> tuple[OwnerRule | None, str | None]:
    """The rule on one line (None for a blank or comment line), or why there is none."""
    if not line.strip(" \t") or line.startswith("#"):
        return None, None
    token = _PATTERN_TOKEN.match(line)
    if token is None:  # the line starts with a character no pattern may start with
        return None, f"cannot read a pattern in {_shorten(line)}; line skipped"
    pattern = token.group()
    owners: list[str] = []
    for owner in _SPACES.split(line[token.end():].strip(" \t")):
        if owner.startswith("#"):
            break
        if owner:
            problem = _owner_problem(owner)
            if problem is not None:
                return None, problem
            owners.append(owner)
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        return None, f"{_shorten(pattern)}: {compiled}"
    return OwnerRule(pattern, tuple(owners), number), None


def owners_for(
    codeowners: CodeOwners, paths: Sequence[str], *, max_cost: int = MAX_MATCH_COST,
) -> FileOwners:
    """Who owns the changed `paths`: users, teams and e-mails over all of them, and each
    path's owners (or its place among the un-owned). Asking the globs stops where it
    would spend more than `max_cost` (MAX_MATCH_COST): from there on a path that needs
    a glob asked is `unmatched`."""
    users: dict[str, str] = {}
    teams: dict[str, str] = {}
    emails: dict[str, str] = {}
    by_file: list[tuple[str, tuple[str, ...]]] = []
    unowned: list[str] = []
    cache: dict[str, _Buckets] = {}
    unmatched: list[str] = []
    budget = _Budget(max_cost)
    for path in dict.fromkeys(paths):
        try:
            rule = codeowners._rule_of(path, cache, budget)
        except _Exhausted:
            # Spent: a later path is still settled when no glob could outrank its best
            # literal line (that costs no glob check), and is unmatched otherwise.
            unmatched.append(path)
            continue
        if rule is None or not rule.owners:
            unowned.append(path)
            continue
        by_file.append((path, rule.owners))
        for owner in rule.owners:
            if not owner.startswith("@"):
                emails.setdefault(owner.lower(), owner)
            elif "/" in owner:
                teams.setdefault(owner.lower(), owner[1:])
            else:
                users.setdefault(owner.lower(), owner[1:])
    return FileOwners(
        users=tuple(users.values()),
        teams=tuple(teams.values()),
        by_file=tuple(by_file),
        unowned=tuple(unowned),
        emails=tuple(emails.values()),
        unmatched=tuple(unmatched),
    )
