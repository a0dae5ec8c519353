"""What a digest job hands to whoever keeps a copy of its result (the label view).

The job's own work is the sticky comment; this is a side output, so a listener's
failure is logged by the caller and never fails the job.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.core.facts import Conversation
from bot.core.findings import Digest
from bot.core.vocabulary import Lang
from bot.core.writer.result import WriterResult
from bot.github.protocol import PullRequest


@dataclass(frozen=True)
class Converged:
    """One PR after a digest job: its state on GitHub and, when computed, its digest.

    `digest` is None when the job stopped early (closed, draft, muted): only the PR's
    state changed. `markdown` is the comment as posted (None when the verdict is quiet
    and nothing was posted). `in_language` builds the same digest in another language
    from the same facts and rules, so a reader can switch without another job.
    `conversation` is what the job read of the PR's thread and `routes_to` the members
    of the routing pools of its labels (the view's triage fields and "my areas").
    `written`: the writer's result for each language it has one in (issue 41)."""

    pull: PullRequest
    digest: Digest | None = None
    markdown: str | None = None
    in_language: Callable[[Lang], Digest] | None = None
    conversation: Conversation | None = None
    routes_to: tuple[str, ...] = ()
    written: dict[Lang, WriterResult] = field(default_factory=dict)


ConvergedSink = Callable[[Converged], Awaitable[None]]
