"""Python source text -> a FileRecord, with `ast` only: the code is never imported or run.

Bounded: text over `max_bytes`, text that is not UTF-8, binary content and anything
`ast` refuses (syntax errors, nesting deep enough to exhaust the parser) come back as a
`Skipped` with a reason the caller counts; nothing here raises on bad input.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import Literal

from bot.core.repo_index.model import ClassRecord, FileRecord, FunctionRecord

SkipReason = Literal["too-large", "binary", "not-utf8", "syntax-error", "too-deep"]
SKIP_REASONS: tuple[SkipReason, ...] = (
    "too-large", "binary", "not-utf8", "syntax-error", "too-deep",
)
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024  # vLLM's largest hand-written file is ~200 kB
MODULE_CALLER = "<module>"
_MAX_CALLS_PER_FUNCTION = 200


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: SkipReason


def module_name(path: str) -> str:
    """`vllm/utils/__init__.py` -> `vllm.utils`; `vllm/a/b.py` -> `vllm.a.b`."""
    stem = path[:-3] if path.endswith(".py") else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def parse_python(
    path: str, data: bytes, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> FileRecord | Skipped:
    if len(data) > max_bytes:
        return Skipped(path, "too-large")
    if b"\x00" in data:
        return Skipped(path, "binary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Skipped(path, "not-utf8")
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences in old code warn; they are not our business.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return Skipped(path, "syntax-error")
    except (RecursionError, MemoryError):
        return Skipped(path, "too-deep")
    module = module_name(path)
    try:
        return _records(path, module, tree)
    except RecursionError:
        return Skipped(path, "too-deep")


def _records(path: str, module: str, tree: ast.Module) -> FileRecord:
    classes: list[ClassRecord] = []
    functions: list[FunctionRecord] = []
    imports: list[str] = []
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]

    def visit(body: list[ast.stmt], class_name: str | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                classes.append(ClassRecord(
                    name=node.name,
                    bases=tuple(b for b in map(_last_name, node.bases) if b),
                    line=node.lineno,
                    end_line=node.end_lineno or node.lineno,
                ))
                visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append(_function(node, class_name))
            elif isinstance(node, ast.If | ast.Try):
                # `if TYPE_CHECKING:` / `try: import x` blocks still define things.
                for block in _blocks(node):
                    visit(block, class_name)

    visit(tree.body, None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, package)
            if base:
                imports.append(base)
                imports.extend(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    top_level_calls = tuple(dict.fromkeys(
        name
        for stmt in tree.body
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for name in _calls(stmt)
    ))
    if top_level_calls:
        functions.append(FunctionRecord(
            name=MODULE_CALLER, class_name=None, line=0, end_line=0, body_line=0,
            calls=top_level_calls[:_MAX_CALLS_PER_FUNCTION],
        ))
    return FileRecord(
        path=path, module=module, classes=tuple(classes), functions=tuple(functions),
        imports=tuple(dict.fromkeys(imports)),
    )


def _blocks(node: ast.If | ast.Try) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    return [node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody]


def _function(
    node: ast.FunctionDef | ast.AsyncFunctionDef, class_name: str | None
) -> FunctionRecord:
    body_line = node.body[0].lineno if node.body else node.lineno
    decorators = tuple(d for d in map(_dotted, node.decorator_list) if d)
    return FunctionRecord(
        name=node.name,
        class_name=class_name,
        line=node.lineno,
        end_line=node.end_lineno or node.lineno,
        body_line=max(body_line, node.lineno + 1),
        decorators=decorators,
        params=_params(node.args, method=class_name is not None, decorators=decorators),
        calls=tuple(dict.fromkeys(_calls(node)))[:_MAX_CALLS_PER_FUNCTION],
    )


def _params(args: ast.arguments, *, method: bool, decorators: tuple[str, ...]) -> tuple[str, ...]:
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method and "staticmethod" not in decorators and names and names[0] in ("self", "cls"):
        names = names[1:]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        names.append("*")
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return tuple(names)


def _calls(node: ast.AST) -> list[str]:
    found: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            name = _last_name(child.func)
            if name:
                found.append(name)
    return found


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # Generic[T] -> Generic
        return _last_name(node.value)
    return ""


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ".".join(reversed(parts))


def _resolve(module: str | None, level: int, package: str) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)
