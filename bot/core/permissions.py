"""Who may run which `/digest` command, and how often: the same matrix as vLLM's `/ci run`.

- write, maintain, admin, or on the trusted list: every command;
- the PR author without write access: the commands declared "author-or-write"
  (refresh, explain, en/zh, help) but not route/mute/unmute;
- everyone else (triage, read, none): refused, with a reason saying what to do;
- bots: always refused, silently (the handler never answers a bot, so bots can't loop).

`actor_permission` must come from the collaborator-permission endpoint
(GET /repos/{owner}/{repo}/collaborators/{user}/permission, using `role_name` so that
maintain and triage are told apart from write and read), never from a webhook's
`author_association`: that field says CONTRIBUTOR for private members of the org and
ignores write access granted through a team (docs/architecture.md, "Facts").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bot.core.commands import Command, CommandSpec
from bot.core.findings import Lang
from bot.core.i18n import t

# Same spelling as bot.github.protocol.Permission; core must not import bot.github.
Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]
WRITE_PERMISSIONS: frozenset[Permission] = frozenset({"admin", "maintain", "write"})


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    allowed: bool
    reason_key: str | None = None  # i18n key, None when allowed
    reason: str = ""  # localized text for the 😕 reply
    silent: bool = False  # refuse without replying (bots)


def _refuse(key: str, lang: Lang, name: str, *, silent: bool = False) -> Decision:
    return Decision(allowed=False, reason_key=key, reason=t(lang, key, name=name), silent=silent)


def decide(
    command: Command,
    *,
    actor: str,
    actor_permission: Permission,
    is_pr_author: bool,
    is_bot: bool,
    trusted: Collection[str],
    spec: CommandSpec | None,
    lang: Lang = "en",
) -> Decision:
    """May `actor` run `command`? `spec` is the handler's declaration (None: no handler)."""
    if is_bot:
        return _refuse("commands.refused.bot", lang, command.name, silent=True)
    if spec is None or not command.known:
        return _refuse("commands.refused.unknown", lang, command.name)
    # GitHub logins are case-insensitive; config files are written by hand.
    is_trusted = actor.casefold() in {login.casefold() for login in trusted}
    if actor_permission in WRITE_PERMISSIONS or is_trusted:
        return Decision(allowed=True)
    if spec.who == "author-or-write":
        if is_pr_author:
            return Decision(allowed=True)
        return _refuse("commands.refused.author-or-write", lang, command.name)
    return _refuse("commands.refused.write-only", lang, command.name)


def rate_limited_decision(command: Command, lang: Lang = "en") -> Decision:
    """The refusal to give when CommandBudget says no."""
    return _refuse("commands.refused.rate-limited", lang, command.name)


WINDOW_SECONDS = 60.0


def within_budget(history: Sequence[float], now: float, per_minute: int) -> bool:
    """True when fewer than `per_minute` commands ran in the last minute before `now`."""
    recent = sum(1 for moment in history if now - WINDOW_SECONDS < moment <= now)
    return recent < per_minute


class CommandBudget:
    """Sliding one-minute budget of commands per PR, with an injected clock.

    In memory, per process: it stops a comment storm from turning into a write storm
    (GitHub allows ~80 content-creating requests a minute per installation). Memory is
    bounded: at most `max_keys` PRs are tracked, the least recently used is dropped.
    """

    def __init__(
        self, per_minute: int, clock: Callable[[], float], *, max_keys: int = 10_000
    ) -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self._per_minute = per_minute
        self._clock = clock
        self._max_keys = max_keys
        self._history: dict[str, deque[float]] = {}

    def allow(self, pr_key: str) -> bool:
        """Record and allow one command on `pr_key` ("owner/repo#123"), or refuse it."""
        now = self._clock()
        history = self._history.pop(pr_key, None) or deque(maxlen=self._per_minute)
        while history and history[0] <= now - WINDOW_SECONDS:
            history.popleft()
        allowed = within_budget(history, now, self._per_minute)
        if allowed:
            history.append(now)
        self._history[pr_key] = history  # re-inserted last: dict order is recency
        if len(self._history) > self._max_keys:
            del self._history[next(iter(self._history))]
        return allowed
