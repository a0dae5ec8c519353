"""bot/core stays pure, bot/intake stays thin, and the packages import only downwards:
the table "Where things live" in docs/architecture.md, checked here (issue 24)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
CORE = BOT / "core"
INTAKE = BOT / "intake"
# The ack path must stay thin: verify, persist, 202. Whatever talks to GitHub or runs a
# job belongs to the worker side.
INTAKE_FORBIDDEN = {"bot.handlers", "bot.github", "githubkit", "bot.view", "bot.repo_index"}
FORBIDDEN = {
    "githubkit", "starlette", "httpx", "uvicorn", "asyncio", "anyio", "sqlite3",
    "aiosqlite", "socket", "requests", "urllib", "subprocess",
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
    # The core imports nothing of the service: of bot, only bot.core.
    if (module == "bot" or module.startswith("bot.")) and not module.startswith("bot.core"):
        return True
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


# What each package may import of bot (docs/architecture.md, "Where things live").
# bot.core.* counts as bot.core here; the core's own floors are below.
MAY_IMPORT: dict[str, set[str]] = {
    "bot.__main__": {"bot.cli"},
    "bot.cli": {"bot.core", "bot.db", "bot.github", "bot.handlers", "bot.observe",
                "bot.queue", "bot.repo_index", "bot.rulebook", "bot.service", "bot.settings",
                "bot.view", "bot.writer"},
    "bot.service": {"bot.core", "bot.db", "bot.github", "bot.handlers", "bot.intake",
                    "bot.observe", "bot.queue", "bot.repo_index", "bot.rulebook",
                    "bot.settings", "bot.view", "bot.writer"},
    "bot.view": {"bot.core", "bot.db", "bot.github", "bot.handlers", "bot.queue",
                 "bot.settings"},
    "bot.handlers": {"bot.core", "bot.github", "bot.observe", "bot.queue", "bot.repo_index",
                     "bot.settings", "bot.writer"},
    # The writer's client (issue 41): the OpenAI-compatible endpoint, nothing of GitHub.
    "bot.writer": {"bot.core", "bot.net", "bot.observe", "bot.settings"},
    "bot.repo_index": {"bot.core", "bot.github"},
    "bot.intake": {"bot.observe", "bot.queue", "bot.settings"},
    "bot.queue": {"bot.db", "bot.github", "bot.observe", "bot.settings"},
    "bot.db": set(),
    "bot.github": {"bot.core", "bot.net", "bot.observe", "bot.settings"},
    "bot.rulebook": {"bot.core"},
    "bot.observe": set(),
    # One TLS context for every outbound client (loaded once, at start-up).
    "bot.net": set(),
    "bot.settings": set(),
    "bot.core": set(),
}
# Inside the core: its top modules and packages, from the ground floor up.
CORE_MAY_IMPORT: dict[str, set[str]] = {
    "facts": set(),
    "vocabulary": set(),
    "label_view": {"vocabulary"},
    "pr_object": {"facts"},
    "routing": {"vocabulary"},
    # The repository's own config files (.buildkite, CODEOWNERS, mergify, PR template).
    "repo_config": {"facts", "findings", "reading", "routing", "rules", "vocabulary"},
    "reading": {"facts", "vocabulary"},
    "repo_index": {"facts", "reading"},
    # The PR among the other open PRs (issue 42).
    "neighbours": {"facts", "reading", "vocabulary"},
    "findings": {"neighbours", "reading", "repo_index", "vocabulary"},
    "commands": {"vocabulary"},
    "rules": {"facts", "reading", "routing", "vocabulary"},
    # findings: the CI plan (relevant-ci-not-run judges how its steps fared). label_view:
    # the triage fields the label view stores (judging/triage.py).
    "judging": {"facts", "findings", "label_view", "reading", "rules", "vocabulary"},
    # The language-model writer (issue 41): the packet from the digest's data, the
    # request, the verification of a reply. Pure, like the rest.
    "writer": {"facts", "findings", "reading", "repo_index", "vocabulary"},
    # Only rendering words the findings: no stage before it imports it.
    "render": {"commands", "findings", "neighbours", "reading", "repo_index", "vocabulary",
               "writer"},
    "digest": {"facts", "findings", "judging", "neighbours", "reading", "repo_config",
               "repo_index", "routing", "rules", "vocabulary"},
}


def _module_of(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str:
    """bot.X for the service's packages, bot.core for the whole core."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _core_room(module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def _edges(room: Callable[[str], str], files: Iterable[Path]) -> dict[tuple[str, str], str]:
    """(importing room, imported room) -> one place it happens."""
    found: dict[tuple[str, str], str] = {}
    for path in files:
        source = room(_module_of(path))
        for name in _imports(ast.parse(path.read_text())):
            if name == "bot" or name.startswith("bot."):
                target = room(name)
                if target != source:
                    found.setdefault((source, target), f"{path.relative_to(BOT.parent)}: {name}")
    return found


def test_bot_holds_only_packages_at_its_top() -> None:
    loose = {p.name for p in BOT.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert loose == set()


def test_the_core_top_holds_only_the_digest_and_its_shared_words() -> None:
    top = {p.stem for p in CORE.glob("*.py")} - {"__init__"}
    assert top <= {"digest", "facts", "findings", "vocabulary", "pr_object", "label_view"}


def test_only_rendering_imports_rendering() -> None:
    """The stages before rendering return data; only bot/core/render/ chooses words
    (and escapes). Outside the core, whoever shows a digest may import it."""
    offenders = sorted(
        f"{path.relative_to(CORE)}: {name}"
        for path in CORE.rglob("*.py")
        if path.relative_to(CORE).parts[0] != "render"
        for name in _imports(ast.parse(path.read_text()))
        if name == "bot.core.render" or name.startswith("bot.core.render.")
    )
    assert offenders == []


def test_every_package_imports_only_what_the_table_allows() -> None:
    edges = _edges(_room, BOT.rglob("*.py"))
    assert {room for room, _ in edges} <= set(MAY_IMPORT)
    offenders = sorted(where for (source, target), where in edges.items()
                       if target not in MAY_IMPORT.get(source, set()))
    assert offenders == []


def test_the_core_imports_only_downwards() -> None:
    edges = _edges(_core_room, CORE.rglob("*.py"))
    offenders = sorted(where for (source, target), where in edges.items()
                       if target not in CORE_MAY_IMPORT.get(source, set()))
    assert offenders == []


def _has_cycle(graph: dict[str, set[str]]) -> bool:
    done: set[str] = set()
    path: set[str] = set()

    def visit(node: str) -> bool:
        if node in path:
            return True
        if node in done:
            return False
        path.add(node)
        found = any(visit(n) for n in graph.get(node, ()))
        path.discard(node)
        done.add(node)
        return found

    return any(visit(node) for node in graph)


def test_the_tables_themselves_have_no_cycle() -> None:
    assert not _has_cycle(MAY_IMPORT)
    assert not _has_cycle(CORE_MAY_IMPORT)
    assert _has_cycle({"a": {"b"}, "b": {"a"}})  # the check can fail
