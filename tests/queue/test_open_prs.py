"""The ledger's open-PR records (issue 42) on both backends: stored under their keys,
found by any key, forgotten when closed; storing tells who shared a key, before or now."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.db.migrations import migrate
from bot.db.pool import Database
from bot.queue.ledger import Ledger, LedgerStore
from bot.queue.ledger_pg import PostgresLedger

REPO = "o/r"


@pytest.fixture
def ledger(backend: str, database_target: str) -> Iterator[LedgerStore]:
    if backend == "postgres":
        database = Database(database_target, max_size=2)
        database.open()
        migrate(database_target)
        yield PostgresLedger(database)
        database.close()
    else:
        kept = Ledger(database_target)
        yield kept
        kept.close()


async def test_records_are_found_by_any_key_and_forgotten_when_closed(
    ledger: LedgerStore,
) -> None:
    first = await ledger.record_open_pr(REPO, 1, '{"n": 1}', ["f:a.py", "s:a.py::f"], limit=10)
    assert first.previous is None
    assert first.sharing == []
    second = await ledger.record_open_pr(REPO, 2, '{"n": 2}', ["f:a.py", "i:9"], limit=10)
    assert second.sharing == [1]
    assert await ledger.open_prs_sharing(REPO, ["s:a.py::f", "i:9"], limit=10) == [
        '{"n": 1}', '{"n": 2}']
    assert await ledger.open_prs_sharing(REPO, ["f:b.py"], limit=10) == []
    assert await ledger.open_prs_sharing("o/other", ["f:a.py"], limit=10) == []
    # The same record again changes nothing and names nobody.
    again = await ledger.record_open_pr(REPO, 2, '{"n": 2}', ["f:a.py", "i:9"], limit=10)
    assert again.previous == '{"n": 2}'
    assert again.sharing == []
    # Pushed to other files: who shared its old keys still hears of it.
    moved = await ledger.record_open_pr(REPO, 2, '{"n": 3}', ["f:c.py"], limit=10)
    assert moved.previous == '{"n": 2}'
    assert moved.sharing == [1]
    assert await ledger.open_prs_sharing(REPO, ["f:a.py"], limit=10) == ['{"n": 1}']
    closed = await ledger.record_open_pr(REPO, 1, None, [], limit=10)
    assert closed.previous == '{"n": 1}'
    assert await ledger.open_prs_sharing(REPO, ["f:a.py", "s:a.py::f"], limit=10) == []


async def test_reads_are_bounded(ledger: LedgerStore) -> None:
    for number in range(1, 31):
        await ledger.record_open_pr(REPO, number, f'{{"n": {number}}}', ["f:hot.py"], limit=5)
    assert len(await ledger.open_prs_sharing(REPO, ["f:hot.py"], limit=10)) == 10
    change = await ledger.record_open_pr(REPO, 99, "{}", ["f:hot.py"], limit=5)
    assert len(change.sharing) == 5
