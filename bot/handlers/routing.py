"""Request reviews from the pools of the PR's labels (and apply area labels if configured).

The choice itself is pure (bot.core.routing.reviewers); this module gathers what it needs —
who already reviewed, who is a collaborator, how loaded each reviewer is — with as few
calls as it can, and requests only what is missing.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.commands.parse import CommandSpec
from bot.core.findings import Owners
from bot.core.render.i18n import t
from bot.core.repo_config.codeowners import CodeOwners
from bot.core.repo_config.pools import pool_members_not_owners
from bot.core.routing.reviewers import RoutingPlan, RoutingRequest, choose_reviewers
from bot.core.rules import RuleSet
from bot.core.vocabulary import Lang, RoutingOutcome
from bot.github.protocol import (
    GitHubAPI,
    GitHubError,
    PullRequest,
    is_refusal,
)
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
    owners: Owners | None = None,
    reviewed: Sequence[str] | None = None,
) -> RoutingOutcome | None:
    """Request the missing reviewers for the PR's routed labels; None when no pool applies.

    `owners`: the changed files' code owners by the base's CODEOWNERS. GitHub requests
    them itself, so they count as requested; when they cover every changed file, the
    pools ask no one more (pools are for what CODEOWNERS is silent on). `reviewed`: who
    reviewed, when the caller listed the reviews already."""
    config = rules.routing
    if not any(label in config.pools for label in pr.labels):
        return None
    if owners is not None and (owners.users or owners.teams):
        pr = pr.model_copy(update={
            "requested_users": tuple(dict.fromkeys((*pr.requested_users, *owners.users))),
            "requested_teams": tuple(dict.fromkeys((*pr.requested_teams, *owners.teams))),
        })
        # A file left unmatched (the CODEOWNERS budget ran out) may be nobody's.
        if not owners.unowned and not owners.unmatched:
            request = False
    if reviewed is None:
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
    refused = _refused_on(ctx, pr.repo)

    def plan_now() -> RoutingPlan:
        return choose_reviewers(
            config_request(pr, rules, reviewed, removed, load, known, refused=refused)
        )

    plan = plan_now()
    for _ in range(3):
        unknown = [u for u in plan.users if u not in known]
        if not unknown:
            break
        for user in unknown:
            known[user] = await permission_of(gh, ctx, pr.repo, user) in _COLLABORATOR
        plan = plan_now()
    if request and (plan.users or plan.teams):
        asked = await _request_best_effort(gh, pr, plan)
        if asked.refused:
            # Remembered for a while, so the next run asks someone else of the pool
            # instead of being refused again.
            _remember_refused(ctx, pr.repo, asked.refused)
            plan = _as_asked(plan, asked)
    return _outcome(pr, rules, plan, lang, requested=request)


async def warn_about_pools(
    gh: GitHubAPI, ctx: HandlerContext, repo: str, rules: RuleSet, codeowners: CodeOwners
) -> tuple[tuple[str, str], ...]:
    """Log, once per repository and CODEOWNERS content, the pool members the base's
    CODEOWNERS does not name and who are not collaborators either: routing would skip
    them on every PR, so `routing.yaml` needs an edit. Returns them (for tests)."""
    key = (repo, hash(codeowners.rules))
    if key in ctx.repo_configs.pools_checked:
        return ()
    strays = []
    try:
        for label, user in pool_members_not_owners(rules.routing, codeowners):
            if await permission_of(gh, ctx, repo, user) not in _COLLABORATOR:
                strays.append((label, user))
    except GitHubError as exc:
        # A check, not the job: asked again on a later run.
        log.info("routing pools not checked: %s", exc, extra={"repo": repo})
        return ()
    ctx.repo_configs.pools_checked[key] = True
    if strays:
        log.warning(
            "routing pool members are neither code owners nor collaborators: %s",
            ", ".join(f"{user} ({label})" for label, user in strays),
            extra={"repo": repo, "codeowners": codeowners.source},
        )
    return tuple(strays)


@dataclass(frozen=True)
class _Asked:
    users: tuple[str, ...]
    teams: tuple[str, ...]
    refused: tuple[str, ...]


async def _request_best_effort(gh: GitHubAPI, pr: PullRequest, plan: RoutingPlan) -> _Asked:
    """Request the plan's reviewers; never lets a refusal cost the digest (issue 32).

    GitHub's 422 does not say which name it refused (a pool member who lost access or
    left the organisation, a race with the author's own change), so after a refusal
    each name is asked on its own and the refused ones are dropped. Transient failures
    (5xx, 429, no answer) and rejected credentials still fail the job: it is retried,
    and the digest is written only after this step, so a retry never posts it twice.
    """
    users, teams = list(plan.users), list(plan.teams)
    try:
        await gh.request_reviewers(pr.repo, pr.number, users, teams)
    except GitHubError as exc:
        if not is_refusal(exc):
            raise
        log.warning(
            "review request refused; asking one by one: %s", exc,
            extra={"repo": pr.repo, "pr": pr.number, "users": users, "teams": teams,
                   "status": exc.status},
        )
    else:
        log.info(
            "requested reviewers",
            extra={"repo": pr.repo, "pr": pr.number, "users": users, "teams": teams},
        )
        return _Asked(tuple(users), tuple(teams), ())
    taken_users: list[str] = []
    taken_teams: list[str] = []
    refused: list[str] = []
    for name, is_team in (*((u, False) for u in users), *((team, True) for team in teams)):
        try:
            await gh.request_reviewers(
                pr.repo, pr.number, [] if is_team else [name], [name] if is_team else []
            )
        except GitHubError as exc:
            if not is_refusal(exc):
                raise
            refused.append(name)
            log.warning(
                "review request refused for %s: %s", name, exc,
                extra={"repo": pr.repo, "pr": pr.number, "status": exc.status},
            )
        else:
            (taken_teams if is_team else taken_users).append(name)
    log.info(
        "requested reviewers",
        extra={"repo": pr.repo, "pr": pr.number, "users": taken_users, "teams": taken_teams,
               "refused": refused},
    )
    return _Asked(tuple(taken_users), tuple(taken_teams), tuple(refused))


def _as_asked(plan: RoutingPlan, asked: _Asked) -> RoutingPlan:
    """The plan as GitHub took it: only the names it accepted are requested, each still
    credited to its label, and the refused ones are listed as skipped."""
    taken = {name.casefold() for name in (*asked.users, *asked.teams)}
    refused = {name.casefold() for name in asked.refused}
    return plan.model_copy(update={
        "users": asked.users,
        "teams": asked.teams,
        "because": tuple(pair for pair in plan.because if pair[0].casefold() in taken),
        "skipped": (
            *(pair for pair in plan.skipped if pair[0].casefold() not in refused),
            *((name, "refused") for name in asked.refused),
        ),
    })


def _refused_on(ctx: HandlerContext, repo: str) -> tuple[str, ...]:
    cached = ctx.refused_reviewers.get(repo)
    return tuple(cached) if isinstance(cached, tuple) else ()


def _remember_refused(ctx: HandlerContext, repo: str, names: Sequence[str]) -> None:
    ctx.refused_reviewers[repo] = tuple(dict.fromkeys((*_refused_on(ctx, repo), *names)))


def config_request(
    pr: PullRequest,
    rules: RuleSet,
    reviewed: Sequence[str],
    removed: Sequence[str],
    load: dict[str, int],
    known: dict[str, bool],
    *,
    refused: Sequence[str] = (),
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
        refused=tuple(refused),
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
