"""Fixtures shared by the test modules that run the real adapter over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.pg_cluster import Cluster, missing_postgres, running_cluster


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHubServer]:
    """One fake GitHub server per module; each test swaps in its state with `use`."""
    running = FakeGitHubServer(FakeGitHubState())
    with running:
        yield running


@pytest.fixture(autouse=True)
def _private_user_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`digest-bot digest` caches compiled rules in the user's cache dir
    (bot/rulebook/cache.py): tests, and the processes they start, use a fresh one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster | None]:
    """One throwaway PostgreSQL cluster per test process (tests/pg_cluster.py)."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Cluster | None) -> str:
    """A fresh, empty database on the throwaway cluster; skips loudly (fails under
    CI=true) when PostgreSQL is not installed."""
    if pg_cluster is None:
        missing_postgres()
    assert pg_cluster is not None
    return pg_cluster.create_database()
