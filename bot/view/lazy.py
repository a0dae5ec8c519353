"""The label view's routes, registered before the service's port opens; the view itself
(bot.view.app: Jinja2, markdown-it, nh3 and its caches) is built on first use, or
ahead of it by `prepare()` on the service's start-up thread. Importing this module
imports none of them, so `/healthz` answers without waiting for the view."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from bot.settings.model import Settings
from bot.view.links import VIEW_ROUTES
from bot.view.store import DigestStore

if TYPE_CHECKING:
    from bot.view.app import LabelViewRoutes

Handler = Callable[[Request], Awaitable[Response]]


class LazyLabelView:
    def __init__(self, store: DigestStore, settings: Settings) -> None:
        self._store = store
        self._settings = settings
        self._view: LabelViewRoutes | None = None
        self._handlers: dict[str, Handler] = {}
        # prepare() runs on the start-up thread while a first request may arrive on
        # the loop: the view is built once.
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        return self._view is not None

    def prepare(self) -> LabelViewRoutes:
        """Import and build the view (and its template environment) if not done yet."""
        with self._lock:
            if self._view is None:
                from bot.view.app import LabelViewRoutes
                from bot.view.pages import warm_up

                view = LabelViewRoutes(self._store, self._settings)
                warm_up()
                self._handlers = {name: view.endpoint(name) for _, name in VIEW_ROUTES}
                self._view = view
            return self._view

    def routes(self) -> list[BaseRoute]:
        return [Route(path, self._endpoint(name), methods=["GET", "HEAD"])
                for path, name in VIEW_ROUTES]

    def _endpoint(self, name: str) -> Handler:
        async def serve(request: Request) -> Response:
            if self._view is None:
                self.prepare()
            return await self._handlers[name](request)

        serve.__name__ = name
        return serve
