"""An IndexView over FileRecords held in memory: tests, and `digest --index DIR`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Sequence

from bot.core.repo_index.model import CallSite, ClassRef, FileRecord


class MemoryIndex:
    def __init__(self, files: Iterable[FileRecord], commit: str = "memory") -> None:
        self._commit = commit
        self._files: dict[str, FileRecord] = {}
        self._subclasses: dict[str, list[ClassRef]] = defaultdict(list)
        self._methods: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self._calls: dict[str, dict[str, int]] = defaultdict(dict)
        self._importers: dict[str, set[str]] = defaultdict(set)
        for record in sorted(files, key=lambda r: r.path):
            self.add(record)

    def add(self, record: FileRecord) -> None:
        self._files[record.path] = record
        for module in record.imports:
            self._importers[module].add(record.path)
        for cls in record.classes:
            for base in dict.fromkeys(cls.bases):
                self._subclasses[base].append(ClassRef(record.path, cls.name, cls.bases))
        for fn in record.functions:
            if fn.class_name is not None and fn.nested_in is None:
                self._methods[fn.name].add((record.path, fn.class_name))
        for callee, count in record.calls:
            self._calls[callee][record.path] = count

    @property
    def commit(self) -> str:
        return self._commit

    @property
    def files(self) -> int:
        return len(self._files)

    def file(self, path: str) -> FileRecord | None:
        return self._files.get(path)

    def records(self) -> Iterator[FileRecord]:
        return iter(self._files.values())

    def subclasses(self, bases: Collection[str]) -> Sequence[ClassRef]:
        found: dict[tuple[str, str], ClassRef] = {}
        for base in bases:
            for ref in self._subclasses.get(base, ()):
                found.setdefault((ref.path, ref.name), ref)
        return tuple(found.values())

    def classes_defining(self, method: str) -> frozenset[tuple[str, str]]:
        return frozenset(self._methods.get(method, ()))

    def call_sites(self, callee: str, limit: int) -> Sequence[CallSite]:
        by_path = self._calls.get(callee, {})
        return tuple(CallSite(p, callee, n) for p, n in sorted(by_path.items())[:limit])

    def importers(self, modules: Collection[str]) -> frozenset[str]:
        return frozenset(p for m in modules for p in self._importers.get(m, ()))
