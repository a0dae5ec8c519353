"""A PR's own record among the open PRs (what the service stores for it and compares), and
its neighbours as the digest shows them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from bot.core.facts import Conversation, PullRequestFacts
from bot.core.neighbours.dependencies import find_dependencies
from bot.core.neighbours.find import OpenPrIndex, find_neighbours
from bot.core.neighbours.model import ChangedSymbol, DependencyState, Neighbours, OpenPr
from bot.core.reading.links import find_links
from bot.core.reading.specifics import Link
from bot.core.reading.symbols import extract_symbols
from bot.core.vocabulary import Symbol


@dataclass(frozen=True)
class Neighbourhood:
    """What the caller read for the neighbours part: the other open PRs (records or their
    index), the PR's own `mergeable_state` ("" not computed yet), whether it is approved,
    and the states of the PRs it depends on."""

    others: Sequence[OpenPr] | OpenPrIndex = ()
    mergeable_state: str = ""
    approved: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None
    dependency_states: Mapping[int, DependencyState] = field(default_factory=dict)
    # Commits the base branch moved since the PR's merge base; None unknown.
    base_behind_by: int | None = None


def record_of(
    facts: PullRequestFacts,
    symbols: Sequence[Symbol],
    links: Sequence[Link],
    *,
    ci: str = "",
    hood: Neighbourhood | None = None,
) -> OpenPr:
    """The PR as the other PRs' digests will see it."""
    hood = hood or Neighbourhood()
    return OpenPr(
        number=facts.number, title=facts.title, author=facts.author,
        created_at=hood.created_at, updated_at=hood.updated_at, state=facts.state,
        draft=facts.draft, approved=hood.approved, ci=ci, head_sha=facts.head_sha,
        files=tuple(dict.fromkeys(f.filename for f in facts.files)),
        symbols=tuple(dict.fromkeys(ChangedSymbol(file=s.file, name=s.name) for s in symbols)),
        fixes=fixed_issues(links),
        mergeable_state=hood.mergeable_state,
    )


def fixed_issues(links: Sequence[Link]) -> tuple[int, ...]:
    """The issues of this repository the PR says it fixes."""
    return tuple(dict.fromkeys(link.number for link in links
                               if link.kind == "fixes" and not link.repo))


def author_comments(facts: PullRequestFacts, conversation: Conversation | None) -> list[str]:
    if conversation is None:
        return []
    author = facts.author.casefold()
    return [r.body for r in conversation.remarks
            if r.kind == "comment" and r.author.casefold() == author and not r.author_is_bot]


def neighbours_of(subject: OpenPr, facts: PullRequestFacts, hood: Neighbourhood,
                  conversation: Conversation | None) -> Neighbours:
    found = find_neighbours(
        subject, hood.others,
        dependencies=find_dependencies(facts.body, author_comments(facts, conversation),
                                       own=facts.number),
        dependency_states=hood.dependency_states,
    )
    live = found.live.model_copy(update={"base_behind_by": hood.base_behind_by})
    return found.model_copy(update={"live": live})


def record_from_facts(facts: PullRequestFacts, *, ci: str = "",
                      hood: Neighbourhood | None = None) -> OpenPr:
    """The record of a PR the digest is not being made for (another open PR, read from a
    file or stored by its own job)."""
    links = find_links(facts.title, facts.body, facts.repo, facts.number)
    return record_of(facts, extract_symbols(facts.files), links, ci=ci, hood=hood)


MAX_KEY_FILES = 1_000  # a PR of 3,000 files is compared on its first thousand


def index_keys(record: OpenPr) -> list[str]:
    """The keys the service stores a record under and asks for: `f:` a file, `s:` a
    changed function (`file::name`), `i:` a fixed issue."""
    return [
        *(f"f:{path}" for path in record.files[:MAX_KEY_FILES]),
        *(f"s:{s.file}::{s.name}" for s in record.symbols),
        *(f"i:{issue}" for issue in record.fixes),
    ]


def moved(before: OpenPr | None, after: OpenPr | None) -> bool:
    """Did what the other PRs' digests say of this one change in a way worth their edit:
    opened, closed, pushed (a new head), or retitled. CI and review state alone do not
    re-queue every neighbour."""
    if before is None or after is None:
        return before is not after
    return (before.head_sha, before.state, before.title, before.files, before.symbols,
            before.fixes) != (after.head_sha, after.state, after.title, after.files,
                              after.symbols, after.fixes)


def approved(conversation: Conversation | None) -> bool:
    """Someone with write access approved, and nobody's latest review asks for changes."""
    if conversation is None:
        return False
    latest: dict[str, str] = {}
    for remark in conversation.remarks:
        if remark.kind == "review" and remark.maintainer and remark.review_state in (
                "APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[remark.author.casefold()] = remark.review_state
    states = set(latest.values())
    return "APPROVED" in states and "CHANGES_REQUESTED" not in states
