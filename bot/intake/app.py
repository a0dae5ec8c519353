"""The HTTP service: webhook intake (verify, persist, 202 in milliseconds), health,
readiness and metrics. Built by a factory; nothing runs at import."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache
from prometheus_client import CONTENT_TYPE_LATEST, Counter, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from bot.intake.envelope import pull_request_delivery, routing_fields
from bot.intake.http_protocol import AckRoute
from bot.intake.webhooks import (
    BotIdentity,
    Ignored,
    PayloadError,
    parse_signature,
    route_event,
    route_pull_request,
    signature_matches,
)
from bot.observe.logs import HotPathLog, bind_log_context, register_secret
from bot.observe.metrics import Metrics
from bot.queue.store import (
    Accepted,
    Delivery,
    JobStore,
    NewJob,
    ServiceStore,
    StoreUnavailable,
)
from bot.queue.worker_thread import JobRunner
from bot.settings.model import Settings

log = logging.getLogger("bot.intake.app")
_delivery_log = HotPathLog("bot.intake.app")

# Metric labels come from request headers: keep their cardinality bounded.
_KNOWN_EVENTS = frozenset({
    "pull_request", "issue_comment", "ping", "installation", "installation_repositories", "push",
    "pull_request_review", "pull_request_review_comment", "status",
})
# The CI build state last accepted per (repo, commit): a `status` event that repeats it
# ("Build #N is running" twice) is answered without a job. In memory: after a restart
# the first repeat costs one job, which changes nothing (level-triggered).
_CI_STATES_KEPT = 4096
_ACTION = re.compile(r"^[a-z_]{1,40}$")
_READY_TIMEOUT_SECONDS = 2.0
# Real deliveries are tens of KB (a PR body is capped at 65,536 characters); only a few
# bodies above this are read at once, so 40 forged 25 MB bodies cannot take 1 GB.
_LARGE_BODY_BYTES = 1024 * 1024
_LARGE_BODY_SLOTS = 4


@dataclass
class _Reply:
    status: int
    body: dict[str, Any]
    outcome: str
    event: str = "-"
    action: str = "-"
    context: dict[str, Any] = field(default_factory=dict)


class _Rejected(Exception):
    def __init__(self, status: int, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.status, self.reason, self.outcome = status, reason, outcome


def _disconnected() -> _Rejected:
    return _Rejected(400, "client disconnected", "bad_request")


def _failure_reply(exc: Exception) -> _Reply:
    """The answer to a delivery whose handling raised: never a 500."""
    if isinstance(exc, _Rejected):
        return _Reply(exc.status, {"error": exc.reason}, exc.outcome)
    if isinstance(exc, StoreUnavailable):
        log.error("store unavailable, delivery refused: %s", exc)
        return _Reply(503, {"error": "store unavailable"}, "unavailable")
    # A 503 makes GitHub show the failure so it can be redelivered.
    log.error("unexpected error during intake", exc_info=exc)
    return _Reply(503, {"error": "internal error"}, "error")


class _Body:
    """A delivery's body as it arrives: counted against the limit (413 while it
    streams: chunked bodies carry no Content-Length) and hashed as it goes, so the
    signature is checked without a second pass. Both paths feed one."""

    __slots__ = ("_chunks", "_given", "_limit", "_macs", "size")

    def __init__(self, macs: list[hmac.HMAC], given: bytes, limit: int) -> None:
        self._macs, self._given, self._limit = macs, given, limit
        self._chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._limit:
            raise _Rejected(413, "payload too large", "too_large")
        for mac in self._macs:
            mac.update(chunk)
        self._chunks.append(chunk)

    def verified(self) -> bytes:
        """The whole body, once its signature checks out (401 otherwise)."""
        if self._macs and not signature_matches(self._macs, self._given):
            raise _Rejected(401, "bad or missing signature", "unauthorized")
        chunks = self._chunks
        # The usual case is one chunk: no copy.
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@dataclass
class _Ignore:
    """A delivery routing ignores: recorded (best effort) before the answer."""

    delivery: Delivery
    reply: _Reply


@dataclass
class _Accept:
    """A delivery that asks for a job: the answer waits until the job is stored."""

    delivery: Delivery
    job: NewJob
    event_label: str
    action_label: str
    context: dict[str, Any]


# The request headers the ack reads; everything else is never decoded.
_WEBHOOK_HEADERS = frozenset({
    b"content-length", b"x-hub-signature-256", b"x-github-event", b"x-github-delivery",
})


def _webhook_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers the ack reads, decoded as latin-1 (as HTTP and starlette do); the
    first of a repeated header wins, as with starlette's `Headers.get`."""
    found: dict[str, str] = {}
    for name, value in raw:
        if name in _WEBHOOK_HEADERS:
            found.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return found


