"""One load level against one URL: N keep-alive connections, a bounded run, JSON out.

Run as its own process by bench/bench_intake.py, so the client's event loop and GIL
share nothing with the orchestrator (the server under test is a third process):

    python -m bench.intake.load --url http://127.0.0.1:8124/webhook --concurrency 16 \
        --requests 2000 --secret s --first-index 0

Deliveries are built and signed before the clock starts. The run stops after
`--requests` requests or `--max-seconds`, whichever comes first.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import httpx

from bench.payloads import SignedDelivery, build_deliveries


@dataclass(frozen=True)
class LevelResult:
    concurrency: int
    requests: int  # completed (any outcome) inside the timed window
    errors: int  # non-2xx answers plus transport failures
    elapsed_s: float
    throughput_rps: float
    p50_ms: float
    p99_ms: float
    statuses: dict[str, int]


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending sequence; 0.0 when it is empty."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


async def _drive(
    clients: Sequence[httpx.AsyncClient], url: str, deliveries: Sequence[SignedDelivery],
    deadline: float,
) -> tuple[list[float], Counter[str]]:
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    next_index = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal next_index
        while next_index < len(deliveries) and time.perf_counter() < deadline:
            delivery = deliveries[next_index]
            next_index += 1
            started = time.perf_counter()
            try:
                response = await client.post(url, content=delivery.body, headers=delivery.headers)
                statuses[str(response.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker(client) for client in clients))
    return latencies, statuses


async def run_level(
    url: str, concurrency: int, deliveries: Sequence[SignedDelivery],
    warmup: Sequence[SignedDelivery], max_seconds: float, timeout_s: float = 30.0,
) -> LevelResult:
    # One single-connection client per worker: httpx's shared pool costs the client
    # CPU per request that grows with the number of connections (measured ~3x at 64),
    # which on two cores would be taken from the server under test.
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=timeout_s))
            for _ in range(concurrency)
        ]
        # Opens the connections and warms the server (JIT, caches) outside the clock.
        await _drive(clients, url, warmup, time.perf_counter() + max_seconds)
        started = time.perf_counter()
        latencies, statuses = await _drive(clients, url, deliveries, started + max_seconds)
        elapsed = time.perf_counter() - started
    latencies.sort()
    errors = sum(n for status, n in statuses.items() if not status.startswith("2"))
    return LevelResult(
        concurrency=concurrency,
        requests=len(latencies),
        errors=errors,
        elapsed_s=round(elapsed, 3),
        throughput_rps=round(len(latencies) / elapsed, 1) if elapsed > 0 else 0.0,
        p50_ms=round(percentile(latencies, 0.50) * 1000, 2),
        p99_ms=round(percentile(latencies, 0.99) * 1000, 2),
        statuses=dict(statuses),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one load level against one webhook URL")
    parser.add_argument("--url", required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--max-seconds", type=float, default=60.0)
    parser.add_argument("--secret", required=True)
    parser.add_argument(
        "--first-index", type=int, default=0,
        help="first delivery index; give each level its own range so nothing repeats",
    )
    args = parser.parse_args(argv)
    warmup = build_deliveries(args.warmup, args.secret, args.first_index)
    deliveries = build_deliveries(args.requests, args.secret, args.first_index + args.warmup)
    result = asyncio.run(
        run_level(args.url, args.concurrency, deliveries, warmup, args.max_seconds)
    )
    json.dump(asdict(result), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
