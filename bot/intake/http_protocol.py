"""uvicorn's httptools protocol with the limits it lacks (deadlines for a request's
headers and for its body, caps on open and on idle connections) and an ack route: the
webhook answered from the protocol's own callbacks.

uvicorn arms no timer until a first response has been sent, so a client that trickles
header bytes (slowloris) holds its connection, and a file descriptor, forever; enough of
them starve the process. The body deadline lives here too, not in the app: a deadline
per request, checked by one sweeping timer, instead of an `asyncio.timeout` around
every body read.

The caps: uvicorn counts connections only for `limit_concurrency`, which answers 503 to
every request past it, signed deliveries included. Refusing new connections at a cap
was no better: 512 keep-alive pollers of `/healthz` held every slot, and every delivery
was refused. A connection with no request in progress (nothing sent yet, or waiting for
its next keep-alive request) is idle; a new connection at `max_connections` closes the
oldest idle one, and is refused only when none is idle; idle keep-alive connections
beyond `max_idle_connections` are closed oldest first.

The ack route: under load, uvicorn's per-request machinery (an ASGI scope, a
request-response cycle with its event, a task, the receive and send coroutines and their
header checks) cost as much CPU as everything the ack must do (verify, parse, store).
A `POST` to the route's path is handed to the route's exchange instead: the body goes to
`feed` as it arrives, `complete` runs the ack, and the exchange answers through one
callback once the store has committed. Whatever the route declines (see
`AckRoute.open_exchange`), and every other request, is served by uvicorn as before.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

_BODY_TIMEOUT_BODY = b'{"error":"body not received in time"}'
_BODY_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(_BODY_TIMEOUT_BODY)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _BODY_TIMEOUT_BODY
)


class AckExchange(Protocol):
    """One request on the ack route (bot.intake.app.WebhookExchange)."""

    def feed(self, chunk: bytes) -> None: ...

    def complete(self) -> None: ...

    def abandon(self) -> None:
        """The body will not arrive: record it, answer nothing (the protocol may)."""


class AckRoute(Protocol):
    def open_exchange(self, raw_headers: list[tuple[bytes, bytes]],
                      respond: Callable[[int, bytes], None],
                      loop: asyncio.AbstractEventLoop) -> AckExchange | None:
        """An exchange for this request, which calls `respond(status, json_body)` once
        on `loop` (the connection's); or None: serve it through the ASGI app."""


class _AckCycle:
    """What uvicorn's protocol reads of its current request cycle, for a request the ack
    route took (its shutdown sets keep_alive; pipelining checks response_complete)."""

    __slots__ = ("exchange", "keep_alive", "response_complete", "response_started")

    def __init__(self, keep_alive: bool) -> None:
        self.keep_alive = keep_alive
        self.response_started = False
        self.response_complete = False
        self.exchange: AckExchange | None = None


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
        # Idle connections, oldest first (dicts keep insertion order): those that have
        # sent nothing yet, and those waiting for their next keep-alive request.
        self._silent: dict[_GuardedHttpToolsProtocol, None] = {}
        self._waiting: dict[_GuardedHttpToolsProtocol, None] = {}

    def watch(self, connection: _GuardedHttpToolsProtocol) -> None:
        self._watched.add(connection)
        if self._timer is None:
            self._timer = self._loop.call_later(self._interval, self._sweep)

    def unwatch(self, connection: _GuardedHttpToolsProtocol) -> None:
        self._watched.discard(connection)
        self.busy(connection)

    def silent(self, connection: _GuardedHttpToolsProtocol) -> None:
        """`connection` is open and has sent nothing yet."""
        self._silent[connection] = None

    def waiting(self, connection: _GuardedHttpToolsProtocol, max_waiting: int) -> None:
        """`connection` answered its request and waits for the next one; the oldest
        waiting beyond `max_waiting` are closed."""
        self._waiting[connection] = None
        while len(self._waiting) > max_waiting:
            next(iter(self._waiting)).evict()

    def busy(self, connection: _GuardedHttpToolsProtocol) -> None:
        """`connection` sent bytes (a request began), or is gone: not idle."""
        self._silent.pop(connection, None)
        self._waiting.pop(connection, None)

    def evict_oldest_idle(self) -> bool:
        """Close the connection idle the longest; False when none is idle."""
        oldest = min((next(iter(idle)) for idle in (self._silent, self._waiting) if idle),
                     key=lambda connection: connection.idle_since, default=None)
        if oldest is None:
            return False
        oldest.evict()
        return True

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
    max_idle_connections = 128
    ack_route: ClassVar[AckRoute | None] = None
    ack_path: ClassVar[bytes] = b"/webhook"
    # One sweeper per loop (the service runs one; tests may run several in turn).
    _sweepers: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Sweeper]] = (
        weakref.WeakKeyDictionary())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # loop.time() by which the headers, or the body, must have arrived, or by which
        # an idle keep-alive connection is closed; None: not due.
        self._header_due: float | None = None
        self._body_due: float | None = None
        self._idle_due: float | None = None
        # loop.time() since when the connection has had no request in progress.
        self.idle_since = 0.0
        sweeper = self._sweepers.get(self.loop)
        if sweeper is None:
            interval = max(0.05, min(1.0, self.header_timeout_seconds / 4,
                                     self.body_timeout_seconds / 4, self.timeout_keep_alive / 4))
            sweeper = self._sweepers[self.loop] = _Sweeper(self.loop, interval)
        self._sweeper = sweeper

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._sweeper.evict_oldest_idle():
            # Every connection is busy: refuse at once, a waiting connection is exactly
            # the resource being exhausted.
            transport.abort()
            return
        self.idle_since = self.loop.time()
        self._header_due = self.idle_since + self.header_timeout_seconds
        self._sweeper.watch(self)
        self._sweeper.silent(self)

    def evict(self) -> None:
        """Close this idle connection to make room; no longer counted from now on (its
        close completes on a later turn of the loop)."""
        self._sweeper.busy(self)
        self.connections.discard(self)
        if not self.transport.is_closing():
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._sweeper.unwatch(self)
        cycle = self.cycle
        if isinstance(cycle, _AckCycle):
            if cycle.exchange is not None:
                cycle.exchange.abandon()
            # uvicorn would signal the cycle's body event, which an ack cycle has not.
            self.cycle = None  # type: ignore[assignment]
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        # A keep-alive connection starts its next request: headers are due again.
        if self._header_due is None:
            self._header_due = self.loop.time() + self.header_timeout_seconds
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._header_due = None
        if not self._open_ack():
            super().on_headers_complete()
        if self._body_due is None:
            self._body_due = self.loop.time() + self.body_timeout_seconds

    def _open_ack(self) -> bool:
        """Hand this request to the ack route; False: uvicorn serves it. Declined, with
        uvicorn's own handling: pipelined behind an unanswered request, `Expect:
        100-continue`, upgrades, a concurrency limit (uvicorn answers 503), and whatever
        the route declines."""
        route = self.ack_route
        previous = self.cycle
        if (route is None or self.expect_100_continue or self.limit_concurrency is not None
                or (previous is not None and not previous.response_complete)
                or self.parser.get_method() != b"POST" or self.parser.should_upgrade()):
            return False
        try:
            path = httptools.parse_url(self.url).path
        except httptools.HttpParserInvalidURLError:
            return False
        if path != self.ack_path:
            return False
        cycle = _AckCycle(keep_alive=self.parser.get_http_version() != "1.0"
                          and self.parser.should_keep_alive())
        # Current before the route runs: it may answer at once (a 401 before the body).
        self.cycle = cycle  # type: ignore[assignment]
        exchange = route.open_exchange(self.headers, functools.partial(self._ack_respond, cycle),
                                       self.loop)
        if exchange is None:
            self.cycle = previous
            return False
        cycle.exchange = exchange
        return True

    def _ack_respond(self, cycle: _AckCycle, status: int, body: bytes) -> None:
        if cycle.response_started:
            return
        cycle.response_started = cycle.response_complete = True
        if self.transport.is_closing():
            return
        parts = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            parts += (name, b": ", value, b"\r\n")
        parts += (b"content-type: application/json\r\ncontent-length: ",
                  str(len(body)).encode(), b"\r\n")
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", body)
        self.transport.write(b"".join(parts))
        if not cycle.keep_alive:
            self.transport.close()
        # uvicorn's own bookkeeping: the next pipelined request, or the keep-alive timer.
        self.on_response_complete()

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        if isinstance(cycle, _AckCycle):
            if cycle.exchange is not None and not cycle.response_complete:
                cycle.exchange.feed(body)
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._body_due = None
        cycle = self.cycle
        if isinstance(cycle, _AckCycle):
            if cycle.exchange is not None and not cycle.response_complete:
                cycle.exchange.complete()
            return
        super().on_message_complete()

    def on_response_complete(self) -> None:
        # uvicorn's, with the keep-alive deadline on the sweeper instead of a
        # `call_later` armed after every response and cancelled by the next request.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self.idle_since = self.loop.time()
            self._idle_due = self.idle_since + self.timeout_keep_alive
            self._sweeper.waiting(self, self.max_idle_connections)

    def _unset_keepalive_if_required(self) -> None:
        # uvicorn calls this when data arrives and when the connection is lost.
        self._idle_due = None
        self._sweeper.busy(self)
        super()._unset_keepalive_if_required()

    def check_deadlines(self, now: float) -> None:
        if self._idle_due is not None and now >= self._idle_due:
            self._idle_due = None
            self.timeout_keep_alive_handler()
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
        if isinstance(cycle, _AckCycle) and cycle.exchange is not None:
            cycle.exchange.abandon()
        if cycle is not None and not cycle.response_started:
            cycle.response_started = cycle.response_complete = True
            self.transport.write(_BODY_TIMEOUT_RESPONSE)
        self.transport.close()

    def _headers_too_slow(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    *, header_timeout_seconds: float, body_timeout_seconds: float, max_connections: int,
    max_idle_connections: int = 128, ack_route: AckRoute | None = None,
) -> type[HttpToolsProtocol]:
    """The protocol class to pass as uvicorn's `http=`, with these limits; `POST
    /webhook` goes to `ack_route` when one is given."""
    return type("GuardedHttpToolsProtocol", (_GuardedHttpToolsProtocol,), {
        "header_timeout_seconds": header_timeout_seconds,
        "body_timeout_seconds": body_timeout_seconds,
        "max_connections": max_connections,
        "max_idle_connections": max_idle_connections,
        "ack_route": ack_route,
        "_sweepers": weakref.WeakKeyDictionary(),
    })
