"""The questions a senior reviewer asks of the code around a change, answered from the
index: which look-alike functions the PR left alone, which subclasses override a method
it changed, and who calls a public function whose signature it changed.

The changed functions come from line numbers against the index's spans
(bot/core/repo_index/locate.py), read at the PR's base when the caller has the changed
files' records there (`base`) or the index is of the base commit, re-anchored otherwise.
What matters only: a docstring- or comment-only edit has no overriders or look-alikes;
a signature change that only adds parameters with defaults leaves its callers unaffected
(counted, not listed); look-alikes share a shape (a prefix, a decorator or a signature,
and most parameters), and a function calling the changed one is not its look-alike.

Pure: an `IndexView` in, a `RepoContext` out. Every answer is bounded (a few look-ups per
changed symbol, capped lists) so it stays far below the digest's 10 ms budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.core.facts import ChangedFile, PullRequestFacts, is_test_path
from bot.core.repo_index.findings import (
    CallerFinding,
    OverrideFinding,
    RepoContext,
    SiblingFinding,
)
from bot.core.repo_index.locate import AddedDef, Touched, locate
from bot.core.repo_index.model import FileRecord, FunctionRecord, IndexView, module_name

MAX_FINDINGS = 2  # per kind: each kind gets at most two short lines
_MAX_FILES = 40
_MAX_SYMBOLS = 40
_MAX_SUBCLASSES = 2000
_MAX_DEPTH = 8
_MAX_CALL_SITES = 2000
_MIN_OVERLAP = 0.5  # of two look-alikes' parameter names, shared / all
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
    """A function the PR changes, as the index's record of its file has it."""

    file: ChangedFile
    record: FileRecord
    touched: Touched


@dataclass(frozen=True)
class _Added:
    file: ChangedFile
    record: FileRecord
    added: AddedDef


def repo_context(
    view: IndexView, facts: PullRequestFacts, *, base: Mapping[str, FileRecord] | None = None
) -> RepoContext:
    """Siblings, overrides and callers around the PR's changed Python functions. `base`:
    the changed files' records at the PR's base (by their path there), when known."""
    changed: list[_Changed] = []
    added: list[_Added] = []
    touched_names: dict[str, set[str]] = {}
    changed_functions: list[tuple[str, str]] = []
    exact_everywhere = True
    for f in _python_files(facts.files):
        path = f.previous_filename or f.filename
        record = (base or {}).get(path)
        exact = record is not None or bool(facts.base_sha and view.commit == facts.base_sha)
        record = record or view.file(path)
        if record is None:
            continue
        located = locate(record, f.patch or "", exact=exact)
        exact_everywhere = exact_everywhere and exact
        names = touched_names.setdefault(record.path, set())
        for t in located.touched:
            names.add(t.fn.name)
            if located.anchored and len(changed_functions) < _MAX_SYMBOLS:
                changed_functions.append((f.filename, t.fn.qualname))
            if len(changed) < _MAX_SYMBOLS:
                changed.append(_Changed(f, record, t))
        for a in located.added:
            names.add(a.name)
            if len(added) < _MAX_SYMBOLS:
                added.append(_Added(f, record, a))
    pr_paths = frozenset(f.filename for f in facts.files) | frozenset(
        f.previous_filename for f in facts.files if f.previous_filename
    )
    meaningful = [
        c for c in changed if c.touched.code or c.touched.signature_change() is not None
    ]
    callers = [_callers(view, c, pr_paths) for c in meaningful]
    return RepoContext(
        commit=view.commit,
        base=facts.base_sha if exact_everywhere and changed else "",
        changed_functions=tuple(changed_functions),
        siblings=tuple(_first([
            *(_siblings(c, touched_names[c.record.path]) for c in meaningful),
            *(_added_siblings(a, touched_names[a.record.path]) for a in added),
        ])),
        overrides=tuple(_first(_overrides(view, c, facts.files) for c in meaningful)),
        callers=(
            *_first(c for c in callers if c is not None and c.breaking),
            *_first(c for c in callers if c is not None and not c.breaking),
        ),
    )


def _python_files(files: Sequence[ChangedFile]) -> list[ChangedFile]:
    """The changed Python files the index may know, most-changed first."""
    python = [
        f for f in files
        if f.filename.endswith(".py") and f.patch and f.status not in ("added", "removed")
    ]
    python.sort(key=lambda f: (-f.changes, f.filename))
    return python[:_MAX_FILES]


def _first(found: Iterable[F | None]) -> list[F]:
    """The first MAX_FINDINGS answers (the symbols come most-changed file first)."""
    kept: list[F] = []
    for item in found:
        if item is not None and item not in kept:
            kept.append(item)
            if len(kept) >= MAX_FINDINGS:
                break
    return kept