# One encoder for every reply: json.dumps with arguments builds a new one per call.
_REPLY_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def _reply_bytes(content: dict[str, Any]) -> bytes:
    # Replies echo payload text (e.g. an unknown action); JSON may carry lone
    # surrogates ("\\ud800") that UTF-8 cannot encode, so escape everything to ASCII.
    return _REPLY_ENCODER.encode(content).encode()


async def _send_json(send: Send, status: int, content: dict[str, Any]) -> None:
    body = _reply_bytes(content)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
    ]})
    await send({"type": "http.response.body", "body": body})


class IntakeApp(Starlette):
    """Starlette, with `POST /webhook` taken before the middleware stack and the router:
    the one hot route needs neither. Other methods on /webhook, and every other path,
    go through starlette as usual (405s, the label view, health)."""

    def __init__(self, webhook: _Intake, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._webhook = webhook

    @property
    def ack_route(self) -> AckRoute:
        """For the HTTP protocol (bot/intake/http_protocol.py): `POST /webhook` answered
        from its own callbacks, with this app's intake."""
        return self._webhook

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and scope["method"] == "POST"
                and _route_path(scope) == "/webhook"):
            await self._webhook(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _route_path(scope: Scope) -> str:
    # As starlette matches routes: the path below the app's mount point, if any.
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


@dataclass
class _Intake:
    settings: Settings
    store: JobStore
    metrics: Metrics
    worker: JobRunner | None
    # Why the service cannot work yet (e.g. App credentials GitHub rejects); None: fine.
    not_ready_reason: Callable[[], str | None] = lambda: None
    # Told the size of each body refused after (part of) it was read.
    refused_bytes: Callable[[int], None] | None = None
    draining: bool = False
    _warned_unsigned: bool = False
    _warned_no_secret: bool = False
    _large_bodies: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(_LARGE_BODY_SLOTS))
    _keyed_macs: list[hmac.HMAC] = field(default_factory=list)
    # labels() builds and looks up a key on every call; the children never change.
    _delivery_counters: dict[tuple[str, str, str], Counter] = field(default_factory=dict)
    _ci_states: LRUCache[tuple[str, str], str] = field(
        default_factory=lambda: LRUCache(maxsize=_CI_STATES_KEPT))

    def __post_init__(self) -> None:
        self._keyed_macs = [hmac.new(secret, digestmod=hashlib.sha256)
                            for secret in self.settings.webhook_secrets()]

    @property
    def _callback_store(self) -> ServiceStore | None:
        """The store, if it takes callbacks (both real backends do; a test's may not)."""
        store = self.store
        if callable(getattr(store, "submit_accept", None)):
            return store  # type: ignore[return-value]
        return None

    def _delivery_counter(self, event: str, action: str, outcome: str) -> Counter:
        key = (event, action, outcome)
        counter = self._delivery_counters.get(key)
        if counter is None:
            counter = self.metrics.deliveries.labels(event=event, action=action, outcome=outcome)
            self._delivery_counters[key] = counter
        return counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """`POST /webhook` as a plain ASGI app: the ack path reads four headers and the
        body straight from the ASGI messages, with none of starlette's per-request
        objects (Request, Headers, middleware frames, Response), which cost more than
        the work itself under load (bench/README.md). Served this way under any ASGI
        server and for what the HTTP protocol's own ack route declines (`open_exchange`)."""
        started = time.perf_counter()
        headers = _webhook_headers(scope["headers"])
        # Every line logged while handling this delivery carries its id.
        with bind_log_context(delivery=headers.get("x-github-delivery", "")[:80] or None):
            reply = await self._reply(headers, receive)
            self._finish(reply, started)
        await _send_json(send, reply.status, reply.body)

    async def _reply(self, headers: dict[str, str], receive: Receive) -> _Reply:
        try:
            return await self._handle(headers, receive)
        except Exception as exc:
            return _failure_reply(exc)

    async def _handle(self, headers: dict[str, str], receive: Receive) -> _Reply:
        body = self._before_body(headers)
        try:
            await self._read_body(headers, receive, body)
            decision = self._decide(headers, body.verified())
        except _Rejected:
            self._refused(body)
            raise
        if isinstance(decision, _Reply):
            return decision
        if isinstance(decision, _Ignore):
            await self._record_ignored(decision.delivery)
            return decision.reply
        return self._accepted(decision, await self.store.accept_delivery(
            decision.delivery, decision.job))

    def _refused(self, body: _Body | None) -> None:
        """A body read and then refused (or left unfinished): its bytes are freed now,
        in bulk, which `refused_bytes` may act on (bot/service/heap.py)."""
        if body is not None and body.size and self.refused_bytes is not None:
            self.refused_bytes(body.size)

    def _finish(self, reply: _Reply, started: float) -> None:
        """Count and log one answered delivery (inside its bound log context)."""
        elapsed = time.perf_counter() - started
        self.metrics.ack_seconds.observe(elapsed)
        self._delivery_counter(reply.event, reply.action, reply.outcome).inc()
        # One call, the fields added to the context dict the reply already carries.
        fields = reply.context
        fields["event"], fields["action"], fields["outcome"] = (
            reply.event, reply.action, reply.outcome)
        fields["status"], fields["duration_ms"] = reply.status, round(elapsed * 1000, 2)
        fields["reason"] = reply.body.get("error") or reply.body.get("ignored")
        _delivery_log.log(logging.INFO if reply.status < 400 else logging.WARNING,
                          f"delivery {reply.outcome}", fields)

    def _before_body(self, headers: dict[str, str]) -> _Body:
        """What is refused before a byte of the body is read: a bad or too large
        Content-Length (400, 413), a missing or malformed signature (401). Returns the
        body to feed, with the HMACs it runs and the signature they must match."""
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise _Rejected(400, "bad Content-Length", "bad_request")
            if int(declared) > self.settings.max_body_bytes:
                raise _Rejected(413, "payload too large", "too_large")
        return _Body(*self._signature_check(headers), self.settings.max_body_bytes)

    async def _read_body(self, headers: dict[str, str], receive: Receive,
                         body: _Body) -> None:
        """Feed `body` from the ASGI messages; the whole read has a deadline; bodies over
        _LARGE_BODY_BYTES take one of a few slots, so forged large bodies cannot be
        buffered by the dozen (memory)."""
        declared = headers.get("content-length")
        large = False
        try:
            # The body's deadline is the HTTP protocol's (bot/intake/http_protocol.py):
            # when it passes, the connection closes and this read ends in a disconnect.
            if declared is not None and int(declared) > _LARGE_BODY_BYTES:
                await self._large_bodies.acquire()
                large = True
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    raise _disconnected()
                chunk: bytes = message.get("body", b"")
                if chunk:
                    body.add(chunk)
                    if not large and body.size > _LARGE_BODY_BYTES:
                        await self._large_bodies.acquire()
                        large = True
                if not message.get("more_body", False):
                    break
        finally:
            if large:
                self._large_bodies.release()

    def _decide(self, headers: dict[str, str], body: bytes) -> _Reply | _Ignore | _Accept:
        """What a verified body asks for: an answer now, an ignored delivery to record,
        or a job to store before the answer. Raises _Rejected."""
        event = headers.get("x-github-event", "")
        delivery_id = headers.get("x-github-delivery", "")
        event_label = event if event in _KNOWN_EVENTS else "other"
        # The common delivery, validated while it is decoded; anything else (or a
        # pull_request it refuses) takes the general path below, which decides.
        typed = pull_request_delivery(body) if event == "pull_request" else None
        payload: Any = None
        if typed is None:
            payload = routing_fields(body)
            if payload is None:
                # What the fast decoder declines (bad JSON, lone surrogates, odd shapes)
                # is decided by the stdlib parser and the models, as it always was.
                try:
                    payload = json.loads(body)
                except (ValueError, RecursionError):  # RecursionError: absurd nesting
                    raise _Rejected(400, "body is not JSON", "bad_request") from None
            if not isinstance(payload, dict):
                raise _Rejected(400, "body is not a JSON object", "bad_request")
            if event == "ping":
                return _Reply(200, {"ok": True, "zen": payload.get("zen")}, "ping", "ping")
        if not event or not delivery_id or len(delivery_id) > 200:
            raise _Rejected(400, "missing X-GitHub-Event or X-GitHub-Delivery", "bad_request")
        raw_action = typed.action if typed is not None else payload.get("action")
        action = raw_action if isinstance(raw_action, str) and _ACTION.match(raw_action) else "-"
        action_label = action if event_label != "other" else "-"
        context: dict[str, Any] = {"delivery": delivery_id}
        try:
            # Read per delivery: the service learns its login from GitHub after start.
            identity = BotIdentity(self.settings.bot_login, self.settings.app_id)
            routed = (route_pull_request(typed, identity) if typed is not None
                      else route_event(event, payload, identity,
                                       ci_context=self.settings.ci_status_context.strip()))
        except PayloadError as exc:
            return _Reply(400, {"error": f"bad {event} payload: {exc}"}, "bad_request",
                          event_label, action_label, context)
        if isinstance(routed, Ignored) and not routed.record:
            return _Reply(202, {"ignored": routed.reason}, "ignored", event_label,
                          action_label, context)
        delivery = Delivery(delivery_id=delivery_id, event=event, action=action)
        if isinstance(routed, Ignored):
            return _Ignore(delivery, _Reply(202, {"ignored": routed.reason}, "ignored",
                                            event_label, action_label, context))
        if routed.kind == "status" and self._ci_states.get(_ci_key(routed)) == routed.payload.get(
                "state"):
            return _Reply(202, {"ignored": "CI state unchanged"}, "ignored", event_label,
                          action_label, context)
        context.update(repo=routed.repo, pr=routed.number, installation=routed.installation_id)
        return _Accept(delivery, routed, event_label, action_label, context)

    def _accepted(self, accept: _Accept, result: Accepted) -> _Reply:
        acceptance, job_id, due_at = result
        context = accept.context
        context["job"] = job_id
        if accept.job.kind == "status":
            # Remembered once stored: a refused delivery (503) may come again.
            self._ci_states[_ci_key(accept.job)] = str(accept.job.payload.get("state"))
        if acceptance == "duplicate":
            return _Reply(202, {"duplicate": True, "job": job_id}, "duplicate",
                          accept.event_label, accept.action_label, context)
        if self.worker is not None:
            self.worker.wake(at=due_at)
        return _Reply(202, {"ok": True, "job": job_id, "outcome": acceptance}, acceptance,
                      accept.event_label, accept.action_label, context)

    def _signature_check(self, headers: dict[str, str]) -> tuple[list[hmac.HMAC], bytes]:
        """One running HMAC per configured secret and the signature they must match;
        none when unsigned deliveries are acceptable. Raises 401 before the body is read."""
        if self._keyed_macs:
            given = parse_signature(headers.get("x-hub-signature-256"))
            if given is None:
                raise _Rejected(401, "bad or missing signature", "unauthorized")
            # Copies of HMACs keyed once at start: the key schedule is not redone per call.
            return [mac.copy() for mac in self._keyed_macs], given
        # Without a secret, only a bot that can write nothing and mint nothing may take
        # unsigned deliveries: with any credential, an unsigned delivery could make it
        # mint a token for whatever installation id the sender names.
        if not self.settings.has_any_credentials:
            if not self._warned_unsigned:
                self._warned_unsigned = True
                log.warning("no webhook secret configured: accepting unsigned deliveries "
                            "(no credentials, so nothing can be written; set "
                            "DIGEST_WEBHOOK_SECRET)")
            return [], b""
        if not self._warned_no_secret:
            self._warned_no_secret = True
            log.error("no webhook secret configured: refusing every delivery "
                      "(set DIGEST_WEBHOOK_SECRET)")
        raise _Rejected(401, "webhook secret not configured", "unauthorized")

    def open_exchange(self, raw_headers: list[tuple[bytes, bytes]],
                      respond: Callable[[int, bytes], None],
                      loop: asyncio.AbstractEventLoop) -> WebhookExchange | None:
        """The HTTP protocol's ack route (bot/intake/http_protocol.py): this delivery
        handled from the protocol's own callbacks, with no ASGI task, messages or
        future, or None to leave it to the ASGI path. Taken only for what needs none of
        the ASGI path's waiting: a declared Content-Length up to _LARGE_BODY_BYTES (no
        chunked body, no large-body slot) and a store that takes callbacks."""
        store = self._callback_store
        if store is None:
            return None
        headers = _webhook_headers(raw_headers)
        declared = headers.get("content-length")
        # No Content-Length: a chunked body (llhttp refuses one that has both).
        if declared is None or (declared.isdigit() and _LARGE_BODY_BYTES < int(declared)
                                <= self.settings.max_body_bytes):
            return None
        return WebhookExchange(self, store, headers, respond, loop)

    async def _record_ignored(self, delivery: Delivery) -> None:
        try:
            await self.store.record_delivery(delivery, "ignored")
        except StoreUnavailable:
            _not_recorded(delivery)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def readyz(self, request: Request) -> Response:
        if self.draining:
            return JSONResponse({"ready": False, "reason": "draining"}, status_code=503)
        reason = self.not_ready_reason()
        if reason is not None:
            return JSONResponse({"ready": False, "reason": reason}, status_code=503)
        try:
            await asyncio.wait_for(self.store.ping(), _READY_TIMEOUT_SECONDS)
        except (StoreUnavailable, TimeoutError):
            return JSONResponse({"ready": False, "reason": "store unavailable"},
                                status_code=503)
        return JSONResponse({"ready": True})

    async def metrics_text(self, request: Request) -> Response:
        try:
            counts = await asyncio.wait_for(self.store.counts(), _READY_TIMEOUT_SECONDS)
        except (StoreUnavailable, TimeoutError):
            pass
        else:
            self.metrics.queue_depth.set(counts["queued"] + counts["failed"] + counts["running"])
            self.metrics.parked_jobs.set(counts["parked"])
        return PlainTextResponse(generate_latest(self.metrics.registry),
                                 media_type=CONTENT_TYPE_LATEST)


