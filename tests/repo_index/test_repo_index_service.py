"""The index in the running pieces: a default-branch push routes a throttled `index` job;
the worker downloads the tarball through the real adapter from the fake GitHub HTTP
server (served from the fixture tree, redirect included); the digest then shows the code
around the change; the sweep queues an index for a repository that has none."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.protocol import GitHubError, RepositoryArchive
from bot.handlers.processor import JobProcessor
from bot.intake.webhooks import BotIdentity, Ignored, PayloadError, route_event
from bot.queue.ledger import Ledger
from bot.queue.store import Job, NewJob, SqliteJobStore, index_key
from bot.repo_index.lookup import IndexLookup
from bot.repo_index.refresh import IndexRefresher
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.github_env import factory_for, make_settings
from tests.handler_env import BOT, make_ctx
from tests.keys import PUBLIC_KEY_PEM
from tests.repo_index_tarballs import TOP, members_tarball, tree_tarball
from tests.repo_index_tree import PR_EVENT, PR_FILES, TREE

REPO = "vllm-project/vllm"
HEAD = "c0ffee" + "0" * 34


def _push(ref: str = "refs/heads/main", after: str = HEAD, **extra: Any) -> dict[str, Any]:
    return {
        "ref": ref, "before": "0" * 40, "after": after, "created": False, "deleted": False,
        "repository": {"full_name": REPO, "default_branch": "main"},
        "installation": {"id": 1}, "sender": {"login": "merger", "type": "User"},
        "commits": [], **extra,
    }


def test_a_push_to_the_default_branch_asks_for_an_index_refresh() -> None:
    job = route_event("push", _push(), BotIdentity())
    assert job == NewJob(kind="index", key=index_key(REPO), installation_id=1, repo=REPO,
                         number=None, payload={"sha": HEAD})


@pytest.mark.parametrize(("payload", "reason"), [
    (_push(ref="refs/heads/feature"), "push to a branch other than the default"),
    (_push(ref="refs/tags/v1.0"), "push to a branch other than the default"),
    (_push(deleted=True), "branch deleted"),
])
def test_other_pushes_are_ignored(payload: dict[str, Any], reason: str) -> None:
    assert route_event("push", payload, BotIdentity()) == Ignored(reason)


@pytest.mark.parametrize("payload", [
    _push(after="not-a-sha"), {"ref": "refs/heads/main"}, _push(repository={"full_name": REPO}),
])
def test_a_malformed_push_is_a_payload_error(payload: dict[str, Any]) -> None:
    with pytest.raises(PayloadError):
        route_event("push", payload, BotIdentity())


async def test_pushes_fold_into_one_refresh_that_is_not_pushed_back(tmp_path: Path) -> None:
    now = [1000.0]
    store = SqliteJobStore(tmp_path / "bot.db", clock=lambda: now[0], index_settle_seconds=600)
    try:
        first = route_event("push", _push(after="1" * 40), BotIdentity())
        assert isinstance(first, NewJob)
        job_id = await store.enqueue(first)
        now[0] = 1500.0  # merges keep coming: the refresh still runs at 1600, not later
        second = route_event("push", _push(after="2" * 40), BotIdentity())
        assert isinstance(second, NewJob)
        assert await store.enqueue(second) == job_id
        (queued,) = await store.list_jobs("queued")
        assert (queued.not_before, queued.payload) == (1600.0, {"sha": "2" * 40})
        assert await store.claim(1599.0) is None
        claimed = await store.claim(1600.0)
        assert claimed is not None
        assert claimed.kind == "index"
    finally:
        store.close()


async def test_a_missing_index_is_queued_to_run_at_once(tmp_path: Path) -> None:
    store = SqliteJobStore(tmp_path / "bot.db", clock=lambda: 50.0, index_settle_seconds=600)
    try:
        await store.enqueue(NewJob(kind="index", key=index_key(REPO), installation_id=1,
                                   repo=REPO, number=None, payload={}))
        (queued,) = await store.list_jobs("queued")
        assert queued.not_before == 50.0
    finally:
        store.close()


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, installations={1: "vllm-project"})
    repo = s.add_repo(REPO)
    repo.head_sha = HEAD
    repo.tarball = tree_tarball(TREE)
    pr = json.loads(PR_EVENT.read_text())
    s.add_pull(REPO, pr["number"], title=pr["title"], body=pr["body"],
               labels=[label["name"] for label in pr["labels"]],
               files=[FakeFile(**f) for f in json.loads(PR_FILES.read_text())])
    server.use(s)
    return s


@pytest.fixture
async def processor(
    server: FakeGitHubServer, state: FakeGitHubState, tmp_path: Path
) -> AsyncIterator[tuple[JobProcessor, SqliteJobStore]]:
    db = tmp_path / "bot.db"
    settings = make_settings(server.url, db_path=db, http_timeout_seconds=5.0)
    store = SqliteJobStore(db, settle_seconds=0.0, index_settle_seconds=0.0)
    ledger = Ledger(db)
    lookup = IndexLookup(db)
    ctx = make_ctx(index=lookup)
    yield JobProcessor(settings, factory_for(settings), ctx, store, ledger,
                       IndexRefresher(db)), store
    lookup.close()
    store.close()
    ledger.close()


def _job(kind: str, number: int | None, payload: dict[str, Any]) -> Job:
    key = index_key(REPO) if kind == "index" else f"pr:{REPO}#{number}"
    return Job(id=0, kind=kind, key=key, installation_id=1, repo=REPO,
               number=number, payload=payload, delivery_id=None, attempts=0,
               state="running", not_before=0.0, last_error=None)


async def test_the_index_job_downloads_the_tarball_and_the_digest_uses_it(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    run, _ = processor
    await run(_job("pr", 60123, {}))
    (before,) = state.bot_comments(REPO, 60123, BOT)
    assert "Around the change" not in before  # no index yet: nothing said

    await run(_job("index", None, {"sha": HEAD}))
    assert [c for c in state.calls if "tarball" in c.route or "codeload" in c.route]
    await run(_job("pr", 60123, {}))
    (after,) = state.bot_comments(REPO, 60123, BOT)
    context = after.split("**Around the change**\n", 1)[1].split("\n\n**", 1)[0]
    assert context.splitlines() == [
        "- `_checked_to` changed; look-alikes left untouched in `vllm/utils/gpu_sync_debug.py`:"
        " `_checked_cuda`, `_checked_copy_` (same prefix `_checked_` and parameters)",
        "- 3 subclasses override `BaseMultiModalProcessor._get_prompt_updates`: `llava.py`,"
        " `qwen2_5_omni.py`, `qwen2_vl.py`; this PR's tests name 1 of them",
        "",
        # Only a keyword-only parameter with a default was added: counted, not listed.
        "<details><summary>Compatible signature changes (1)</summary>",
        "",
        "- `enable_sync_checks()`: 3 call sites, unaffected (only parameters with defaults"
        " added)",
        "",
        "</details>",
    ]


async def test_the_digest_reads_the_changed_files_at_the_prs_base(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState
) -> None:
    """The default branch moved on: its gpu_sync_debug.py has 7 more lines at the top
    than at the PR's base. The digest reads the base's tree, takes processing.py's record
    from the index by its blob, fetches only the file the index has not seen, and the
    findings are those of the base."""
    run, _ = processor
    files = {p.relative_to(TREE).as_posix(): p.read_bytes() for p in TREE.rglob("*.py")}
    drifted = dict(files)
    drifted["vllm/utils/gpu_sync_debug.py"] = b"# moved on\n" * 7 + files[
        "vllm/utils/gpu_sync_debug.py"]
    state.repos[REPO].tarball = members_tarball(
        [(f"{TOP}/{path}", data) for path, data in sorted(drifted.items())])
    base = state.add_commit(REPO, files)
    state.pulls[(REPO, 60123)].base_sha = base
    await run(_job("index", None, {"sha": HEAD}))
    before = len(state.calls)
    await run(_job("pr", 60123, {}))
    routes = [c.route for c in state.calls[before:]]
    assert sum("/git/blobs/" in r for r in routes) == 1
    (comment,) = state.bot_comments(REPO, 60123, BOT)
    assert "`_checked_to` changed; look-alikes left untouched" in comment
    assert "3 subclasses override `BaseMultiModalProcessor._get_prompt_updates`" in comment
    assert "- `enable_sync_checks()`: 3 call sites, unaffected" in comment, comment

    # The next run on the same base has that blob already: no GitHub read for it.
    again = len(state.calls)
    await run(_job("pr", 60123, {}))
    assert not [c for c in state.calls[again:] if "/git/" in c.route]


async def test_an_index_job_without_a_sha_asks_github_for_the_head(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState, tmp_path: Path
) -> None:
    run, _ = processor
    await run(_job("index", None, {}))
    refresher = IndexRefresher(tmp_path / "bot.db")
    assert refresher.indexed_commit(REPO) == HEAD
    await run(_job("index", None, {}))  # current: not downloaded again
    downloads = [c for c in state.calls if c.route.endswith("/tarball/{ref}")]
    assert len(downloads) == 1


async def test_a_missing_archive_fails_the_job_for_a_retry(
    processor: tuple[JobProcessor, SqliteJobStore], state: FakeGitHubState, tmp_path: Path
) -> None:
    run, _ = processor
    state.repos[REPO].tarball = None
    with pytest.raises(GitHubError):
        await run(_job("index", None, {"sha": HEAD}))
    assert IndexRefresher(tmp_path / "bot.db").indexed_commit(REPO) is None


async def test_the_sweep_queues_an_index_only_where_there_is_none(
    processor: tuple[JobProcessor, SqliteJobStore],
) -> None:
    run, store = processor
    await run.sweep()
    assert [(j.kind, j.repo, j.payload) for j in await store.list_jobs("queued")
            if j.kind == "index"] == [("index", REPO, {})]
    job = await store.claim()
    while job is not None and job.kind != "index":
        job = await store.claim()
    assert job is not None
    await run(job)
    await store.complete(job.id)
    await run.sweep()
    assert [j for j in await store.list_jobs("queued") if j.kind == "index"] == []


async def test_the_adapter_is_a_repository_archive(
    server: FakeGitHubServer, state: FakeGitHubState
) -> None:
    factory = factory_for(make_settings(server.url))
    async with factory.for_installation(1) as gh:
        assert isinstance(gh, RepositoryArchive)
        head = await gh.default_branch_head(REPO)
        assert (head.branch, head.sha) == ("main", HEAD)
        async with gh.tarball(REPO, HEAD) as chunks:
            data = b"".join([chunk async for chunk in chunks])
    assert data == state.repos[REPO].tarball
