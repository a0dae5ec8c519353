"""The HTTP protocol's ack route (bot/intake/http_protocol.py) against the real
`digest-bot serve` process: a webhook POST answered from the protocol's callbacks must
behave, on the wire, in the store and in the log, exactly as the ASGI path that serves
what the route declines (a chunked body, `Expect: 100-continue`), and keep HTTP/1.1's
connection rules: keep-alive, pipelining, an answer before the body, a client that
leaves mid-body, HTTP/1.0."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.service_harness import SECRET, ServiceProcess, e2e_state, pr_event, wait_until
from tests.signing import sign

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    # A settle window longer than the module: deliveries are stored, never run, so the
    # store's rows are exactly what the ack wrote.
    with FakeGitHubServer(e2e_state()) as url, ServiceProcess(
            url, tmp_path_factory.mktemp("ack"), settle_seconds=3600) as service:
        yield service


def _address(svc: ServiceProcess) -> tuple[str, int]:
    host, port = svc.url.removeprefix("http://").split(":")
    return host, int(port)


def _delivery(number: int, delivery: str | None = None) -> tuple[str, bytes]:
    body = json.dumps(pr_event("opened", number)).encode()
    return delivery or str(uuid.uuid4()), body


def _head(delivery: str, body: bytes, *, signature: str | None = None,
          extra: str = "", length: bool = True, version: str = "1.1") -> bytes:
    lines = [
        f"POST /webhook HTTP/{version}", "Host: 127.0.0.1", "Content-Type: application/json",
        "X-GitHub-Event: pull_request", f"X-GitHub-Delivery: {delivery}",
        f"X-Hub-Signature-256: {signature or sign(body, SECRET)}",
    ]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    text = "\r\n".join(lines) + "\r\n" + extra + "\r\n"
    return text.encode()


def _request(delivery: str, body: bytes, **head: Any) -> bytes:
    return _head(delivery, body, **head) + body


def _chunked(delivery: str, body: bytes) -> bytes:
    half = len(body) // 2
    chunks = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n"
                      for part in (body[:half], body[half:]))
    return _head(delivery, body, length=False,
                 extra="Transfer-Encoding: chunked\r\n") + chunks + b"0\r\n\r\n"


class _Reader:
    """HTTP/1.1 responses read off one socket, in order."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def response(self) -> tuple[int, dict[str, str], dict[str, Any]]:
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise AssertionError(f"connection closed mid-response: {self.buffer!r}")
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
        status = int(status_line.split(" ", 2)[1])
        if status == 100:
            return self.response()
        size = int(headers["content-length"])
        while len(self.buffer) < size:
            if not self._fill():
                raise AssertionError("connection closed mid-body")
        body, self.buffer = self.buffer[:size], self.buffer[size:]
        return status, headers, json.loads(body)

    def closed_within(self, seconds: float) -> bool:
        self.sock.settimeout(seconds)
        try:
            return not self._fill()
        except TimeoutError:
            return False
        except ConnectionResetError:
            return True


def _connect(svc: ServiceProcess) -> _Reader:
    return _Reader(socket.create_connection(_address(svc), timeout=10))


def _stored(svc: ServiceProcess, delivery: str) -> tuple[str, int | None] | None:
    with sqlite3.connect(svc.db_path) as conn:
        row = conn.execute("SELECT outcome, job_id FROM deliveries WHERE delivery_id = ?",
                           (delivery,)).fetchone()
    return None if row is None else (row[0], row[1])


def _delivery_lines(svc: ServiceProcess, delivery: str) -> list[dict[str, Any]]:
    return [r for r in svc.log_records()
            if r.get("logger") == "bot.intake.app" and r.get("delivery") == delivery]


def test_the_route_and_the_asgi_path_answer_store_and_log_alike(svc: ServiceProcess) -> None:
    # Content-Length: the ack route. Chunked and Expect: 100-continue: the ASGI path.
    fast, fast_body = _delivery(101)
    chunked, chunked_body = _delivery(102)
    expecting, expecting_body = _delivery(103)
    reader = _connect(svc)
    with reader.sock:
        reader.sock.sendall(_request(fast, fast_body))
        fast_status, fast_headers, fast_reply = reader.response()
        reader.sock.sendall(_chunked(chunked, chunked_body))
        chunked_status, chunked_headers, chunked_reply = reader.response()
        reader.sock.sendall(_head(expecting, expecting_body,
                                  extra="Expect: 100-continue\r\n"))
        reader.sock.sendall(expecting_body)
        expecting_status, _, expecting_reply = reader.response()
    assert fast_status == chunked_status == expecting_status == 202
    assert fast_reply.keys() == chunked_reply.keys() == {"ok", "job", "outcome"}
    assert fast_reply["outcome"] == chunked_reply["outcome"] == "accepted"
    assert set(fast_headers) == set(chunked_headers)
    assert fast_headers["content-type"] == chunked_headers["content-type"]
    for delivery, reply in ((fast, fast_reply), (chunked, chunked_reply),
                            (expecting, expecting_reply)):
        assert _stored(svc, delivery) == ("accepted", reply["job"])
    wait_until(lambda: all(_delivery_lines(svc, d) for d in (fast, chunked)), 5)
    fast_line, chunked_line = _delivery_lines(svc, fast)[0], _delivery_lines(svc, chunked)[0]
    # The same line, field for field and in the same order, apart from what differs.
    assert list(fast_line) == list(chunked_line)
    for name in ("level", "msg", "event", "action", "outcome", "status", "repo"):
        assert fast_line[name] == chunked_line[name], name
    assert (fast_line["pr"], chunked_line["pr"]) == (101, 102)


