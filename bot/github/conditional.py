"""ETags of the list pages a job read, with what they held, for conditional requests.

A conversation is re-read on every job of its PR, and most jobs find it unchanged.
GitHub answers `If-None-Match` with 304 and no body when nothing changed, and an
authorized 304 is not charged to the rate limit; the page then comes from here. Only
a 304 for the same request with the same credentials serves a kept page, so a page
never reaches a caller GitHub would not show it to.

Bounded: at most `max_entries` pages and about `max_bytes` of response bodies; the
least recently used go first. One cache per session factory, shared by its jobs.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_ENTRIES = 4_096
DEFAULT_MAX_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class KeptPage:
    etag: str
    items: tuple[Any, ...]  # the page's items, already converted (immutable models)
    has_next: bool
    size: int  # the response body's bytes: what the page costs to keep, roughly
    last: int | None = None  # the list's last page when this one was read (Link header)


class ConditionalCache:
    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._pages: OrderedDict[str, KeptPage] = OrderedDict()
        self._bytes = 0
        self.hits = 0  # pages served after a 304

    def __len__(self) -> int:
        return len(self._pages)

    def get(self, key: str) -> KeptPage | None:
        page = self._pages.get(key)
        if page is not None:
            self._pages.move_to_end(key)
        return page

    def put(self, key: str, page: KeptPage) -> None:
        if page.size > self._max_bytes:
            self.discard(key)
            return
        self.discard(key)
        self._pages[key] = page
        self._bytes += page.size
        while len(self._pages) > self._max_entries or self._bytes > self._max_bytes:
            _, dropped = self._pages.popitem(last=False)
            self._bytes -= dropped.size

    def discard(self, key: str) -> None:
        dropped = self._pages.pop(key, None)
        if dropped is not None:
            self._bytes -= dropped.size
