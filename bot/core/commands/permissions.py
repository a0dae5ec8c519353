"""Who may run which `/digest` command, and how often: the same matrix as vLLM's `/ci run`.

- write, maintain, admin, or on the trusted list: every command;
- the PR author without write access: the commands declared "author-or-write"
  (refresh, explain, en/zh, help) but not route/mute/unmute;
- everyone else (triage, read, none): refused, with a reason saying what to do;
- bots: always refused, silently (the handler never answers a bot, so bots can't loop).

Permission is decided before anything else (docs/architecture.md, "Security rules"):
an outsider's unknown subcommand is refused silently, so a comment can never make the
bot echo an outsider's words; rendering (bot/core/render/commands.py) words a refusal and
escapes every echoed word like PR text.

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

from bot.core.commands.parse import Command, CommandSpec

# Same spelling as bot.github.protocol.Permission; core must not import bot.github.
Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]
WRITE_PERMISSIONS: frozenset[Permission] = frozenset({"admin", "maintain", "write"})


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    allowed: bool
    reason_key: str | None = None  # why it was refused (an i18n key), None when allowed
    command: str = ""  # the refused command's name, as typed (untrusted)
    silent: bool = False  # refuse without replying (bots)


# Refusals are answered sparingly (issue 8, item 3): whoever can comment can refuse
# themselves as often as they like, and each answer is a content-creating write.
OUTSIDER_REPLIES_PER_HOUR = 1  # per PR: replies explaining a refusal to a non-maintainer
REFUSAL_REACTIONS_PER_HOUR = 5  # per PR and audience: 😕 on comments that ran nothing
HOUR_SECONDS = 3600.0


def _refuse(key: str, name: str, *, silent: bool = False) -> Decision:
    return Decision(allowed=False, reason_key=key, command=name, silent=silent)


def is_insider(actor: str, actor_permission: Permission, trusted: Collection[str]) -> bool:
    """Write access or on the trusted list: may run every command, and spends the
    maintainers' budget (everyone else has a budget of their own)."""
    # GitHub logins are case-insensitive; config files are written by hand.
    is_trusted = actor.casefold() in {login.casefold() for login in trusted}
    return actor_permission in WRITE_PERMISSIONS or is_trusted


def decide(
    command: Command,
    *,
    actor: str,
    actor_permission: Permission,
    is_pr_author: bool,
    is_bot: bool,
    trusted: Collection[str],
    spec: CommandSpec | None,
) -> Decision:
    """May `actor` run `command`? `spec` is the handler's declaration (None: no handler)."""
    if is_bot:
        return _refuse("commands.refused.bot", command.name, silent=True)
    insider = is_insider(actor, actor_permission, trusted)
    if spec is None or not command.known:
        # Echoing an outsider's word would let anyone make the bot post it.
        return _refuse("commands.refused.unknown", command.name,
                       silent=not (insider or is_pr_author))
    if insider:
        return Decision(allowed=True)
    if spec.who == "author-or-write":
        if is_pr_author:
            return Decision(allowed=True)
        return _refuse("commands.refused.author-or-write", command.name)
    return _refuse("commands.refused.write-only", command.name)


def rate_limited_decision(command: Command) -> Decision:
    """The refusal to give when CommandBudget says no."""
    return _refuse("commands.refused.rate-limited", command.name)


WINDOW_SECONDS = 60.0


def within_budget(
    history: Sequence[float], now: float, per_minute: int, window: float = WINDOW_SECONDS
) -> bool:
    """True when fewer than `per_minute` commands ran in the last `window` before `now`."""
    recent = sum(1 for moment in history if now - window < moment <= now)
    return recent < per_minute


class CommandBudget:
    """Sliding budget (by default one minute) of commands per PR, with an injected clock.

    In memory, per process: it stops a comment storm from turning into a write storm
    (GitHub allows ~80 content-creating requests a minute per installation). Memory is
    bounded: at most `max_keys` PRs are tracked, the least recently used is dropped.
    The same class caps refusal replies and reactions per PR over an hour.
    """

    def __init__(
        self, per_minute: int, clock: Callable[[], float], *, max_keys: int = 10_000,
        window_seconds: float = WINDOW_SECONDS,
    ) -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self._per_minute = per_minute
        self._window = window_seconds
        self._clock = clock
        self._max_keys = max_keys
        self._history: dict[str, deque[float]] = {}

    def allow(self, pr_key: str) -> bool:
        """Record and allow one command on `pr_key` ("owner/repo#123"), or refuse it."""
        now = self._clock()
        history = self._history.pop(pr_key, None) or deque(maxlen=self._per_minute)
        while history and history[0] <= now - self._window:
            history.popleft()
        allowed = within_budget(history, now, self._per_minute, self._window)
        if allowed:
            history.append(now)
        self._history[pr_key] = history  # re-inserted last: dict order is recency
        if len(self._history) > self._max_keys:
            del self._history[next(iter(self._history))]
        return allowed