def test_keep_alive_and_pipelined_requests_are_answered_in_order(
        svc: ServiceProcess) -> None:
    deliveries = [_delivery(110 + n) for n in range(4)]
    reader = _connect(svc)
    with reader.sock:
        # Two on their own, then two pipelined in one write.
        for delivery, body in deliveries[:2]:
            reader.sock.sendall(_request(delivery, body))
            assert reader.response()[0] == 202
        reader.sock.sendall(b"".join(_request(d, b) for d, b in deliveries[2:]))
        pipelined = [reader.response(), reader.response()]
    assert [status for status, _, _ in pipelined] == [202, 202]
    jobs = [reply["job"] for _, _, reply in pipelined]
    assert [_stored(svc, d) for d, _ in deliveries[2:]] == [("accepted", j) for j in jobs]
    assert all(_stored(svc, d) is not None for d, _ in deliveries)


def test_a_refusal_before_the_body_keeps_the_connection_usable(svc: ServiceProcess) -> None:
    refused, refused_body = _delivery(120)
    good, good_body = _delivery(121)
    reader = _connect(svc)
    with reader.sock:
        # A malformed signature is refused on the headers alone, before any body byte.
        reader.sock.sendall(_head(refused, refused_body, signature="sha256=zz"))
        status, _, reply = reader.response()
        assert (status, reply) == (401, {"error": "bad or missing signature"})
        # The body still arrives and is skipped; the next request is served.
        reader.sock.sendall(refused_body + _request(good, good_body))
        assert reader.response()[0] == 202
    assert _stored(svc, refused) is None
    assert _stored(svc, good) is not None
    # A wrong signature is only known once the body has been hashed.
    forged, forged_body = _delivery(122)
    reader = _connect(svc)
    with reader.sock:
        reader.sock.sendall(_request(forged, forged_body, signature=sign(forged_body, "x" * 40)))
        assert reader.response()[:1] == (401,)
    assert _stored(svc, forged) is None


def test_a_client_that_leaves_mid_body_stores_nothing_and_is_logged(
        svc: ServiceProcess) -> None:
    delivery, body = _delivery(130)
    with socket.create_connection(_address(svc), timeout=10) as sock:
        sock.sendall(_head(delivery, body) + body[: len(body) // 2])
        time.sleep(0.2)
    wait_until(lambda: _delivery_lines(svc, delivery), 5)
    line = _delivery_lines(svc, delivery)[0]
    assert (line["outcome"], line["status"], line["reason"]) == (
        "bad_request", 400, "client disconnected")
    assert _stored(svc, delivery) is None
    assert svc.get("/healthz").status_code == 200


def test_duplicates_and_ignored_deliveries_answer_as_before(svc: ServiceProcess) -> None:
    delivery, body = _delivery(140)
    ignored = str(uuid.uuid4())
    ignored_body = json.dumps(pr_event("assigned", 141)).encode()
    reader = _connect(svc)
    with reader.sock:
        reader.sock.sendall(_request(delivery, body))
        first = reader.response()
        reader.sock.sendall(_request(delivery, body))
        again = reader.response()
        reader.sock.sendall(_request(ignored, ignored_body))
        skipped = reader.response()
    assert (first[0], first[2]["outcome"]) == (202, "accepted")
    assert (again[0], again[2]) == (202, {"duplicate": True, "job": first[2]["job"]})
    assert (skipped[0], skipped[2]) == (202, {"ignored": "pull_request.assigned not handled"})
    assert _stored(svc, ignored) == ("ignored", None)


def test_http_1_0_gets_its_answer_and_a_closed_connection(svc: ServiceProcess) -> None:
    delivery, body = _delivery(150)
    reader = _connect(svc)
    with reader.sock:
        reader.sock.sendall(_request(delivery, body, version="1.0"))
        status, headers, _ = reader.response()
        assert (status, headers.get("connection")) == (202, "close")
        assert reader.closed_within(3)
    assert _stored(svc, delivery) is not None


def test_store_rows_match_across_the_paths(svc: ServiceProcess) -> None:
    # The same delivery content through each path leaves the same job row shape.
    fast, fast_body = _delivery(170)
    chunked, chunked_body = _delivery(171)
    reader = _connect(svc)
    with reader.sock:
        reader.sock.sendall(_request(fast, fast_body))
        fast_job = reader.response()[2]["job"]
        reader.sock.sendall(_chunked(chunked, chunked_body))
        chunked_job = reader.response()[2]["job"]
    with sqlite3.connect(svc.db_path) as conn:
        conn.row_factory = sqlite3.Row
        rows = {r["id"]: dict(r) for r in conn.execute(
            "SELECT id, kind, key, repo, number, payload, delivery_id, state FROM jobs"
            " WHERE id IN (?, ?)", (fast_job, chunked_job))}
    assert rows[fast_job]["payload"] == rows[chunked_job]["payload"]
    assert (rows[fast_job]["delivery_id"], rows[chunked_job]["delivery_id"]) == (fast, chunked)
    assert {r["state"] for r in rows.values()} == {"queued"}
    assert (rows[fast_job]["number"], rows[chunked_job]["number"]) == (170, 171)
