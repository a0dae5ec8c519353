"""`open_store` and `query` on both backends: each test using them runs twice."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.db.pool import Database
from bot.queue.store import SqliteJobStore
from bot.queue.store_pg import PostgresJobStore
from tests.queue.store_backends import AnyStore, OpenStore, Query


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The SQLite file or the PostgreSQL URL every store of this test opens."""
    if backend == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "jobs.db")


@pytest.fixture
def open_store(backend: str, database_target: str) -> Iterator[OpenStore]:
    opened: list[AnyStore] = []

    def open_one(**options: Any) -> AnyStore:
        store: AnyStore
        if backend == "postgres":
            database = Database(database_target, max_size=4)
            database.open()
            from bot.db.migrations import migrate

            migrate(database_target)
            store = PostgresJobStore(database, owns_database=True, **options)
        else:
            store = SqliteJobStore(database_target, **options)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def query(backend: str, database_target: str) -> Query:
    def run(sql: str) -> list[tuple[Any, ...]]:
        if backend == "postgres":
            import psycopg

            with psycopg.connect(database_target) as conn:
                return list(conn.execute(sql).fetchall())
        with sqlite3.connect(database_target) as conn:
            return list(conn.execute(sql).fetchall())

    return run
