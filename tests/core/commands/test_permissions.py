"""Who may run which command: the whole matrix, cell by cell, plus the rate budget."""

from __future__ import annotations

from typing import get_args

import pytest

from bot.core.commands.parse import Command, CommandSpec, find_spec, parse_commands
from bot.core.commands.permissions import (
    CommandBudget,
    Permission,
    decide,
    rate_limited_decision,
    within_budget,
)
from bot.core.render.commands import refusal_text
from bot.core.render.i18n import CATALOGUE
from bot.core.vocabulary import Lang

SPECS = (
    CommandSpec(
        name="refresh",
        usage="/digest",
        summary_key="commands.summary.refresh",
        who="author-or-write",
    ),
    CommandSpec(
        name="explain",
        usage="/digest explain",
        summary_key="commands.summary.explain",
        who="author-or-write",
    ),
    CommandSpec(
        name="en", usage="/digest en", summary_key="commands.summary.en", who="author-or-write"
    ),
    CommandSpec(
        name="zh", usage="/digest zh", summary_key="commands.summary.zh", who="author-or-write"
    ),
    CommandSpec(
        name="help",
        usage="/digest help",
        summary_key="commands.summary.help",
        who="author-or-write",
    ),
    CommandSpec(
        name="route",
        usage="/digest route",
        summary_key="commands.summary.route",
        who="anyone-with-write",
    ),
    CommandSpec(
        name="mute",
        usage="/digest mute",
        summary_key="commands.summary.mute",
        who="anyone-with-write",
    ),
    CommandSpec(
        name="unmute",
        usage="/digest unmute",
        summary_key="commands.summary.unmute",
        who="anyone-with-write",
    ),
)
AUTHOR_COMMANDS = {"refresh", "explain", "en", "zh", "help"}
WRITE_ONLY_COMMANDS = {"route", "mute", "unmute"}
PERMISSIONS: tuple[Permission, ...] = get_args(Permission)

OK = None
NEED_WRITE = "commands.refused.write-only"
NEED_AUTHOR = "commands.refused.author-or-write"


def _expected(permission: Permission, author: bool, name: str) -> str | None:
    """The matrix, written out independently of decide()'s branches."""
    table: dict[tuple[str, bool], dict[str, str | None]] = {}
    for perm in ("admin", "maintain", "write"):
        for is_author in (True, False):
            table[(perm, is_author)] = dict.fromkeys(AUTHOR_COMMANDS | WRITE_ONLY_COMMANDS, OK)
    for perm in ("triage", "read", "none"):
        table[(perm, True)] = {
            **dict.fromkeys(AUTHOR_COMMANDS, OK),
            **dict.fromkeys(WRITE_ONLY_COMMANDS, NEED_WRITE),
        }
        table[(perm, False)] = {
            **dict.fromkeys(AUTHOR_COMMANDS, NEED_AUTHOR),
            **dict.fromkeys(WRITE_ONLY_COMMANDS, NEED_WRITE),
        }
    return table[(permission, author)][name]


def _command(name: str) -> Command:
    body = "/digest" if name == "refresh" else f"/digest {name}"
    (command,) = parse_commands(body)
    return command


MATRIX = [
    (perm, author, name)
    for perm in PERMISSIONS
    for author in (True, False)
    for name in sorted(AUTHOR_COMMANDS | WRITE_ONLY_COMMANDS)
]


@pytest.mark.parametrize(("permission", "is_author", "name"), MATRIX)
def test_matrix_cell(permission: Permission, is_author: bool, name: str) -> None:
    decision = decide(
        _command(name),
        actor="someone",
        actor_permission=permission,
        is_pr_author=is_author,
        is_bot=False,
        trusted=(),
        spec=find_spec(SPECS, name),
    )
    expected = _expected(permission, is_author, name)
    assert decision.allowed is (expected is None)
    assert decision.reason_key == expected
    assert not decision.silent
    if expected is not None:
        assert decision.command == name
        assert f"/digest {name}" in refusal_text(decision, "en")
        assert "maintainer" in refusal_text(decision, "en")  # says what to do


def test_matrix_covers_every_cell() -> None:
    assert len(MATRIX) == 6 * 2 * 8


@pytest.mark.parametrize("permission", PERMISSIONS)
@pytest.mark.parametrize("name", sorted(AUTHOR_COMMANDS | WRITE_ONLY_COMMANDS))
def test_trusted_list_allows_everything(permission: Permission, name: str) -> None:
    decision = decide(
        _command(name),
        actor="TrustedPerson",
        actor_permission=permission,
        is_pr_author=False,
        is_bot=False,
        trusted=["trustedperson"],  # logins are case-insensitive
        spec=find_spec(SPECS, name),
    )
    assert decision.allowed


