"""uvicorn's httptools protocol with the limits it lacks: deadlines for a request's
headers and for its body, and a cap on open connections.

uvicorn arms no timer until a first response has been sent, so a client that trickles
header bytes (slowloris) holds its connection, and a file descriptor, forever; enough of
them starve the process. The body deadline lives here too, not in the app: a deadline
per request, checked by one sweeping timer, instead of an `asyncio.timeout` around
every body read.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_BODY_TIMEOUT_BODY = b'{"error":"body not received in time"}'
_BODY_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(_BODY_TIMEOUT_BODY)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _BODY_TIMEOUT_BODY
)


class _Sweeper:
    """One timer per event loop checks every connection's deadlines a few times per
    shortest timeout. Per-request `call_later` handles (two per request: headers, then
    body) cost more CPU under load than the whole rest of the protocol's work; a
    deadline now fires up to a quarter of its length late, which a slowloris guard
    does not mind."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: float) -> None:
        self._loop = loop
        self._interval = interval
        self._watched: set[_GuardedHttpToolsProtocol] = set()
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, connection: _GuardedHttpToolsProtocol) -> None:
        self._watched.add(connection)
        if self._timer is None:
            self._timer = self._loop.call_later(self._interval, self._sweep)

    def unwatch(self, connection: _GuardedHttpToolsProtocol) -> None:
        self._watched.discard(connection)

    def _sweep(self) -> None:
        self._timer = None
        now = self._loop.time()
        for connection in list(self._watched):
            connection.check_deadlines(now)
        if self._watched:
            self._timer = self._loop.call_later(self._interval, self._sweep)


class _GuardedHttpToolsProtocol(HttpToolsProtocol):
    header_timeout_seconds = 10.0
    body_timeout_seconds = 30.0
    max_connections = 512
    # One sweeper per loop (the service runs one; tests may run several in turn).
    _sweepers: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweeper]] = (
        weakref.WeakKeyDictionary())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # loop.time() by which the headers, or the body, must have arrived; None: not due.
        self._header_due: float | None = None
        self._body_due: float | None = None
        sweeper = self._sweepers.get(self.loop)
        if sweeper is None:
            interval = min(1.0, self.header_timeout_seconds / 4, self.body_timeout_seconds / 4)
            sweeper = self._sweepers[self.loop] = _Sweeper(self.loop, interval)
        self._sweeper = sweeper

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            # Refuse at once: a waiting connection is exactly the resource being exhausted.
            transport.abort()
            return
        self._header_due = self.loop.time() + self.header_timeout_seconds
        self._sweeper.watch(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._sweeper.unwatch(self)
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        # A keep-alive connection starts its next request: headers are due again.
        if self._header_due is None:
            self._header_due = self.loop.time() + self.header_timeout_seconds
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._header_due = None
        super().on_headers_complete()
        if self._body_due is None:
            self._body_due = self.loop.time() + self.body_timeout_seconds

    def on_message_complete(self) -> None:
        self._body_due = None
        super().on_message_complete()

    def check_deadlines(self, now: float) -> None:
        if self._header_due is not None and now >= self._header_due:
            self._header_due = None
            self._headers_too_slow()
        if self._body_due is not None and now >= self._body_due:
            self._body_due = None
            self._body_too_slow()

    def _body_too_slow(self) -> None:
        # The app sees a disconnect (its read ends, nothing is stored); the client a 408.
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            cycle.response_started = cycle.response_complete = True
            self.transport.write(_BODY_TIMEOUT_RESPONSE)
        self.transport.close()

    def _headers_too_slow(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    *, header_timeout_seconds: float, body_timeout_seconds: float, max_connections: int
) -> type[HttpToolsProtocol]:
    """The protocol class to pass as uvicorn's `http=`, with these limits."""
    return type("GuardedHttpToolsProtocol", (_GuardedHttpToolsProtocol,), {
        "header_timeout_seconds": header_timeout_seconds,
        "body_timeout_seconds": body_timeout_seconds,
        "max_connections": max_connections,
        "_sweepers": weakref.WeakKeyDictionary(),
    })
