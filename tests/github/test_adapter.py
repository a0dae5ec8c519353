"""The real githubkit adapter (auth, pagination, retries) against the fake GitHub server."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import traceback
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from bot.github.pacing import WritePacer
from bot.github.protocol import GitHubError, NotFound, RateLimited, Unprocessable
from bot.github.retry import template_path
from bot.github.session import GitHubSessionFactory
from bot.observe.metrics import Metrics
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory, make_settings
from tests.keys import PRIVATE_KEY_PEM, PUBLIC_KEY_PEM
from tests.tls_loads import count_ca_loads

REPO = "vllm-project/vllm"
TOKENS = "/app/installations/{installation_id}/access_tokens"
PULL = "/repos/{owner}/{repo}/pulls/{number}"
FILES = "/repos/{owner}/{repo}/pulls/{number}/files"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py"], labels=["v1"])
    server.use(s)
    return s


@pytest.fixture
def url(server: FakeGitHubServer, state: FakeGitHubState) -> str:
    return server.url


# --- auth and tokens --------------------------------------------------------


async def test_token_minted_once_for_concurrent_jobs(state: FakeGitHubState, url: str) -> None:
    factory = make_factory(url)

    async def job() -> str:
        async with factory.for_installation(1) as gh:
            return (await gh.get_pull(REPO, 1)).title

    titles = await asyncio.gather(*(job() for _ in range(10)))

    assert titles == ["[Core] Fix"] * 10
    assert state.count("POST", TOKENS) == 1
    assert len(state.tokens) == 1
    assert state.count("GET", PULL) == 10


async def test_jobs_load_no_tls_certificates(
    state: FakeGitHubState, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # httpx loads the CA bundle into a new SSL context per client, holding the GIL
    # ~50 ms each time: several per job, and the webhook acks waited behind them. The
    # factory loads it once, when built at start-up; jobs' clients reuse it.
    factory = make_factory(url)
    loads = count_ca_loads(monkeypatch)
    for _ in range(3):
        async with factory.for_installation(1) as gh:
            assert (await gh.get_pull(REPO, 1)).number == 1
    assert loads == []
    httpx.create_ssl_context()  # what each client did before: the counter sees it
    assert len(loads) == 1


async def test_token_is_minted_again_near_expiry(state: FakeGitHubState, url: str) -> None:
    clock = [datetime.now(UTC)]
    settings = make_settings(url)
    factory = GitHubSessionFactory(settings, Metrics(), now=lambda: clock[0])
    first = await factory.installation_token(1)
    clock[0] += timedelta(minutes=50)  # 10 minutes left of the hour: still fine
    assert await factory.installation_token(1) == first
    clock[0] += timedelta(minutes=6)  # inside the 5-minute margin
    second = await factory.installation_token(1)
    assert second != first
    assert state.count("POST", TOKENS) == 2


async def test_revoked_token_is_replaced_by_the_next_job(state: FakeGitHubState,
                                                        url: str) -> None:
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        await gh.get_pull(REPO, 1)
    state.tokens.clear()  # GitHub revoked it
    with pytest.raises(GitHubError) as info:
        async with factory.for_installation(1) as gh:
            await gh.get_pull(REPO, 1)
    assert info.value.status == 401
    async with factory.for_installation(1) as gh:
        assert (await gh.get_pull(REPO, 1)).number == 1
    assert state.count("POST", TOKENS) == 2


async def test_bot_login_comes_from_get_app_once(state: FakeGitHubState, url: str) -> None:
    factory = make_factory(url)
    assert await factory.bot_login() == "pr-digest[bot]"
    assert await factory.bot_login() == "pr-digest[bot]"
    assert state.count("GET", "/app") == 1


async def test_bot_login_asked_on_two_loops_at_once_is_one_get_app(
    state: FakeGitHubState, url: str
) -> None:
    # At start the credential check (the server's loop) and the worker (its own loop,
    # on a thread) both need the login: one request answers both.
    factory = make_factory(url)
    state.slow_next("GET", "/app", 0.3)
    other_loop = asyncio.to_thread(asyncio.run, factory.bot_login())
    here, there = await asyncio.gather(factory.bot_login(), other_loop)
    assert here == there == "pr-digest[bot]"
    assert state.count("GET", "/app") == 1


async def test_a_failed_get_app_is_every_waiters_error_and_the_next_call_asks_again(
    state: FakeGitHubState, url: str
) -> None:
    factory = make_factory(url)
    state.latency = 0.3  # every answer (under the 0.5 s client timeout): the calls overlap
    state.fail_next("GET", "/app", 404)
    results = await asyncio.gather(
        factory.bot_login(), asyncio.to_thread(asyncio.run, factory.bot_login()),
        return_exceptions=True)
    assert all(isinstance(r, GitHubError) and r.status == 404 for r in results), results
    assert state.count("GET", "/app") == 1
    assert await factory.bot_login() == "pr-digest[bot]"
    assert state.count("GET", "/app") == 2


async def test_a_waiter_giving_up_leaves_the_get_app_to_the_others(
    state: FakeGitHubState, url: str
) -> None:
    factory = make_factory(url)
    state.slow_next("GET", "/app", 0.3)
    first = asyncio.ensure_future(factory.bot_login())
    await asyncio.sleep(0.05)  # the first call's request is in flight
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(factory.bot_login(), 0.05)
    assert await first == "pr-digest[bot]"
    assert state.count("GET", "/app") == 1


async def test_wrong_app_key_is_rejected_without_leaking_it(url: str) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    factory = make_factory(url, private_key=other)
    with pytest.raises(GitHubError) as info:
        async with factory.for_installation(1):
            pass
    assert info.value.status == 401
    assert other.splitlines()[1] not in "".join(traceback.format_exception(info.value))


async def test_for_token_uses_the_plain_token(state: FakeGitHubState, url: str) -> None:
    token, _ = state.issue_token(1)
    factory = make_factory(url, github_token=token, app_id=None, private_key=None)
    async with factory.for_token() as gh:
        assert (await gh.get_pull(REPO, 1)).labels == ("v1",)
    assert state.count("POST", TOKENS) == 0


# --- reads --------------------------------------------------------------------


@pytest.mark.parametrize(("count", "expected", "pages"), [(250, 250, 3), (3200, 3000, 30)])
async def test_list_files_paginates_and_stops_at_cap(
    state: FakeGitHubState, url: str, count: int, expected: int, pages: int
) -> None:
    state.files_cap = None  # serve all of them, to prove the adapter stops by itself
    state.add_pull(REPO, 2, files=[f"pkg/f{i:04}.py" for i in range(count)])
    async with make_factory(url).for_installation(1) as gh:
        files = await gh.list_files(REPO, 2)
    assert len(files) == expected
    assert [f.filename for f in files[:2]] == ["pkg/f0000.py", "pkg/f0001.py"]
    assert files[-1].filename == f"pkg/f{expected - 1:04}.py"
    assert state.count("GET", FILES) == pages


async def test_get_pull_maps_fields(state: FakeGitHubState, url: str) -> None:
    state.add_pull(REPO, 3, title="t", body="b", author="renovate[bot]", author_type="Bot",
                   labels=["ci", "rocm"], base="releases/v0.9", draft=True,
                   files=["a.py", "b.py"], requested_users=["alice"], requested_teams=["core"])
    async with make_factory(url).for_installation(1) as gh:
        pull = await gh.get_pull(REPO, 3)
    assert (pull.title, pull.body, pull.author, pull.author_is_bot) == (
        "t", "b", "renovate[bot]", True)
    assert pull.labels == ("ci", "rocm")
    assert (pull.base_ref, pull.draft, pull.changed_files) == ("releases/v0.9", True, 2)
    assert (pull.requested_users, pull.requested_teams) == (("alice",), ("core",))
    assert pull.head_sha == state.pull(REPO, 3).head_sha


@pytest.mark.parametrize(("permission", "role", "expected"), [
    ("admin", "admin", "admin"), ("write", "maintain", "maintain"), ("write", "write", "write"),
    ("read", "triage", "triage"), ("read", "read", "read"), ("write", "release-bot", "write"),
])
async def test_permission_mapping(state: FakeGitHubState, url: str, permission: str,
                                  role: str, expected: str) -> None:
    state.set_permission(REPO, "someone", permission, role)
    async with make_factory(url).for_installation(1) as gh:
        assert await gh.get_permission(REPO, "someone") == expected
        assert await gh.get_permission(REPO, "stranger") == "none"


async def test_default_branch_file_is_decoded(state: FakeGitHubState, url: str) -> None:
    text = "reviewers:\n  - 名前\n" + "x: 1\n" * 200  # multi-line base64, non-ASCII
    state.add_repo(REPO, files={".github/pr-digest.yml": text})
    async with make_factory(url).for_installation(1) as gh:
        assert await gh.get_default_branch_file(REPO, ".github/pr-digest.yml") == text
        assert await gh.get_default_branch_file(REPO, "missing.yml") is None


async def test_trees_and_blobs_at_a_commit(state: FakeGitHubState, url: str) -> None:
    text = "* @alice\n/docs/ @bob\n" + "# 名前\n" * 100
    base = state.add_commit(REPO, {".github/CODEOWNERS": text, "setup.py": "x = 1\n"})
    async with make_factory(url).for_installation(1) as gh:
        root = {e.path: e for e in await gh.get_tree(REPO, base)}
        assert {name: e.type for name, e in root.items()} == {".github": "tree",
                                                              "setup.py": "blob"}
        inner = await gh.get_tree(REPO, root[".github"].sha)
        assert [(e.path, e.type, e.size) for e in inner] == [
            ("CODEOWNERS", "blob", len(text.encode()))]
        # git's object SHA, so a cache keyed by it is keyed by content
        assert inner[0].sha == hashlib.sha1(
            b"blob %d\0" % len(text.encode()) + text.encode(), usedforsecurity=False
        ).hexdigest()
        assert (await gh.get_blob(REPO, inner[0].sha)).decode() == text
        with pytest.raises(NotFound):
            await gh.get_tree(REPO, "0" * 40)


STATUS = "/repos/{owner}/{repo}/commits/{ref}/status"


async def test_a_heads_combined_status_is_read_100_a_page(state: FakeGitHubState,
                                                         url: str) -> None:
    head = state.pull(REPO, 1).head_sha
    state.set_status(REPO, head, "buildkite/ci/pr", "pending", "Build #9 passed and blocked",
                     "https://buildkite.com/vllm/ci/builds/9")
    for job in range(149):
        state.set_status(REPO, head, f"buildkite/ci/pr/job-{job}",
                         "failure" if job == 7 else "success")
    async with make_factory(url).for_installation(1) as gh:
        combined = await gh.get_combined_status(REPO, head)
        first = await gh.get_combined_status(REPO, head, max_pages=1)
        nothing = await gh.get_combined_status(REPO, "f" * 40)
    assert (combined.state, combined.total_count, combined.complete) == ("failure", 150, True)
    found = {s.context: (s.state, s.description) for s in combined.statuses}
    assert len(found) == 150
    assert found["buildkite/ci/pr"] == ("pending", "Build #9 passed and blocked")
    assert found["buildkite/ci/pr/job-7"] == ("failure", "")  # GitHub's null description
    assert (len(first.statuses), first.complete) == (100, False)
    assert (nothing.state, nothing.statuses, nothing.complete) == ("pending", (), True)
    assert state.count("GET", STATUS) == 2 + 1 + 1


async def test_the_open_pull_whose_head_a_commit_is(state: FakeGitHubState, url: str) -> None:
    head = state.pull(REPO, 1).head_sha
    state.add_pull(REPO, 2, head_sha="2" * 40)
    async with make_factory(url).for_installation(1) as gh:
        assert [p.number for p in await gh.list_pulls_for_commit(REPO, head)] == [1]
        assert await gh.list_pulls_for_commit(REPO, "9" * 40) == []
        with pytest.raises(NotFound):
            await gh.list_pulls_for_commit("vllm-project/other", head)


async def test_reviews_and_open_pulls(state: FakeGitHubState, url: str) -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    state.add_pull(REPO, 10, updated_at=base + timedelta(hours=1))
    state.add_pull(REPO, 11, updated_at=base + timedelta(hours=3))
    state.add_pull(REPO, 12, updated_at=base + timedelta(hours=2), state="closed")
    state.add_review(REPO, 10, "alice")
    state.add_review(REPO, 10, "bob", "CHANGES_REQUESTED")
    state.add_review(REPO, 10, "alice", "COMMENTED")
    async with make_factory(url).for_installation(1) as gh:
        assert await gh.list_reviewers_who_reviewed(REPO, 10) == ["alice", "bob"]
        assert [p.number for p in await gh.list_open_pulls(REPO, limit=2)][:1] == [1]
        numbers = [p.number for p in await gh.list_open_pulls(REPO)]
    assert numbers[0] == 1  # seeded now, so most recently updated
    assert numbers[1:] == [11, 10]


# --- retries and failures ------------------------------------------------------


async def test_502_on_get_is_retried(state: FakeGitHubState, url: str) -> None:
    state.fail_next("GET", PULL, 502, times=2)
    async with make_factory(url).for_installation(1) as gh:
        assert (await gh.get_pull(REPO, 1)).number == 1
    assert state.count("GET", PULL) == 3


async def test_get_gives_up_after_three_tries(state: FakeGitHubState, url: str) -> None:
    state.fail_next("GET", PULL, 503, times=5)
    async with make_factory(url).for_installation(1) as gh:
        with pytest.raises(GitHubError) as info:
            await gh.get_pull(REPO, 1)
    assert info.value.status == 503
    assert state.count("GET", PULL) == 3


async def test_502_on_post_comment_is_not_retried(state: FakeGitHubState, url: str) -> None:
    # GitHub created the comment, then the response was lost.
    state.fail_next("POST", COMMENTS, 502, applied=True)
    async with make_factory(url).for_installation(1) as gh:
        with pytest.raises(GitHubError) as info:
            await gh.create_comment(REPO, 1, "<!-- pr-digest --> digest")
        assert info.value.status == 502
        comments = await gh.list_comments(REPO, 1)
    assert state.count("POST", COMMENTS) == 1
    assert [c.body for c in comments] == ["<!-- pr-digest --> digest"]
    assert state.bot_comments(REPO, 1) == ["<!-- pr-digest --> digest"]


async def test_timeout_retries_get_but_not_post(state: FakeGitHubState, url: str) -> None:
    state.slow_next("GET", PULL, 0.6)
    state.slow_next("POST", COMMENTS, 0.6)
    async with make_factory(url, http_timeout_seconds=0.3).for_installation(1) as gh:
        assert (await gh.get_pull(REPO, 1)).number == 1
        with pytest.raises(GitHubError, match="timed out"):
            await gh.create_comment(REPO, 1, "x")
    await asyncio.sleep(0.5)  # let the slow handlers finish and log themselves
    assert state.count("GET", PULL) == 2  # the slow one, then the retry
    # One POST only; GitHub still created the comment after the client gave up,
    # which is why a write is never retried blind.
    assert state.count("POST", COMMENTS) == 1
    assert state.bot_comments(REPO, 1) == ["x"]


async def test_short_secondary_rate_limit_is_waited_out(state: FakeGitHubState,
                                                        url: str) -> None:
    state.secondary_rate_limit_next("POST", COMMENTS, retry_after=1)
    async with make_factory(url).for_installation(1) as gh:
        started = time.monotonic()
        await gh.create_comment(REPO, 1, "hello")
        elapsed = time.monotonic() - started
    assert elapsed >= 0.95
    assert state.count("POST", COMMENTS) == 2
    assert state.bot_comments(REPO, 1) == ["hello"]


async def test_long_secondary_rate_limit_raises_promptly(state: FakeGitHubState,
                                                         url: str) -> None:
    state.secondary_rate_limit_next("GET", PULL, retry_after=3600)
    async with make_factory(url).for_installation(1) as gh:
        started = time.monotonic()
        with pytest.raises(RateLimited) as info:
            await gh.get_pull(REPO, 1)
    assert time.monotonic() - started < 1.0
    assert info.value.retry_after == 3600
    assert info.value.status == 403


async def test_429_and_exhausted_primary_limit_raise_rate_limited(
    state: FakeGitHubState, url: str
) -> None:
    async with make_factory(url).for_installation(1) as gh:
        state.fail_next("GET", PULL, 429, headers={"Retry-After": "120"})
        with pytest.raises(RateLimited) as info:
            await gh.get_pull(REPO, 1)
        assert (info.value.status, info.value.retry_after) == (429, 120)

        state.fail_next("GET", PULL, 429)  # no Retry-After at all
        with pytest.raises(RateLimited) as info:
            await gh.get_pull(REPO, 1)
        assert info.value.retry_after == 60

        state.rate_limit_remaining = 0
        with pytest.raises(RateLimited) as info:
            await gh.get_pull(REPO, 1)
    assert info.value.retry_after is not None
    assert 3500 < info.value.retry_after <= 3600


async def test_404_and_422(state: FakeGitHubState, url: str) -> None:
    async with make_factory(url).for_installation(1) as gh:
        with pytest.raises(NotFound):
            await gh.get_pull(REPO, 999)
        with pytest.raises(Unprocessable):
            await gh.create_comment(REPO, 1, "x" * 70_000)
        with pytest.raises(NotFound):
            await gh.update_comment(REPO, 123456, "x")
    assert state.comments_on(REPO, 1) == []


async def test_writes_change_state(state: FakeGitHubState, url: str) -> None:
    async with make_factory(url).for_installation(1) as gh:
        comment = await gh.create_comment(REPO, 1, "one")
        await gh.update_comment(REPO, comment.id, "two")
        await gh.add_reaction(REPO, comment.id, "eyes")
        await gh.add_labels(REPO, 1, ["ci", "v1"])
        await gh.remove_label(REPO, 1, "v1")
        await gh.remove_label(REPO, 1, "never-there")  # already gone: fine
        await gh.request_reviewers(REPO, 1, ["alice"], ["core"])
        with pytest.raises(Unprocessable):
            await gh.request_reviewers(REPO, 1, ["contributor"], [])  # the author
    pull = state.pull(REPO, 1)
    assert comment.author == "pr-digest[bot]"
    assert state.bot_comments(REPO, 1) == ["two"]
    assert state.comments[comment.id].reactions == [("pr-digest[bot]", "eyes")]
    assert pull.labels == ["ci"]
    assert (pull.requested_users, pull.requested_teams) == (["alice"], ["core"])
    async with make_factory(url).for_installation(1) as gh:
        await gh.delete_comment(REPO, comment.id)
    assert state.comments_on(REPO, 1) == []


# --- metrics, pacing, secrets -----------------------------------------------------


async def test_metrics_by_templated_endpoint(state: FakeGitHubState, url: str) -> None:
    metrics = Metrics()
    state.add_pull(REPO, 5, files=[f"f{i}" for i in range(150)])
    state.fail_next("GET", PULL, 502)
    async with make_factory(url, metrics).for_installation(7 - 6) as gh:
        await gh.list_files(REPO, 5)
        await gh.get_pull(REPO, 5)

    def calls(endpoint: str, status: str) -> float | None:
        return metrics.registry.get_sample_value(
            "digest_github_calls_total", {"endpoint": endpoint, "status": status})

    assert calls(f"GET {FILES}", "200") == 2
    assert calls(f"GET {PULL}", "502") == 1
    assert calls(f"GET {PULL}", "200") == 1
    assert calls(f"POST {TOKENS}", "201") == 1
    remaining = metrics.registry.get_sample_value(
        "digest_github_rate_limit_remaining", {"installation": "1"})
    assert remaining == state.rate_limit_remaining


def test_template_path_bounds_cardinality() -> None:
    assert template_path("/repos/a/b/issues/comments/99/reactions") == (
        "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions")
    assert template_path("/api/v3/repos/a/b/pulls/1", "/api/v3/") == PULL
    assert template_path("/users/someone") == "other"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


async def test_pacer_spaces_writes() -> None:
    clock = FakeClock()
    pacer = WritePacer(1.0, 80, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        await pacer.acquire()
    assert clock.sleeps == [1.0, 1.0]
    clock.now += 5.0  # idle long enough: no wait
    await pacer.acquire()
    assert clock.sleeps == [1.0, 1.0]


async def test_pacer_caps_writes_per_minute() -> None:
    clock = FakeClock()
    pacer = WritePacer(0.0, 3, clock=clock, sleep=clock.sleep)
    for _ in range(4):
        await pacer.acquire()
    assert clock.sleeps == [60.0]
    assert clock.now == 160.0


async def test_adapter_writes_are_paced(state: FakeGitHubState, url: str) -> None:
    factory = make_factory(url, write_interval_seconds=0.1)
    async with factory.for_installation(1) as gh:
        started = time.monotonic()
        for i in range(4):
            await gh.create_comment(REPO, 1, f"c{i}")
        elapsed = time.monotonic() - started
    assert elapsed >= 0.3


async def test_no_secret_in_errors_or_logs(state: FakeGitHubState, url: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    errors: list[BaseException] = []
    state.fail_next("GET", PULL, 502)
    state.secondary_rate_limit_next("GET", FILES, retry_after=3600)
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        await gh.get_pull(REPO, 1)
        for call in (gh.list_files(REPO, 1), gh.get_pull(REPO, 404),
                     gh.create_comment(REPO, 1, "x" * 70_000)):
            try:
                await call
            except GitHubError as exc:
                errors.append(exc)
    assert len(errors) == 3
    secrets = [*state.tokens, *PRIVATE_KEY_PEM.splitlines()[1:4], "Bearer ", "eyJ"]
    texts = ["".join(traceback.format_exception(e)) for e in errors] + [
        r.getMessage() + (r.exc_text or "") for r in caplog.records]
    texts += [repr(e) for e in errors]
    assert caplog.records  # the retry was logged
    for secret in secrets:
        assert not any(secret in text for text in texts), secret


# --- compare ----------------------------------------------------------------

COMPARE = "/repos/{owner}/{repo}/compare/{basehead}"


async def test_commits_ahead_reads_ahead_by_from_one_small_page(state: FakeGitHubState,
                                                                url: str) -> None:
    base = "e" * 40
    state.repos[REPO].base_moved[base] = 412
    async with make_factory(url).for_installation(1) as gh:
        assert await gh.commits_ahead(REPO, base, "main") == 412
        assert await gh.commits_ahead(REPO, "f" * 40, "main") == 0
        with pytest.raises(NotFound):
            await gh.commits_ahead(REPO, base, "no-such-branch")
        # A body without the count is a mismatch, never a guessed 0.
        state.fail_next("GET", COMPARE, 200, body={"status": "ahead", "behind_by": 0})
        with pytest.raises(GitHubError):
            await gh.commits_ahead(REPO, base, "main")
    calls = [c for c in state.calls if c.route == COMPARE]
    assert calls[0].path == f"/repos/{REPO}/compare/{base}...main"
    assert calls[0].query == "per_page=1"
