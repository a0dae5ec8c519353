"""The neighbours part of a digest job (issue 42): the other open PRs from the store (no
GitHub call per neighbour), the PR's own `mergeable_state` from its object, and one cached
read per PR it depends on; after the job, its own record stored and, when it was pushed,
opened, retitled or closed, the PRs it overlaps queued for an edit. One compare call says
how far the base branch moved since the PR's merge base (its CI ran against that base).

Level-triggered: GitHub computes `mergeable` in the background (null at first); the
next job of the PR reads it. Counted: the calls this adds to a job are in its log line."""

from __future__ import annotations

import logging
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import ValidationError

from bot.core.facts import Conversation, LinkedItem, PullRequestFacts
from bot.core.findings import Digest
from bot.core.neighbours.dependencies import find_dependencies
from bot.core.neighbours.find import find_neighbours
from bot.core.neighbours.model import DependencyState, OpenPr
from bot.core.neighbours.record import (
    Neighbourhood,
    approved,
    author_comments,
    index_keys,
    moved,
    record_from_facts,
)
from bot.github.protocol import GitHubAPI, GitHubError, NotFound, PullRequest
from bot.queue.ledger import OpenPrChange
from bot.queue.store import JobStore, NewJob, pr_key

log = logging.getLogger(__name__)
MAX_CANDIDATES = 1_000  # open PRs read from the store for one digest
MAX_DEPENDENCY_READS = 3  # new (uncached) dependency reads per job
MAX_REQUEUED = 10  # neighbours queued for an edit per change
NEIGHBOUR = "neighbour"  # the queued job's action: edit the digest, never post a new one


class OpenPrStore(Protocol):
    """The ledger's open-PR records (bot/queue/ledger.py, ledger_pg.py)."""

    async def record_open_pr(self, repo: str, number: int, record: str | None,
                             keys: Sequence[str], *, limit: int) -> OpenPrChange: ...

    async def open_prs_sharing(self, repo: str, keys: Sequence[str], *,
                               limit: int) -> list[str]: ...


@dataclass
class NeighbourRead:
    hood: Neighbourhood
    calls: int = 0  # GitHub calls this part made (dependency states, the base compare)
    candidates: int = 0
    unread: list[int] = field(default_factory=list)


async def read_neighbourhood(
    gh: GitHubAPI, store: OpenPrStore, cache: MutableMapping[str, object], pr: PullRequest,
    facts: PullRequestFacts, conversation: Conversation | None,
) -> NeighbourRead:
    """The other open PRs sharing a file, function or issue with this one, and the states
    of what it depends on. A store that fails leaves the part out (the digest goes on)."""
    subject = record_from_facts(facts)
    rows = await store.open_prs_sharing(pr.repo, index_keys(subject), limit=MAX_CANDIDATES)
    others = [o for o in (_parse(row) for row in rows) if o is not None and o.number != pr.number]
    states: dict[int, DependencyState] = {o.number: "open" for o in others}
    for item in (conversation.linked if conversation else ()):
        if not item.repo and item.state != "unknown":
            states.setdefault(item.number, item.state)
    read = NeighbourRead(Neighbourhood(), candidates=len(others))
    refs = find_dependencies(facts.body, author_comments(facts, conversation), own=pr.number)
    for ref in refs:
        if ref.number in states:
            continue
        state = await _dependency_state(gh, cache, pr.repo, ref.number, read)
        if state is not None:
            states[ref.number] = state
    behind_by = await _base_behind_by(gh, pr, read)
    read.hood = Neighbourhood(
        others=others, mergeable_state=pr.mergeable_state, approved=approved(conversation),
        created_at=pr.created_at, updated_at=pr.updated_at, dependency_states=states,
        base_behind_by=behind_by)
    return read