class WebhookExchange:
    """One delivery on the HTTP protocol's ack route: the protocol feeds it the body as
    it arrives and says when it is complete (or abandoned); the exchange answers once,
    through `respond(status, body)`, after the store has committed its job. The same
    steps as the ASGI path (`_Intake._handle`), driven by callbacks instead of a task."""

    __slots__ = (
        "_body",
        "_body_complete",
        "_done",
        "_headers",
        "_intake",
        "_log_context",
        "_loop",
        "_respond",
        "_started",
        "_store",
    )

    def __init__(self, intake: _Intake, store: ServiceStore, headers: dict[str, str],
                 respond: Callable[[int, bytes], None],
                 loop: asyncio.AbstractEventLoop) -> None:
        self._intake, self._store, self._headers, self._respond, self._loop = (
            intake, store, headers, respond, loop)
        self._started = time.perf_counter()
        # Every line logged while handling this delivery carries its id; entered once per
        # callback from the protocol.
        self._log_context = bind_log_context(
            delivery=headers.get("x-github-delivery", "")[:80] or None)
        self._done = False
        self._body_complete = False
        self._body: _Body | None = None
        with self._log_context:
            try:
                self._body = intake._before_body(headers)
            except Exception as exc:
                self._answer(_failure_reply(exc))

    def feed(self, chunk: bytes) -> None:
        if self._done or self._body is None:
            return
        try:
            self._body.add(chunk)
        except _Rejected as rejected:
            self._intake._refused(self._body)
            with self._log_context:
                self._answer(_failure_reply(rejected))

    def complete(self) -> None:
        """The whole body has arrived."""
        self._body_complete = True
        if self._done or self._body is None:
            return
        with self._log_context:
            try:
                decision = self._intake._decide(self._headers, self._body.verified())
                if isinstance(decision, _Reply):
                    self._answer(decision)
                elif isinstance(decision, _Ignore):
                    self._store.submit_record(
                        decision.delivery, "ignored",
                        lambda _, error: self._recorded(decision, error), self._loop)
                else:
                    self._store.submit_accept(
                        decision.delivery, decision.job,
                        lambda result, error: self._stored(decision, result, error),
                        self._loop)
            except Exception as exc:
                if isinstance(exc, _Rejected):
                    self._intake._refused(self._body)
                self._answer(_failure_reply(exc))

    def abandon(self) -> None:
        """The body will not arrive (the client left, or its deadline passed): counted
        and logged as the ASGI path does; nothing is stored and no answer is written.
        Once the body is complete the delivery is being stored: it goes ahead."""
        if not self._done and not self._body_complete:
            self._intake._refused(self._body)
            with self._log_context:
                self._answer(_failure_reply(_disconnected()), write=False)

    def _stored(self, accept: _Accept, result: Accepted | None,
                error: BaseException | None) -> None:
        with self._log_context:
            try:
                if error is not None:
                    raise error
                assert result is not None
                self._answer(self._intake._accepted(accept, result))
            except Exception as exc:
                self._answer(_failure_reply(exc))

    def _recorded(self, ignore: _Ignore, error: BaseException | None) -> None:
        with self._log_context:
            if error is not None:
                _not_recorded(ignore.delivery)
            self._answer(ignore.reply)

    def _answer(self, reply: _Reply, *, write: bool = True) -> None:
        if self._done:
            return
        self._done = True
        self._body = None
        self._intake._finish(reply, self._started)
        if write:
            self._respond(reply.status, _reply_bytes(reply.body))


