"""The writer's service side (bot/handlers/writer.py) on the real SQLite cache: a packet
is asked once whoever asks again (a re-delivery, another replica at the same moment), a
stored result reads back as written, a spent budget asks nothing and says so, and a
failure is asked again only after it expires. The endpoint is a scripted `ask` passed in."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.core.writer.packet import Packet, Part
from bot.core.writer.request import WriterRequest
from bot.core.writer.result import Tokens, WriterResult, WrittenItem
from bot.handlers.writer import WriterService
from bot.queue.ledger import Ledger
from bot.queue.writer_cache import FAILURE_KEEP, WriterCache, writer_schema
from tests.queue.store_backends import Clock

PACKET = Packet(repo="vllm-project/vllm", number=7, head_sha="a" * 40, facts=(),
                parts=(Part("pr", 0, "The pull request", ("title: Fix rope",)),),
                budget_tokens=1000)
GOOD = WriterResult(status="ok", items=(WrittenItem("summary", "Moves the factor."),),
                    tokens=Tokens(prompt=300, completion=40))


@dataclass
class ScriptedEndpoint:
    result: WriterResult = GOOD
    delay: float = 0.0
    requests: list[WriterRequest] = field(default_factory=list)

    async def __call__(self, request: WriterRequest, packet: Packet) -> WriterResult:
        self.requests.append(request)
        await asyncio.sleep(self.delay)
        return self.result


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(tmp_path: Path, clock: Clock) -> Iterator[WriterCache]:
    writer_schema(tmp_path / "bot.db")
    ledger = Ledger(tmp_path / "bot.db")
    yield WriterCache(ledger.writer, clock=clock)
    ledger.close()


def _service(cache: WriterCache, ask: ScriptedEndpoint, clock: Clock,
             tokens_per_hour: int = 100_000) -> WriterService:
    return WriterService(model="Qwen/Qwen3-8B", max_tokens=500,
                         tokens_per_hour=tokens_per_hour, timeout_seconds=5.0, cache=cache,
                         ask=ask, clock=clock)


async def test_a_packet_is_asked_once_and_reads_back_as_written(
    cache: WriterCache, clock: Clock
) -> None:
    ask = ScriptedEndpoint()
    service = _service(cache, ask, clock)
    assert await service.cached(PACKET, "en") is None
    assert await service.write(PACKET, "en") == GOOD
    assert await service.write(PACKET, "en") is None  # stored: nobody asks again
    assert await service.cached(PACKET, "en") == GOOD
    assert await service.cached(PACKET, "zh") is None  # another prompt, another result
    assert len(ask.requests) == 1
    assert ask.requests[0].packet_sha256 == PACKET.sha256


async def test_two_replicas_at_the_same_moment_ask_once(
    cache: WriterCache, clock: Clock
) -> None:
    ask = ScriptedEndpoint(delay=0.2)
    one, other = _service(cache, ask, clock), _service(cache, ask, clock)
    results = await asyncio.gather(one.write(PACKET, "en"), other.write(PACKET, "en"))
    assert sorted(results, key=lambda r: r is None) == [GOOD, None]
    assert len(ask.requests) == 1
    assert await other.cached(PACKET, "en") == GOOD


async def test_a_spent_budget_asks_nothing_and_says_so(cache: WriterCache, clock: Clock) -> None:
    ask = ScriptedEndpoint()
    service = _service(cache, ask, clock, tokens_per_hour=PACKET.tokens + 499)
    result = await service.write(PACKET, "en")
    assert result is not None
    assert result.status == "budget"
    assert "tokens are spent" in result.reason
    assert ask.requests == []
    assert await service.cached(PACKET, "en") == result  # no loop: stored as the answer


async def test_the_budget_counts_what_a_call_used_not_what_it_reserved(
    cache: WriterCache, clock: Clock
) -> None:
    ask = ScriptedEndpoint()
    reserved = PACKET.tokens + 500
    # Room for one reservation; after it settles at 340 used, room for the next.
    service = _service(cache, ask, clock, tokens_per_hour=reserved + 340)
    assert await service.write(PACKET, "en") == GOOD
    assert await service.write(PACKET, "zh") == GOOD
    result = await service.write(Packet(**{**PACKET.__dict__, "number": 8}), "en")
    assert result is not None
    assert result.status == "budget"
    assert len(ask.requests) == 2


async def test_a_failure_is_asked_again_only_after_it_expires(
    cache: WriterCache, clock: Clock
) -> None:
    down = WriterResult(status="unreachable", reason="cannot connect: ConnectError")
    ask = ScriptedEndpoint(result=down)
    service = _service(cache, ask, clock)
    assert await service.write(PACKET, "en") == down
    assert await service.cached(PACKET, "en") == down
    assert await service.write(PACKET, "en") is None
    clock.now += FAILURE_KEEP + 1
    assert await service.cached(PACKET, "en") is None
    assert await service.write(PACKET, "en") == down
    assert len(ask.requests) == 2
