"""An IndexView over FileRecords held in memory: tests, and `digest --index DIR`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from bot.core.repo_index.model import CallSite, ClassRef, FileRecord


class MemoryIndex:
    def __init__(self, files: Iterable[FileRecord], commit: str = "memory") -> None:
        self._commit = commit
        self._files: dict[str, FileRecord] = {}
        self._subclasses: dict[str, list[ClassRef]] = defaultdict(list)
        self._methods: set[tuple[str, str, str]] = set()
        self._calls: dict[str, dict[str, int]] = defaultdict(dict)
        for record in sorted(files, key=lambda r: r.path):
            self.add(record)

    def add(self, record: FileRecord) -> None:
        self._files[record.path] = record
        for cls in record.classes:
            for base in dict.fromkeys(cls.bases):
                self._subclasses[base].append(ClassRef(record.path, cls.name, cls.bases))
        for fn in record.functions:
            if fn.class_name is not None:
                self._methods.add((record.path, fn.class_name, fn.name))
            for callee in fn.calls:
                by_path = self._calls[callee]
                by_path[record.path] = by_path.get(record.path, 0) + 1

    @property
    def commit(self) -> str:
        return self._commit

    @property
    def files(self) -> int:
        return len(self._files)

    def file(self, path: str) -> FileRecord | None:
        return self._files.get(path)

    def subclasses(self, base: str) -> Sequence[ClassRef]:
        return tuple(self._subclasses.get(base, ()))

    def defines(self, path: str, class_name: str, method: str) -> bool:
        return (path, class_name, method) in self._methods

    def call_sites(self, callee: str, limit: int) -> Sequence[CallSite]:
        by_path = self._calls.get(callee, {})
        return tuple(CallSite(p, callee, n) for p, n in sorted(by_path.items())[:limit])

    def imports(self, path: str) -> tuple[str, ...]:
        record = self._files.get(path)
        return record.imports if record else ()
