"""The label view's HTTP routes: pages, the JSON API, Atom feeds and the stylesheet.

A label-view page is built and rendered on one thread of its own, never on the event
loop the webhook acks run on, and kept by its ETag (which names the store's version,
the query and the hour); the queue built for a query is kept too, so its other pages
cost only their 50 rows. Before, one page held every PR (10.6 MB for 5,000) and was
rendered on the loop: four readers took the acks' median from 5 to 147 ms.

Public repositories' digests are public (they restate public PRs); a private
repository's answer 404 unless the configured view token is presented, exactly like
an unknown repository, so the view does not reveal which private repositories exist.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from cachetools import LRUCache
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from bot.core.label_view import (
    MAX_QUERY,
    NEIGHBOUR_FILTERS,
    SORTS,
    Filters,
    LabelView,
    ViewEntry,
    build_label_view,
    page_of,
)
from bot.core.vocabulary import LANGS, VERDICTS, Lang
from bot.queue.sqlite_writer import StoreUnavailable
from bot.settings.model import Settings
from bot.view.cache import EntryCache, FragmentCache
from bot.view.links import VIEW_ROUTES, view_path
from bot.view.pages import (
    render_digest_page,
    render_feed,
    render_label_view,
    render_not_found,
    templates_fingerprint,
)
from bot.view.store import ApiItem, DigestStore, RepoInfo

TOKEN_COOKIE = "digest_view_token"  # noqa: S105 - a cookie name, not a secret
# form-action 'self': the search box is a plain GET form back to the page itself.
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# A GitHub login, or an org/team slug as CODEOWNERS writes it.
_OWNER = re.compile(r"^@?[A-Za-z0-9](?:[A-Za-z0-9._-]{0,99})(?:/[A-Za-z0-9._-]{1,100})?$")
_MAX_LABEL = 200
_MAX_NUMBER = 2**31 - 1
_FEED_ENTRIES = 100
_PER_PAGE_DEFAULT, _PER_PAGE_MAX = 50, 100
_MAX_PAGE = 10**6
# Rendered pages kept by ETag (a 50-row page is ~100 KB), and queues built per query.
_PAGES_KEPT, _VIEWS_KEPT = 128, 16
# Changes whenever a page's shape changes, so old ETags stop matching after a deploy.
_SHAPE = templates_fingerprint()

Handler = Callable[[Request], Awaitable[Response]]


class BadQuery(ValueError):
    """A query parameter the view cannot use: answered 400 with this message."""


class LabelViewRoutes:
    def __init__(
        self, store: DigestStore, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._entries = EntryCache(store)
        self._fragments = FragmentCache()
        self._default_lang: Lang = settings.language
        self._token = (settings.view_token.get_secret_value()
                       if settings.view_token is not None else None)
        self._public_url = settings.public_url
        self._clock = clock
        self._css = (resources.files("bot.view") / "static" / "view.css").read_bytes()
        self._css_etag = '"' + hashlib.sha256(self._css).hexdigest()[:16] + '"'
        # One thread: pages render one at a time, and only it touches the fragment cache.
        self._render_thread = ThreadPoolExecutor(max_workers=1,
                                                 thread_name_prefix="label-view")
        self._pages: LRUCache[str, bytes] = LRUCache(maxsize=_PAGES_KEPT)
        self._rendering: dict[str, asyncio.Future[bytes]] = {}
        self._views: LRUCache[tuple[str, Lang, int, int, Filters], LabelView] = LRUCache(
            maxsize=_VIEWS_KEPT)

    def routes(self) -> list[BaseRoute]:
        return [Route(path, self.endpoint(name), methods=["GET", "HEAD"])
                for path, name in VIEW_ROUTES]

    def endpoint(self, name: str) -> Handler:
        """The handler serving VIEW_ROUTES' `name`, with the view's error handling."""
        if name == "stylesheet":
            return self.stylesheet
        handlers: dict[str, Handler] = {
            "label_view": self.label_view, "feed": self.feed,
            "digest_page": self.digest_page, "api": self.api,
        }
        return self._guard(handlers[name], json_errors=name == "api")

    # -- shared checks ----------------------------------------------------------------

    def _guard(self, handler: Handler, *, json_errors: bool = False) -> Handler:
        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except BadQuery as exc:
                return self._error(request, 400, str(exc), json_errors)
            except _NotFound:
                return self._error(request, 404, "not found", json_errors)
            except StoreUnavailable:
                return self._error(request, 503, "store unavailable", json_errors)

        return guarded

    def _error(self, request: Request, status: int, message: str, as_json: bool) -> Response:
        if as_json:
            response: Response = JSONResponse({"error": message}, status_code=status)
        elif status == 404:
            response = Response(
                render_not_found(self._lang(request, strict=False), _asked_repo(request)),
                status_code=404, media_type="text/html; charset=utf-8")
        else:
            response = Response(message + "\n", status_code=status,
                                media_type="text/plain; charset=utf-8")
        _secure(response)
        response.headers["Cache-Control"] = "no-store"
        return response

    async def _repo(self, request: Request) -> tuple[str, RepoInfo]:
        owner, name = request.path_params["owner"], request.path_params["repo"]
        if not (_NAME.match(owner) and _NAME.match(name)):
            raise _NotFound
        info = await self._store.repo_info(f"{owner}/{name}")
        if info is None or (info.private and not self._authorized(request)):
            raise _NotFound
        return info.repo, info

    def _presented(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer ":
            return header[7:].strip()
        return request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE)

    def _authorized(self, request: Request) -> bool:
        return self._valid(self._presented(request))

    def _valid(self, presented: str | None) -> bool:
        if self._token is None or not presented:
            return False
        return hmac.compare_digest(presented.encode("utf-8", "surrogatepass"),
                                   self._token.encode())

    def _lang(self, request: Request, *, strict: bool = True) -> Lang:
        raw = request.query_params.get("lang")
        if raw is None or raw == "":
            return self._default_lang
        for lang in LANGS:
            if raw == lang:
                return lang
        if strict:
            raise BadQuery(f"lang must be one of {', '.join(LANGS)}")
        return self._default_lang

    @staticmethod
    def _label(request: Request) -> str | None:
        label = request.query_params.get("label")
        if label is None or label == "":
            return None
        if len(label) > _MAX_LABEL:
            raise BadQuery(f"label is longer than {_MAX_LABEL} characters")
        return label

    def _filters(self, request: Request) -> _Asked:
        params = request.query_params
        verdict = params.get("verdict") or None
        if verdict is not None and verdict not in VERDICTS:
            raise BadQuery(f"verdict must be one of {', '.join(VERDICTS)}")
        sort = params.get("sort") or "verdict"
        if sort not in SORTS:
            raise BadQuery(f"sort must be one of {', '.join(SORTS)}")
        raw_query = " ".join((params.get("q") or "").split())
        if len(raw_query) > MAX_QUERY:
            raise BadQuery(f"q is longer than {MAX_QUERY} characters")
        owner = params.get("owner") or None
        if owner is not None and not _OWNER.match(owner):
            raise BadQuery("owner must be a GitHub login or an org/team slug")
        neighbours = params.get("neighbours") or None
        if neighbours is not None and neighbours not in NEIGHBOUR_FILTERS:
            raise BadQuery(f"neighbours must be one of {', '.join(NEIGHBOUR_FILTERS)}")
        return _Asked(Filters(self._label(request), verdict, raw_query.casefold() or None,
                              owner.lstrip("@") if owner else None, sort, neighbours),
                      raw_query)

    def _etag(self, request: Request, info: RepoInfo, kind: str) -> str:
        # What a page is a function of: the repository's stored data (its version), the
        # query, and the hour (merged PRs age out of "recently merged").
        query = sorted((k, v) for k, v in request.query_params.multi_items() if k != "token")
        hour = int(self._clock() // 3600)
        parts = f"{_SHAPE}|{kind}|{info.repo}|{info.version}|{hour}|{urlencode(query)}"
        return '"' + hashlib.sha256(parts.encode()).hexdigest()[:24] + '"'

    @staticmethod
    def _not_modified(request: Request, etag: str) -> bool:
        given = request.headers.get("if-none-match", "")
        return any(tag.strip() in (etag, f"W/{etag}", "*") for tag in given.split(","))

    def _respond(
        self, request: Request, info: RepoInfo, etag: str, render: Callable[[], bytes],
        media_type: str,
    ) -> Response:
        if self._not_modified(request, etag):
            response = Response(status_code=304)
        else:
            response = Response(render(), media_type=media_type)
        _secure(response)
        response.headers["ETag"] = etag
        response.headers["Cache-Control"] = ("private" if info.private else "public") + ", no-cache"
        response.headers["Vary"] = "Authorization, Cookie"
        return response

    def _token_out_of_url(self, request: Request) -> Response | None:
        """A page opened with ?token=: keep the token in a cookie and drop it from the URL,
        so it never reaches a link, a bookmark or the browser history. Only the valid
        token becomes a cookie: an outsider's link to a public page must not plant a
        value of its choosing in the reader's browser (issue 32, item 3)."""
        if "token" not in request.query_params:
            return None
        kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = request.url.path + (f"?{urlencode(kept)}" if kept else "")
        response = RedirectResponse(target, status_code=303)
        token = request.query_params["token"]
        if self._valid(token):
            response.set_cookie(
                TOKEN_COOKIE, token, httponly=True, samesite="strict",
                secure=request.url.scheme == "https", path="/",
            )
        _secure(response)
        response.headers["Cache-Control"] = "no-store"
        return response

    # -- pages ------------------------------------------------------------------------

    async def label_view(self, request: Request) -> Response:
        repo, info = await self._repo(request)
        if (redirect := self._token_out_of_url(request)) is not None:
            return redirect
        lang, asked = self._lang(request), self._filters(request)
        number = _bounded_int(request.query_params.get("page"), "page", 1, 1, _MAX_PAGE)
        etag = self._etag(request, info, "page")
        if self._not_modified(request, etag):
            return self._respond(request, info, etag, bytes, "text/html")
        body = self._pages.get(etag)
        if body is None:
            # Readers asking for the same page at once wait for one rendering of it.
            rendering = self._rendering.get(etag)
            if rendering is None:
                rendering = asyncio.ensure_future(
                    self._render_page(etag, repo, info, lang, asked, number))
                self._rendering[etag] = rendering
                rendering.add_done_callback(lambda _: self._rendering.pop(etag, None))
            body = await asyncio.shield(rendering)
        page = body
        return self._respond(request, info, etag, lambda: page, "text/html; charset=utf-8")

    async def _render_page(self, etag: str, repo: str, info: RepoInfo, lang: Lang,
                           asked: _Asked, number: int) -> bytes:
        entries = await self._entries.entries(info, lang)
        now = self._clock()
        filters = asked.filters
        key = (repo.casefold(), lang, info.version, int(now // 3600), filters)

        def render() -> bytes:
            # On the view's thread: building a queue of thousands of PRs and rendering
            # its rows would hold the event loop, and every webhook ack with it.
            view = self._views.get(key)
            if view is None:
                view = self._views[key] = build_label_view(
                    entries, now=now, recent_seconds=self._store.recent_seconds,
                    label=filters.label, verdict=filters.verdict, query=filters.query,
                    owner=filters.owner, sort=filters.sort, neighbours=filters.neighbours)
            return render_label_view(
                repo, view, lang=lang, default_lang=self._default_lang,
                fragments=self._fragments, now=now, raw_query=asked.raw_query,
                page=page_of(view, number),
            ).encode("utf-8", "replace")

        body = await asyncio.get_running_loop().run_in_executor(self._render_thread, render)
        self._pages[etag] = body
        return body

    async def digest_page(self, request: Request) -> Response:
        repo, info = await self._repo(request)
        if (redirect := self._token_out_of_url(request)) is not None:
            return redirect
        raw = str(request.path_params["number"])
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 10) or int(raw) > _MAX_NUMBER:
            raise _NotFound
        number = int(raw)
        lang = self._lang(request)
        etag = self._etag(request, info, f"pr{number}")
        if self._not_modified(request, etag):
            return self._respond(request, info, etag, bytes, "text/html")
        item = await self._store.entry(repo, number, lang)
        if item is None:
            raise _NotFound
        shown: Lang = item.payload.get("lang", lang)
        available = LANGS if shown == lang else (shown,)

        def render() -> bytes:
            return render_digest_page(
                repo, item.entry, str(item.payload.get("markdown", "")), lang=shown,
                default_lang=self._default_lang, available=available,
            ).encode("utf-8", "replace")

        return self._respond(request, info, etag, render, "text/html; charset=utf-8")

    async def feed(self, request: Request) -> Response:
        repo, info = await self._repo(request)
        lang, label = self._lang(request), self._label(request)
        etag = self._etag(request, info, "feed")
        if self._not_modified(request, etag):
            return self._respond(request, info, etag, bytes, "application/atom+xml")
        entries = await self._entries.entries(info, lang)
        listed = [e for e in entries if e.state == "open" and e.verdict != "quiet"
                  and (label is None or label in e.labels)]
        listed.sort(key=lambda e: (-e.updated_at, -e.number))
        listed = listed[:_FEED_ENTRIES]
        base = self._public_url or str(request.base_url)

        def render() -> bytes:
            updated = max((e.updated_at for e in listed), default=0.0)
            return render_feed(repo, listed, lang=lang, label=label, base_url=base,
                               updated=updated).encode("utf-8", "replace")

        return self._respond(request, info, etag, render, "application/atom+xml; charset=utf-8")

    async def api(self, request: Request) -> Response:
        repo, info = await self._repo(request)
        lang, label = self._lang(request), self._label(request)
        since = _since(request.query_params.get("since"))
        page = _bounded_int(request.query_params.get("page"), "page", 1, 1, 10**6)
        per_page = _bounded_int(request.query_params.get("per_page"), "per_page",
                                _PER_PAGE_DEFAULT, 1, _PER_PAGE_MAX)
        etag = self._etag(request, info, "api")
        if self._not_modified(request, etag):
            return self._respond(request, info, etag, bytes, "application/json")
        items, more = await self._store.page(repo, lang, label=label, since=since,
                                             limit=per_page, offset=(page - 1) * per_page)
        base = self._public_url.rstrip("/") if self._public_url else ""

        def render() -> bytes:
            return b"[" + b",".join(api_item_json(item, repo, base) for item in items) + b"]"

        response = self._respond(request, info, etag, render, "application/json")
        kept = [(k, v) for k, v in request.query_params.multi_items()
                if k not in ("page", "token")]

        def page_link(number: int, rel: str) -> str:
            target = request.url.path + "?" + urlencode([*kept, ("page", str(number))])
            return f'<{target}>; rel="{rel}"'

        links = [page_link(page + 1, "next")] if more else []
        if page > 1:
            links += [page_link(page - 1, "prev"), page_link(1, "first")]
        if links:
            response.headers["Link"] = ", ".join(links)
        return response

    async def stylesheet(self, request: Request) -> Response:
        if self._not_modified(request, self._css_etag):
            response = Response(status_code=304)
        else:
            response = Response(self._css, media_type="text/css; charset=utf-8")
        _secure(response)
        response.headers["ETag"] = self._css_etag
        response.headers["Cache-Control"] = "public, max-age=3600"
        return response


class _NotFound(Exception):
    pass


@dataclass(frozen=True)
class _Asked:
    """The page's filters, and the search as typed (shown back in the search box)."""

    filters: Filters
    raw_query: str


def _asked_repo(request: Request) -> str | None:
    """OWNER/REPO of a label view that answered 404 (its page says how digests get
    there); None for any other page."""
    owner, name = request.path_params.get("owner"), request.path_params.get("repo")
    if "number" in request.path_params or not (owner and name):
        return None
    if not (_NAME.match(str(owner)) and _NAME.match(str(name))):
        return None
    return f"{owner}/{name}"


def _secure(response: Response) -> None:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"


def _since(raw: str | None) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise BadQuery("since must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _bounded_int(raw: str | None, name: str, default: int, low: int, high: int) -> int:
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 7 and low <= int(raw) <= high):
        raise BadQuery(f"{name} must be a whole number from {low} to {high}")
    return int(raw)


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def api_item_json(item: ApiItem, repo: str, base_url: str = "") -> bytes:
    """The digest's JSON contract plus the PR's state on GitHub (`labels` stays the
    contract's: the areas' labels; the PR's own are `pr_labels`). Spliced, not parsed
    and dumped again: the stored digest is already JSON, its Markdown most of it."""
    extra = json.dumps(_pr_fields(item.entry, repo, base_url), separators=(",", ":"))
    stored = item.raw.rstrip()
    if stored == b"{}":
        return extra.encode("ascii")
    return stored[:-1] + b"," + extra[1:].encode("ascii")


def _pr_fields(entry: ViewEntry, repo: str, base_url: str) -> dict[str, Any]:
    triage = entry.summary.triage
    return {
        "title": entry.title,
        "author": entry.author,
        "url": entry.url,
        "pr_labels": list(entry.pr_labels),
        "requested_reviewers": list(entry.requested),  # teams as org/slug
        "draft": entry.draft,
        "state": entry.state,
        "merged": entry.merged,
        "updated_at": _iso(entry.updated_at),
        "closed_at": _iso(entry.closed_at),
        "view_url": base_url + view_path(repo, entry.number),
        # Triage (issue 29): null/empty when the digest was stored before they existed.
        "created_at": _iso(triage.created_at),
        "last_activity_at": _iso(entry.last_activity_at),
        "waiting_on": entry.waiting_on,
        "needs_first_review": entry.needs_first_review,
        "size": {"additions": triage.additions, "deletions": triage.deletions,
                 "files": triage.files},
        "signals": list(triage.signals),
    }


