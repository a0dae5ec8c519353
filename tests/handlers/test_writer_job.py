"""The writer's place in the job flow (issue 41, bot/handlers/writing.py): the digest job
posts the rules' digest first and queues one writer job per PR; the writer job is the
only run that may ask; a push while it wrote keeps the written section off the newer
digest; writer off queues nothing. Through the real adapter and the fake GitHub server,
with a scripted writer standing in for the model side (injected, as the service does)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.core.facts import PullRequestFacts
from bot.core.findings import Digest
from bot.core.writer.packet import Packet
from bot.core.writer.request import WriterRequest
from bot.core.writer.result import Tokens, WriterResult, WrittenItem
from bot.github.protocol import GitHubAPI
from bot.handlers.context import HandlerContext
from bot.handlers.processor import JobProcessor
from bot.handlers.writer import WriterService
from bot.handlers.writing import Writer, Writing, writer_key
from bot.queue.ledger import Ledger
from bot.queue.store import Job, SqliteJobStore, pr_key
from bot.queue.writer_cache import WriterCache, writer_schema
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import factory_for, make_settings
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY, make_ctx
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
BOT = "pr-digest[bot]"


@dataclass
class ScriptedWriter:
    """Nothing is ever cached; a writing run pushes to the PR first when told to."""

    state: FakeGitHubState
    push_while_writing: bool = False
    asked: list[bool] = field(default_factory=list)

    async def written_for(
        self, gh: GitHubAPI, ctx: HandlerContext, digest: Digest, facts: PullRequestFacts,
        *, may_write: bool,
    ) -> Writing:
        self.asked.append(may_write)
        if may_write and self.push_while_writing:
            self.state.pull(REPO, facts.number).head_sha = "d" * 40
        return Writing(result=None, asked=may_write)


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM, installations={1: "vllm-project"})
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[torch.compile] Fix", body=UNTESTED_BODY,
               files=list(COMPILE_FILES))
    server.use(s)
    return s


@dataclass
class Env:
    store: SqliteJobStore
    writer: ScriptedWriter
    on: JobProcessor
    off: JobProcessor
    ledger: Ledger
    with_writer: Callable[[Writer], JobProcessor]


@pytest.fixture
async def env(
    server: FakeGitHubServer, state: FakeGitHubState, tmp_path: Path
) -> AsyncIterator[Env]:
    settings = make_settings(server.url, db_path=tmp_path / "bot.db")
    store = SqliteJobStore(tmp_path / "bot.db", settle_seconds=0.0)
    ledger = Ledger(tmp_path / "bot.db")
    writer = ScriptedWriter(state)
    factory = factory_for(settings)

    def with_writer(writer: Writer) -> JobProcessor:
        return JobProcessor(settings, factory, make_ctx(writer=writer), store, ledger)

    yield Env(store, writer, with_writer(writer),
              JobProcessor(settings, factory, make_ctx(), store, ledger), ledger, with_writer)
    store.close()
    ledger.close()


def _job(kind: str) -> Job:
    key = writer_key(REPO, 1) if kind == "writer" else pr_key(REPO, 1)
    return Job(id=0, kind=kind, key=key, installation_id=1, repo=REPO, number=1,
               payload={"actions": ["opened"]}, delivery_id=None, attempts=0,
               state="running", not_before=0.0, last_error=None)


async def _queued(store: SqliteJobStore) -> list[tuple[str, str]]:
    return [(job.kind, job.key) for job in await store.list_jobs("queued")]


async def test_the_digest_is_posted_first_and_one_writer_job_is_queued(
    env: Env, state: FakeGitHubState
) -> None:
    await env.on(_job("pr"))
    await env.on(_job("pr"))  # a re-delivery: the pending writer job absorbs it
    assert len(state.bot_comments(REPO, 1, BOT)) == 1
    assert env.writer.asked == [False, False]  # a digest job only looks the packet up
    assert await _queued(env.store) == [("writer", writer_key(REPO, 1))]


async def test_writer_off_queues_nothing(env: Env, state: FakeGitHubState) -> None:
    await env.off(_job("pr"))
    assert len(state.bot_comments(REPO, 1, BOT)) == 1
    assert env.writer.asked == []
    assert await _queued(env.store) == []


async def test_the_writer_job_may_ask_and_queues_no_second_one(
    env: Env, state: FakeGitHubState
) -> None:
    await env.on(_job("pr"))
    posted = state.bot_comments(REPO, 1, BOT)
    claimed = await env.store.claim()  # the writer job the digest job queued runs now
    assert claimed is not None
    await env.store.complete(claimed.id)
    await env.on(_job("writer"))  # nothing came of it (endpoint down, claimed elsewhere)
    assert env.writer.asked == [False, True]
    assert state.bot_comments(REPO, 1, BOT) == posted  # the rules' digest stays
    assert await _queued(env.store) == []  # bounded: no retry loop


async def test_a_push_while_writing_keeps_the_older_writing_off_the_comment(
    env: Env, state: FakeGitHubState
) -> None:
    await env.on(_job("pr"))
    posted = state.bot_comments(REPO, 1, BOT)
    env.writer.push_while_writing = True
    edits = state.count("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
    await env.on(_job("writer"))
    assert state.bot_comments(REPO, 1, BOT) == posted
    assert state.count("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}") == edits


@dataclass
class Endpoint:
    """The model side: every request answered with the same verified result."""

    requests: list[str] = field(default_factory=list)

    async def __call__(self, request: WriterRequest, packet: Packet) -> WriterResult:
        self.requests.append(packet.sha256)
        return WriterResult(status="ok", model=request.model, packet_sha256=packet.sha256,
                            items=(WrittenItem("summary", "Guards the checker."),
                                   WrittenItem("points", "Start with the checker.")),
                            tokens=Tokens(prompt=900, completion=60))


async def test_the_writer_job_edits_the_digest_in_place_and_a_rerun_asks_nothing(
    env: Env, state: FakeGitHubState, tmp_path: Path
) -> None:
    writer_schema(tmp_path / "bot.db")
    endpoint = Endpoint()
    on = env.with_writer(WriterService(
        model="Qwen/Qwen3-8B", max_tokens=500, tokens_per_hour=100_000, timeout_seconds=5.0,
        cache=WriterCache(env.ledger.writer), ask=endpoint))
    await on(_job("pr"))
    (posted,) = state.comments_on(REPO, 1)
    assert "Guards the checker." not in posted.body
    assert endpoint.requests == []  # a digest job never asks
    assert await _queued(env.store) == [("writer", writer_key(REPO, 1))]
    claimed = await env.store.claim()
    assert claimed is not None
    await env.store.complete(claimed.id)

    await on(_job("writer"))
    (written,) = state.comments_on(REPO, 1)
    assert written.id == posted.id  # an edit, not a second comment
    assert "Guards the checker." in written.body
    assert "- Start with the checker." in written.body
    assert len(endpoint.requests) == 1

    body = written.body
    await on(_job("pr"))  # a re-delivery: the stored result, no call, no writer job
    assert len(endpoint.requests) == 1
    assert state.bot_comments(REPO, 1, BOT) == [body]
    assert await _queued(env.store) == []
