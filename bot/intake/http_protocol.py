"""uvicorn's httptools protocol with the two limits it lacks: a deadline for request
headers and a cap on open connections.

uvicorn arms no timer until a first response has been sent, so a client that trickles
header bytes (slowloris) holds its connection, and a file descriptor, forever; enough of
them starve the process. The body has its own deadline in the intake (bot/intake/app.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _GuardedHttpToolsProtocol(HttpToolsProtocol):
    header_timeout_seconds = 10.0
    max_connections = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            # Refuse at once: a waiting connection is exactly the resource being exhausted.
            transport.abort()
            return
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        # A keep-alive connection starts its next request: headers are due again.
        self._arm_header_deadline()
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()
        super().on_headers_complete()

    def _arm_header_deadline(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(
                self.header_timeout_seconds, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    *, header_timeout_seconds: float, max_connections: int
) -> type[HttpToolsProtocol]:
    """The protocol class to pass as uvicorn's `http=`, with these limits."""
    return type("GuardedHttpToolsProtocol", (_GuardedHttpToolsProtocol,), {
        "header_timeout_seconds": header_timeout_seconds,
        "max_connections": max_connections,
    })