def _ci_key(job: NewJob) -> tuple[str, str]:
    return job.repo, str(job.payload.get("sha"))


def _not_recorded(delivery: Delivery) -> None:
    # An audit trail only: losing it must not fail a delivery we would ignore anyway.
    log.warning("could not record ignored delivery", extra={"delivery": delivery.delivery_id})


def _register_secrets(settings: Settings) -> None:
    for secret in settings.webhook_secrets():
        register_secret(secret)
    for value in (settings.private_key, settings.github_token):
        if value is not None:
            register_secret(value.get_secret_value())


def create_app(
    settings: Settings,
    store: JobStore,
    metrics: Metrics,
    *,
    worker: JobRunner | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    not_ready_reason: Callable[[], str | None] | None = None,
    background: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
    refused_bytes: Callable[[int], None] | None = None,
) -> IntakeApp:
    """The service's app; `extra_routes` (the label view) are composed in by bot.service.wiring,
    so the intake never imports them. `not_ready_reason` makes /readyz 503 while it
    returns a reason; `background` tasks (e.g. the credential check) run on the server's
    loop while it serves; `refused_bytes` is told the size of every body refused
    after it was read."""
    _register_secrets(settings)
    intake = _Intake(settings, store, metrics, worker, refused_bytes=refused_bytes)
    if not_ready_reason is not None:
        intake.not_ready_reason = not_ready_reason

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        intake.draining = False
        if worker is not None:
            await worker.start()
        tasks = [asyncio.create_task(task()) for task in background]
        try:
            yield
        finally:
            intake.draining = True
            for running in tasks:
                running.cancel()
            if worker is not None:
                await worker.stop(settings.drain_seconds)

    return IntakeApp(
        intake,
        routes=[
            Route("/webhook", intake, methods=["POST"]),
            Route("/healthz", intake.healthz, methods=["GET"]),
            Route("/readyz", intake.readyz, methods=["GET"]),
            Route("/metrics", intake.metrics_text, methods=["GET"]),
            *extra_routes,
        ],
        lifespan=lifespan,
    )
