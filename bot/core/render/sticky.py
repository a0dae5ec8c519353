"""Plan the one sticky comment per PR: create it, edit it in place, or leave it be.

Level-triggered: the plan depends only on the comments that exist now and the body
we want, so redelivered events and racing replicas converge. Replicas that raced
each created a comment: the oldest is kept and the others are deleted.

"Ours" means the first line starts with the marker prefix *and* the author is our
bot login: another bot that copied the marker must never be edited or deleted
(PyTorch's Dr. CI learned this the hard way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bot.core.render.comment import ticked_ids
from bot.core.render.marker import is_marker_line, parse_marker, risk_escalated, with_seen

__all__ = [
    "CommentSnapshot",
    "StickyPlan",
    "existing_ticks",
    "our_comments",
    "plan_sticky",
    "risk_escalated",  # lives with the marker it compares; re-exported for handlers
    "same_body",
]


class CommentSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    author: str
    body: str
    created_at: datetime | None = None


class StickyPlan(BaseModel):
    """`action` concerns the kept comment; `delete_ids` are extra copies of ours and
    are deleted whatever the action."""

    model_config = ConfigDict(frozen=True)

    # older: the comment shows a digest built from a newer read of the PR than ours
    action: Literal["create", "update", "noop", "older"]
    comment_id: int | None = None  # the comment to update (or kept on noop)
    body: str | None = None  # the body to write on create/update
    delete_ids: tuple[int, ...] = ()


def _age_key(comment: CommentSnapshot) -> tuple[float, int]:
    # Comment ids grow with time on GitHub; they break created_at ties (one-second
    # resolution) between replicas that posted at the same moment.
    created = comment.created_at
    if created is None:
        return (math.inf, comment.id)
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return (created.timestamp(), comment.id)


def our_comments(
    existing: Sequence[CommentSnapshot], bot_login: str
) -> tuple[CommentSnapshot, ...]:
    """Our digest comments, oldest first. Logins compare case-insensitively, as on GitHub."""
    login = bot_login.casefold()
    ours = [c for c in existing if c.author.casefold() == login and is_marker_line(c.body)]
    return tuple(sorted(ours, key=_age_key))


def existing_ticks(existing: Sequence[CommentSnapshot], bot_login: str) -> frozenset[str]:
    """Checklist ids ticked in the comment we keep, to pass as `render_digest(ticked=)`."""
    ours = our_comments(existing, bot_login)
    return ticked_ids(ours[0].body) if ours else frozenset()


def same_body(a: str, b: str) -> bool:
    """Equal but for trailing whitespace (per line and at the end) and line endings,
    which GitHub may normalize when a box is ticked in its UI."""

    def norm(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.splitlines()).rstrip()

    return norm(a) == norm(b)


def plan_sticky(
    existing: Sequence[CommentSnapshot],
    bot_login: str,
    desired: str | None,
    *,
    quiet_body: str | None = None,
    seen: int | None = None,
) -> StickyPlan:
    """What to do so that exactly one comment of ours shows `desired`.

    `desired=None` means the PR should have no digest: nothing is created, and an
    existing comment of ours is neutralized to `quiet_body` rather than deleted (a
    link to it keeps working and says why it went quiet). `quiet_body` is required
    then.

    `seen` is when GitHub last changed the PR as this job read it (marker.py): it is
    written into the marker, is no difference by itself, and a comment whose marker
    says it was built from a later read is left alone (a run that read the PR before
    another run wrote must not put the older head back).
    """
    ours = our_comments(existing, bot_login)
    if not ours:
        if desired is None:
            return StickyPlan(action="noop")
        return StickyPlan(action="create", body=with_seen(desired, seen))
    keep, extra = ours[0], tuple(c.id for c in ours[1:])
    target = desired
    if target is None:
        if quiet_body is None:
            raise ValueError("quiet_body is required when desired is None and a comment exists")
        target = quiet_body
    if same_body(with_seen(keep.body, None), with_seen(target, None)):
        return StickyPlan(action="noop", comment_id=keep.id, delete_ids=extra)
    shown = parse_marker(keep.body)
    if seen is not None and shown is not None and shown.seen is not None and seen < shown.seen:
        return StickyPlan(action="older", comment_id=keep.id, delete_ids=extra)
    return StickyPlan(action="update", comment_id=keep.id, body=with_seen(target, seen),
                      delete_ids=extra)
