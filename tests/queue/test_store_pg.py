"""The PostgreSQL store as several replicas share it: two stores (two pools, as two
processes have) on one database, racing on the same deliveries, PRs and jobs."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest

from bot.db.migrations import MIGRATIONS, migrate, schema_status
from bot.db.pool import Database, DatabaseUnreachable
from bot.db.url import redact_url
from bot.queue.store import Delivery, NewJob, StoreUnavailable, command_key, pr_key
from bot.queue.store_pg import PostgresJobStore
from tests.queue.store_backends import Clock

REPO = "vllm-project/vllm"


def pr_job(number: int, action: str = "opened") -> NewJob:
    return NewJob(kind="pr", key=pr_key(REPO, number), installation_id=1, repo=REPO,
                  number=number, payload={"actions": [action]})


def replica(url: str, clock: Clock, *, settle_seconds: float = 0.0,
            lease_seconds: float = 60.0, acquire_timeout: float = 5.0) -> PostgresJobStore:
    database = Database(url, max_size=4, acquire_timeout_seconds=acquire_timeout)
    database.open()
    return PostgresJobStore(database, clock=clock, owns_database=True,
                            settle_seconds=settle_seconds, lease_seconds=lease_seconds)


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[PostgresJobStore, PostgresJobStore, Clock]]:
    migrate(pg_url)
    clock = Clock()
    a = replica(pg_url, clock, settle_seconds=0.0, lease_seconds=60.0)
    b = replica(pg_url, clock, settle_seconds=0.0, lease_seconds=60.0)
    yield a, b, clock
    a.close()
    b.close()


def on_own_loops(*calls: object) -> list[object]:
    """Each coroutine function on its own thread and event loop, started together (as
    two processes would run them)."""
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(asyncio.run, call()) for call in calls]  # type: ignore[operator]
        return [f.result() for f in futures]


def test_the_same_delivery_at_two_replicas_at_once_is_one_job(
    replicas: tuple[PostgresJobStore, PostgresJobStore, Clock],
) -> None:
    a, b, _ = replicas
    deliveries = [Delivery(delivery_id=f"d-{i}", event="pull_request", action="opened")
                  for i in range(40)]

    def send_all(store: PostgresJobStore) -> object:
        async def run() -> list[tuple[str, int]]:
            results = await asyncio.gather(*(
                store.accept_delivery(d, pr_job(100 + i)) for i, d in enumerate(deliveries)))
            return [(r.outcome, r.job_id) for r in results]
        return run

    first, second = on_own_loops(send_all(a), send_all(b))
    assert isinstance(first, list)
    assert isinstance(second, list)
    for mine, theirs in zip(first, second, strict=True):
        assert sorted([mine[0], theirs[0]]) == ["accepted", "duplicate"]
        assert mine[1] == theirs[1]
    jobs = asyncio.run(a.list_jobs())
    assert len(jobs) == 40
    assert sorted(job.number or 0 for job in jobs) == list(range(100, 140))


def test_two_replicas_merge_one_prs_events_into_one_pending_job(
    replicas: tuple[PostgresJobStore, PostgresJobStore, Clock],
) -> None:
    a, b, _ = replicas

    def events(store: PostgresJobStore, action: str) -> object:
        async def run() -> set[int]:
            return set(await asyncio.gather(*(
                store.enqueue(pr_job(7 + i % 3, action)) for i in range(30))))
        return run

    ids_a, ids_b = on_own_loops(events(a, "edited"), events(b, "labeled"))
    assert ids_a == ids_b
    jobs = asyncio.run(a.list_jobs())
    assert sorted(job.number or 0 for job in jobs) == [7, 8, 9]
    assert all(set(job.payload["actions"]) == {"edited", "labeled"} for job in jobs)


def test_two_replicas_never_run_two_jobs_of_one_pr(
    replicas: tuple[PostgresJobStore, PostgresJobStore, Clock],
) -> None:
    a, b, clock = replicas

    async def fill() -> None:
        for number in range(1, 9):
            await a.enqueue(pr_job(number))
            await a.enqueue(NewJob(kind="command", key=command_key(REPO, number, "x"),
                                   installation_id=1, repo=REPO, number=number,
                                   payload={"body": "/digest"}))

    asyncio.run(fill())

    def claim_all(store: PostgresJobStore) -> object:
        async def run() -> list[int]:
            got: list[int] = []
            while (job := await store.claim(clock.now + 1)) is not None:
                got.append(job.number or 0)
            return got
        return run

    claimed_a, claimed_b = on_own_loops(claim_all(a), claim_all(b))
    assert isinstance(claimed_a, list)
    assert isinstance(claimed_b, list)
    running = claimed_a + claimed_b
    # One job of each PR runs; each PR's other job waits for it.
    assert sorted(running) == list(range(1, 9))
    counts = asyncio.run(a.counts())
    assert (counts["running"], counts["queued"]) == (8, 8)


def test_a_starting_replica_leaves_a_live_replicas_running_job_alone(
    replicas: tuple[PostgresJobStore, PostgresJobStore, Clock],
) -> None:
    a, b, clock = replicas

    async def scenario() -> None:
        await a.enqueue(pr_job(7))
        job = await a.claim(clock.now + 1)
        assert job is not None
        # b starts while a runs the job: nothing of a's is taken away...
        assert await b.recover_orphans() == 0
        assert await b.claim(clock.now + 1) is None
        # ...until a stops renewing the lease (it died): then b runs the job.
        clock.now += 62
        assert await b.release_expired_leases() == 1
        again = await b.claim()
        assert again is not None
        assert (again.id, again.attempts) == (job.id, 1)
        assert not await a.complete(job.id, attempts=job.attempts)  # the dead run's word
        assert await b.complete(again.id, attempts=again.attempts)

    asyncio.run(scenario())


def test_replicas_starting_together_apply_each_migration_once(pg_url: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        applied = list(pool.map(lambda _: [m.version for m in migrate(pg_url)], range(4)))
    assert sorted(v for run in applied for v in run) == [m.version for m in MIGRATIONS]
    status = schema_status(pg_url)
    assert status.current == MIGRATIONS[-1].version
    assert status.pending == ()
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_a_fresh_database_reports_every_migration_pending(pg_url: str) -> None:
    status = schema_status(pg_url)
    assert status.current == 0
    assert [m.version for m in status.pending] == [m.version for m in MIGRATIONS]


def test_bad_credentials_or_host_are_one_line_with_the_password_hidden(pg_url: str) -> None:
    port = pg_url.split("@localhost:")[1].split("/")[0]
    host = pg_url.split("host=")[1]
    wrong_user = f"postgresql://nobody-here:s3cretPassw0rd@localhost:{port}/postgres?host={host}"
    with pytest.raises(DatabaseUnreachable) as caught:
        Database(wrong_user).open()
    line = caught.value.line
    assert "\n" not in line
    assert "s3cretPassw0rd" not in line
    assert line.startswith("DIGEST_DATABASE_URL=postgresql://nobody-here:***@localhost")
    assert "nobody-here" in line
    assert "cannot connect" in line

    closed = "postgresql://digest:hunter2hunter2@127.0.0.1:1/db"
    with pytest.raises(DatabaseUnreachable) as caught:
        Database(closed).open()
    assert "hunter2" not in caught.value.line
    assert "127.0.0.1" in caught.value.line


def test_redact_url_hides_passwords_in_userinfo_and_query() -> None:
    assert redact_url("postgresql://u:p%40ss@db:5432/x?sslmode=require") == (
        "postgresql://u:***@db:5432/x?sslmode=require")
    assert redact_url("postgresql://db/x?user=u&password=pw") == (
        "postgresql://db/x?user=u&password=***")
    assert redact_url("postgresql://u@db/x") == "postgresql://u@db/x"


def test_ping_fails_once_the_database_is_gone(pg_url: str) -> None:
    migrate(pg_url)
    # No connection can be made any more: the call gives up after the acquire timeout.
    store = replica(pg_url, Clock(), acquire_timeout=1.0)
    try:
        asyncio.run(store.ping())
        name = urlsplit(pg_url).path.lstrip("/")
        admin = pg_url.replace(f"/{name}?", "/postgres?")
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        with pytest.raises(StoreUnavailable):
            asyncio.run(store.ping())
    finally:
        store.close()


@pytest.mark.parametrize(("old", "new"), [
    ({"actions": ["opened"], "labels": []}, {"actions": ["labeled"], "labels": ["ci"]}),
    ({"actions": ["opened", "labeled"], "labels": ["ci"]},
     {"actions": ["labeled"], "labels": ["ci", "docs", "ci"]}),
    ({"sha": "a", "state": "pending"}, {"sha": "b", "state": "failure"}),
    ({"sha": "a", "n": 1, "flag": True}, {"n": 2, "extra": None}),
    ({"actions": "x"}, {"actions": ["y"]}),
])
def test_the_acks_sql_merge_agrees_with_merge_payloads(
    pg_url: str, old: dict[str, object], new: dict[str, object],
) -> None:
    import json

    from bot.queue.store import merge_payloads

    migrate(pg_url)
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT digest_merge_payload(%s, %s)",
                           (json.dumps(old), json.dumps(new))).fetchone()
    assert row is not None
    assert json.loads(row[0]) == merge_payloads(old, new)
    if merge_payloads(old, new) == old:
        assert row[0] == json.dumps(old)  # unchanged: the stored text is kept


def test_a_payload_postgresqls_json_refuses_is_acked_the_careful_way(
    replicas: tuple[PostgresJobStore, PostgresJobStore, Clock],
) -> None:
    a, _, _ = replicas
    odd = ["nul\x00label", "lone\ud800surrogate"]

    async def scenario() -> list[str]:
        first = await a.accept_delivery(Delivery(delivery_id="x-1", event="pull_request"),
                                        pr_job(5))
        # In one tick with another delivery: one batch, which the odd payload fails as a
        # whole; each is then taken on its own.
        second, other = await asyncio.gather(
            a.accept_delivery(
                Delivery(delivery_id="x-2", event="pull_request", action="labeled"),
                NewJob(kind="pr", key=pr_key(REPO, 5), installation_id=1, repo=REPO,
                       number=5, payload={"actions": ["labeled"], "labels": odd})),
            a.accept_delivery(Delivery(delivery_id="x-3", event="pull_request"), pr_job(6)))
        assert (first.outcome, second.outcome, other.outcome) == ("accepted",) * 3
        assert other.job_id != first.job_id
        assert first.job_id == second.job_id
        job = await a.get(first.job_id)
        assert job is not None
        again = await a.accept_delivery(Delivery(delivery_id="x-2", event="pull_request"),
                                        pr_job(5))
        assert again.outcome == "duplicate"
        return list(job.payload["labels"])

    assert asyncio.run(scenario()) == odd


def test_connections_the_server_closed_are_replaced_not_failed(pg_url: str) -> None:
    migrate(pg_url)
    store = replica(pg_url, Clock())
    try:
        asyncio.run(store.ping())
        # Every connection of the pool is cut, as a database restart or failover does.
        name = urlsplit(pg_url).path.lstrip("/")
        admin = pg_url.replace(f"/{name}?", "/postgres?")
        with psycopg.connect(admin, autocommit=True) as conn:
            cut = conn.execute("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                               " WHERE datname = %s", (name,)).fetchone()
        assert cut is not None
        assert cut[0] >= 1
        asyncio.run(store.ping())
        job_id = asyncio.run(store.enqueue(pr_job(3)))
        assert asyncio.run(store.get(job_id)) is not None
    finally:
        store.close()
