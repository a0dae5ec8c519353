"""The writer's cache and token budget (bot/queue/writer_cache.py), on both backends:
a packet's result is shared, one claim wins, failures and old entries expire, and the
hour's budget is shared and refuses what does not fit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from bot.db.pool import Database
from bot.queue.ledger import Ledger
from bot.queue.writer_cache import (
    WRITING,
    CachedWriting,
    WriterCache,
    WriterCacheStore,
    WritingKey,
    writer_schema,
)
from bot.queue.writer_cache_pg import PostgresWriterCache
from tests.queue.store_backends import Clock

KEY = WritingKey("ab" * 32, "Qwen/Qwen3-8B", "w1")


class OpenCache(Protocol):
    def __call__(self, max_entries: int = 1000) -> WriterCacheStore: ...


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def open_cache(backend: str, database_target: str, clock: Clock) -> Iterator[OpenCache]:
    """Opens another cache on the test's one database: another replica."""
    closers: list[Callable[[], None]] = []

    def open_one(max_entries: int = 1000) -> WriterCacheStore:
        if backend == "postgres":
            from bot.db.migrations import migrate

            migrate(database_target)
            database = Database(database_target, max_size=2)
            database.open()
            closers.append(database.close)
            return PostgresWriterCache(database, clock=clock, max_entries=max_entries)
        writer_schema(database_target)
        ledger = Ledger(database_target)
        closers.append(ledger.close)
        return WriterCache(ledger.writer, clock=clock, max_entries=max_entries)

    yield open_one
    for close in closers:
        close()


def _ok(at: float, tokens: int = 900) -> CachedWriting:
    return CachedWriting("ok", '{"status": "ok"}', tokens, at)


async def test_a_result_is_shared_by_replicas_until_it_expires(
    open_cache: OpenCache, clock: Clock
) -> None:
    one, two = open_cache(), open_cache()
    assert await one.get(KEY) is None
    await one.put(KEY, _ok(clock.now), keep_seconds=100.0)
    assert await two.get(KEY) == _ok(clock.now)
    other_model = WritingKey(KEY.packet_sha256, "other", KEY.prompt_version)
    other_prompt = WritingKey(KEY.packet_sha256, KEY.model, "w2")
    assert await two.get(other_model) is None
    assert await two.get(other_prompt) is None
    clock.now += 100.0
    assert await two.get(KEY) is None


async def test_one_claim_wins_and_a_stale_claim_can_be_taken_again(
    open_cache: OpenCache, clock: Clock
) -> None:
    one, two = open_cache(), open_cache()
    wins = await asyncio.gather(one.claim(KEY, 30.0), two.claim(KEY, 30.0))
    assert sorted(wins) == [False, True]
    seen = await two.get(KEY)
    assert seen is not None
    assert seen.status == WRITING
    clock.now += 31.0  # the claimer died mid-call: its claim runs out
    assert await two.claim(KEY, 30.0)
    await two.put(KEY, _ok(clock.now), keep_seconds=100.0)
    assert not await one.claim(KEY, 30.0)  # a result is there: nothing to write


async def test_the_hour_budget_is_shared_and_refuses_what_does_not_fit(
    open_cache: OpenCache, clock: Clock
) -> None:
    one, two = open_cache(), open_cache()
    assert await one.spend(600, per_hour=1000)
    assert not await two.spend(600, per_hour=1000)
    await one.settle(600, 300)  # the call used less than it reserved
    assert await two.spend(600, per_hour=1000)
    assert not await one.spend(200, per_hour=1000)
    clock.now += 3601.0
    assert await one.spend(1000, per_hour=1000)


async def test_concurrent_reservations_never_overspend(open_cache: OpenCache) -> None:
    caches = [open_cache() for _ in range(2)]
    granted = await asyncio.gather(*(
        caches[i % 2].spend(100, per_hour=500) for i in range(12)))
    assert sum(granted) == 5


async def test_the_cache_stays_bounded(open_cache: OpenCache, clock: Clock) -> None:
    cache = open_cache(max_entries=3)
    keys = [WritingKey(f"{n:064x}", "m", "w1") for n in range(5)]
    for key in keys:
        clock.now += 1.0
        await cache.put(key, _ok(clock.now), keep_seconds=1000.0)
    kept = [key for key in keys if await cache.get(key) is not None]
    assert kept == keys[-3:]


def test_sqlite_schema_is_created_beside_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "digest.db"
    writer_schema(path)
    writer_schema(path)  # idempotent: every start runs it
    assert path.exists()
