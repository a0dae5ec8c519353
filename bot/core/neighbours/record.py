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
    return find_neighbours(
        subject, hood.others,
        dependencies=find_dependencies(facts.body, author_comments(facts, conversation),
                                       own=facts.number),
        dependency_states=hood.dependency_states,
    )


def record_from_facts(facts: PullRequestFacts, *, ci: str = "",
                      hood: Neighbourhood | None = None) -> OpenPr:
    """The record of a PR the digest is not being made for (another open PR, read from a
    file or stored by its own job)."""
    links = find_links(facts.title, facts.body, facts.repo, facts.number)
    return record_of(facts, extract_symbols(facts.files), links, ci=ci, hood=hood)