def _siblings(c: _Changed, touched: set[str]) -> SiblingFinding | None:
    fn = c.touched.fn
    if fn.name.startswith("test"):
        return None
    candidates = [
        other for other in c.record.functions
        if other.nested_in is None
        and other.class_name == fn.class_name
        and other.name not in touched
        # A function calling the changed one follows it already: not a look-alike.
        and fn.name not in other.calls
    ]
    return _look_alikes(c.record, fn.qualname, fn.name, fn.params, fn.decorators, candidates)


def _added_siblings(a: _Added, touched: set[str]) -> SiblingFinding | None:
    # An added function is not in the index yet: its shape is what the patch shows, and
    # its class is unknown, so look across the whole file.
    if a.added.name.startswith("test"):
        return None
    candidates = [
        other for other in a.record.functions
        if other.nested_in is None and other.name not in touched
    ]
    return _look_alikes(a.record, a.added.name, a.added.name, a.added.params, (), candidates)


def _look_alikes(
    record: FileRecord, changed: str, name: str, params: tuple[str, ...],
    decorators: tuple[str, ...], candidates: list[FunctionRecord],
) -> SiblingFinding | None:
    for kind, value in _shape(name, params, decorators):
        siblings = tuple(
            other.qualname for other in candidates
            if other.name != name and _matches(kind, value, name, params, other)
        )
        if siblings:
            return SiblingFinding(
                file=record.path, changed=changed, shape=_shape_text(kind, value),
                siblings=tuple(dict.fromkeys(siblings)),
            )
    return None


def _overrides(
    view: IndexView, c: _Changed, files: Sequence[ChangedFile]
) -> OverrideFinding | None:
    fn = c.touched.fn
    if fn.class_name is None or fn.name.startswith("__"):
        return None
    found = overriders(view, c.record, fn.class_name, fn.name)
    if not found:
        return None
    return OverrideFinding(
        file=c.record.path, class_name=fn.class_name, method=fn.name,
        overriders=tuple(sorted(found)), named_by_tests=_named_by_tests(found, files),
        nested=tuple(c.touched.nested),
    )


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



def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _named_by_tests(found: Sequence[tuple[str, str]], files: Sequence[ChangedFile]) -> int | None:
    tests = [f for f in files if is_test_path(f.filename)]
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
    view: IndexView, c: _Changed, pr_paths: frozenset[str]
) -> CallerFinding | None:
    fn = c.touched.fn
    if fn.class_name is not None or fn.name.startswith("_"):
        return None
    change = c.touched.signature_change()
    if change is None:
        return None
    importing = view.importers(importers_of(c.record.module, fn.name))
    sites = [
        site for site in view.call_sites(fn.name, _MAX_CALL_SITES)
        if site.path not in pr_paths and site.path in importing
    ]
    if not sites:
        return None
    return CallerFinding(
        file=c.record.path, function=fn.name, call_sites=sum(site.count for site in sites),
        files=tuple(sorted({site.path for site in sites})),
        breaking=not change.compatible, reasons=change.reasons,
    )


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


def _named(params: Sequence[str]) -> tuple[str, ...]:
    return tuple(n for n in (p.rstrip("=").lstrip("*") for p in params) if n)


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    first, second = set(_named(a)), set(_named(b))
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)


def _shape(
    name: str, params: tuple[str, ...], decorators: tuple[str, ...]
) -> list[tuple[str, object]]:
    """The ways a function can have look-alikes, most telling first."""
    shapes: list[tuple[str, object]] = []
    prefix = name_prefix(name)
    if prefix:
        shapes.append(("prefix", prefix))
    shapes.extend(("decorator", d) for d in _distinctive(decorators))
    if len(_named(params)) >= 2:
        shapes.append(("signature", _named(params)))
    return shapes


def _matches(
    kind: str, value: object, name: str, params: tuple[str, ...], fn: FunctionRecord
) -> bool:
    """Same shape, not only a shared prefix: see each kind below."""
    if kind == "signature":
        return _named(fn.params) == value
    if kind == "prefix":
        if not isinstance(value, str) or not fn.name.startswith(value) or fn.name == value:
            return False
        # One shared word is a naming habit: it takes the very same parameters. Two or
        # more (`packed_nccl_broadcast_…`) and most parameters shared make a pair.
        return _named(fn.params) == _named(params) or (
            _shared_words(name, fn.name) >= 2 and _overlap(params, fn.params) >= _MIN_OVERLAP
        )
    return value in fn.decorators and _overlap(params, fn.params) >= _MIN_OVERLAP


def _shared_words(first: str, second: str) -> int:
    """Leading `_`-separated words two names share: `a_b_c`, `a_b_d` -> 2."""
    shared = 0
    for x, y in zip(first.strip("_").split("_"), second.strip("_").split("_"), strict=False):
        if x != y:
            break
        shared += 1
    return shared


def _shape_text(kind: str, value: object) -> str:
    if kind == "prefix":
        return f"prefix:{value}"
    if kind == "decorator":
        return f"decorator:@{value}"
    assert isinstance(value, tuple)
    return "signature:(" + ", ".join(value) + ")"
