"""Plan the digest delivered as a check run (`DIGEST_DELIVERY=check`): one run named
`pr-digest` per head commit, created once and edited in place.

A check run does not notify subscribers as a new comment does (issue 43, item 3). Each
head gets its own run, since GitHub shows a commit's runs; the run of an older head is
left as it was. Only a run our App created is ours: GitHub refuses to let another App
edit it, and a run of that name by someone else is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bot.core.findings import Digest
from bot.core.render.i18n import t
from bot.core.render.marker import parse_marker, with_seen
from bot.core.render.sticky import same_body

CHECK_NAME = "pr-digest"
# GitHub refuses an output summary longer than this (422).
SUMMARY_MAX_CHARS = 65_535
TITLE_MAX_CHARS = 120


class CheckRunSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    head_sha: str
    app_slug: str
    summary: str


class CheckPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Literal["create", "update", "noop", "older"]
    run_id: int | None = None
    summary: str | None = None


def check_title(digest: Digest) -> str:
    """The run's title: the verdict and reading time, as the comment's headline says."""
    title = t(digest.lang, f"render.verdict.{digest.verdict}")
    if digest.verdict != "quiet":
        minutes = t(digest.lang, "render.minutes", minutes=max(1, digest.reading_minutes))
        title = f"{title} · {minutes}"
    return " ".join(title.split())[:TITLE_MAX_CHARS]


def our_run(runs: Sequence[CheckRunSnapshot], app_slug: str, head_sha: str
            ) -> CheckRunSnapshot | None:
    """The newest run on `head_sha` our App created, if any."""
    slug = app_slug.casefold()
    ours = [r for r in runs if r.app_slug.casefold() == slug and r.head_sha == head_sha]
    return max(ours, key=lambda r: r.id) if ours else None


def plan_check_run(
    runs: Sequence[CheckRunSnapshot],
    app_slug: str,
    head_sha: str,
    desired: str | None,
    *,
    quiet_body: str | None = None,
    seen: int | None = None,
) -> CheckPlan:
    """What to do so that the head's run of ours shows `desired`; as `plan_sticky`:
    `desired=None` creates nothing and reduces an existing run to `quiet_body`, and a
    run built from a later read of the PR (`seen`) is left alone."""
    if len(desired or "") > SUMMARY_MAX_CHARS or len(quiet_body or "") > SUMMARY_MAX_CHARS:
        raise ValueError(f"a check run's summary is at most {SUMMARY_MAX_CHARS} characters")
    kept = our_run(runs, app_slug, head_sha)
    if kept is None:
        if desired is None:
            return CheckPlan(action="noop")
        return CheckPlan(action="create", summary=with_seen(desired, seen))
    target = desired if desired is not None else quiet_body
    if target is None:
        raise ValueError("quiet_body is required when desired is None and a run exists")
    if same_body(with_seen(kept.summary, None), with_seen(target, None)):
        return CheckPlan(action="noop", run_id=kept.id)
    shown = parse_marker(kept.summary)
    if seen is not None and shown is not None and shown.seen is not None and seen < shown.seen:
        return CheckPlan(action="older", run_id=kept.id)
    return CheckPlan(action="update", run_id=kept.id, summary=with_seen(target, seen))
