"""The triage queue's own words, in both languages (the digest's words stay in
bot/core/render/i18n.py; the view asks here first, then there)."""

from __future__ import annotations

from bot.core.render.i18n import t
from bot.core.render.zh_text import space_mixed
from bot.core.vocabulary import Lang

WORDS: dict[str, dict[str, str]] = {
    "view.verdict.deep-read": {"en": "deep read", "zh": "需要精读"},
    "view.verdict.read": {"en": "read", "zh": "值得一读"},
    "view.verdict.skim": {"en": "skim", "zh": "浏览即可"},
    "view.verdict.quiet": {"en": "quiet", "zh": "无需关注"},
    "view.open_count": {"en": "{shown} of {total} open PRs",
                        "zh": "{total} 个未关闭 PR 中的 {shown} 个"},
    "view.group.all": {"en": "Open PRs", "zh": "未关闭的 PR"},
    "view.group.label": {"en": "Label {label}", "zh": "标签 {label}"},
    "view.filter.sort": {"en": "Sort", "zh": "排序"},
    "view.sort.verdict": {"en": "verdict", "zh": "结论"},
    "view.sort.oldest": {"en": "oldest", "zh": "最早"},
    "view.sort.newest": {"en": "newest", "zh": "最新"},
    "view.sort.size": {"en": "largest", "zh": "改动最大"},
    "view.search": {"en": "Search title, author or #number", "zh": "搜索标题、作者或 #编号"},
    "view.search.go": {"en": "Search", "zh": "搜索"},
    "view.owner": {"en": "Areas of {owner}", "zh": "{owner} 负责的领域"},
    "view.owner.clear": {"en": "everyone's", "zh": "所有人"},
    "view.query": {"en": "matching “{query}”", "zh": "匹配“{query}”"},
    "view.waiting.author": {"en": "waiting on author", "zh": "等待作者"},
    "view.waiting.reviewer": {"en": "waiting on reviewer", "zh": "等待评审"},
    "view.waiting.ci": {"en": "waiting on CI", "zh": "等待 CI"},
    "view.waiting_counts": {
        "en": "waiting on author {author} · reviewer {reviewer} · CI {ci}",
        "zh": "等待作者 {author} · 等待评审 {reviewer} · 等待 CI {ci}",
    },
    "view.first_review": {"en": "needs first review", "zh": "尚无人评审"},
    "view.opened": {"en": "opened {ago} ago", "zh": "{ago}前创建"},
    "view.author_active": {"en": "author {ago} ago", "zh": "作者 {ago}前"},
    "view.reviewer_active": {"en": "reviewer {ago} ago", "zh": "评审人 {ago}前"},
    "view.no_reviewer": {"en": "no reviewer yet", "zh": "尚无评审人"},
    "view.size": {"en": "+{additions} −{deletions} in {files} files",
                  "zh": "+{additions} −{deletions},{files} 个文件"},
    "view.ago.now": {"en": "<1 min", "zh": "不到 1 分钟"},
    "view.ago.minutes": {"en": "{n} min", "zh": "{n} 分钟"},
    "view.ago.hours": {"en": "{n} h", "zh": "{n} 小时"},
    "view.ago.days": {"en": "{n} d", "zh": "{n} 天"},
    "view.ci": {"en": "CI", "zh": "CI"},
    "view.ci.state.not-started": {"en": "not started", "zh": "未开始"},
    "view.ci.state.running": {"en": "running", "zh": "运行中"},
    "view.ci.state.blocked": {"en": "blocked (needs an unblock)", "zh": "已阻塞(需手动放行)"},
    "view.ci.state.passed": {"en": "passed", "zh": "通过"},
    "view.ci.state.failed": {"en": "failed", "zh": "失败"},
    "view.ci.state.error": {"en": "error", "zh": "出错"},
    "view.ci.state.unreadable": {"en": "unreadable", "zh": "无法读取"},
    "view.ci.steps": {"en": "narrow steps: {summary}", "zh": "相关步骤:{summary}"},
    "view.ci.step.passed": {"en": "{n} passed", "zh": "{n} 通过"},
    "view.ci.step.failed": {"en": "{n} failed", "zh": "{n} 失败"},
    "view.ci.step.pending": {"en": "{n} pending", "zh": "{n} 进行中"},
    "view.ci.step.blocked": {"en": "{n} blocked", "zh": "{n} 阻塞"},
    "view.asks.state": {"en": "asks: {open} open · {answered} answered",
                        "zh": "评审要求:{open} 项未答复 · {answered} 项已答复"},
    "view.risks": {"en": "Open risks", "zh": "未解决的风险"},
    "view.signal.template-unfilled": {"en": "template not filled in", "zh": "模板未填写"},
    "view.signal.ai-assisted": {"en": "AI assistance used", "zh": "使用了 AI 辅助"},
    "view.signal.core-unexplained": {"en": "core change, no rationale",
                                     "zh": "改动核心代码但未说明理由"},
    "view.signal.large-multi-area": {"en": "very large, many areas", "zh": "改动很大且跨多个领域"},
    "view.labels": {"en": "Labels", "zh": "标签"},
    "view.digest": {"en": "digest", "zh": "摘要"},
    "view.empty.filtered.clear": {"en": "Clear every filter", "zh": "清除全部筛选"},
    "view.not_found.repo": {
        "en": "No digest is stored for {repo}, or it is a private repository's.",
        "zh": "{repo} 没有已存储的摘要,或者它是私有仓库。",
    },
    "view.not_found.todo": {
        "en": "Digests appear here once the App is installed on the repository and a pull "
        "request is opened or updated (the reconcile sweep also picks up open PRs every "
        "15 minutes). A private repository's view needs the view token.",
        "zh": "在该仓库安装此 App 后,PR 一旦被创建或更新,摘要就会出现在这里"
        "(对账任务每 15 分钟也会补上未关闭的 PR)。私有仓库的视图需要视图令牌。",
    },
}


def view_text(lang: Lang, key: str, **params: object) -> str:
    """`key` in `lang`: the view's own words first, then the digest's catalogue."""
    entry = WORDS.get(key)
    if entry is None:
        return t(lang, key, **params)
    text = entry.get(lang) or entry["en"]
    text = text.format(**params) if params else text
    return space_mixed(text) if lang == "zh" else text
