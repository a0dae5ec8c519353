"""`/digest` comment commands: permission check, reactions, then a steered digest run.

Feels like vLLM's `/ci run`: 👀 when taken, then 👍 or 😕; a refusal gets a 😕 and one
short reply that says why and what to do; bots get nothing.

Abuse bounds (issue 8): permission is read before any budget is charged or anything is
posted; maintainers and everyone else have separate per-PR budgets; an outsider's
unknown subcommand is never answered in words; outsiders get at most one reply per PR
per hour, and 😕 reactions on comments that ran nothing are capped per PR.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import replace

from pydantic import BaseModel, ConfigDict

from bot.core.commands.parse import (
    Command,
    CommandSpec,
    commands_added,
    find_spec,
    parse_commands,
)
from bot.core.commands.permissions import Decision, Permission, decide, is_insider
from bot.core.render.commands import refusal_text, render_help_table
from bot.core.vocabulary import Lang
from bot.github.pacing import MAINTAINER, OUTSIDER, WriteSkipped, writes_as
from bot.github.protocol import GitHubAPI
from bot.handlers import digest, routing
from bot.handlers.context import HandlerContext, permission_of
from bot.handlers.digest import Steer, SyncOutcome, sync_pull_request

log = logging.getLogger(__name__)

HELP: tuple[CommandSpec, ...] = (
    CommandSpec(name="help", usage="/digest help", summary_key="commands.summary.help",
                who="author-or-write"),
)

# Every command any handler declares, composed in exactly one place: `/digest help`
# and docs/commands.md's table are both generated from this.
ALL_COMMANDS: tuple[CommandSpec, ...] = (*digest.HELP, *routing.HELP, *HELP)


class CommentCommandJob(BaseModel):
    """The part of an issue_comment delivery a command job carries."""

    model_config = ConfigDict(extra="ignore")

    repo: str
    number: int
    comment_id: int
    body: str
    author: str
    author_type: str = "User"
    previous_body: str | None = None  # set for `edited`: run only the commands it added


def _commands(job: CommentCommandJob) -> Sequence[Command]:
    return (commands_added(job.previous_body, job.body) if job.previous_body is not None
            else parse_commands(job.body))


async def from_outsider(gh: GitHubAPI, ctx: HandlerContext, job: CommentCommandJob) -> bool:
    """Whether the comment's commands are from someone without write access (nor on the
    trusted list): the worker then runs them after everyone else's work. A comment with
    no command, or a bot's, costs nothing and is not sorted."""
    if not _commands(job) or _is_bot(job):
        return False
    repo_rules = await ctx.rules.rules_for(gh, job.repo)
    permission = await permission_of(gh, ctx, job.repo, job.author)
    return not is_insider(job.author, permission, repo_rules.rules.routing.trusted)


async def handle_command_comment(
    gh: GitHubAPI, ctx: HandlerContext, job: CommentCommandJob
) -> SyncOutcome | None:
    """The digest run the commands asked for, if any (its writer job is the caller's)."""
    commands = _commands(job)
    if not commands or _is_bot(job):
        return None
    repo_rules = await ctx.rules.rules_for(gh, job.repo)
    # Permission first: nothing is spent or posted before we know who is asking.
    permission = await permission_of(gh, ctx, job.repo, job.author)
    trusted = repo_rules.rules.routing.trusted
    insider = is_insider(job.author, permission, trusted)
    # A maintainer's writes go before the digests'; anyone else's after (bot/github/pacing).
    with writes_as(MAINTAINER if insider else OUTSIDER):
        return await _run_commands(gh, ctx, job, commands, permission, trusted, insider)


