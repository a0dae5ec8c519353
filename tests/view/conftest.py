"""Every label-view test runs on both stores: the SQLite file and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import view_env


@pytest.fixture(autouse=True, params=["sqlite", "postgres"])
def view_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    backend = str(request.param)
    url = str(request.getfixturevalue("pg_url")) if backend == "postgres" else None
    saved, view_env.DATABASE_URL = view_env.DATABASE_URL, url
    try:
        yield backend
    finally:
        view_env.DATABASE_URL = saved
