"""Choose reviewers from the label pools of rules/routing.yaml, and plan area labels.

Deterministic (lesson 5 of PEERS.md): the same PR and the same inputs pick the same
people in every process and on every re-run, whatever order the inputs come in. Ties
are broken by sha256(seed, login), never by Python's hash(), which is salted per
process. Logins and label names compare case-insensitively, as GitHub does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping

from pydantic import BaseModel, ConfigDict, Field

from bot.core.routing.config import Pool, RoutingConfig
from bot.core.vocabulary import Reviewers

SkipReason = str  # one of SKIP_REASONS; i18n key "routing.skipped.<reason>"
SKIP_REASONS = (
    "author",
    "away",
    "already-requested",
    "already-reviewed",
    "removed-by-human",
    "not-collaborator",
    "cap-reached",
    "refused",
)


# defer_build (here and LabelPlan): only the service plans routing; the CLI's digest
# does not build these validators at import.
class RoutingRequest(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    repo: str
    number: int
    author: str
    labels: tuple[str, ...]  # the PR's labels
    config: RoutingConfig
    already_requested_users: tuple[str, ...] = ()
    already_requested_teams: tuple[str, ...] = ()
    already_reviewed: tuple[str, ...] = ()
    removed_by_humans: tuple[str, ...] = ()  # a person removed their request: never re-request
    # Known (non-)collaborators. A login missing here is assumed requestable; one that
    # isn't a collaborator makes GitHub reject the whole request with 422.
    collaborators_ok: Mapping[str, bool] | None = None
    open_review_load: Mapping[str, int] = Field(default_factory=dict)  # open requests per user
    away: tuple[str, ...] = ()  # in addition to config.away (e.g. a calendar feed)
    # Users and teams GitHub refused to be asked (a 4xx on the review request): lost
    # access, left the organisation. Asking again would only be refused again.
    refused: tuple[str, ...] = ()
    seed: str | None = None  # default f"{repo}#{number}"


class RoutingPlan(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    users: tuple[str, ...] = ()  # to request now, in pick order
    teams: tuple[str, ...] = ()
    because: tuple[tuple[str, str], ...] = ()  # (login or team, label it serves)
    skipped: tuple[tuple[str, SkipReason], ...] = ()  # (login or team, reason)


def _fold(names: Collection[str]) -> set[str]:
    return {name.casefold() for name in names}


def _tiebreak(seed: str, name: str) -> int:
    digest = hashlib.sha256(f"{seed}\x00{name.casefold()}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _unique(names: Collection[str]) -> list[str]:
    seen: set[str] = set()
    kept: list[str] = []
    for name in names:
        if name.casefold() not in seen:
            seen.add(name.casefold())
            kept.append(name)
    return kept


def _routed_pools(request: RoutingRequest) -> list[tuple[str, Pool]]:
    """The pools of the PR's labels, in the order routing.yaml declares them.

    Config order, not the PR's label order, so the result can't depend on the order
    GitHub happens to list labels in.
    """
    on_pr = _fold(request.labels)
    pools = request.config.pools.items()
    return [(label, pool) for label, pool in pools if label.casefold() in on_pr]


def choose_reviewers(request: RoutingRequest) -> RoutingPlan:
    """Who to request for each routed label, within the per-label and per-PR caps.

    Already requested or reviewed pool members count toward their label's cap. A person
    counts for every routed label whose pool holds them, and candidates who cover more
    still-open labels are preferred (one ping instead of two), then the least loaded,
    then the seeded hash. Teams fill a label only when its users can't reach the cap,
    at most one team per label: a team ping notifies many people.
    """
    config = request.config
    seed = request.seed if request.seed is not None else f"{request.repo}#{request.number}"
    author = request.author.casefold()
    away = _fold(config.away) | _fold(request.away)
    requested = _fold(request.already_requested_users)
    reviewed = _fold(request.already_reviewed)
    removed = _fold(request.removed_by_humans)
    refused = _fold(request.refused)
    requested_teams = _fold(request.already_requested_teams)
    not_collaborators = {
        login.casefold() for login, ok in (request.collaborators_ok or {}).items() if not ok
    }
    load = {login.casefold(): count for login, count in request.open_review_load.items()}
    pools = _routed_pools(request)
    pool_users = [(label, _fold(pool.users)) for label, pool in pools]

    skipped: dict[str, SkipReason] = {}  # folded name -> reason, first reason wins
    shown: dict[str, str] = {}  # folded name -> spelling for the output

    def skip(name: str, reason: SkipReason) -> None:
        skipped.setdefault(name.casefold(), reason)
        shown.setdefault(name.casefold(), name)

    def exclusion(login: str) -> SkipReason | None:
        folded = login.casefold()
        if folded == author:
            return "author"
        if folded in removed:
            return "removed-by-human"
        if folded in reviewed:
            return "already-reviewed"
        if folded in requested:
            return "already-requested"
        if folded in away:
            return "away"
        if folded in not_collaborators:
            return "not-collaborator"
        if folded in refused:
            return "refused"
        return None

    # Slots already used on this PR: every existing request (CODEOWNERS' included, so
    # we don't pile onto them) and pool members who reviewed. Drive-by and bot reviews
    # (gemini-code-assist reviews every vLLM PR) don't use a routing slot.
    every_pool_user: set[str] = set().union(*(users for _, users in pool_users))
    used = len(requested | (reviewed & every_pool_user)) + len(requested_teams)
    budget = max(0, config.max_reviewers_per_pr - used)

    covering = requested | reviewed  # folded logins that already serve their pools
    picked_users: list[str] = []
    picked_teams: list[str] = []
    because: list[tuple[str, str]] = []

    def teams_on_pr(pool: Pool) -> int:
        return len(_fold(pool.teams) & (requested_teams | _fold(picked_teams)))

    def need(index: int) -> int:
        pool = pools[index][1]
        return pool.cap - len(pool_users[index][1] & covering) - teams_on_pr(pool)

    for index, (label, pool) in enumerate(pools):
        members = pool_users[index][1]
        because.extend((login, label) for login in picked_users if login.casefold() in members)
        because.extend(
            (team, label) for team in picked_teams if team.casefold() in _fold(pool.teams)
        )
        candidates: list[str] = []
        for login in _unique(pool.users):
            reason = exclusion(login)
            if reason is not None:
                skip(login, reason)
            elif login.casefold() not in covering:
                candidates.append(login)
        for team in pool.teams:
            if team.casefold() in requested_teams:
                skip(team, "already-requested")
            elif team.casefold() in refused:
                skip(team, "refused")
        askable_teams = [team for team in _unique(pool.teams) if team.casefold() not in refused]
        open_labels = [i for i in range(index, len(pools)) if need(i) > 0]

        def rank(login: str, open_labels: list[int] = open_labels) -> tuple[int, int, int]:
            folded = login.casefold()
            covers = sum(1 for i in open_labels if folded in pool_users[i][1])
            return (-covers, load.get(folded, 0), _tiebreak(seed, login))

        missing = need(index)
        for login in sorted(candidates, key=rank)[: max(0, missing)]:
            if budget <= 0:
                skip(login, "cap-reached")
                continue
            picked_users.append(login)
            covering.add(login.casefold())
            because.append((login, label))
            budget -= 1
            missing -= 1

        if missing > 0 and askable_teams and teams_on_pr(pool) == 0:
            team = min(askable_teams, key=lambda name: _tiebreak(seed, name))
            if budget <= 0:
                skip(team, "cap-reached")
            else:
                picked_teams.append(team)
                because.append((team, label))
                budget -= 1

    return RoutingPlan(
        users=tuple(picked_users),
        teams=tuple(picked_teams),
        because=tuple(dict.fromkeys(because)),
        skipped=tuple((shown[name], skipped[name]) for name in sorted(skipped)),
    )


def suggested_reviewers(
    labels: Collection[str], config: RoutingConfig, *, exclude: Collection[str] = ()
) -> Reviewers:
    """Every pool member of the given labels, sorted: the digest's JSON `reviewers`.

    What routing points to before anything is requested; `exclude` lets the caller
    drop the author.
    """
    folded_labels = _fold(labels)
    dropped = _fold(exclude)
    users: dict[str, str] = {}
    teams: dict[str, str] = {}
    for label, pool in config.pools.items():
        if label.casefold() not in folded_labels:
            continue
        for login in pool.users:
            if login.casefold() not in dropped:
                users.setdefault(login.casefold(), login)
        for team in pool.teams:
            teams.setdefault(team.casefold(), team)
    return Reviewers(
        users=tuple(users[key] for key in sorted(users)),
        teams=tuple(teams[key] for key in sorted(teams)),
    )


class LabelPlan(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    owned_after: tuple[str, ...] = ()  # labels the bot owns once the plan ran: store these


def plan_labels(
    current: Collection[str],
    desired_area_labels: Collection[str],
    added_by_bot_before: Collection[str],
    *,
    removed_by_humans: Collection[str] = (),
) -> LabelPlan:
    """Converge the PR's area labels, touching only what the bot itself added.

    A label a human or Mergify added is never removed (actions/labeler's `sync-labels`
    is hated for exactly that). A label a person removed is not re-added, or the bot
    would fight them on every push.
    """
    now = _fold(current)
    owned = _fold(added_by_bot_before) & now
    desired = _unique(sorted(desired_area_labels, key=str.casefold))
    wanted = _fold(desired)
    refused = _fold(removed_by_humans)
    add = [label for label in desired if label.casefold() not in now | refused]
    remove = sorted(
        (label for label in _unique(current) if label.casefold() in owned - wanted),
        key=str.casefold,
    )
    kept = [label for label in _unique(current) if label.casefold() in owned & wanted]
    return LabelPlan(
        add=tuple(add),
        remove=tuple(remove),
        owned_after=tuple(sorted(_unique([*kept, *add]), key=str.casefold)),
    )
