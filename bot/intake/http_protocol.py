"""uvicorn's httptools protocol with the limits it lacks: deadlines for a request's
headers and for its body, and a cap on open connections.

uvicorn arms no timer until a first response has been sent, so a client that trickles
header bytes (slowloris) holds its connection, and a file descriptor, forever; enough of
them starve the process. The body deadline lives here too, not in the app: one loop
timer per request, instead of an `asyncio.timeout` around every body read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_BODY_TIMEOUT_BODY = b'{"error":"body not received in time"}'
_BODY_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(_BODY_TIMEOUT_BODY)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _BODY_TIMEOUT_BODY
)


class _GuardedHttpToolsProtocol(HttpToolsProtocol):
    header_timeout_seconds = 10.0
    body_timeout_seconds = 30.0
    max_connections = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None
        self._body_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            # Refuse at once: a waiting connection is exactly the resource being exhausted.
            transport.abort()
            return
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        self._disarm_body_deadline()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        # A keep-alive connection starts its next request: headers are due again.
        self._arm_header_deadline()
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        super().on_headers_complete()
        if self._body_deadline is None:
            self._body_deadline = self.loop.call_later(
                self.body_timeout_seconds, self._body_too_slow)

    def on_message_complete(self) -> None:
        self._disarm_body_deadline()
        super().on_message_complete()

    def _arm_header_deadline(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(
                self.header_timeout_seconds, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _disarm_body_deadline(self) -> None:
        if self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None

    def _body_too_slow(self) -> None:
        # The app sees a disconnect (its read ends, nothing is stored); the client a 408.
        self._body_deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            cycle.response_started = cycle.response_complete = True
            self.transport.write(_BODY_TIMEOUT_RESPONSE)
        self.transport.close()

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
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
    })
