"""Server-rendered HTML and Atom for the label view: Jinja2 with autoescape, the digest's
Markdown through markdown-it-py and then the nh3 sanitiser. No script on any page."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any
from urllib.parse import urlencode

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from bot.core.label_view import (
    NEIGHBOUR_FILTERS,
    RISK_IDS,
    SORTS,
    LabelView,
    ViewEntry,
    ViewPage,
    page_of,
)
from bot.core.render.i18n import CATALOGUE, t
from bot.core.vocabulary import LANGS, VERDICTS, Lang
from bot.view.cache import FragmentCache
from bot.view.links import api_path, feed_path, pull_url, view_path

# Tags the digest's Markdown produces (it allows <details>, <summary>, <sub>); no images,
# so the page loads nothing from anywhere else.
_ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "input", "li", "ol", "p", "pre", "s", "span", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "input": {"type", "checked", "disabled"},
                       "li": {"class"},
                       "td": {"align"}, "th": {"align"}}


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bot.view", "templates"),
        autoescape=select_autoescape(["html", "xml"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["safe_href"] = safe_href
    return env


@cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


# A task-list item as markdown-it renders it: "<li>[ ] ..." (or "<li><p>[x] ...").
_TASK_ITEM = re.compile(r"<li>(<p>)?\[([ xX])\] ")


def _task_box(match: re.Match[str]) -> str:
    checked = " checked" if match.group(2) != " " else ""
    return f'<li class="task">{match.group(1) or ""}<input type="checkbox" disabled{checked}> '


def markdown_to_safe_html(markdown: str) -> str:
    """The digest's Markdown as HTML that cannot run script or load anything; a task
    list's boxes are disabled checkboxes (ticking one is done on GitHub)."""
    return nh3.clean(
        _TASK_ITEM.sub(_task_box, _markdown().render(markdown)),
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def safe_href(url: str) -> str:
    """Only http(s) links: a stored URL is data, never a `javascript:` link."""
    return url if url.startswith(("https://", "http://")) else "#"


def _when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Text:
    """The view's words bound to a language, for templates."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang

    def __call__(self, key: str, **params: object) -> str:
        return t(self.lang, key, **params)


def risk_meaning(text: _Text, risk_id: str) -> str:
    """The legend's short line for a risk badge; "" for an id the catalogue lacks."""
    key = f"view.legend.risk.{risk_id}"
    return text(key) if key in CATALOGUE else ""


def ago(text: _Text, now: float, then: float | None) -> str:
    """How long ago, coarsely: minutes, hours, then days (the page is cached per hour)."""
    if then is None:
        return ""
    seconds = max(0.0, now - then)
    if seconds < 60:
        return text("view.ago.now")
    if seconds < 3600:
        return text("view.ago.minutes", n=int(seconds // 60))
    if seconds < 86400:
        return text("view.ago.hours", n=int(seconds // 3600))
    return text("view.ago.days", n=int(seconds // 86400))


# "not run" is left to the digest (its relevant-ci-not-run item says which matter).
_STEP_ORDER = ("failed", "pending", "blocked", "passed")


def ci_steps_summary(text: _Text, steps: Sequence[tuple[str, int]]) -> str:
    counts = dict(steps)
    return " · ".join(text(f"view.ci.step.{status}", n=counts[status])
                      for status in _STEP_ORDER if counts.get(status))


def render_label_view(
    repo: str, view: LabelView, *, lang: Lang, default_lang: Lang,
    fragments: FragmentCache | None = None, now: float = 0.0, raw_query: str = "",
    page: ViewPage | None = None,
) -> str:
    """Page `page` of the queue (default: its first)."""
    shown = page if page is not None else page_of(view, 1)
    asked = view.filters
    keep = {"label": asked.label, "verdict": asked.verdict, "q": raw_query or None,
            "owner": asked.owner, "sort": None if asked.sort == "verdict" else asked.sort,
            "neighbours": asked.neighbours}
    lang_param = None if lang == default_lang else lang

    def link(*, lang_: Lang = lang, **changes: str | None) -> str:
        query = {**keep, **{key.rstrip("_"): value for key, value in changes.items()}}
        query["lang"] = None if lang_ == default_lang else lang_
        return view_path(repo, None, **query)

    text = _Text(lang)
    entry_template = _environment().get_template("_entry.html")
    cache = fragments if fragments is not None else FragmentCache()
    # An entry says "3 d ago": rendered again when the hour turns (so does the ETag).
    hour = int(now // 3600)
    # Built once per page, not once per entry: after a start every entry is rendered.
    page_path = view_path(repo)
    lang_query = "" if lang_param is None else f"?{urlencode({'lang': lang_param})}"
    label_links: dict[str, str] = {}
    owner_links: dict[str, str] = {}

    def label_link(name: str) -> str:
        found = label_links.get(name)
        if found is None:
            found = label_links[name] = view_path(repo, label=name, lang=lang_param)
        return found

    def owner_link(name: str) -> str:
        found = owner_links.get(name)
        if found is None:
            found = owner_links[name] = view_path(repo, owner=name, lang=lang_param)
        return found

    def fragment(entry: ViewEntry) -> Markup:
        key = (repo, entry.number, lang, default_lang, hour)
        return cache.get(key, entry, lambda: entry_template.render(
            e=entry, t=text, when=_when, ago=lambda then: ago(text, now, then),
            ci_steps=lambda steps: ci_steps_summary(text, steps), label_link=label_link,
            owner_link=owner_link, risk_meaning=lambda risk_id: risk_meaning(text, risk_id),
            digest_link=f"{page_path}/{entry.number}{lang_query}",
        ))

    def entries_html(entries: Sequence[ViewEntry]) -> Markup:
        # Joined here, not in a template loop: a page lists up to a few hundred entries.
        return Markup("".join(fragment(entry) for entry in entries))  # noqa: S704 - fragments

    other: Lang = next(x for x in LANGS if x != lang)
    return _environment().get_template("label_view.html").render(
        repo=repo, view=view, lang=lang, t=text, label=asked.label, verdict=asked.verdict,
        owner=asked.owner, sort=asked.sort, sorts=SORTS, raw_query=raw_query,
        verdicts=VERDICTS, link=link, other_lang=other, entries_html=entries_html,
        neighbours=asked.neighbours, neighbour_filters=NEIGHBOUR_FILTERS,
        feed_link=feed_path(repo, asked.label), api_link=api_path(repo),
        lang_param=lang_param, page_path=page_path, page=shown,
        legend=[(risk_id, risk_meaning(text, risk_id)) for risk_id in RISK_IDS],
    )


def render_digest_page(
    repo: str, entry: ViewEntry, markdown: str, *, lang: Lang, default_lang: Lang,
    available: Sequence[str],
) -> str:
    other: Lang = next(x for x in LANGS if x != lang)
    return _environment().get_template("digest.html").render(
        repo=repo, e=entry, lang=lang, t=_Text(lang), when=_when,
        body=markdown_to_safe_html(markdown),
        back=view_path(repo, lang=None if lang == default_lang else lang),
        switch=view_path(repo, entry.number,
                         lang=None if other == default_lang else other)
        if other in available else None,
        other_lang=other,
    )


def render_not_found(lang: Lang, repo: str | None = None) -> str:
    """The 404 page; for a repository's view it says how digests get here (the same
    words for an unknown and a private repository, so neither is revealed)."""
    return _environment().get_template("not_found.html").render(
        lang=lang, t=_Text(lang), repo=repo)


# Characters XML 1.0 forbids (a PR title may hold them; the feed must still parse).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def render_feed(
    repo: str, entries: Sequence[ViewEntry], *, lang: Lang, label: str | None,
    base_url: str, updated: float,
) -> str:
    base = base_url.rstrip("/")
    return _XML_INVALID.sub("", _environment().get_template("feed.atom.xml").render(
        repo=repo, entries=entries, lang=lang, t=_Text(lang), label=label,
        self_url=base + feed_path(repo, label),
        page_url=base + view_path(repo, label=label),
        entry_url=lambda e: base + view_path(repo, e.number),
        github_url=lambda e: safe_href(e.url) if e.url else pull_url(repo, e.number),
        rfc3339=_rfc3339, updated=_rfc3339(updated),
    ))


def templates_fingerprint() -> str:
    """A hash of every template's name and text: a deploy that changes what a page looks
    like changes its ETags, so no reader keeps the old page on a 304."""
    digest = hashlib.sha256()
    for name in sorted(template_names()):
        source, _, _ = _environment().loader.get_source(_environment(), name)  # type: ignore[union-attr]
        digest.update(f"{name}\0{source}\0".encode())
    return digest.hexdigest()[:8]


def template_names() -> list[str]:
    names: list[Any] = _environment().list_templates()
    return [str(n) for n in names]


def warm_up() -> None:
    """Compile every template and build the Markdown renderer now (on the service's
    start-up thread), not during the first page a reader asks for."""
    env = _environment()
    for name in template_names():
        env.get_template(name)
    _markdown()
