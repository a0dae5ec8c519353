"""The floor of the intake benchmark: starlette + uvicorn answering 202 with no work.

It reads the body (the socket has to be drained either way) but neither verifies nor
stores it. Served the way `digest-bot serve` serves pr-digest: one uvicorn process,
uvicorn's default HTTP and loop implementations (`auto`: httptools and uvloop when
installed, else h11 and asyncio).

    python -m bench.intake.bare_app --port 8124
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route


async def webhook(request: Request) -> Response:
    await request.body()
    return Response(status_code=202)


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def create_bare_app() -> Starlette:
    return Starlette(
        routes=[
            Route("/webhook", webhook, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8124)
    parser.add_argument(
        "--access-log", action=argparse.BooleanOptionalAction, default=False,
        help="uvicorn's per-request access log (match the target it is compared with)",
    )
    args = parser.parse_args(argv)
    uvicorn.run(
        create_bare_app(), host=args.host, port=args.port, access_log=args.access_log,
        log_level="info",
    )


if __name__ == "__main__":
    main()
