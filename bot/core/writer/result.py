"""What the writer gives a digest: the verified text, what was dropped and why, and a
status saying how it went. Data; rendering (bot/core/render/written.py) words it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

WriterStatus = Literal[
    "ok",  # every item verified
    "partial",  # some items dropped, some shown
    "unreachable",  # no connection to the endpoint
    "timeout",  # no reply within the timeout
    "http_error",  # the endpoint answered with an error
    "not_json",  # the reply is not a JSON object
    "schema",  # JSON, but not the reply's schema
    "nothing_verified",  # nothing survived verification
    "budget",  # the hour's tokens are spent (the service's DIGEST_WRITER_TOKENS_PER_HOUR)
    "off",  # no endpoint configured
]
WRITTEN: frozenset[str] = frozenset({"ok", "partial"})
Section = Literal["title", "summary", "points", "not_needed", "gaps", "lesson"]


@dataclass(frozen=True)
class WrittenItem:
    section: Section
    text: str
    cites: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dropped:
    section: Section
    text: str
    reason: str  # a key: unknown-identifier, no-cite, contradicts-change, ...
    detail: str = ""  # what in the text failed (a token, a cite)


@dataclass(frozen=True)
class Tokens:
    prompt: int = 0
    completion: int = 0


@dataclass(frozen=True)
class WriterResult:
    status: WriterStatus
    model: str = ""
    prompt_version: str = ""
    packet_sha256: str = ""
    lang: str = "en"
    items: tuple[WrittenItem, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    tokens: Tokens = field(default_factory=Tokens)
    reason: str = ""  # why it failed, in one line (never a secret)

    @property
    def written(self) -> bool:
        return self.status in WRITTEN

    def section(self, name: Section) -> tuple[WrittenItem, ...]:
        return tuple(item for item in self.items if item.section == name)

    def first(self, name: Section) -> str:
        found = self.section(name)
        return found[0].text if found else ""

    def with_call(self, *, model: str, prompt_version: str, packet_sha256: str,
                  tokens: Tokens) -> WriterResult:
        return replace(self, model=model, prompt_version=prompt_version,
                       packet_sha256=packet_sha256, tokens=tokens)

    def to_json(self) -> dict[str, Any]:
        """The digest JSON's `writer` key."""
        return {
            "status": self.status,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "packet_sha256": self.packet_sha256,
            "lang": self.lang,
            "reason": self.reason,
            "kept": [{"section": i.section, "text": i.text, "cites": list(i.cites)}
                     for i in self.items],
            "dropped": [{"section": d.section, "text": d.text, "reason": d.reason,
                         "detail": d.detail} for d in self.dropped],
            "tokens": {"prompt": self.tokens.prompt, "completion": self.tokens.completion},
        }
