"""The ack route inside the HTTP protocol, served on loopback in-process: which requests
it takes (no ASGI task is started for them), which it leaves to the ASGI app, and the
keep-alive deadline it moved onto the protocol's sweeping timer."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from bot.intake.app import create_app
from bot.intake.http_protocol import guarded_protocol
from bot.observe.metrics import Metrics
from bot.queue.store import SqliteJobStore
from bot.settings.model import Settings
from tests.service_harness import pr_event
from tests.signing import signed_headers

SECRET = "s" * 32


class _CountingSet(set[Any]):
    """uvicorn's set of running ASGI tasks, counting every task ever added."""

    added = 0

    def add(self, item: Any) -> None:
        self.added += 1
        super().add(item)


@dataclass
class _Served:
    port: int
    state: ServerState
    tasks: _CountingSet
    store: SqliteJobStore


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[_Served]:
    settings = Settings(webhook_secret=SECRET, db_path=tmp_path / "db.sqlite")
    store = SqliteJobStore(tmp_path / "db.sqlite", settle_seconds=3600)
    app = create_app(settings, store, Metrics())
    protocol = guarded_protocol(header_timeout_seconds=10, body_timeout_seconds=10,
                                max_connections=16, ack_route=app.ack_route)
    config = uvicorn.Config(app, http=protocol, lifespan="off", log_config=None,
                            timeout_keep_alive=1)
    config.load()
    state = ServerState()
    tasks = _CountingSet()
    state.tasks = tasks
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: protocol(config=config, server_state=state, app_state={}), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield _Served(port, state, tasks, store)
    finally:
        server.close()
        await server.wait_closed()
        store.close()


def _request(number: int, *, chunked: bool = False, expect: bool = False,
             path: str = "/webhook") -> bytes:
    body = json.dumps(pr_event("opened", number)).encode()
    headers = signed_headers("pull_request", body, SECRET, str(uuid.uuid4()))
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items())
    if expect:
        head += "Expect: 100-continue\r\n"
    if chunked:
        return (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + (
            f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _response(reader: asyncio.StreamReader) -> tuple[int, Any]:
    """Status and body: parsed JSON, or the text of a non-JSON body."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status == 100:
        return await _response(reader)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    body = await reader.readexactly(length)
    is_json = b"content-type: application/json" in head.lower()
    return status, json.loads(body) if is_json else body.decode()


async def _exchange(served: _Served, request: bytes) -> tuple[int, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    try:
        writer.write(request)
        return await _response(reader)
    finally:
        writer.close()


async def test_a_webhook_with_a_content_length_is_answered_without_an_asgi_task(
        served: _Served) -> None:
    status, reply = await _exchange(served, _request(7))
    assert (status, reply["outcome"]) == (202, "accepted")
    assert served.tasks.added == 0
    job = await served.store.get(reply["job"])
    assert job is not None
    assert (job.number, job.state) == (7, "queued")


@pytest.mark.parametrize(("request_bytes", "why"), [
    (_request(8, chunked=True), "chunked body"),
    (_request(9, expect=True), "Expect: 100-continue"),
])
async def test_what_the_route_declines_is_served_by_the_asgi_app(
        served: _Served, request_bytes: bytes, why: str) -> None:
    status, reply = await _exchange(served, request_bytes)
    assert (status, reply["outcome"]) == (202, "accepted"), why
    assert served.tasks.added == 1, why


async def test_a_body_with_both_a_length_and_chunks_is_refused_by_the_parser(
        served: _Served) -> None:
    request = _request(15, chunked=True).replace(
        b"Transfer-Encoding: chunked\r\n", b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")
    status, reply = await _exchange(served, request)
    assert (status, reply) == (400, "Invalid HTTP request received.")
    assert served.tasks.added == 0
    assert (await served.store.counts())["queued"] == 0


async def test_other_paths_are_left_to_the_app(served: _Served) -> None:
    status, reply = await _exchange(served, _request(10, path="/webhooks"))
    assert (status, reply) == (404, "Not Found")
    assert served.tasks.added == 1


async def test_an_idle_keep_alive_connection_is_closed_by_the_sweeper(
        served: _Served) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    try:
        writer.write(_request(11))
        assert (await _response(reader))[0] == 202
        started = asyncio.get_running_loop().time()
        # uvicorn's keep-alive timeout is 1 s here; the sweeper checks every 0.25 s.
        assert await asyncio.wait_for(reader.read(), 3) == b""
        waited = asyncio.get_running_loop().time() - started
        assert 0.9 < waited < 1.6
    finally:
        writer.close()


async def test_a_request_arriving_before_the_deadline_keeps_the_connection(
        served: _Served) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    try:
        for number in (12, 13, 14):
            writer.write(_request(number))
            assert (await _response(reader))[0] == 202
            await asyncio.sleep(0.6)  # under the 1 s keep-alive timeout each time
        assert not reader.at_eof()
    finally:
        writer.close()
