"""`/digest` comment commands: permission check, reactions, then a steered digest run.

Feels like vLLM's `/ci run`: 👀 when taken, then 👍 or 😕; a refusal or an unknown
subcommand gets one short reply that says why and what to do; bots get nothing.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pydantic import BaseModel, ConfigDict

from bot.core.commands import (
    Command,
    CommandSpec,
    commands_added,
    find_spec,
    parse_commands,
    render_help_table,
)
from bot.core.findings import Lang
from bot.core.permissions import Decision, decide, rate_limited_decision
from bot.github.protocol import GitHubAPI
from bot.handlers import digest, routing
from bot.handlers.context import HandlerContext, permission_of
from bot.handlers.digest import Steer, sync_pull_request

log = logging.getLogger(__name__)

HELP: tuple[CommandSpec, ...] = (
    CommandSpec(name="help", usage="/digest help", summary_key="commands.summary.help",
                who="author-or-write"),
)

# Every command any handler declares, composed in exactly one place: `/digest help`
# and the README's command table are both generated from this.
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


async def handle_command_comment(
    gh: GitHubAPI, ctx: HandlerContext, job: CommentCommandJob
) -> None:
    commands = (
        commands_added(job.previous_body, job.body)
        if job.previous_body is not None
        else parse_commands(job.body)
    )
    if not commands or _is_bot(job):
        return
    repo_rules = await ctx.rules.rules_for(gh, job.repo)
    lang: Lang = ctx.language
    if not ctx.command_budget.allow(f"{job.repo}#{job.number}"):
        await _finish(gh, job, [rate_limited_decision(commands[0], lang)], lang)
        return
    await gh.add_reaction(job.repo, job.comment_id, "eyes")
    pr = await gh.get_pull(job.repo, job.number)
    permission = await permission_of(gh, ctx, job.repo, job.author)
    steer = Steer()
    refusals: list[Decision] = []
    wants_help = False
    for command in commands:
        decision = decide(
            command,
            actor=job.author,
            actor_permission=permission,
            is_pr_author=job.author.casefold() == pr.author.casefold(),
            is_bot=False,
            trusted=repo_rules.rules.routing.trusted,
            spec=find_spec(ALL_COMMANDS, command.name),
            lang=lang,
        )
        if not decision.allowed:
            refusals.append(decision)
            continue
        if command.name == "help":
            wants_help = True
        else:
            steer = _steer(steer, command)
        log.info(
            "command %s by %s: %s", command.name, job.author,
            "allowed" if decision.allowed else decision.reason_key,
            extra={"repo": job.repo, "pr": job.number},
        )
    if steer != Steer():
        await sync_pull_request(gh, ctx, job.repo, job.number, steer, pr=pr)
    if wants_help:
        await gh.create_comment(job.repo, job.number, render_help_table(ALL_COMMANDS, lang))
    await _finish(gh, job, refusals, lang)


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


async def _finish(
    gh: GitHubAPI, job: CommentCommandJob, refusals: list[Decision], lang: Lang
) -> None:
    visible = [r for r in refusals if not r.silent]
    await gh.add_reaction(job.repo, job.comment_id, "confused" if refusals else "+1")
    if visible:
        reasons = "\n".join(f"- {r.reason}" for r in dict.fromkeys(visible))
        await gh.create_comment(job.repo, job.number, reasons)




def _is_bot(job: CommentCommandJob) -> bool:
    return job.author_type == "Bot" or job.author.endswith("[bot]")
