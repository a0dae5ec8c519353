"""Linked work named in the title and description: what this PR supersedes, follows up,
depends on, reverts or fixes. Line by line, bounded; code fences are skipped (a pasted
log full of "#12" is not a link)."""

from __future__ import annotations

import re

from bot.core.reading.prose import body_lines
from bot.core.reading.specifics import Link, LinkKind

MAX_LINKS = 5

_CUES: tuple[tuple[str, LinkKind], ...] = (
    ("supersedes", "supersedes"),
    ("superseded", "related"),
    ("replaces", "supersedes"),
    ("follow-up to", "follow-up"),
    ("follow up to", "follow-up"),
    ("followup to", "follow-up"),
    ("follow-up of", "follow-up"),
    ("follow-up on", "follow-up"),
    ("follow-up", "follow-up"),
    ("part of", "part-of"),
    ("cherry-pick of", "cherry-pick"),
    ("cherry pick of", "cherry-pick"),
    ("cherry-picked from", "cherry-pick"),
    ("cherry-pick from", "cherry-pick"),
    ("backport of", "cherry-pick"),
    ("depends on", "depends-on"),
    ("stacked on", "depends-on"),
    ("built on", "depends-on"),
    ("blocked by", "depends-on"),
    ("requires", "depends-on"),
    ("reverts", "reverts"),
    ("revert", "reverts"),
    ("fixes", "fixes"),
    ("fixed", "fixes"),
    ("fix", "fixes"),
    ("closes", "fixes"),
    ("close", "fixes"),
    ("resolves", "fixes"),
    ("resolve", "fixes"),
    ("addresses", "fixes"),
)
# "#123", "owner/repo#123", or a PR/issue URL.
_REF = (
    r"(?:([\w.-]{1,100}/[\w.-]{1,100})?#(\d{1,7})"
    r"|https://github\.com/([\w.-]{1,100}/[\w.-]{1,100})/(?:pull|issues)/(\d{1,7}))"
)
_REF_NC = re.sub(r"\((?!\?)", "(?:", _REF)
_CUE_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(c) for c, _ in _CUES) + r")\b[ \t:]{0,3}"
    r"(?:(?:pr|issue|pull request)[ \t]{1,3})?"
    r"(" + _REF_NC + r"(?:[ \t]{0,2}(?:,|and|&)[ \t]{0,3}" + _REF_NC + r"){0,6})",
    re.IGNORECASE,
)
_ANY_REF = re.compile(_REF)
_PRIORITY: dict[str, int] = {
    kind: rank
    for rank, kind in enumerate(
        ("reverts", "supersedes", "cherry-pick", "fixes", "follow-up", "depends-on", "part-of",
         "related")
    )
}
_PULL_URL = re.compile(r"https://github\.com/([\w.-]{1,100}/[\w.-]{1,100})/pull/(\d{1,7})(?![\w/])")
_KIND_OF = {cue: kind for cue, kind in _CUES}
_MAX_LINE = 1_000


def find_links(
    title: str, body: str | None, repo: str = "", own: int = 0
) -> tuple[Link, ...]:
    """Linked PRs and issues, first mention wins, at most MAX_LINKS. The PR itself
    (`own`, its number in `repo`: a link to one of its own comments) is not linked work."""
    found: dict[tuple[str, int], Link] = {}
    lines = [title[:_MAX_LINE]]
    lines.extend(line.text[:_MAX_LINE] for line in body_lines(body) if not line.in_fence)
    for line in lines:
        for match in _CUE_PATTERN.finditer(line):
            kind = _KIND_OF[match.group(1).lower()]
            for ref in _ANY_REF.finditer(match.group(2)):
                short_repo, number, url_repo, url_number = ref.groups()
                _add(found, kind, number, short_repo or url_repo, url_number, repo)
        for match in _PULL_URL.finditer(line):
            _add(found, "related", None, match.group(1), match.group(2), repo)
        if len(found) >= MAX_LINKS * 3:
            break
    found.pop(("", own), None)
    ordered = sorted(found.values(), key=lambda link: _PRIORITY[link.kind])
    return tuple(ordered[:MAX_LINKS])


def _add(
    found: dict[tuple[str, int], Link],
    kind: LinkKind,
    number: str | None,
    url_repo: str | None,
    url_number: str | None,
    repo: str,
) -> None:
    digits = number or url_number
    if not digits:
        return
    value = int(digits)
    target = "" if not url_repo or url_repo.lower() == repo.lower() else url_repo
    key = (target.lower(), value)
    if key not in found:
        found[key] = Link(kind, value, target)


def opens_with_a_link(sentence: str) -> bool:
    """Whether the sentence opens by naming linked work ("Follow-up to #48390 (…)",
    "Supersedes #123."): the Linked work line says that already."""
    return _CUE_PATTERN.match(sentence.lstrip(" \t*_>-“\"")[:_MAX_LINE]) is not None
