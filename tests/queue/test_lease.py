"""A job's lease fences its GitHub writes (issue 38, item 1): the real adapter against the
fake GitHub, the fence a real job store's. A run that lost its lease, or was paused past
it after the store last confirmed it, sends no write at all."""

from __future__ import annotations

import pytest

from bot.github.fence import LeaseLost, fenced
from bot.queue.lease import JobLease
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM
from tests.queue.store_backends import Clock

REPO = "vllm-project/vllm"
LEASE = 60.0
WRITES = ("POST", "PATCH", "PUT", "DELETE")


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py"])
    server.use(s)
    return s


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: object, clock: Clock) -> SqliteJobStore:
    return SqliteJobStore(":memory:", clock=clock, settle_seconds=0.0, lease_seconds=LEASE)


async def _claimed(store: SqliteJobStore) -> Job:
    await store.enqueue(NewJob(kind="pr", key=pr_key(REPO, 1), installation_id=1, repo=REPO,
                               number=1))
    job = await store.claim()
    assert job is not None
    return job


def _writes(state: FakeGitHubState) -> list[str]:
    return [f"{c.method} {c.route}" for c in state.calls
            if c.method in WRITES and "access_tokens" not in c.route]


async def test_a_run_that_holds_its_lease_writes_and_one_that_lost_it_does_not(
    state: FakeGitHubState, server: FakeGitHubServer, store: SqliteJobStore, clock: Clock,
) -> None:
    first = await _claimed(store)
    lease = JobLease(store, first, LEASE, clock=clock)
    async with make_factory(server.url).for_installation(1) as gh:
        with fenced(lease):
            comment = await gh.create_comment(REPO, 1, "held")
        clock.now += LEASE + 1
        assert await store.release_expired_leases() == 1
        second = await store.claim()
        assert second is not None
        with fenced(lease):
            with pytest.raises(LeaseLost):
                await gh.update_comment(REPO, comment.id, "stale")
            # Lost for good: no later write of this run is even asked about.
            with pytest.raises(LeaseLost):
                await gh.create_comment(REPO, 1, "stale")
            with pytest.raises(LeaseLost):
                await gh.add_labels(REPO, 1, ["stale"])
            # Reads go on (the run is being stopped; nothing it reads is written).
            assert (await gh.get_pull(REPO, 1)).number == 1
        with fenced(JobLease(store, second, LEASE, clock=clock)):
            await gh.update_comment(REPO, comment.id, "current")
    assert lease.lost
    assert _writes(state) == ["POST /repos/{owner}/{repo}/issues/{number}/comments",
                              "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"]
    assert [c.body for c in state.comments_on(REPO, 1)] == ["current"]


class _PausedAfterAnswer(SqliteJobStore):
    """The store confirms the lease, then the process is stopped for `pause` seconds
    before the request goes out (SIGSTOP: the monotonic clock runs on meanwhile)."""

    def __init__(self, monotonic: Clock, pause: float, **options: object) -> None:
        super().__init__(":memory:", **options)  # type: ignore[arg-type]
        self._monotonic = monotonic
        self._pause = pause

    async def fence(self, job_id: int, generation: int, now: float | None = None) -> bool:
        held = await super().fence(job_id, generation, now)
        self._monotonic.now += self._pause
        return held


@pytest.mark.parametrize(("pause", "sent"), [(LEASE * 0.5, True), (LEASE, False)])
async def test_a_pause_between_the_confirmation_and_the_send_is_caught_before_sending(
    state: FakeGitHubState, server: FakeGitHubServer, clock: Clock, pause: float, sent: bool,
) -> None:
    monotonic = Clock(0.0)
    store = _PausedAfterAnswer(monotonic, pause, clock=clock, settle_seconds=0.0,
                               lease_seconds=LEASE)
    job = await _claimed(store)
    lease = JobLease(store, job, LEASE, clock=clock, monotonic=monotonic)
    async with make_factory(server.url).for_installation(1) as gh:
        with fenced(lease):
            if sent:
                await gh.create_comment(REPO, 1, "in time")
            else:
                with pytest.raises(LeaseLost):
                    await gh.create_comment(REPO, 1, "too late")
    assert len(_writes(state)) == (1 if sent else 0)
    assert lease.lost is not sent
