"""Issue 38, item 7, against the real `digest-bot serve` process: keep-alive pollers and
silent connections beyond the connection cap cannot lock signed deliveries out.

Before: at the cap (`DIGEST_MAX_CONNECTIONS`) every new connection was refused, so 512
keep-alive connections polling `/healthz` made 80 of 80 signed deliveries fail, and 520
silent connections 19 of 50. Now a new connection at the cap closes the oldest idle one
(a keep-alive connection between requests, or one that has sent nothing yet), and idle
keep-alive connections beyond `DIGEST_MAX_IDLE_CONNECTIONS` are closed oldest first.

The tests run scaled down (a cap of 64); `python -m tests.e2e.test_e2e_connections 512`
measures the issue's 512 pollers against the default cap.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx
import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.service_harness import REPO, ServiceProcess, e2e_state, pr_event, wait_until
from tests.signing import signed_headers

pytestmark = pytest.mark.slow

PR = 7
_HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    state.add_pull(REPO, PR, title="Poll me", files=["vllm/logger.py"])
    with FakeGitHubServer(state) as url:
        yield state, url


class Hogs:
    """`count` connections held open from one thread, reconnecting whenever the service
    closes one (as a hostile client would): keep-alive pollers of `/healthz` every
    `interval` seconds, or, with `poll=False`, connections that never send a byte."""

    def __init__(self, url: str, count: int, *, poll: bool = True,
                 interval: float = 0.5) -> None:
        host, port = url.removeprefix("http://").split(":")
        self._address = (host, int(port))
        self._count, self._poll, self._interval = count, poll, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self.open = 0  # connections open right now
        self.polls = 0  # answered polls
        self.reconnects = 0  # connections the service closed (or refused)

    def __enter__(self) -> Self:
        self._thread.start()
        wait_until(lambda: self.open >= self._count, 30,
                   message=f"{self._count} connections open")
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(15)

    async def _run(self) -> None:
        await asyncio.gather(*(self._hog(index) for index in range(self._count)))

    async def _hog(self, index: int) -> None:
        await asyncio.sleep(index * 0.002)  # not all in one burst of the accept queue
        while not self._stop.is_set():
            writer = None
            try:
                reader, writer = await asyncio.open_connection(*self._address)
                self.open += 1
                try:
                    await self._hold(reader, writer)
                finally:
                    self.open -= 1
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                pass
            finally:
                if writer is not None:
                    writer.close()
            if not self._stop.is_set():
                self.reconnects += 1
                await asyncio.sleep(0.05)

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while not self._stop.is_set():
            if self._poll:
                writer.write(_HEALTHZ)
                await writer.drain()
                await reader.readuntil(b'{"ok":true}')
                self.polls += 1
                await asyncio.sleep(self._interval)
            else:
                try:
                    if not await asyncio.wait_for(reader.read(1), 0.2):
                        return  # closed by the service
                except TimeoutError:
                    continue


def send_deliveries(svc_url: str, secret: str, count: int, spacing: float) -> list[int]:
    """`count` signed deliveries, each on a new connection as GitHub sends them; the
    status of each, 0 when the connection failed."""
    statuses: list[int] = []
    for _ in range(count):
        body = json.dumps(pr_event("synchronize", PR)).encode()
        headers = signed_headers("pull_request", body, secret)
        try:
            reply = httpx.post(f"{svc_url}/webhook", content=body, headers=headers, timeout=5)
            statuses.append(reply.status_code)
        except httpx.TransportError:
            statuses.append(0)
        time.sleep(spacing)
    return statuses


def test_keep_alive_pollers_beyond_the_cap_do_not_lock_out_signed_deliveries(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    _, url = world
    env = {"DIGEST_MAX_CONNECTIONS": "64", "DIGEST_MAX_IDLE_CONNECTIONS": "32"}
    with ServiceProcess(url, tmp_path, extra_env=env) as svc, \
            Hogs(svc.url, 80, interval=0.3) as hogs:
        polls_before = hogs.polls
        statuses = send_deliveries(svc.url, svc.secret, 40, 0.05)
        assert statuses.count(202) >= 0.9 * len(statuses), statuses
        assert hogs.polls > polls_before  # the pollers kept polling throughout
    assert "Traceback" not in svc.log_path.read_text(errors="replace")


def test_silent_connections_beyond_the_cap_do_not_lock_out_signed_deliveries(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    _, url = world
    env = {"DIGEST_MAX_CONNECTIONS": "64"}
    with ServiceProcess(url, tmp_path, extra_env=env) as svc, \
            Hogs(svc.url, 72, poll=False) as hogs:
        statuses = send_deliveries(svc.url, svc.secret, 30, 0.05)
        # Each delivery closed one silent connection (the oldest), which came back.
        assert hogs.reconnects >= statuses.count(202) // 2
    assert statuses.count(202) >= 0.9 * len(statuses), statuses


def test_idle_keep_alive_connections_beyond_their_cap_are_closed_oldest_first(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    _, url = world
    env = {"DIGEST_MAX_IDLE_CONNECTIONS": "8"}
    with ServiceProcess(url, tmp_path, extra_env=env) as svc:
        host, port = svc.url.removeprefix("http://").split(":")
        socks = [socket.create_connection((host, int(port)), timeout=5) for _ in range(12)]
        try:
            for sock in socks:  # each left idle after one request, oldest first
                sock.sendall(_HEALTHZ)
                reply = b""
                while not reply.endswith(b'{"ok":true}'):
                    reply += sock.recv(4096)
                time.sleep(0.02)
            time.sleep(0.3)
            closed = [_closed(sock) for sock in socks]
        finally:
            for sock in socks:
                sock.close()
    assert closed == [True] * 4 + [False] * 8


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(0.2)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def _measure(pollers: int) -> None:
    """One run at the issue's scale, default settings: prints what was accepted."""
    state = e2e_state()
    state.add_pull(REPO, PR, title="Poll me", files=["vllm/logger.py"])
    with FakeGitHubServer(state) as url, tempfile.TemporaryDirectory() as tmp, \
            ServiceProcess(url, Path(tmp)) as svc, Hogs(svc.url, pollers, interval=1.0) as hogs:
        started = time.monotonic()
        statuses = send_deliveries(svc.url, svc.secret, 80, 0.25)
        took = time.monotonic() - started
        print(json.dumps({"pollers": pollers, "deliveries": len(statuses),
                          "accepted": statuses.count(202), "seconds": round(took, 1),
                          "polls": hogs.polls, "reconnects": hogs.reconnects}))


if __name__ == "__main__":
    _measure(int(sys.argv[1]) if len(sys.argv) > 1 else 512)
