"""The label view's logic: a digest's one-entry summary, and open PRs grouped by label.

Pure: the stored digests go in as plain data, the page's structure comes out. A PR is
listed under each of its labels (its own and the ones its areas suggest), each group
ordered by verdict, then most recently updated first. Quiet PRs appear only in the
quiet group; closed PRs only in "recently merged", and only while they are recent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.core.vocabulary import VERDICTS, Verdict

TOP_CHECKS = 3
_VERDICT_RANK: dict[str, int] = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


@dataclass(frozen=True)
class Summary:
    """What an entry shows, taken from the digest's JSON contract (`digest_json`)."""

    verdict: Verdict
    reading_minutes: int
    verdict_reason: str
    who: tuple[str, ...] = ()  # the areas' titles: whose area this is
    checks: tuple[str, ...] = ()  # the first focus questions, one per area in turn
    high_risks: tuple[tuple[str, str], ...] = ()  # (risk id, text)
    area_labels: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()
    # Reviewers' asks in the conversation, and how many the author answered.
    asked: int = 0
    answered: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "reading_minutes": self.reading_minutes,
            "verdict_reason": self.verdict_reason, "who": list(self.who),
            "checks": list(self.checks), "high_risks": [list(r) for r in self.high_risks],
            "area_labels": list(self.area_labels), "reviewers": list(self.reviewers),
            "asked": self.asked, "answered": self.answered,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Summary:
        verdict = str(data.get("verdict", "quiet"))
        return cls(
            verdict=verdict if verdict in _VERDICT_RANK else "quiet",  # type: ignore[arg-type]
            reading_minutes=int(data.get("reading_minutes", 0)),
            verdict_reason=str(data.get("verdict_reason", "")),
            who=tuple(str(w) for w in data.get("who", ())),
            checks=tuple(str(c) for c in data.get("checks", ())),
            high_risks=tuple((str(r[0]), str(r[1])) for r in data.get("high_risks", ())),
            area_labels=tuple(str(label) for label in data.get("area_labels", ())),
            reviewers=tuple(str(r) for r in data.get("reviewers", ())),
            asked=int(data.get("asked", 0)),
            answered=int(data.get("answered", 0)),
        )


def summarize(digest: Mapping[str, Any], *, top: int = TOP_CHECKS) -> Summary:
    """The entry's content from a digest's JSON (the `--format json` contract)."""
    areas: list[Mapping[str, Any]] = [a for a in digest.get("areas", ()) if isinstance(a, dict)]
    reviewers = digest.get("reviewers") or {}
    asks = [a for a in digest.get("asks", ()) if isinstance(a, dict)]
    return Summary(
        verdict=digest["verdict"],
        reading_minutes=int(digest.get("reading_minutes", 0)),
        verdict_reason=str(digest.get("verdict_reason", "")),
        who=tuple(str(area.get("title", area.get("id", ""))) for area in areas),
        checks=_round_robin([list(area.get("focus", ())) for area in areas], top),
        high_risks=tuple(
            (str(risk["id"]), str(risk["text"]))
            for risk in digest.get("risks", ())
            if isinstance(risk, dict) and risk.get("severity") == "high"
        ),
        area_labels=tuple(str(label) for label in digest.get("labels", ())),
        reviewers=tuple(str(u) for u in reviewers.get("users", ())),
        asked=len(asks),
        answered=sum(1 for ask in asks if ask.get("status") == "answered"),
    )


def _round_robin(lists: Sequence[Sequence[Any]], limit: int) -> tuple[str, ...]:
    # One question from each area before a second from any: a reader of the first area
    # must not crowd out the others.
    picked: list[str] = []
    depth = max((len(items) for items in lists), default=0)
    for index in range(depth):
        for items in lists:
            if index < len(items) and str(items[index]) not in picked:
                picked.append(str(items[index]))
                if len(picked) == limit:
                    return tuple(picked)
    return tuple(picked)


@dataclass(frozen=True)
class ViewEntry:
    """One PR on the page: its state on GitHub and its digest's summary."""

    number: int
    title: str
    author: str
    url: str
    pr_labels: tuple[str, ...]
    summary: Summary
    updated_at: float  # epoch seconds
    draft: bool = False
    state: str = "open"  # open | closed
    merged: bool = False
    closed_at: float | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels it is listed under: its own, then its areas' (no repeats)."""
        return tuple(dict.fromkeys((*self.pr_labels, *self.summary.area_labels)))

    @property
    def verdict(self) -> Verdict:
        return self.summary.verdict


@dataclass(frozen=True)
class Group:
    label: str  # "" holds the PRs without any label
    entries: tuple[ViewEntry, ...]


@dataclass(frozen=True)
class LabelView:
    groups: tuple[Group, ...] = ()
    quiet: tuple[ViewEntry, ...] = ()
    recently_merged: tuple[ViewEntry, ...] = ()
    all_labels: tuple[str, ...] = ()  # every label an open or recent PR carries (filters)
    counts: Mapping[str, int] = field(default_factory=dict)  # open PRs per verdict

    @property
    def is_empty(self) -> bool:
        return not (self.groups or self.quiet or self.recently_merged)


def reading_order(entries: Iterable[ViewEntry]) -> list[ViewEntry]:
    """Deep reads first, then read, skim, quiet; within a verdict the freshest first."""
    return sorted(
        entries, key=lambda e: (_VERDICT_RANK.get(e.verdict, 99), -e.updated_at, -e.number)
    )


def build_label_view(
    entries: Iterable[ViewEntry],
    *,
    now: float,
    recent_seconds: float,
    label: str | None = None,
    verdict: str | None = None,
) -> LabelView:
    """Group open PRs by label; `label` keeps one group, `verdict` one verdict."""
    open_entries: list[ViewEntry] = []
    merged: list[ViewEntry] = []
    for entry in entries:
        if entry.state == "open":
            open_entries.append(entry)
        elif entry.merged and (entry.closed_at or 0.0) >= now - recent_seconds:
            merged.append(entry)
    all_labels = sorted(
        {name for entry in (*open_entries, *merged) for name in entry.labels}, key=_label_key
    )
    counts: dict[str, int] = {
        v: sum(1 for e in open_entries if e.verdict == v) for v in VERDICTS
    }

    def wanted(entry: ViewEntry) -> bool:
        return (label is None or label in entry.labels) and (
            verdict is None or entry.verdict == verdict
        )

    by_label: dict[str, list[ViewEntry]] = {}
    quiet: list[ViewEntry] = []
    for entry in open_entries:
        if not wanted(entry):
            continue
        if entry.verdict == "quiet":
            quiet.append(entry)
            continue
        for name in entry.labels or ("",):
            if label is None or name == label:
                by_label.setdefault(name, []).append(entry)
    groups = tuple(
        Group(name, tuple(reading_order(by_label[name])))
        for name in sorted(by_label, key=_label_key)
    )
    recent = sorted(
        (e for e in merged if wanted(e)), key=lambda e: (-(e.closed_at or 0.0), -e.number)
    )
    return LabelView(
        groups=groups,
        quiet=tuple(reading_order(quiet)),
        recently_merged=tuple(recent),
        all_labels=tuple(all_labels),
        counts=counts,
    )


def _label_key(name: str) -> tuple[bool, str]:
    # Alphabetical, case-insensitive; the unlabeled group last.
    return (name == "", name.casefold())