async def _run_commands(
    gh: GitHubAPI, ctx: HandlerContext, job: CommentCommandJob, commands: Sequence[Command],
    permission: Permission, trusted: Collection[str], insider: bool,
) -> SyncOutcome | None:
    lang: Lang = ctx.language
    pr_key = f"{job.repo}#{job.number}"
    pr = await gh.get_pull(job.repo, job.number)
    steer = Steer(overrides_mute=insider)
    refusals: list[Decision] = []
    wants_help = False
    for command in commands:
        decision = decide(
            command,
            actor=job.author,
            actor_permission=permission,
            is_pr_author=job.author.casefold() == pr.author.casefold(),
            is_bot=False,
            trusted=trusted,
            spec=find_spec(ALL_COMMANDS, command.name),
        )
        log.info(
            "command %s by %s: %s", command.name, job.author,
            "allowed" if decision.allowed else decision.reason_key,
            extra={"repo": job.repo, "pr": job.number},
        )
        if not decision.allowed:
            refusals.append(decision)
        elif command.name == "help":
            wants_help = True
        else:
            steer = _steer(steer, command)
    runs = wants_help or steer != Steer(overrides_mute=insider)
    replies = [r for r in dict.fromkeys(refusals) if not r.silent]
    budget = ctx.command_budget if insider else ctx.outsider_command_budget
    if (runs or (insider and replies)) and not budget.allow(pr_key):
        log.info("command budget of %s spent", pr_key, extra={"repo": job.repo, "pr": job.number})
        await _refuse_quietly(gh, ctx, job, pr_key, insider)
        return None
    if not runs:
        await _refuse_quietly(gh, ctx, job, pr_key, insider)
        if replies and (insider or ctx.outsider_replies.allow(pr_key)):
            await _reply(gh, job, replies, lang)
        return None
    await gh.add_reaction(job.repo, job.comment_id, "eyes")
    outcome = None
    if steer != Steer(overrides_mute=insider):
        outcome = await sync_pull_request(gh, ctx, job.repo, job.number, steer, pr=pr)
    if wants_help:
        await gh.create_comment(job.repo, job.number, render_help_table(ALL_COMMANDS, lang))
    await gh.add_reaction(job.repo, job.comment_id, "confused" if refusals else "+1")
    if replies and (insider or ctx.outsider_replies.allow(pr_key)):
        await _reply(gh, job, replies, lang)
    return outcome


def _steer(steer: Steer, command: Command) -> Steer:
    name = command.name
    if name == "refresh":
        return replace(steer, force=True)
    if name == "explain":
        return replace(steer, force=True, explain=True)
    if name in ("en", "zh"):
        lang: Lang = "zh" if name == "zh" else "en"
        return replace(steer, force=True, lang=lang)
    if name == "mute":
        return replace(steer, muted=True)
    if name == "unmute":
        return replace(steer, force=True, muted=False)
    if name == "route":
        return replace(steer, force=True, route=True)
    return steer


async def _refuse_quietly(
    gh: GitHubAPI, ctx: HandlerContext, job: CommentCommandJob, pr_key: str, insider: bool
) -> None:
    """A 😕 on a comment that ran nothing, while the PR's refusal reactions last."""
    if ctx.refusal_reactions.allow(f"{pr_key}|{'insider' if insider else 'outsider'}"):
        try:
            await gh.add_reaction(job.repo, job.comment_id, "confused")
        except WriteSkipped:
            _skipped(job, "reaction")


async def _reply(
    gh: GitHubAPI, job: CommentCommandJob, refusals: list[Decision], lang: Lang
) -> None:
    reasons = "\n".join(f"- {refusal_text(r, lang, ALL_COMMANDS)}" for r in refusals)
    try:
        await gh.create_comment(job.repo, job.number, reasons)
    except WriteSkipped:
        _skipped(job, "reply")


def _skipped(job: CommentCommandJob, what: str) -> None:
    # Only an outsider's writes are skipped: a refusal's answer is owed to nobody.
    log.info("refusal %s to %s skipped: writes are busy", what, job.author,
             extra={"repo": job.repo, "pr": job.number})


def _is_bot(job: CommentCommandJob) -> bool:
    return job.author_type == "Bot" or job.author.endswith("[bot]")
