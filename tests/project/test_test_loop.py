"""The test loop stays fast (issue 31): `make test` runs on every core, `make test-fast`
leaves out what starts real processes and the long property tests, and those are
marked so the selection means something."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert found is not None, f"no {target} target"
    return found.group(1)


def test_make_test_runs_every_test_on_every_core() -> None:
    recipe = _recipe("test")
    assert "pytest -n auto" in recipe
    assert "not slow" not in recipe  # CI runs everything, slow and property tests too
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["dev"]
    assert any(dep.startswith("pytest-xdist") for dep in dev)


def test_make_test_fast_leaves_out_slow_and_property_tests() -> None:
    assert '-m "not slow and not property"' in _recipe("test-fast")


def _marked(tree: ast.Module, mark: str) -> bool:
    """A module-level `pytestmark = pytest.mark.<mark>`."""
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and mark in ast.unparse(node.value)
        for node in tree.body
    )


def _uses(tree: ast.AST, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(tree))


def _slow(function: ast.FunctionDef) -> bool:
    return any("mark.slow" in ast.unparse(d) for d in function.decorator_list)


def test_every_test_that_starts_the_service_is_marked_slow() -> None:
    unmarked: list[str] = []
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        if not _uses(tree, "ServiceProcess") or _marked(tree, "slow"):
            continue
        # Not marked as a whole: each function that starts the service must be.
        unmarked.extend(
            f"{path.relative_to(ROOT)}::{node.name}" for node in tree.body
            if isinstance(node, ast.FunctionDef) and _uses(node, "ServiceProcess")
            and not _slow(node))
    assert unmarked == []


def test_the_equivalence_tests_are_marked_property() -> None:
    tree = ast.parse((TESTS / "core/rules/test_engine_equivalence.py").read_text())
    assert _marked(tree, "property")
