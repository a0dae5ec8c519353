"""Routing pools checked against the base's CODEOWNERS: who in `routing.yaml` the
repository no longer names as an owner of anything (a hand copy drifts within weeks)."""

from __future__ import annotations

from bot.core.repo_config.codeowners import CodeOwners
from bot.core.routing.config import RoutingConfig


def owners_named(codeowners: CodeOwners) -> frozenset[str]:
    """Every user login CODEOWNERS names, case-folded, without '@' (teams left out)."""
    return frozenset(
        owner.lstrip("@").casefold()
        for rule in codeowners.rules
        for owner in rule.owners
        if owner.startswith("@") and "/" not in owner
    )


def pool_members_not_owners(
    routing: RoutingConfig, codeowners: CodeOwners
) -> tuple[tuple[str, str], ...]:
    """(label, login) for every pool member CODEOWNERS does not name, in pool order."""
    named = owners_named(codeowners)
    return tuple(
        (label, user)
        for label, pool in routing.pools.items()
        for user in pool.users
        if user.casefold() not in named
    )