async def _base_behind_by(gh: GitHubAPI, pr: PullRequest, read: NeighbourRead) -> int | None:
    """Commits the base branch gained since the PR's merge base (`base.sha`); None when
    GitHub could not say: the line is left out, the digest goes on."""
    if not pr.base_sha or not pr.base_ref:
        return None
    read.calls += 1
    try:
        return await gh.commits_ahead(pr.repo, pr.base_sha, pr.base_ref)
    except GitHubError as exc:
        log.info("base compare unavailable: %s", exc, extra={"repo": pr.repo, "pr": pr.number})
        return None


async def _dependency_state(gh: GitHubAPI, cache: MutableMapping[str, object], repo: str,
                            number: int,
                            read: NeighbourRead) -> DependencyState | None:
    # The same cache as the linked work's (bot/handlers/conversation.py): one read per
    # #N per quarter hour, whichever part asked first.
    key = f"{repo}|{repo}#{number}".casefold()
    cached = cache.get(key)
    if isinstance(cached, LinkedItem):
        return cached.state if cached.state != "unknown" else None
    if read.calls >= MAX_DEPENDENCY_READS:
        read.unread.append(number)
        return None
    read.calls += 1
    try:
        issue = await gh.get_issue(repo, number)
    except NotFound:
        return None
    except GitHubError as exc:
        log.info("dependency %s#%d unavailable: %s", repo, number, exc)
        read.unread.append(number)
        return None
    state: DependencyState = "open" if issue.state == "open" else (
        "merged" if issue.merged else "closed")
    cache[key] = LinkedItem(repo="", number=number, title=issue.title,
                            state=state, is_pull=issue.is_pull)
    return state


def _parse(row: str) -> OpenPr | None:
    try:
        return OpenPr.model_validate_json(row)
    except ValidationError:
        return None  # a record of an older release: its PR's next job rewrites it


def own_record(facts: PullRequestFacts, digest: Digest | None, pr: PullRequest,
               conversation: Conversation | None) -> OpenPr:
    ci = digest.ci.run.state if digest and digest.ci and digest.ci.run else ""
    return record_from_facts(facts, ci=ci, hood=Neighbourhood(
        mergeable_state=pr.mergeable_state, approved=approved(conversation),
        created_at=pr.created_at))


async def remember(
    store: OpenPrStore, jobs: JobStore, pr: PullRequest, record: OpenPr | None,
    installation_id: int | None,
) -> int:
    """Store the PR's record (None: closed, forgotten); when it moved (opened, pushed,
    retitled, closed), queue the open PRs it shares a key with, before or now, for an
    edit of their digests. Returns how many were queued."""
    change = await store.record_open_pr(
        pr.repo, pr.number, record.model_dump_json() if record is not None else None,
        index_keys(record) if record is not None else [], limit=MAX_REQUEUED)
    if change.previous is None and record is None:
        return 0
    before = _parse(change.previous) if change.previous is not None else None
    if not moved(before, record) or not change.sharing:
        return 0
    keys = [*(index_keys(before) if before else []), *(index_keys(record) if record else [])]
    rows = await store.open_prs_sharing(pr.repo, keys, limit=MAX_CANDIDATES)
    others = [o for o in map(_parse, rows) if o is not None]
    affected = [o.number for o in others if _names(o, before) or _names(o, record)]
    for number in affected[:MAX_REQUEUED]:
        # Coalesced with any job of that PR already waiting (the queue's key).
        await jobs.enqueue(NewJob(
            kind="pr", key=pr_key(pr.repo, number), installation_id=installation_id,
            repo=pr.repo, number=number, payload={"actions": [NEIGHBOUR]},
        ))
    return len(affected[:MAX_REQUEUED])


def _names(other: OpenPr, moved_pr: OpenPr | None) -> bool:
    """Does (or did) `other`'s digest name `moved_pr`: only then is its edit worth a job
    (an author's own PRs sharing files never name each other)."""
    if moved_pr is None or other.number == moved_pr.number:
        return False
    found = find_neighbours(other, [moved_pr.model_copy(update={"state": "open"})])
    return any(n.number == moved_pr.number for n in found.neighbours)
