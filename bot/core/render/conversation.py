"""The conversation's section: reviewers' asks (open ones first) and evidence posted
later, a few lines visible and the rest collapsed.

Logins and quotes are someone else's words: they go through `escape_text` /
`escape_quote` (no live mention, link or HTML). The only links are to this PR's own
comments, reviews and review comments, and only in the shape `_OWN_COMMENT` allows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bot.core.findings import Digest
from bot.core.render.escape import escape_code, escape_text, sanitize_trusted
from bot.core.render.i18n import t
from bot.core.render.specific import escape_quote
from bot.core.vocabulary import Ask, Lang, LaterEvidence

MAX_VISIBLE = 4
_QUOTE_CHARS = 100
_OWN_COMMENT = re.compile(
    r"https://[A-Za-z0-9.-]{1,100}/[\w.-]{1,100}/[\w.-]{1,100}/pull/\d{1,9}"
    r"#(?P<where>issuecomment-|pullrequestreview-|discussion_r)\d{1,15}"
)
_WHERE = {"issuecomment-": "comment", "pullrequestreview-": "review",
          "discussion_r": "review_comment"}


def conversation_lines(digest: Digest) -> Iterator[str]:
    lang = digest.lang
    lines = [
        *(ask_line(a, lang) for a in digest.asks if a.status == "open"),
        *(later_line(e, lang) for e in digest.later_evidence),
        *(ask_line(a, lang) for a in digest.asks if a.status != "open"),
    ]
    yield from lines[:MAX_VISIBLE]
    rest = lines[MAX_VISIBLE:]
    if rest:
        summary = sanitize_trusted(t(lang, "render.conversation.more", count=len(rest)))
        yield ""
        yield f"<details><summary>{summary}</summary>"
        yield ""
        yield from rest
        yield ""
        yield "</details>"


def link_to(url: str, lang: Lang, label_key: str = "") -> str:
    """A Markdown link to one of this PR's own comments, or "" for any other URL."""
    found = _OWN_COMMENT.fullmatch(url)
    if found is None:
        return ""
    label = t(lang, label_key or f"ask.where.{_WHERE[found['where']]}")
    return f"[{sanitize_trusted(label, 40)}]({url})"


def _who(login: str) -> str:
    return escape_text(f"@{login}", 60)


def ask_line(ask: Ask, lang: Lang) -> str:
    kind = f"**{sanitize_trusted(t(lang, f'ask.kind.{ask.kind}'), 40)}**"
    if ask.status == "open":
        status = t(lang, "ask.open")
    elif ask.answered_by == "commit":
        status = t(lang, "ask.answered.commit")
    else:
        status = t(lang, "ask.answered")
        answer = link_to(ask.answer_url, lang, f"ask.where.{ask.answered_by or 'reply'}")
        if answer:
            status += t(lang, "render.paren", text=answer)
    who = _who(ask.by)
    if ask.access == "none":
        who += t(lang, "render.paren", text=t(lang, "ask.no-write-access"))
    line = f"- {t(lang, 'ask.line', kind=kind, who=who, status=status)}"
    if ask.quote:
        line += " · " + t(lang, "render.quote", quote=escape_quote(ask.quote, _QUOTE_CHARS))
    where = link_to(ask.url, lang)
    return f"{line} · {where}" if where else line


def later_line(evidence: LaterEvidence, lang: Lang) -> str:
    risk = f"**{sanitize_trusted(evidence.risk, 60)}**"
    line = f"- ✅ {t(lang, f'later.{evidence.outcome}', risk=risk, who=_who(evidence.by))}"
    where = link_to(evidence.url, lang)
    if where:
        line += f" · {where}"
    if evidence.evidence:
        line += t(lang, "render.colon") + escape_code(evidence.evidence, 100, keep="head")
    return line