@pytest.mark.parametrize("permission", PERMISSIONS)
@pytest.mark.parametrize("name", [*sorted(AUTHOR_COMMANDS), "frobnicate"])
def test_bots_are_refused_silently(permission: Permission, name: str) -> None:
    decision = decide(
        _command(name),
        actor="mergify[bot]",
        actor_permission=permission,
        is_pr_author=True,
        is_bot=True,
        trusted=["mergify[bot]"],
        spec=find_spec(SPECS, name),
    )
    assert not decision.allowed
    assert decision.silent
    assert decision.reason_key == "commands.refused.bot"


@pytest.mark.parametrize("permission", PERMISSIONS)
def test_unknown_command_points_to_help(permission: Permission) -> None:
    (command,) = parse_commands("/digest frobnicate")
    decision = decide(
        command,
        actor="someone",
        actor_permission=permission,
        is_pr_author=True,
        is_bot=False,
        trusted=(),
        spec=find_spec(SPECS, command.name),
    )
    assert not decision.allowed
    assert decision.reason_key == "commands.refused.unknown"
    assert "/digest help" in refusal_text(decision, "en")
    assert "frobnicate" in refusal_text(decision, "en")


def test_known_word_without_a_declared_handler_is_unknown() -> None:
    decision = decide(
        _command("mute"),
        actor="m",
        actor_permission="admin",
        is_pr_author=False,
        is_bot=False,
        trusted=(),
        spec=None,
    )
    assert decision.reason_key == "commands.refused.unknown"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reasons_are_localized(lang: Lang) -> None:
    decision = decide(
        _command("route"),
        actor="x",
        actor_permission="read",
        is_pr_author=False,
        is_bot=False,
        trusted=(),
        spec=find_spec(SPECS, "route"),
    )
    expected = CATALOGUE[NEED_WRITE][lang].format(command="`/digest route`")
    assert refusal_text(decision, lang) == expected


# --- rate limit -------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "now", "per_minute", "allowed"),
    [
        ([], 100.0, 1, True),
        ([99.0], 100.0, 1, False),
        ([40.0], 100.0, 1, True),  # exactly a minute ago: out of the window
        ([40.5], 100.0, 1, False),
        ([90.0, 95.0], 100.0, 3, True),
        ([90.0, 95.0, 99.0], 100.0, 3, False),
        ([10.0, 20.0, 99.0], 100.0, 3, True),
        ([150.0], 100.0, 1, True),  # a future stamp (clock skew) isn't counted
    ],
)
def test_within_budget(history: list[float], now: float, per_minute: int, allowed: bool) -> None:
    assert within_budget(history, now, per_minute) is allowed


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_budget_per_pr_with_injected_clock() -> None:
    clock = FakeClock()
    budget = CommandBudget(per_minute=3, clock=clock)
    assert [budget.allow("o/r#1") for _ in range(4)] == [True, True, True, False]
    assert budget.allow("o/r#2")  # another PR has its own budget
    clock.now += 30
    assert not budget.allow("o/r#1")
    clock.now += 30.5  # the first three are now older than a minute
    assert [budget.allow("o/r#1") for _ in range(4)] == [True, True, True, False]


def test_refused_attempts_do_not_extend_the_wait() -> None:
    clock = FakeClock()
    budget = CommandBudget(per_minute=1, clock=clock)
    assert budget.allow("k")
    for _ in range(10):
        clock.now += 5
        assert not budget.allow("k")
    clock.now += 11  # 61 s after the only accepted command
    assert budget.allow("k")


def test_budget_memory_is_bounded() -> None:
    clock = FakeClock()
    budget = CommandBudget(per_minute=1, clock=clock, max_keys=2)
    assert budget.allow("a")
    assert budget.allow("b")
    assert budget.allow("c")  # evicts "a", the least recently used
    assert budget.allow("a")  # forgotten, so allowed again
    assert not budget.allow("c")  # still tracked


def test_budget_rejects_zero() -> None:
    with pytest.raises(ValueError, match="per_minute"):
        CommandBudget(per_minute=0, clock=FakeClock())


def test_rate_limited_reason() -> None:
    decision = rate_limited_decision(_command("explain"))
    assert not decision.allowed
    assert refusal_text(decision, "zh") == CATALOGUE["commands.refused.rate-limited"]["zh"]
