"""`digest-bot index show SYMBOL`: where a name is defined, what overrides it, who calls it."""

from __future__ import annotations

from collections.abc import Iterable

from bot.core.repo_index.context import importers_of, overriders
from bot.core.repo_index.model import FileRecord, IndexView

_SHOWN = 20


def describe_symbol(view: IndexView, records: Iterable[FileRecord], symbol: str) -> list[str]:
    """Plain-text lines about `symbol` (`name`, `Class` or `Class.method`)."""
    owner, _, name = symbol.rpartition(".")
    lines: list[str] = []
    for record in records:
        for cls in record.classes:
            if cls.name == symbol:
                bases = f"({', '.join(cls.bases)})" if cls.bases else ""
                lines.append(f"{record.path}:{cls.line}: class {cls.name}{bases}")
                subs = view.subclasses([cls.name])
                lines.extend(f"  subclass {s.path}: {s.name}" for s in subs[:_SHOWN])
        for fn in record.functions:
            if fn.name != name or fn.nested_in is not None or (owner and fn.class_name != owner):
                continue
            decorators = "".join(f"@{d} " for d in fn.decorators)
            lines.append(
                f"{record.path}:{fn.line}: {decorators}def {fn.qualname}({', '.join(fn.names)})"
            )
            if fn.class_name is not None:
                found = overriders(view, record, fn.class_name, fn.name)
                lines.append(f"  overridden in {len(found)} subclass(es)")
                lines.extend(f"    {path}: {cls_name}" for path, cls_name in found[:_SHOWN])
            else:
                wanted = importers_of(record.module, fn.name)
                importing = view.importers(wanted)
                sites = [
                    s for s in view.call_sites(fn.name, 5000)
                    if s.path == record.path or s.path in importing
                ]
                lines.append(f"  called from {len(sites)} file(s)")
                lines.extend(f"    {s.path} ({s.count}x)" for s in sites[:_SHOWN])
    return lines
