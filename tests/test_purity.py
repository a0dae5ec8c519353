"""bot/core must stay pure: no I/O libraries, no asyncio (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "bot" / "core"
FORBIDDEN = {
    "githubkit", "starlette", "httpx", "uvicorn", "asyncio", "anyio", "sqlite3",
    "aiosqlite", "socket", "requests", "urllib", "subprocess", "bot.github", "bot.store",
    "bot.app", "bot.handlers", "bot.settings", "bot.rules_files", "bot.sqlite_writer",
    "bot.ledger", "bot.jobs", "bot.processor", "bot.service",
}
FORBIDDEN_CALLS = {"open", "input", "print"}


def _imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def _is_forbidden(module: str) -> bool:
    return any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN)


def test_core_imports_no_io_library() -> None:
    offenders = {
        f"{path.relative_to(CORE)}: {name}"
        for path in CORE.rglob("*.py")
        for name in _imports(ast.parse(path.read_text()))
        if _is_forbidden(name)
    }
    assert offenders == set()


def test_core_calls_no_builtin_io() -> None:
    offenders = {
        f"{path.relative_to(CORE)}:{node.lineno}"
        for path in CORE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FORBIDDEN_CALLS
    }
    assert offenders == set()


def test_the_check_itself_catches_an_offender() -> None:
    tree = ast.parse("import asyncio\nfrom githubkit import GitHub\nimport bot.github.adapter\n")
    assert [n for n in _imports(tree) if _is_forbidden(n)] == [
        "asyncio", "githubkit", "bot.github.adapter",
    ]
