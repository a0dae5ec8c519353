"""Fixtures shared by the test modules that run the real adapter over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHubServer]:
    """One fake GitHub server per module; each test swaps in its state with `use`."""
    running = FakeGitHubServer(FakeGitHubState())
    with running:
        yield running
