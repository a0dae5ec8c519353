"""The records an index holds per file, and the read-only view the queries run against."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class FunctionRecord:
    """A function or method. `params` is the signature's shape: parameter names in order,
    `*args`/`**kwargs` marked by their stars, a bare `*` for keyword-only ones, a
    parameter with a default marked by a trailing `=`, `self`/`cls` left out."""

    name: str
    class_name: str | None  # the enclosing class; None at module level and when nested
    line: int  # the `def` line
    end_line: int
    body_line: int  # first line of the body: lines line..body_line-1 are the signature
    decorators: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    # Names this function calls that are defined in the same file: who its callers
    # among its look-alikes are. The calls across files are FileRecord.calls.
    calls: tuple[str, ...] = ()
    first_line: int = 0  # the first decorator's line; 0 means `line`
    doc_line: int = 0  # the docstring's lines, 0 when there is none
    doc_end: int = 0
    # A def inside a def: the qualname of the outermost function or method it is in.
    # Lines in it belong to that one; the queries never look at a nested def itself.
    nested_in: str | None = None
    # The source from `def` through the signature's colon, each line stripped: what
    # re-anchors the function when the index was read at another commit than the PR's
    # base, and what a signature change is read against.
    signature: str = ""

    @property
    def qualname(self) -> str:
        return f"{self.class_name}.{self.name}" if self.class_name else self.name

    @property
    def start(self) -> int:
        """The first line of the definition, decorators included."""
        return self.first_line or self.line

    @property
    def names(self) -> tuple[str, ...]:
        """The parameter names, without the default markers."""
        return tuple(p.rstrip("=") for p in self.params)


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
    # (name, how many times the file calls it): `f(...)` and `x.f(...)` both count as "f".
    calls: tuple[tuple[str, int], ...] = ()
    blob: str = ""  # git's blob SHA of the text the record was read from


@dataclass(frozen=True, slots=True)
class ClassRef:
    path: str
    name: str
    bases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CallSite:
    path: str
    callee: str
    count: int  # call expressions in `path` naming `callee`


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


def module_name(path: str) -> str:
    """`vllm/utils/__init__.py` -> `vllm.utils`; `vllm/a/b.py` -> `vllm.a.b`."""
    stem = path[:-3] if path.endswith(".py") else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
