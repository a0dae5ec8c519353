"""The view's in-process caches: each repository's entries, refreshed by reading only the
PRs written since the last read, and each entry's rendered HTML.

Parsing 500 summaries and rendering every entry on each request took hundreds of
milliseconds (when a PR was listed under each of its labels, ~1,700 entries), while
between two jobs nothing changes and a job changes one PR."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from bot.core.label_view import ViewEntry
from bot.core.vocabulary import Lang
from bot.view.store import DigestStore, RepoInfo


@dataclass(frozen=True)
class _Snapshot:
    version: int
    by_number: dict[int, ViewEntry]
    seen_until: float  # the newest `changed_at` read so far


class EntryCache:
    def __init__(self, store: DigestStore) -> None:
        self._store = store
        self._snapshots: dict[tuple[str, Lang], _Snapshot] = {}

    async def entries(self, info: RepoInfo, lang: Lang) -> list[ViewEntry]:
        key = (info.repo.casefold(), lang)
        snapshot = self._snapshots.get(key)
        if snapshot is not None and snapshot.version == info.version:
            return list(snapshot.by_number.values())
        since = snapshot.seen_until if snapshot is not None else None
        changed = await self._store.entries(info.repo, lang, changed_since=since)
        by_number = dict(snapshot.by_number) if snapshot is not None else {}
        seen_until = since if since is not None else -1.0
        for row in changed:
            by_number[row.entry.number] = row.entry
            seen_until = max(seen_until, row.changed_at)
        # PRs the store forgot are closed ones past "recently merged": the grouping
        # leaves them out, so keeping them here changes no page.
        self._snapshots[key] = _Snapshot(info.version, by_number, seen_until)
        return list(by_number.values())


class FragmentCache:
    """Rendered entries: an entry is rendered once, and again only when it changed or
    the hour turned (it says how long ago things happened). Keyed by where it is shown
    and the hour; a hit must be the same entry (the entry cache hands out the same
    object until the PR changes, so the identity test is nearly always enough: hashing
    every nested entry per page was the largest cost left)."""

    def __init__(self, maxsize: int = 20_000) -> None:
        self._maxsize = maxsize
        self._cache: dict[tuple[str, int, str, str, int], tuple[ViewEntry, Markup]] = {}

    def get(self, key: tuple[str, int, str, str, int], entry: ViewEntry,
            render: Callable[[], str]) -> Markup:
        hit = self._cache.get(key)
        if hit is not None and (hit[0] is entry or hit[0] == entry):
            return hit[1]
        if len(self._cache) >= self._maxsize:
            self._cache.clear()  # a bound, not a policy: one page refills what it needs
        markup = Markup(render())  # noqa: S704 - the output of an autoescaped template
        self._cache[key] = (entry, markup)
        return markup
