"""The writer in the service (issue 41): a language model words a digest's reading
section, off the webhook path and never before the deterministic digest is posted.

Any digest run looks its packet up in the shared cache (bot/queue/writer_cache.py): a
written result there is rendered at once (a re-delivery costs no call). Only the PR's
writer job (bot/handlers/writing.py) may ask: it claims the packet, spends from the
hour's token budget, asks the endpoint, stores the verified result and the digest job
edits the sticky comment in place. Every failure (endpoint down, slow, malformed,
nothing verified, no budget) is a result with its status, stored like a good one (for
`FAILURE_KEEP`), so the same packet is not asked again in a loop: a push makes a new
packet, and a new job.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import TypeAdapter, ValidationError

from bot.core.facts import PullRequestFacts
from bot.core.findings import Digest
from bot.core.vocabulary import LANGS, Lang
from bot.core.writer.packet import Packet, build_packet
from bot.core.writer.request import PROMPT_VERSION, WriterRequest, build_request
from bot.core.writer.result import WriterResult
from bot.github.protocol import GitHubAPI
from bot.handlers.writer_base import base_texts
from bot.handlers.writing import Writing
from bot.queue.writer_cache import (
    FAILURE_KEEP,
    KEEP,
    WRITING,
    CachedWriting,
    WriterCacheStore,
    WritingKey,
)

if TYPE_CHECKING:
    from bot.handlers.context import HandlerContext

log = logging.getLogger(__name__)

# The claim outlives the call by this much: a run that died mid-call frees the packet.
CLAIM_MARGIN_SECONDS = 30.0
# Kept as long as a good result: asked again, the model would give the same verdict.
STORED_AS_WRITTEN = frozenset({"ok", "partial", "nothing_verified"})

# The endpoint: the request and its packet -> the verified result or a failure status,
# within the timeout, never raising (bot/writer/client.py).
Ask = Callable[[WriterRequest, Packet], Awaitable[WriterResult]]

_STORED: TypeAdapter[WriterResult] = TypeAdapter(WriterResult)


@dataclass
class WriterService:
    """The writer a service runs with DIGEST_WRITER_URL set (`HandlerContext.writer`)."""

    model: str
    max_tokens: int
    tokens_per_hour: int
    timeout_seconds: float
    cache: WriterCacheStore
    ask: Ask
    clock: Callable[[], float] = field(default=time.time)

    def key(self, packet: Packet, lang: Lang) -> WritingKey:
        # The language is part of the prompt: a zh reply is another result.
        return WritingKey(packet.sha256, self.model, f"{PROMPT_VERSION}/{lang}")

    async def written_for(
        self, gh: GitHubAPI, ctx: HandlerContext, digest: Digest, facts: PullRequestFacts,
        *, may_write: bool,
    ) -> Writing:
        base = await base_texts(gh, facts, digest, ctx.repo_configs.objects)
        packet = await asyncio.to_thread(build_packet, digest, facts, base_files=base)
        result = await self.cached(packet, digest.lang)
        asked = False
        if result is None and may_write:
            result = await self.write(packet, digest.lang)
            asked = result is not None
        others: dict[Lang, WriterResult] = {}
        for lang in LANGS:
            if lang != digest.lang and (other := await self.cached(packet, lang)) is not None:
                others[lang] = other
        return Writing(result, asked, others)

    async def cached(self, packet: Packet, lang: Lang) -> WriterResult | None:
        """The stored result for this packet, or None: none yet, or one is being written
        (its writer job edits the comment when it lands)."""
        entry = await self.cache.get(self.key(packet, lang))
        if entry is None or entry.status == WRITING:
            return None
        try:
            return _STORED.validate_json(entry.result)
        except ValidationError:
            # Stored by another version of the result's shape: asked again once.
            log.info("stored writing unreadable", extra={"repo": packet.repo,
                                                          "pr": packet.number})
            return None

    async def write(self, packet: Packet, lang: Lang) -> WriterResult | None:
        """Asked of the endpoint, once per packet across replicas: None when a result or
        a live claim is already there (another job is writing it)."""
        key = self.key(packet, lang)
        if not await self.cache.claim(key, self.timeout_seconds + CLAIM_MARGIN_SECONDS):
            return None
        request = build_request(packet, self.model, lang, self.max_tokens)
        reserved = packet.tokens + self.max_tokens
        if await self.cache.spend(reserved, self.tokens_per_hour):
            result = await self.ask(request, packet)
            await self.cache.settle(reserved, result.tokens.prompt + result.tokens.completion)
        else:
            result = WriterResult(
                status="budget", model=self.model, prompt_version=request.prompt_version,
                packet_sha256=packet.sha256, lang=lang,
                reason=f"the hour's {self.tokens_per_hour} tokens are spent")
        used = result.tokens.prompt + result.tokens.completion
        await self.cache.put(key, CachedWriting(
            result.status, _STORED.dump_json(result).decode(), used, self.clock()),
            keep_seconds=KEEP if result.status in STORED_AS_WRITTEN else FAILURE_KEEP)
        log.info("writer %s", result.status, extra={
            "repo": packet.repo, "pr": packet.number, "model": self.model,
            "reason": result.reason, "kept": len(result.items),
            "dropped": len(result.dropped), "tokens": used})
        return result
