"""Which changed files are pages of prose: docs pages and notes, not pip requirements."""

from __future__ import annotations

import pytest

from bot.core.facts import is_prose_page


@pytest.mark.parametrize(("path", "prose"), [
    ("docs/features/batch_invariance.md", True),
    ("README.md", True),
    ("docs/api/index.rst", True),
    ("examples/notes.txt", True),
    ("requirements/common.txt", False),  # a pin changes what runs
    ("requirements-dev.txt", False),
    ("docker/requirements/rocm.txt", False),
    ("vllm/config/scheduler.py", False),
])
def test_a_requirements_file_is_no_prose_page(path: str, prose: bool) -> None:
    assert is_prose_page(path) is prose
