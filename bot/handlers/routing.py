"""Request reviews from the pools of the PR's labels (and apply area labels if configured).

The choice itself is pure (bot.core.reviewers); this module gathers what it needs —
who already reviewed, who is a collaborator, how loaded each reviewer is — with as few
calls as it can, and requests only what is missing.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from bot.core.commands import CommandSpec
from bot.core.findings import Lang, RoutingOutcome
from bot.core.i18n import t
from bot.core.reviewers import RoutingPlan, RoutingRequest, choose_reviewers
from bot.core.rules import RuleSet
from bot.github.protocol import GitHubAPI, PullRequest
from bot.handlers.context import HandlerContext, permission_of

log = logging.getLogger(__name__)

HELP: tuple[CommandSpec, ...] = (
    CommandSpec(name="route", usage="/digest route", summary_key="commands.summary.route",
                who="anyone-with-write"),
)

_COLLABORATOR = frozenset({"admin", "maintain", "write", "triage", "read"})


async def route_pull_request(
    gh: GitHubAPI,
    ctx: HandlerContext,
    pr: PullRequest,
    rules: RuleSet,
    lang: Lang,
    *,
    previously_routed: Sequence[str],
    request: bool,
) -> RoutingOutcome | None:
    """Request the missing reviewers for the PR's routed labels; None when no pool applies."""
    config = rules.routing
    if not any(label in config.pools for label in pr.labels):
        return None
    reviewed = await gh.list_reviewers_who_reviewed(pr.repo, pr.number)
    requested = {u.lower() for u in pr.requested_users}
    # We requested them before, they are no longer requested and have not reviewed:
    # a human removed the request, and routing must not put it back.
    removed = tuple(
        u for u in previously_routed
        if u.lower() not in requested and u.lower() not in {r.lower() for r in reviewed}
    )
    load = await _review_load(gh, ctx, pr.repo)
    known: dict[str, bool] = {}
    plan = choose_reviewers(config_request(pr, rules, reviewed, removed, load, known))
    for _ in range(3):
        unknown = [u for u in plan.users if u not in known]
        if not unknown:
            break
        for user in unknown:
            known[user] = await permission_of(gh, ctx, pr.repo, user) in _COLLABORATOR
        plan = choose_reviewers(config_request(pr, rules, reviewed, removed, load, known))
    if request and (plan.users or plan.teams):
        await gh.request_reviewers(pr.repo, pr.number, list(plan.users), list(plan.teams))
        log.info(
            "requested reviewers", extra={"repo": pr.repo, "pr": pr.number,
                                          "users": list(plan.users), "teams": list(plan.teams)},
        )
    return _outcome(pr, rules, plan, lang, requested=request)


def config_request(
    pr: PullRequest,
    rules: RuleSet,
    reviewed: Sequence[str],
    removed: Sequence[str],
    load: dict[str, int],
    known: dict[str, bool],
) -> RoutingRequest:
    return RoutingRequest(
        repo=pr.repo,
        number=pr.number,
        author=pr.author,
        labels=pr.labels,
        config=rules.routing,
        already_requested_users=pr.requested_users,
        already_requested_teams=pr.requested_teams,
        already_reviewed=tuple(reviewed),
        removed_by_humans=tuple(removed),
        collaborators_ok=dict(known),
        open_review_load=load,
    )


def _outcome(
    pr: PullRequest, rules: RuleSet, plan: RoutingPlan, lang: Lang, *, requested: bool
) -> RoutingOutcome:
    """Who is (or, when not requesting, would be) asked to review, and for which label."""
    label_of: dict[str, str] = {}
    for label in pr.labels:
        pool = rules.routing.pools.get(label)
        for member in (*pool.users, *pool.teams) if pool else ():
            label_of.setdefault(member.casefold(), label)
    already = [
        (name, label_of[name.casefold()])
        for name in (*pr.requested_users, *pr.requested_teams)
        if name.casefold() in label_of
    ]
    new_users = plan.users if requested else ()
    new_teams = plan.teams if requested else ()
    return RoutingOutcome(
        requested_users=(*(n for n, _ in already if n in pr.requested_users), *new_users),
        requested_teams=(*(n for n, _ in already if n in pr.requested_teams), *new_teams),
        because=(*already, *(plan.because if requested else ())),
        skipped=tuple((name, t(lang, f"routing.skipped.{why}")) for name, why in plan.skipped),
    )


async def _review_load(gh: GitHubAPI, ctx: HandlerContext, repo: str) -> dict[str, int]:
    cached = ctx.review_load.get(repo)
    if isinstance(cached, dict):
        return cached
    counts: Counter[str] = Counter()
    for pull in await gh.list_open_pulls(repo, limit=100):
        counts.update(pull.requested_users)
    load = dict(counts)
    ctx.review_load[repo] = load
    return load
