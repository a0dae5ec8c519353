"""The one string catalogue (English and Chinese). Code refers to keys, never to prose.

Sections are grouped by the module that uses them; keep every key in both languages
(a test checks that). Parameters use str.format names: "{minutes}".
"""

from __future__ import annotations

from bot.core.findings import Lang

CATALOGUE: dict[str, dict[Lang, str]] = {
    # --- verdicts (bot/core/verdict.py) -------------------------------------
    # --- risks (bot/core/risks.py) ------------------------------------------
    # --- rendering (bot/core/render.py) -------------------------------------
    # --- commands and routing (bot/core/commands.py, bot/core/routing.py) ----
    "commands.help.column.command": {"en": "Command", "zh": "命令"},
    "commands.help.column.summary": {"en": "What it does", "zh": "作用"},
    "commands.help.column.who": {"en": "Who may use it", "zh": "谁可以使用"},
    "commands.who.anyone-with-write": {
        "en": "maintainers (write access) and trusted users",
        "zh": "维护者（有写权限）和受信任用户",
    },
    "commands.who.author-or-write": {
        "en": "the PR author, maintainers (write access) and trusted users",
        "zh": "PR 作者、维护者（有写权限）和受信任用户",
    },
    "commands.summary.refresh": {
        "en": "Recompute the digest now",
        "zh": "立即重新生成摘要",
    },
    "commands.summary.explain": {
        "en": "Show which rule fired on which file, label or phrase",
        "zh": "显示哪条规则因哪个文件、标签或短语而触发",
    },
    "commands.summary.en": {"en": "Write the digest in English", "zh": "用英文撰写摘要"},
    "commands.summary.zh": {"en": "Write the digest in Chinese", "zh": "用中文撰写摘要"},
    "commands.summary.route": {
        "en": "Request reviews from the pools of the PR's labels",
        "zh": "按 PR 标签从对应的评审人池中请求评审",
    },
    "commands.summary.mute": {
        "en": "Stop updating the digest on this PR",
        "zh": "停止在此 PR 上更新摘要",
    },
    "commands.summary.unmute": {
        "en": "Resume updating the digest on this PR",
        "zh": "恢复在此 PR 上更新摘要",
    },
    "commands.summary.help": {"en": "Show this table", "zh": "显示此表"},
    "commands.refused.bot": {
        "en": "Commands from bot accounts are ignored.",
        "zh": "机器人账号的命令会被忽略。",
    },
    "commands.refused.unknown": {
        "en": "Unknown command `/digest {name}`; see `/digest help`.",
        "zh": "未知命令 `/digest {name}`；请查看 `/digest help`。",
    },
    "commands.refused.write-only": {
        "en": "`/digest {name}` needs write access; ask a maintainer to run it.",
        "zh": "`/digest {name}` 需要写权限；请让维护者来执行。",
    },
    "commands.refused.author-or-write": {
        "en": "`/digest {name}` is for the PR author and maintainers; ask a maintainer to run it.",
        "zh": "`/digest {name}` 仅限 PR 作者和维护者使用；请让维护者来执行。",
    },
    "commands.refused.rate-limited": {
        "en": "Too many `/digest` commands on this PR; try again in a minute.",
        "zh": "此 PR 上的 `/digest` 命令过多；请一分钟后再试。",
    },
    "routing.skipped.author": {"en": "PR author", "zh": "PR 作者"},
    "routing.skipped.away": {"en": "away", "zh": "暂时不在"},
    "routing.skipped.already-requested": {"en": "already requested", "zh": "已被请求评审"},
    "routing.skipped.already-reviewed": {"en": "already reviewed", "zh": "已评审"},
    "routing.skipped.removed-by-human": {
        "en": "review request removed by a person",
        "zh": "评审请求已被人工移除",
    },
    "routing.skipped.not-collaborator": {
        "en": "not a collaborator on this repository",
        "zh": "不是此仓库的协作者",
    },
    "routing.skipped.cap-reached": {
        "en": "reviewer cap for this PR reached",
        "zh": "已达到此 PR 的评审人数上限",
    },
}


def t(lang: Lang, key: str, **params: object) -> str:
    """The text for `key` in `lang` (English when a translation is missing)."""
    entry = CATALOGUE[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**params) if params else text
