"""The questions a senior reviewer asks of the code around a change, answered from an index
of the default branch: which look-alike functions the PR left alone, which subclasses
override a method it changed, and who calls a public function whose signature it changed.

Pure: an `IndexView` in, a `RepoContext` out. Every answer is bounded (a few look-ups per
changed symbol, capped lists) so it stays far below the digest's 10 ms budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.reading.symbols import extract_symbols
from bot.core.repo_index.findings import (
    CallerFinding,
    OverrideFinding,
    RepoContext,
    SiblingFinding,
)
from bot.core.repo_index.model import FileRecord, FunctionRecord, IndexView
from bot.core.repo_index.parse import MODULE_CALLER, module_name

MAX_FINDINGS = 2  # per kind: each kind gets at most two short lines
_MAX_SYMBOLS = 40
_MAX_SUBCLASSES = 2000
_MAX_DEPTH = 8
_MAX_CALL_SITES = 2000
_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_DEF_LINE = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)")
# Name prefixes too generic to make two functions look-alikes.
_GENERIC_PREFIXES = frozenset({
    "test", "init", "from", "with", "make", "build", "create", "load", "apply", "update",
    "compute", "process", "forward", "setup", "teardown", "validate", "maybe", "_get", "_set",
})
_PLAIN_DECORATORS = frozenset({
    "property", "staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod",
    "override", "typing.override", "typing_extensions.override", "cached_property",
    "functools.cached_property", "cache", "functools.cache", "lru_cache", "functools.lru_cache",
    "wraps", "functools.wraps", "overload", "typing.overload", "pytest.fixture",
    "torch.inference_mode", "torch.no_grad", "contextmanager", "contextlib.contextmanager",
})


F = TypeVar("F", SiblingFinding, OverrideFinding, CallerFinding)


@dataclass(frozen=True)
class _Changed:
    file: ChangedFile
    name: str
    change: str


def repo_context(view: IndexView, facts: PullRequestFacts) -> RepoContext:
    """Siblings, overrides and callers around the PR's changed Python symbols."""
    by_name = {f.filename: f for f in facts.files}
    changed = [
        _Changed(by_name[s.file], s.name, s.change)
        for s in extract_symbols(facts.files, limit=_MAX_SYMBOLS)
        if s.file.endswith(".py") and s.file in by_name
    ]
    touched: dict[str, set[str]] = {}
    for c in changed:
        touched.setdefault(c.file.filename, set()).add(c.name)
    pr_paths = frozenset(by_name) | frozenset(
        f.previous_filename for f in facts.files if f.previous_filename
    )
    records = {path: view.file(path) for path in touched}
    return RepoContext(
        commit=view.commit,
        siblings=tuple(_first(
            _siblings(c, records.get(c.file.filename), touched[c.file.filename]) for c in changed
        )),
        overrides=tuple(_first(
            _overrides(view, c, records.get(c.file.filename), facts.files) for c in changed
        )),
        callers=tuple(_first(
            _callers(view, c, records.get(c.file.filename), pr_paths) for c in changed
        )),
    )


def _first(found: Iterable[F | None]) -> list[F]:
    """The first MAX_FINDINGS answers (the symbols come most-changed file first)."""
    kept: list[F] = []
    for item in found:
        if item is not None and item not in kept:
            kept.append(item)
            if len(kept) >= MAX_FINDINGS:
                break
    return kept


def _defs(record: FileRecord | None, name: str) -> list[FunctionRecord]:
    if record is None:
        return []
    return [fn for fn in record.functions if fn.name == name and fn.name != MODULE_CALLER]


def _siblings(
    c: _Changed, record: FileRecord | None, touched: set[str]
) -> SiblingFinding | None:
    if record is None or c.change == "removed" or c.name.startswith("test"):
        return None
    defs = _defs(record, c.name)
    # An added function is not in the index yet: its name is all we know of its shape,
    # and its class is unknown, so look across the whole file.
    fn = defs[0] if defs else None
    for kind, value in _shape(fn, c.name):
        siblings = tuple(
            other.qualname
            for other in record.functions
            if other.name != MODULE_CALLER
            and other.name not in touched
            and (fn is None or other.class_name == fn.class_name)
            and _matches(kind, value, other)
        )
        if siblings:
            changed = fn.qualname if fn is not None else c.name
            return SiblingFinding(
                file=record.path, changed=changed, shape=_shape_text(kind, value),
                siblings=tuple(dict.fromkeys(siblings)),
            )
    return None


def _overrides(
    view: IndexView, c: _Changed, record: FileRecord | None, files: Sequence[ChangedFile]
) -> OverrideFinding | None:
    if record is None or c.change == "added" or c.name.startswith("__"):
        return None
    for fn in _defs(record, c.name):
        if fn.class_name is None:
            continue
        found = overriders(view, record, fn.class_name, c.name)
        if found:
            return OverrideFinding(
                file=record.path, class_name=fn.class_name, method=c.name,
                overriders=tuple(sorted(found)),
                named_by_tests=_named_by_tests(found, files),
            )
    return None


