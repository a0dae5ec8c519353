"""The records an index holds per file, and the read-only view the queries run against."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class FunctionRecord:
    """A function or method. `params` is the signature's shape: parameter names in order,
    `*args`/`**kwargs` marked by their stars, `self`/`cls` left out."""

    name: str
    class_name: str | None  # the enclosing class; None at module level (or nested in a def)
    line: int
    end_line: int
    body_line: int  # first line of the body: lines line..body_line-1 are the signature
    decorators: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()  # names called in the body (`f(...)`, `x.f(...)` -> "f")

    @property
    def qualname(self) -> str:
        return f"{self.class_name}.{self.name}" if self.class_name else self.name


@dataclass(frozen=True, slots=True)
class ClassRecord:
    name: str
    bases: tuple[str, ...]  # the last dotted part of each base: `nn.Module` -> "Module"
    line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    module: str  # dotted module name: vllm/model_executor/models/llama.py -> vllm....llama
    classes: tuple[ClassRecord, ...] = ()
    functions: tuple[FunctionRecord, ...] = ()
    # Modules this file imports, absolute and dotted; `from a.b import c` gives "a.b.c".
    imports: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClassRef:
    path: str
    name: str
    bases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallSite:
    path: str
    callee: str
    count: int  # functions in `path` (top-level code counts as one) that call `callee`


class IndexView(Protocol):
    """Read access to one generation of an index (SQLite in service, memory in tests)."""

    @property
    def commit(self) -> str: ...

    def file(self, path: str) -> FileRecord | None: ...

    def subclasses(self, bases: Collection[str]) -> Sequence[ClassRef]:
        """Classes naming any of `bases` (by its last dotted part) among their direct bases."""
        ...

    def classes_defining(self, method: str) -> frozenset[tuple[str, str]]:
        """(path, class) of every class whose body defines `method`."""
        ...

    def call_sites(self, callee: str, limit: int) -> Sequence[CallSite]:
        """Files calling `callee` by name (`f(...)` or `x.f(...)`), at most `limit`."""
        ...

    def importers(self, modules: Collection[str]) -> frozenset[str]:
        """Paths of the files that import any of `modules` (dotted, as FileRecord.imports)."""
        ...
