"""The "Other open PRs" section: the PR's live state (conflicts, behind its base), what it
waits for, and the other open PRs that compete with or overlap it, strongest first. At
most `MAX_SHOWN` neighbours are named; the rest are counted."""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.findings import Digest
from bot.core.neighbours.find import shown_and_more
from bot.core.render.i18n import t
from bot.core.render.words import dependency_text, live_texts, neighbour_text


def neighbour_lines(digest: Digest) -> Iterator[str]:
    found = digest.neighbours
    if found is None:
        return
    lang = digest.lang
    ci_shown = digest.ci is not None and digest.ci.run is not None
    for text in live_texts(found.live, lang, ci_shown=ci_shown):
        yield f"- {text}"
    for dependency in found.dependencies:
        yield f"- {dependency_text(dependency, lang)}"
    shown, more = shown_and_more(found)
    for neighbour in shown:
        yield f"- {neighbour_text(neighbour, lang)}"
    if more:
        yield "- " + (t(lang, "neighbours.more.one") if more == 1
                      else t(lang, "neighbours.more", count=more))