def overriders(
    view: IndexView, record: FileRecord, class_name: str, method: str
) -> list[tuple[str, str]]:
    """Classes anywhere below `class_name` that define `method` themselves. One batch of
    look-ups per level of the hierarchy, not one per class."""
    found: list[tuple[str, str]] = []
    defining: frozenset[tuple[str, str]] | None = None
    seen: set[tuple[str, str]] = {(record.path, class_name)}
    level = [(record.path, class_name)]
    for _ in range(_MAX_DEPTH):
        by_name: dict[str, list[str]] = {}
        for path, name in level:
            by_name.setdefault(name, []).append(path)
        subs = [s for s in view.subclasses(list(by_name)) if (s.path, s.name) not in seen]
        if not subs:
            break
        if defining is None:
            defining = view.classes_defining(method)
        named = {base for sub in subs for base in sub.bases if base in by_name}
        # Who imports each base of this level: a same-named class elsewhere is not it.
        importing = {
            (path, name): view.importers(importers_of(module_name(path), name))
            for name in named
            for path in by_name[name]
        }
        following: list[tuple[str, str]] = []
        for sub in subs:
            key = (sub.path, sub.name)
            if key in seen or not any(
                sub.path == path or sub.path in importing[(path, base)]
                for base in sub.bases
                for path in by_name.get(base, ())
            ):
                continue
            seen.add(key)
            if len(seen) > _MAX_SUBCLASSES:
                return found
            if key in defining:
                found.append(key)
            following.append(key)
        if not following:
            break
        level = following
    return found


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or "/tests/" in path or name.startswith("test_")


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _named_by_tests(found: Sequence[tuple[str, str]], files: Sequence[ChangedFile]) -> int | None:
    tests = [f for f in files if _is_test(f.filename)]
    if not tests:
        return None
    text = _squash(" ".join(f"{f.filename} {f.patch or ''}" for f in tests))
    named = 0
    for path in {p for p, _ in found}:
        stem = _squash(path.rsplit("/", 1)[-1].removesuffix(".py"))
        classes = [_squash(n) for p, n in found if p == path]
        if (len(stem) >= 4 and stem in text) or any(len(n) >= 4 and n in text for n in classes):
            named += 1
    return named


def importers_of(module: str, name: str) -> set[str]:
    """Imports that bring `name` of `module` into a file: the module itself, the name
    from it, or the name re-exported by one of its packages."""
    wanted = {f"{module}.{name}", module}
    parts = module.split(".")
    wanted.update(".".join(parts[:i]) + f".{name}" for i in range(1, len(parts)))
    return wanted


def _callers(
    view: IndexView, c: _Changed, record: FileRecord | None, pr_paths: frozenset[str]
) -> CallerFinding | None:
    if record is None or c.change == "added" or c.name.startswith("_"):
        return None
    defs = [fn for fn in _defs(record, c.name) if fn.class_name is None]
    if not defs or not _signature_changed(c.file.patch or "", c.name, defs[0]):
        return None
    wanted = importers_of(record.module, c.name)
    importing = view.importers(wanted)
    sites = [
        site for site in view.call_sites(c.name, _MAX_CALL_SITES)
        if site.path not in pr_paths and site.path in importing
    ]
    if not sites:
        return None
    return CallerFinding(
        file=record.path, function=c.name, call_sites=sum(site.count for site in sites),
        files=tuple(sorted({site.path for site in sites})),
    )


def _signature_changed(patch: str, name: str, fn: FunctionRecord) -> bool:
    """A `def name(` line was removed or added, or a changed line falls inside the indexed
    signature (lines fn.line .. fn.body_line-1 of the default branch)."""
    old = 0
    for line in patch.split("\n"):
        if line.startswith("@@"):
            match = _HUNK.match(line)
            old = int(match.group(1)) if match else 0
            continue
        if line.startswith(("+++", "---")) or not line:
            continue
        marker, code = line[0], line[1:400]
        if marker in "+-":
            definition = _DEF_LINE.match(code)
            if definition and definition.group(1) == name:
                return True
        if marker == "-" and fn.line <= old < fn.body_line:
            return True
        if marker == "+" and fn.line < old < fn.body_line:
            return True  # inserted between two lines of a multi-line signature
        if marker in " -":
            old += 1
    return False


def name_prefix(name: str) -> str | None:
    """`_checked_to` -> `_checked_`; None when the name has no distinctive prefix."""
    core = name.lstrip("_")
    head, sep, rest = core.partition("_")
    if not sep or not rest or len(head) < 4 or head.lower() in _GENERIC_PREFIXES:
        return None
    return name[: len(name) - len(core)] + head + "_"


def _distinctive(decorators: Sequence[str]) -> tuple[str, ...]:
    return tuple(
        d for d in decorators
        if d not in _PLAIN_DECORATORS
        and not d.startswith("pytest.mark.")
        and not d.endswith((".setter", ".getter", ".deleter"))
    )


def _shape(fn: FunctionRecord | None, name: str) -> list[tuple[str, object]]:
    """The ways a function can have look-alikes, most telling first."""
    shapes: list[tuple[str, object]] = []
    prefix = name_prefix(name)
    if prefix:
        shapes.append(("prefix", prefix))
    if fn is not None:
        shapes.extend(("decorator", d) for d in _distinctive(fn.decorators))
        named = [p for p in fn.params if not p.startswith("*")]
        if len(named) >= 2:
            shapes.append(("signature", fn.params))
    return shapes


def _matches(kind: str, value: object, fn: FunctionRecord) -> bool:
    if kind == "prefix":
        return isinstance(value, str) and fn.name.startswith(value) and fn.name != value
    if kind == "decorator":
        return value in fn.decorators
    return fn.params == value


def _shape_text(kind: str, value: object) -> str:
    if kind == "prefix":
        return f"prefix:{value}"
    if kind == "decorator":
        return f"decorator:@{value}"
    assert isinstance(value, tuple)
    return "signature:(" + ", ".join(value) + ")"
