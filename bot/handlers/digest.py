"""Converge one PR's sticky digest comment to what the current PR state says it should be.

Level-triggered (docs/architecture.md): whatever event arrived, the job re-reads the PR and
recomputes the whole comment; redeliveries and duplicates therefore change nothing, and
a write happens only when the rendered body differs from the one on GitHub.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from bot.core.commands.parse import CommandSpec
from bot.core.digest import build_digest, repo_config_note
from bot.core.facts import ChangedFile, Conversation, PullRequestFacts
from bot.core.findings import Digest
from bot.core.neighbours.model import OpenPr
from bot.core.render.check_run import (
    CHECK_NAME,
    CheckPlan,
    CheckRunSnapshot,
    check_title,
    our_run,
    plan_check_run,
)
from bot.core.render.comment import render_digest
from bot.core.render.marker import Marker, parse_marker
from bot.core.render.sticky import (
    CommentSnapshot,
    StickyPlan,
    existing_ticks,
    our_comments,
    plan_sticky,
)
from bot.core.repo_index.findings import RepoContext
from bot.core.routing.reviewers import plan_labels
from bot.core.vocabulary import Delivery, Lang
from bot.github.protocol import (
    GitHubAPI,
    GitHubError,
    NotFound,
    PullRequest,
    RateLimited,
    UncertainWrite,
    Unprocessable,
    is_refusal,
)
from bot.handlers.ci_status import NOT_FOUND, head_statuses, wants_statuses
from bot.handlers.context import HandlerContext
from bot.handlers.converged import Converged
from bot.handlers.conversation import linked_items, read_conversation
from bot.handlers.index_base import base_records
from bot.handlers.neighbours import NeighbourRead, own_record, read_neighbourhood
from bot.handlers.repo_config import repo_config_at_base
from bot.handlers.routing import route_pull_request, warn_about_pools

log = logging.getLogger(__name__)

HELP: tuple[CommandSpec, ...] = tuple(
    CommandSpec(name=name, usage=usage, summary_key=f"commands.summary.{name}", who=who)
    for name, usage, who in (
        ("refresh", "/digest", "author-or-write"),
        ("explain", "/digest explain", "author-or-write"),
        ("en", "/digest en", "author-or-write"),
        ("zh", "/digest zh", "author-or-write"),
        ("mute", "/digest mute", "anyone-with-write"),
        ("unmute", "/digest unmute", "anyone-with-write"),
    )
)


@dataclass(frozen=True)
class Steer:
    """What a `/digest` command asks of this run; the default is an automatic update."""

    force: bool = False  # post even for quiet PRs and drafts
    explain: bool | None = None
    lang: Lang | None = None
    muted: bool | None = None
    route: bool = False
    # Asked by someone allowed to unmute: a forced run may then update a muted digest.
    # Anyone else's `/digest` leaves a muted PR alone (issue 8, item 6).
    overrides_mute: bool = False
    # The PR's writer job: ask the model when the cache has no result for the packet.
    # Any other run only looks the packet up (bot/handlers/writer.py).
    may_write: bool = False
    # Queued because another PR it overlaps moved (issue 42): edit an existing digest,
    # never post a new one (a new comment notifies every subscriber).
    edit_only: bool = False


@dataclass(frozen=True)
class SyncOutcome:
    action: str  # create | update | noop | closed | draft | muted
    pull: PullRequest | None = None
    digest: Digest | None = None
    markdown: str | None = None
    # Posted without a written section the writer could add: queue the writer job.
    wants_writing: bool = False
    # The PR's record among the open PRs (issue 42), and the GitHub calls its
    # neighbours part made; None when the job stopped before reading the files.
    record: OpenPr | None = None
    neighbour_calls: int = 0


async def sync_pull_request(
    gh: GitHubAPI,
    ctx: HandlerContext,
    repo: str,
    number: int,
    steer: Steer = Steer(),
    *,
    pr: PullRequest | None = None,  # already fetched by the caller in this job
) -> SyncOutcome:
    pr = pr or await gh.get_pull(repo, number)
    if pr.state != "open":
        await _publish(ctx, Converged(pr))
        return SyncOutcome("closed", pr)
    listed = await gh.list_comments(repo, number)
    comments = [
        CommentSnapshot(id=c.id, author=c.author, body=c.body, created_at=c.created_at)
        for c in listed
    ]
    repo_rules = await ctx.rules.rules_for(gh, repo)
    delivery: Delivery = repo_rules.rules.delivery or ctx.delivery
    # Delivered as a check run: the head's run of ours, and what its marker remembers.
    runs = await _check_runs(gh, pr) if delivery != "comment" else None
    previous = previous_marker(comments, ctx.bot_login) or _run_marker(runs, ctx, pr)
    muted = steer.muted if steer.muted is not None else bool(previous and previous.muted)
    if muted and steer.muted is None and not (steer.force and steer.overrides_mute):
        await _publish(ctx, Converged(pr))
        return SyncOutcome("muted", pr)
    if pr.draft and ctx.skip_drafts and not steer.force:
        await _publish(ctx, Converged(pr))
        return SyncOutcome("draft", pr)

    lang: Lang = steer.lang or (previous.lang if previous else ctx.language)
    explain = steer.explain if steer.explain is not None else bool(previous and previous.explain)
    files = await gh.list_files(repo, number)
    rules = repo_rules.rules
    notes = (repo_config_note(repo_rules.problem),) if repo_rules.problem else ()
    facts = _facts(pr, files)
    # CI, owners and labels as the base states them: a PR cannot rewrite its own.
    config = await repo_config_at_base(gh, repo, pr.base_sha, ctx.repo_configs)
    if config is not None and config.codeowners is not None and rules.routing.pools:
        await warn_about_pools(gh, ctx, repo, rules, config.codeowners)
    # Did the steps the PR reaches run on its head? Only where the base has a pipeline.
    statuses = (
        await head_statuses(gh, repo, pr.head_sha, ctx.ci_status_context)
        if wants_statuses(config, ctx.ci_status_context) else None
    )
    context, index_read = await _repo_context(gh, ctx, facts)
    # The conversation: the comments listed above (no second read), reviews, review
    # comments and the linked work; only the linked work when it is switched off.
    reviewed: tuple[str, ...] | None = None
    if ctx.read_conversation:
        read = await read_conversation(gh, ctx, pr, listed, facts)
        conversation, reviewed, unavailable = read.conversation, read.reviewed, read.unavailable
    else:
        linked = await linked_items(gh, ctx, facts, objections=False)
        conversation, unavailable = Conversation(linked=linked.items), (
            ("linked",) if linked.failed else ())
    # A part whose read failed is posted as unavailable, and the job re-runs later
    # (bot/handlers/refill.py): only the PR, its files and our comment may stop a job.
    unavailable = (
        *(("repo_config",) if config is not None and config.unread else ()),
        *(("ci",) if statuses is not None and statuses.problem
          and statuses.problem != NOT_FOUND else ()),
        *(() if index_read else ("index",)),
        *unavailable,
    )
    facts = facts.model_copy(update={"unavailable": unavailable})
    near = await _neighbours(gh, ctx, pr, facts, conversation)
    hood = near.hood if near is not None else None
    # Off the worker's loop: a hostile PR's scan takes seconds within its budget, and
    # RE2 releases the GIL, so the other jobs go on meanwhile (issue 32, item 2).
    digest = await asyncio.to_thread(
        build_digest, facts, rules, lang, explain=explain, extra_notes=notes,
        repo_context=context, repo_config=config, head_statuses=statuses,
        conversation=conversation, neighbourhood=hood,
    )

    owned = previous.owned_labels if previous else ()
    # skip_authors / skip_labels (routing.yaml or the repository's override): no digest,
    # no labels, no review requests; a digest posted earlier is reduced like a quiet one.
    skipped = (
        not steer.force
        and rules.routing.skip_reason(pr.author, pr.labels, ctx.bot_login) is not None
    )
    if rules.routing.apply_area_labels and not skipped:
        pr, owned = await _apply_area_labels(gh, pr, digest.labels, owned)
    routing = None if skipped else await route_pull_request(
        gh, ctx, pr, rules, lang,
        previously_routed=previous.routed if previous else (),
        # A muted PR is left alone: only an explicit `/digest route` requests reviews.
        request=steer.route or (rules.routing.request_on_label and not muted),
        owners=digest.owners, reviewed=reviewed,
    )
    routed = tuple(dict.fromkeys(
        (*(previous.routed if previous else ()), *(routing.requested_users if routing else ()))
    ))
    digest = digest.model_copy(
        update={"routing": routing, "muted": muted, "routed": routed, "owned_labels": owned}
    )
    wanted = not skipped and (
        steer.force or steer.muted is not None or digest.verdict != "quiet"
    )
    writing = await ctx.writer.written_for(gh, ctx, digest, facts, may_write=steer.may_write) \
        if wanted and ctx.writer is not None else None
    if writing is not None and writing.asked and await _changed_since(gh, pr):
        # A push or an edit came in while the model wrote: the PR's next job posts that
        # state's digest (and queues its writing), never this older written section.
        log.info("written section not posted: the PR changed meanwhile",
                 extra={"repo": repo, "pr": number})
        return SyncOutcome("stale", pr, digest)
    written = writing.result if writing is not None else None
    # Nothing for reviewers: an existing digest is reduced to the quiet body.
    quiet = digest.model_copy(update={"verdict": "quiet"})
    quiet_body = render_digest(quiet)
    markdown: str | None = render_digest(
        digest, ticked=existing_ticks(comments, ctx.bot_login), written=written,
    ) if wanted else None
    plan = plan_sticky(comments, ctx.bot_login, markdown, quiet_body=quiet_body, seen=_seen(pr))
    if steer.edit_only and plan.action == "create":
        plan = StickyPlan(action="noop", comment_id=None, body=None, delete_ids=plan.delete_ids)
    # As a check only, no comment is created (a new comment notifies every subscriber);
    # one posted before is still edited in place (an edit notifies nobody), never left stale.
    if delivery != "check" or plan.action != "create":
        await execute_sticky(gh, ctx, repo, number, plan)
    action: str = plan.action
    if runs is not None:
        check = plan_check_run(runs, _app_slug(ctx), pr.head_sha, markdown,
                               quiet_body=quiet_body, seen=_seen(pr))
        await execute_check_run(gh, ctx, pr, check, check_title(digest if wanted else quiet))
        action = check.action if delivery == "check" else action
    facts = _facts(pr, files).model_copy(  # labels may have changed above
        update={"unavailable": unavailable})
    extras = {key: getattr(digest, key) for key in ("routing", "muted", "routed", "owned_labels")}

    problem = repo_rules.problem

    def in_language(other: Lang) -> Digest:
        other_notes = (repo_config_note(problem),) if problem else ()
        return build_digest(
            facts, rules, other, explain=explain, extra_notes=other_notes,
            repo_context=context, repo_config=config, head_statuses=statuses,
            conversation=conversation, neighbourhood=hood,
        ).model_copy(update=extras)

    on_labels = {label.casefold() for label in (*pr.labels, *digest.labels)}
    routes_to = tuple(dict.fromkeys(
        user for label, pool in rules.routing.pools.items()
        if label.casefold() in on_labels for user in pool.users
    ))
    shown = {**(writing.others if writing else {}), **({lang: written} if written else {})}
    await _publish(ctx, Converged(pr, digest, markdown, in_language, conversation, routes_to,
                                  shown))
    return SyncOutcome(action, pr, digest, markdown,
                       wants_writing=writing is not None and writing.result is None
                       and not steer.may_write,
                       record=own_record(facts, digest, pr, conversation),
                       neighbour_calls=near.calls if near is not None else 0)


async def _neighbours(
    gh: GitHubAPI, ctx: HandlerContext, pr: PullRequest, facts: PullRequestFacts,
    conversation: Conversation,
) -> NeighbourRead | None:
    """The other open PRs and this one's live state; None (the part left out) without a
    store or when it fails: the digest never waits on it."""
    if ctx.open_prs is None:
        return None
    try:
        return await read_neighbourhood(gh, ctx.open_prs, ctx.linked, pr, facts, conversation)
    except Exception as exc:  # the store's failure costs this part only
        log.warning("open PRs unavailable: %s", exc, extra={"repo": pr.repo, "pr": pr.number})
        return None


async def _repo_context(
    gh: GitHubAPI, ctx: HandlerContext, facts: PullRequestFacts
) -> tuple[RepoContext | None, bool]:
    """The symbol index's findings, the changed files read at the PR's base; and whether
    GitHub answered for those files (else the lines are re-anchored this time)."""
    if ctx.index is None:
        return None, True
    base = await base_records(gh, ctx.index, facts, ctx.repo_configs.objects)
    # A few indexed SQLite look-ups (ms); off the loop all the same.
    found = await asyncio.to_thread(ctx.index.context, facts, None, base or {})
    return found, base is not None


async def _publish(ctx: HandlerContext, converged: Converged) -> None:
    if ctx.on_converged is None:
        return
    try:
        await ctx.on_converged(converged)
    except Exception:
        # A copy for the label view: the comment has converged, so the job succeeded.
        log.exception("storing the converged digest failed",
                      extra={"repo": converged.pull.repo, "pr": converged.pull.number})


async def execute_sticky(
    gh: GitHubAPI, ctx: HandlerContext, repo: str, number: int, plan: StickyPlan
) -> None:
    if plan.action == "create" and plan.body is not None:
        await _create_once(gh, ctx, repo, number, plan.body)
    elif plan.action == "update" and plan.comment_id is not None and plan.body is not None:
        await gh.update_comment(repo, plan.comment_id, plan.body)
    for duplicate in plan.delete_ids:
        await gh.delete_comment(repo, duplicate)
    ctx.metrics.comment_writes.labels(action=plan.action).inc()
    if plan.delete_ids:
        ctx.metrics.comment_writes.labels(action="delete").inc(len(plan.delete_ids))
    log.info(
        "sticky %s", plan.action,
        extra={"repo": repo, "pr": number, "deleted": len(plan.delete_ids)},
    )


async def _check_runs(gh: GitHubAPI, pr: PullRequest) -> list[CheckRunSnapshot]:
    listed = await gh.list_check_runs(pr.repo, pr.head_sha, CHECK_NAME)
    return [CheckRunSnapshot(id=r.id, head_sha=r.head_sha, app_slug=r.app_slug,
                             summary=r.summary) for r in listed]


def _app_slug(ctx: HandlerContext) -> str:
    return ctx.bot_login.removesuffix("[bot]")


def _run_marker(runs: list[CheckRunSnapshot] | None, ctx: HandlerContext,
                pr: PullRequest) -> Marker | None:
    kept = our_run(runs or [], _app_slug(ctx), pr.head_sha)
    return parse_marker(kept.summary) if kept is not None else None


async def execute_check_run(
    gh: GitHubAPI, ctx: HandlerContext, pr: PullRequest, plan: CheckPlan, title: str
) -> None:
    if plan.action == "create" and plan.summary is not None:
        try:
            await gh.create_check_run(pr.repo, pr.head_sha, CHECK_NAME, title, plan.summary)
        except (NotFound, RateLimited, Unprocessable):
            raise  # GitHub answered: nothing was created
        except GitHubError as exc:
            raise UncertainWrite(
                f"check run create on {pr.repo}@{pr.head_sha[:12]} unanswered ({exc});"
                " re-checking later",
                status=exc.status, retry_after=ctx.uncertain_write_recheck_seconds,
            ) from exc
    elif plan.action == "update" and plan.run_id is not None and plan.summary is not None:
        await gh.update_check_run(pr.repo, plan.run_id, title, plan.summary)
    ctx.metrics.comment_writes.labels(action=f"check_{plan.action}").inc()
    log.info("check run %s", plan.action, extra={"repo": pr.repo, "pr": pr.number})


async def _create_once(
    gh: GitHubAPI, ctx: HandlerContext, repo: str, number: int, body: str
) -> None:
    try:
        await gh.create_comment(repo, number, body)
    except (NotFound, RateLimited, Unprocessable):
        raise  # GitHub answered: nothing was created
    except GitHubError as exc:
        raise UncertainWrite(
            f"comment create on {repo}#{number} unanswered ({exc}); re-checking later",
            status=exc.status, retry_after=ctx.uncertain_write_recheck_seconds,
        ) from exc


async def _changed_since(gh: GitHubAPI, pr: PullRequest) -> bool:
    """Whether what the packet holds of the PR itself moved (not our own label writes)."""
    fresh = await gh.get_pull(pr.repo, pr.number)
    return (fresh.head_sha, fresh.title, fresh.body, fresh.state) != (
        pr.head_sha, pr.title, pr.body, pr.state)


def _seen(pr: PullRequest) -> int | None:
    """When GitHub last changed the PR as read (the marker's ordering), or None."""
    return int(pr.updated_at.timestamp()) if pr.updated_at is not None else None


def previous_marker(comments: list[CommentSnapshot], bot_login: str) -> Marker | None:
    mine = our_comments(comments, bot_login)
    return parse_marker(mine[0].body) if mine else None


async def _apply_area_labels(
    gh: GitHubAPI, pr: PullRequest, area_labels: tuple[str, ...], owned: tuple[str, ...]
) -> tuple[PullRequest, tuple[str, ...]]:
    plan = plan_labels(pr.labels, area_labels, owned)
    added: tuple[str, ...] = ()
    removed: list[str] = []
    try:
        if plan.add:
            await gh.add_labels(pr.repo, pr.number, list(plan.add))
            added = plan.add
        for label in plan.remove:
            await gh.remove_label(pr.repo, pr.number, label)
            removed.append(label)
    except GitHubError as exc:
        if not is_refusal(exc):
            raise
        # Labels are best effort, like review requests: a refusal never costs the digest.
        log.warning("area labels refused: %s", exc, extra={
            "repo": pr.repo, "pr": pr.number, "add": list(plan.add),
            "remove": list(plan.remove), "status": exc.status})
    labels = tuple(label for label in (*pr.labels, *added) if label not in removed)
    if added == plan.add and removed == list(plan.remove):
        return pr.model_copy(update={"labels": labels}), plan.owned_after
    # What GitHub took is ours; what it refused to add is not, what it kept is still ours.
    now_owned = tuple(sorted(
        dict.fromkeys(label for label in (*owned, *added) if label not in removed),
        key=str.casefold))
    return pr.model_copy(update={"labels": labels}), now_owned


def _facts(pr: PullRequest, files: list[ChangedFile]) -> PullRequestFacts:
    return PullRequestFacts(
        repo=pr.repo, number=pr.number, title=pr.title, body=pr.body, author=pr.author,
        labels=pr.labels, base_ref=pr.base_ref, base_sha=pr.base_sha, head_sha=pr.head_sha,
        draft=pr.draft,
        state=pr.state, changed_files=pr.changed_files, additions=pr.additions,
        deletions=pr.deletions, files=tuple(files),
    )
