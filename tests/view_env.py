"""A label view over the in-memory fake GitHub: digest jobs store into a real SQLite file,
the routes answer through httpx's ASGI transport. Shared by the view's tests and bench."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from bot.core.label_view import summarize
from bot.core.vocabulary import LANGS
from bot.handlers.context import HandlerContext
from bot.handlers.digest import sync_pull_request
from bot.handlers.neighbours import remember
from bot.queue.ledger import Ledger
from bot.queue.store import SqliteJobStore
from bot.settings.model import Settings
from bot.view.app import LabelViewRoutes
from bot.view.recorder import DigestRecorder
from bot.view.store import DigestStore, PullState, StoredDigest, create_schema
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import COMPILE_FILES, REPO, UNTESTED_BODY, gh_for, make_ctx, make_state

HOSTILE_TITLE = (
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    " Fix the <b>chat</b> template"
)
FRONTEND_FILES = [
    FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=30, deletions=4,
             patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n"),
]
DOCS_FILES = [FakeFile("docs/usage/faq.md", additions=3, deletions=1)]


@dataclass
class ViewEnv:
    state: FakeGitHubState
    gh: MemoryGitHub
    ctx: HandlerContext
    store: DigestStore
    client: httpx.AsyncClient
    jobs: SqliteJobStore | None = None  # with open_prs: where neighbours are queued

    async def digest(self, number: int) -> None:
        outcome = await sync_pull_request(self.gh, self.ctx, REPO, number)
        if self.ctx.open_prs is not None and self.jobs is not None and outcome.pull:
            # What the job processor does after a digest job (bot/handlers/processor.py).
            await remember(self.ctx.open_prs, self.jobs, outcome.pull, outcome.record, None)

    async def copy_digest(self, source: int, numbers: Iterable[int]) -> None:
        """PR `source`'s stored digests (both languages) stored again for `numbers`, as
        open PRs titled "Copy N", even numbers labelled `even`, each a minute older
        than the one before: a long queue without a job per PR."""
        now = time.time()
        items = {lang: await self.store.entry(REPO, source, lang) for lang in LANGS}
        for number in numbers:
            digests = []
            for lang, item in items.items():
                assert item is not None, f"PR {source} has no {lang} digest"
                payload = {**item.payload, "number": number}
                digests.append(StoredDigest(lang, payload, summarize(payload)))
            await self.store.record(PullState(
                repo=REPO, number=number, title=f"Copy {number}", author="alice",
                url=f"https://github.com/{REPO}/pull/{number}",
                labels=("even",) if number % 2 == 0 else (), draft=False, state="open",
                merged=False, private=False, updated_at=now - 60 * number), tuple(digests))

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return await self.client.get(path, **kwargs)


def add_sample_pulls(state: FakeGitHubState) -> None:
    """A deep read, a hostile-titled frontend change and a quiet docs fix."""
    state.add_pull(REPO, 1, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
                   files=COMPILE_FILES, labels=["torch.compile"], author="alice")
    state.add_pull(REPO, 2, title=HOSTILE_TITLE, body="Fixes the template.",
                   files=FRONTEND_FILES, labels=["frontend"], author="mallory")
    state.add_pull(REPO, 3, title="Typo in the FAQ", body="typo", files=DOCS_FILES,
                   labels=["documentation"], author="carol")


# A PostgreSQL URL: view_env stores the digests there instead (tests/view/conftest.py
# runs every view test on both backends).
DATABASE_URL: str | None = None


@asynccontextmanager
async def view_env(
    tmp_path: Path, *, settings: Settings | None = None, recent_seconds: float = 7 * 86400,
    open_prs: bool = False,
) -> AsyncIterator[ViewEnv]:
    """`open_prs`: keep each open PR's record in the ledger, so digests name their
    neighbours (issue 42)."""
    db = tmp_path / "view.db"
    ledger = Ledger(db)
    create_schema(db)
    store = DigestStore(ledger.writer, recent_seconds=recent_seconds)
    database = None
    if DATABASE_URL is not None:
        from bot.db.migrations import migrate
        from bot.db.pool import Database
        from bot.view.store_pg import PostgresDigestStore

        migrate(DATABASE_URL)
        database = Database(DATABASE_URL, max_size=4)
        database.open()
        store = PostgresDigestStore(database, recent_seconds=recent_seconds)
    state = make_state()
    ctx = make_ctx(on_converged=DigestRecorder(store))
    jobs = None
    if open_prs:
        ctx.open_prs = ledger
        jobs = SqliteJobStore(tmp_path / "jobs.db")
    app = Starlette(routes=LabelViewRoutes(store, settings or Settings(language="en")).routes())
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield ViewEnv(state, gh_for(state), ctx, store, client, jobs)
    finally:
        if jobs is not None:
            jobs.close()
        ledger.close()
        if database is not None:
            database.close()
