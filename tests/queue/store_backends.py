"""The job store on either backend, for the contract tests (fixtures in conftest.py)."""

from __future__ import annotations

from typing import Any, Protocol

from bot.queue.store import SqliteJobStore
from bot.queue.store_pg import PostgresJobStore

AnyStore = SqliteJobStore | PostgresJobStore


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class OpenStore(Protocol):
    """Opens another store on the test's one database (a restart, or another replica)."""

    def __call__(self, **options: Any) -> AnyStore: ...


class Query(Protocol):
    """Rows of a plain SELECT, read straight from the test's database."""

    def __call__(self, sql: str) -> list[tuple[Any, ...]]: ...
