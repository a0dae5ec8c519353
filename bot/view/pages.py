"""Server-rendered HTML and Atom for the label view: Jinja2 with autoescape, the digest's
Markdown through markdown-it-py and then the nh3 sanitiser. No script on any page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any

import nh3
from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup

from bot.core.label_view import LabelView, ViewEntry
from bot.core.render.i18n import t
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


def markdown_to_safe_html(markdown: str) -> str:
    """The digest's Markdown as HTML that cannot run script or load anything."""
    return nh3.clean(
        _markdown().render(markdown),
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
    """`t` bound to a language, for templates."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang

    def __call__(self, key: str, **params: object) -> str:
        return t(self.lang, key, **params)


def render_label_view(
    repo: str, view: LabelView, *, lang: Lang, default_lang: Lang, label: str | None,
    verdict: str | None, fragments: FragmentCache | None = None,
) -> str:
    def link(*, label_: str | None = label, verdict_: str | None = verdict,
             lang_: Lang = lang) -> str:
        return view_path(repo, label=label_, verdict=verdict_,
                         lang=None if lang_ == default_lang else lang_)

    text = _Text(lang)
    entry_template = _environment().get_template("_entry.html")
    cache = fragments if fragments is not None else FragmentCache()

    def fragment(entry: ViewEntry) -> Markup:
        key = (repo, entry.number, lang, default_lang)
        return cache.get(key, entry, lambda: entry_template.render(
            e=entry, t=text, when=_when,
            digest_link=view_path(repo, entry.number,
                                  lang=None if lang == default_lang else lang),
        ))

    def entries_html(entries: Sequence[ViewEntry]) -> Markup:
        # Joined here, not in a template loop: a page lists ~1,700 entries.
        return Markup("".join(fragment(entry) for entry in entries))  # noqa: S704 - fragments

    other: Lang = next(x for x in LANGS if x != lang)
    return _environment().get_template("label_view.html").render(
        repo=repo, view=view, lang=lang, t=text, label=label, verdict=verdict,
        verdicts=VERDICTS, link=link, other_lang=other, entries_html=entries_html,
        feed_link=feed_path(repo, label), api_link=api_path(repo),
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


def render_not_found(lang: Lang) -> str:
    return _environment().get_template("not_found.html").render(lang=lang, t=_Text(lang))


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
