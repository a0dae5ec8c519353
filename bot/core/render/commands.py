"""The words of `/digest` commands: the help table, and a refusal's reply."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.commands.parse import COMMAND_WORD, CommandSpec, nearest_spec
from bot.core.commands.permissions import Decision
from bot.core.render.escape import escape_code
from bot.core.render.i18n import t
from bot.core.vocabulary import Lang

QUOTED_COMMAND_CHARS = 80


def quoted_command(name: str) -> str:
    """`/digest <name>` as a reply quotes it: one inert code span, whatever `name` holds."""
    return escape_code(f"{COMMAND_WORD} {name}", QUOTED_COMMAND_CHARS, keep="head")


def refusal_text(decision: Decision, lang: Lang, specs: Sequence[CommandSpec] = ()) -> str:
    """The reply's line for a refused command: why, and what to do. An unknown command
    also names the one it most likely meant and the known ones (`specs`)."""
    if decision.reason_key is None:
        return ""
    text = t(lang, decision.reason_key, command=quoted_command(decision.command))
    if decision.reason_key != "commands.refused.unknown" or not specs:
        return text
    meant = nearest_spec(specs, decision.command)
    if meant is not None:
        text += " " + t(lang, "commands.refused.did-you-mean", command=quoted_command(meant.name))
    known = t(lang, "commands.list-separator").join(f"`{spec.name}`" for spec in specs)
    return text + " " + t(lang, "commands.refused.known", known=known)


# Help, generated from the specs the handler modules declare.


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_help_table(specs: Sequence[CommandSpec], lang: Lang) -> str:
    """Markdown table: command, what it does, who may use it (/digest help, docs/commands.md)."""
    rows = [
        "| {} | {} | {} |".format(
            t(lang, "commands.help.column.command"),
            t(lang, "commands.help.column.summary"),
            t(lang, "commands.help.column.who"),
        ),
        "| --- | --- | --- |",
    ]
    for spec in specs:
        usage = spec.usage.replace("`", "")
        rows.append(
            f"| `{_cell(usage)}` | {_cell(t(lang, spec.summary_key))} "
            f"| {_cell(t(lang, 'commands.who.' + spec.who))} |"
        )
    return "\n".join(rows)
