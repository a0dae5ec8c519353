"""Ask an OpenAI-compatible endpoint (vLLM's `vllm serve`) for the written digest.

`json_schema` structured output first; a server that rejects it (a 400 naming
`response_format`) is asked again in JSON mode, and the verifier validates the reply
either way. Never raises to the caller: every failure is a `WriterResult` status with a
one-line reason (no key, no body text of ours)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any

import openai

from bot.core.writer.packet import Packet
from bot.core.writer.request import WriterRequest
from bot.core.writer.result import Tokens, WriterResult, WriterStatus
from bot.core.writer.verify import verify
from bot.net.tls import client_context

# vLLM without --api-key takes any key; the client library insists on one.
NO_KEY = "unused"


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str | None = None
    timeout: float = 60.0


@dataclass(frozen=True)
class Written:
    result: WriterResult
    latency: float  # seconds, the whole exchange
    raw: str = ""  # the assistant message's content, as received ("" when none)


async def write(endpoint: Endpoint, request: WriterRequest, packet: Packet) -> Written:
    """The verified reply to `request`, or a failure status, within `endpoint.timeout`."""
    started = time.monotonic()
    client = openai.AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or NO_KEY,
                                timeout=endpoint.timeout, max_retries=0,
                                http_client=openai.DefaultAsyncHttpxClient(
                                    timeout=endpoint.timeout, verify=client_context()))
    try:
        async with asyncio.timeout(endpoint.timeout):
            raw, tokens = await _complete(client, request)
    except TimeoutError:
        return _failure("timeout", f"no reply within {endpoint.timeout:g} s", request, started)
    except openai.APITimeoutError:
        return _failure("timeout", f"no reply within {endpoint.timeout:g} s", request, started)
    except openai.APIConnectionError as error:
        return _failure("unreachable", f"cannot connect: {type(error.__cause__ or error).__name__}",
                        request, started)
    except openai.APIStatusError as error:
        return _failure("http_error", f"HTTP {error.status_code}", request, started)
    except openai.OpenAIError as error:
        return _failure("http_error", type(error).__name__, request, started)
    finally:
        await client.close()
    result = verify(packet, raw, model=request.model, lang=request.lang)
    result = replace(result, tokens=tokens)
    return Written(result, time.monotonic() - started, raw)


async def _complete(client: openai.AsyncOpenAI, request: WriterRequest) -> tuple[str, Tokens]:
    try:
        response = await client.chat.completions.create(**request.body())
    except openai.BadRequestError as error:
        if "response_format" not in str(error) and "json_schema" not in str(error):
            raise
        response = await client.chat.completions.create(**request.fallback_body())
    return _content(response), _tokens(response)


def _content(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


def _tokens(response: Any) -> Tokens:
    usage = getattr(response, "usage", None)
    return Tokens(prompt=int(getattr(usage, "prompt_tokens", 0) or 0),
                  completion=int(getattr(usage, "completion_tokens", 0) or 0))


def _failure(status: WriterStatus, reason: str, request: WriterRequest,
             started: float) -> Written:
    result = WriterResult(status=status, model=request.model,
                          prompt_version=request.prompt_version,
                          packet_sha256=request.packet_sha256, lang=request.lang, reason=reason)
    return Written(result, time.monotonic() - started)
