"""What a digest job knows of the writer (issue 41): the seam it calls, and the PR's
writer job it queues. The writer itself (packet, endpoint, verification, cache) is
bot/handlers/writer.py, built by the service only when DIGEST_WRITER_URL is set, so a
service without it imports none of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from bot.core.facts import PullRequestFacts
from bot.core.findings import Digest
from bot.core.vocabulary import Lang
from bot.core.writer.result import WriterResult
from bot.github.protocol import GitHubAPI
from bot.queue.store import Job, JobStore, NewJob

if TYPE_CHECKING:
    from bot.handlers.context import HandlerContext


def writer_key(repo: str, number: int) -> str:
    """A PR's writer job: coalesced per PR like its digest job, run alone like it."""
    return f"writer:{repo}#{number}"


@dataclass(frozen=True)
class Writing:
    """What a digest run found or wrote for its packet."""

    # The writer's result (its `writer` JSON and written section), or None: nothing yet
    # (never asked, or another run is writing it right now).
    result: WriterResult | None = None
    asked: bool = False  # this run called the endpoint: time passed, the PR may have moved
    # Results stored in the other languages, for the label view's other rows.
    others: dict[Lang, WriterResult] = field(default_factory=dict)


class Writer(Protocol):
    async def written_for(
        self, gh: GitHubAPI, ctx: HandlerContext, digest: Digest, facts: PullRequestFacts,
        *, may_write: bool,
    ) -> Writing:
        """The written result for this digest's packet: looked up, and with `may_write`
        (the writer job) asked of the endpoint when none is stored."""
        ...


async def queue_writing(store: JobStore, job: Job) -> None:
    """After the deterministic digest is posted: the PR's writer job (coalesced)."""
    if job.number is None:
        return
    await store.enqueue(NewJob(
        kind="writer", key=writer_key(job.repo, job.number),
        installation_id=job.installation_id, repo=job.repo, number=job.number,
        payload={"actions": ["write"]},
    ))
