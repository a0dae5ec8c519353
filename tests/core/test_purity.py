"""bot/core stays pure and bot/intake stays thin (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
CORE = BOT / "core"
INTAKE = BOT / "intake"
# The ack path must stay thin: verify, persist, 202. Whatever talks to GitHub or runs a
# job belongs to the worker side.
INTAKE_FORBIDDEN = {"bot.handlers", "bot.github", "githubkit", "bot.view", "bot.repo_index"}
FORBIDDEN = {
    "githubkit", "starlette", "httpx", "uvicorn", "asyncio", "anyio", "sqlite3",
    "aiosqlite", "socket", "requests", "urllib", "subprocess", "bot.github", "bot.intake",
    "bot.queue", "bot.handlers", "bot.view", "bot.repo_index", "bot.settings",
    "bot.rulebook", "bot.service", "bot.cli", "bot.observe",
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


def test_intake_imports_no_handler_or_github_code() -> None:
    assert (INTAKE / "app.py").exists()
    offenders = {
        f"{path.relative_to(INTAKE)}: {name}"
        for path in INTAKE.rglob("*.py")
        for name in _imports(ast.parse(path.read_text()))
        if any(name == bad or name.startswith(bad + ".") for bad in INTAKE_FORBIDDEN)
    }
    assert offenders == set()
