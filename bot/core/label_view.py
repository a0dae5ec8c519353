"""The label view's logic: a digest's one-entry summary, and the triage queue of open PRs.

Pure: the stored digests go in as plain data, the page's structure comes out. Every open
PR is one row (its labels are chips on it); choosing a label keeps that label's PRs.
Filters (label, verdict, search, owner) and the sort are applied here, over the
summaries, and every count is of the PRs the other filters in force keep. Quiet PRs
are listed apart (collapsed); closed PRs only in "recently merged", while recent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bot.core.vocabulary import VERDICTS, Verdict

TOP_CHECKS = 3
_VERDICT_RANK: dict[str, int] = {verdict: rank for rank, verdict in enumerate(VERDICTS)}
SORTS = ("verdict", "oldest", "newest", "size")
WAITING_ON = ("author", "reviewer", "ci")
# The one state a row shows: whose move it is, a reviewer's split by whether anyone
# with write access has reviewed yet (the API keeps `waiting_on` and `needs_first_review`).
WAITING_STATES = ("first-review", "reviewer", "author", "ci")
# Every risk id bot/core/judging/risks.py raises: the page's legend explains each.
RISK_IDS = (
    "missing-gpu-eval", "missing-test-results", "missing-tests", "release-branch",
    "large-diff", "new-model-checklist", "perf-claim-without-numbers",
    "hardware-unverified", "relevant-ci-not-run",
)
MAX_QUERY = 200


@dataclass(frozen=True)
class Triage:
    """A PR's triage state at the moment its digest converged (times in epoch seconds)."""

    created_at: float | None = None
    last_author_at: float | None = None  # the description or the author's last remark
    last_reviewer_at: float | None = None  # a review, review comment or maintainer's remark
    reviewed: bool = False  # a person other than the author has reviewed it
    changes_requested: bool = False  # a reviewer's latest decisive review asks for changes
    additions: int = 0
    deletions: int = 0
    files: int = 0
    ci_state: str = ""  # the head's build (ci_status.py), "" when not read
    ci_steps: tuple[tuple[str, int], ...] = ()  # the narrow steps: (status, how many)
    risks: tuple[tuple[str, str], ...] = ()  # open risks: (id, severity)
    signals: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()  # logins and org/team slugs the PR belongs to

    @property
    def lines(self) -> int:
        return self.additions + self.deletions

    def to_json(self) -> dict[str, Any]:
        return {
            "created_at": self.created_at, "last_author_at": self.last_author_at,
            "last_reviewer_at": self.last_reviewer_at, "reviewed": self.reviewed,
            "changes_requested": self.changes_requested, "additions": self.additions,
            "deletions": self.deletions, "files": self.files, "ci_state": self.ci_state,
            "ci_steps": [list(s) for s in self.ci_steps], "risks": [list(r) for r in self.risks],
            "signals": list(self.signals), "owners": list(self.owners),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Triage:
        return cls(
            created_at=_number(data.get("created_at")),
            last_author_at=_number(data.get("last_author_at")),
            last_reviewer_at=_number(data.get("last_reviewer_at")),
            reviewed=bool(data.get("reviewed", False)),
            changes_requested=bool(data.get("changes_requested", False)),
            additions=int(data.get("additions", 0)), deletions=int(data.get("deletions", 0)),
            files=int(data.get("files", 0)), ci_state=str(data.get("ci_state", "")),
            ci_steps=tuple((str(s[0]), int(s[1])) for s in data.get("ci_steps", ())),
            risks=tuple((str(r[0]), str(r[1])) for r in data.get("risks", ())),
            signals=tuple(str(s) for s in data.get("signals", ())),
            owners=tuple(str(o) for o in data.get("owners", ())),
        )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None




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
    # Of the open asks, those by people with write access: only they make it the
    # author's move (an outsider's ask is shown, and moves nothing).
    waiting_asks: int = 0
    triage: Triage = field(default_factory=Triage)
    # The writer's verified summary (issue 41), and in Chinese its one-line title as the
    # reference view shows one; "" when nothing written passed verification.
    written: str = ""
    written_title: str = ""
    # Issue 42: "conflicts", "competes:N", "overlaps:N" (the strongest neighbours first).
    neighbours: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "reading_minutes": self.reading_minutes,
            "verdict_reason": self.verdict_reason, "who": list(self.who),
            "checks": list(self.checks), "high_risks": [list(r) for r in self.high_risks],
            "area_labels": list(self.area_labels), "reviewers": list(self.reviewers),
            "asked": self.asked, "answered": self.answered,
            "waiting_asks": self.waiting_asks,
            "triage": self.triage.to_json(),
            "written": self.written, "written_title": self.written_title,
            "neighbours": list(self.neighbours),
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
            # Stored before the key existed: every open ask counted.
            waiting_asks=int(data.get("waiting_asks", int(data.get("asked", 0))
                                      - int(data.get("answered", 0)))),
            triage=Triage.from_json(data.get("triage") or {}),
            written=str(data.get("written", "")),
            written_title=str(data.get("written_title", "")),
            neighbours=tuple(str(n) for n in data.get("neighbours", ())),
        )


def summarize(
    digest: Mapping[str, Any], *, top: int = TOP_CHECKS, triage: Triage | None = None,
) -> Summary:
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
        waiting_asks=sum(1 for ask in asks
                         if ask.get("status") == "open" and ask.get("access") == "write"),
        triage=triage or Triage(),
        **_written(digest),
        neighbours=neighbour_signals(digest.get("neighbours")),
    )


# What of the writer's output a row shows, bounded like any stored text.
MAX_WRITTEN = 600
MAX_WRITTEN_TITLE = 120
MAX_WRITTEN_ITEMS = 50  # the title and summary come first; a stored row is not trusted


def _written(digest: Mapping[str, Any]) -> dict[str, str]:
    """The writer's summary and (in Chinese) title, when what it wrote was verified."""
    writer = digest.get("writer")
    if not isinstance(writer, dict) or writer.get("status") not in ("ok", "partial"):
        return {}
    kept = writer.get("kept")
    first: dict[str, str] = {}
    for item in kept[:MAX_WRITTEN_ITEMS] if isinstance(kept, list) else ():
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            first.setdefault(str(item.get("section")), item["text"])
    title = first.get("title", "") if digest.get("lang") == "zh" else ""
    return {"written": first.get("summary", "")[:MAX_WRITTEN],
            "written_title": title[:MAX_WRITTEN_TITLE]}


NEIGHBOUR_FILTERS = ("any", "competes", "overlaps", "conflicts")
MAX_NEIGHBOUR_SIGNALS = 3


def neighbour_signals(found: Any) -> tuple[str, ...]:
    """A row's neighbour signals from the digest's `neighbours` JSON: "conflicts" when
    GitHub said so, then "competes:N" / "overlaps:N" for the strongest neighbours."""
    if not isinstance(found, Mapping):
        return ()
    live = found.get("live") or {}
    signals = ["conflicts"] if isinstance(live, Mapping) and live.get("conflicts") else []
    for neighbour in list(found.get("neighbours") or ())[:MAX_NEIGHBOUR_SIGNALS]:
        if isinstance(neighbour, Mapping) and neighbour.get("relation") in (
                "competes", "overlaps"):
            signals.append(f"{neighbour['relation']}:{int(neighbour.get('number', 0))}")
    return tuple(signals)


def _has_neighbours(entry: ViewEntry, wanted: str) -> bool:
    signals = entry.summary.neighbours
    if wanted == "any":
        return bool(signals)
    return any(s == wanted or s.startswith(f"{wanted}:") for s in signals)


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
    # The reviewers GitHub shows as requested: logins, and teams as `org/slug`.
    requested: tuple[str, ...] = ()

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """The labels it is listed under: its own, then its areas' (no repeats)."""
        return tuple(dict.fromkeys((*self.pr_labels, *self.summary.area_labels)))

    @cached_property
    def predicted_labels(self) -> frozenset[str]:
        """Its areas' labels the PR does not carry on GitHub: only the bot says so."""
        return frozenset(self.labels) - frozenset(self.pr_labels)

    @property
    def verdict(self) -> Verdict:
        return self.summary.verdict


    @cached_property
    def _search_text(self) -> str:
        return f"#{self.number} {self.title}\n{self.author}".casefold()

    @cached_property
    def _owners(self) -> frozenset[str]:
        return frozenset(name.casefold()
                         for name in (*self.summary.triage.owners, *self.requested))

    @cached_property
    def waiting_on(self) -> str | None:
        """Whose move it is: `author`, `reviewer`, `ci`, or None for a closed PR.

        The author's while the PR is a draft, a maintainer's ask is open, a maintainer's
        requested changes have had no answer since, or the build failed; CI's while the
        build has not finished; else a reviewer's (first review, a reply to read, an unblock
        or a merge)."""
        if self.state != "open":
            return None
        triage = self.summary.triage
        if self.draft or self.summary.waiting_asks > 0:
            return "author"
        if triage.changes_requested and (triage.last_author_at or 0.0) <= (
                triage.last_reviewer_at or 0.0):
            return "author"
        if triage.ci_state in ("failed", "error"):
            return "author"
        if triage.ci_state in ("running", "not-started"):
            return "ci"
        return "reviewer"

    @property
    def needs_first_review(self) -> bool:
        return self.state == "open" and not self.draft and not self.summary.triage.reviewed

    @property
    def waiting_state(self) -> str | None:
        """The row's one state (WAITING_STATES): `waiting_on`, with a reviewer's move
        named `first-review` while nobody with write access has reviewed."""
        whose = self.waiting_on
        if whose == "reviewer" and self.needs_first_review:
            return "first-review"
        return whose

    @property
    def last_activity_at(self) -> float | None:
        """The last time the author or a reviewer did something (the description counts)."""
        times = [t for t in (self.summary.triage.last_author_at,
                             self.summary.triage.last_reviewer_at,
                             self.summary.triage.created_at) if t is not None]
        return max(times) if times else None

    def matches(self, query: str) -> bool:
        """`query` (casefolded) in the title, the author or `#number`; a bare number or
        `#N` is that PR."""
        bare = query.removeprefix("#")
        if bare.isdigit():
            return int(bare) == self.number or query in self._search_text
        return query in self._search_text

    def owned_by(self, login: str) -> bool:
        return login.casefold().lstrip("@") in self._owners


@dataclass(frozen=True)
class Filters:
    """What the reader asked for; None is "any"."""

    label: str | None = None
    verdict: str | None = None
    query: str | None = None  # casefolded
    owner: str | None = None
    sort: str = "verdict"
    neighbours: str | None = None  # one of NEIGHBOUR_FILTERS (issue 42)

    @property
    def narrowed(self) -> bool:
        return any(x is not None for x in (self.label, self.verdict, self.query, self.owner,
                                           self.neighbours))


@dataclass(frozen=True)
class LabelView:
    listed: tuple[ViewEntry, ...] = ()  # open, not quiet, every filter applied, sorted
    quiet: tuple[ViewEntry, ...] = ()
    recently_merged: tuple[ViewEntry, ...] = ()
    # Every label an open or recent PR carries, with how many open PRs the other
    # filters keep under it.
    label_counts: tuple[tuple[str, int], ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)  # open PRs per verdict
    waiting: Mapping[str, int] = field(default_factory=dict)  # open PRs per waiting_state
    total_open: int = 0  # open PRs in the repository, before any filter
    filters: Filters = field(default_factory=Filters)

    @property
    def is_empty(self) -> bool:
        return not (self.listed or self.quiet or self.recently_merged)

    @property
    def shown_open(self) -> int:
        return len(self.listed) + len(self.quiet)

    @property
    def all_labels(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.label_counts)


def reading_order(entries: Iterable[ViewEntry]) -> list[ViewEntry]:
    """Deep reads first, then read, skim, quiet; within a verdict the freshest first."""
    return sorted(
        entries, key=lambda e: (_VERDICT_RANK.get(e.verdict, 99), -e.updated_at, -e.number)
    )


def _created(entry: ViewEntry) -> float:
    return entry.summary.triage.created_at or entry.updated_at


def sort_entries(entries: Iterable[ViewEntry], sort: str) -> list[ViewEntry]:
    if sort == "oldest":
        return sorted(entries, key=lambda e: (_created(e), e.number))
    if sort == "newest":
        return sorted(entries, key=lambda e: (-_created(e), -e.number))
    if sort == "size":
        return sorted(entries, key=lambda e: (-e.summary.triage.lines, -e.number))
    return reading_order(entries)


def build_label_view(
    entries: Iterable[ViewEntry],
    *,
    now: float,
    recent_seconds: float,
    label: str | None = None,
    verdict: str | None = None,
    query: str | None = None,
    owner: str | None = None,
    sort: str = "verdict",
    neighbours: str | None = None,
) -> LabelView:
    """The queue for these filters; each count is over what the *other* filters keep,
    so a chip says how many PRs choosing it would list."""
    query = query.casefold() if query else None
    open_entries: list[ViewEntry] = []
    merged: list[ViewEntry] = []
    for entry in entries:
        if entry.state == "open":
            open_entries.append(entry)
        elif entry.merged and (entry.closed_at or 0.0) >= now - recent_seconds:
            merged.append(entry)

    def base(entry: ViewEntry) -> bool:
        return (query is None or entry.matches(query)) and (
            owner is None or entry.owned_by(owner)) and (
            neighbours is None or _has_neighbours(entry, neighbours))

    kept = [e for e in open_entries if base(e)]
    by_label = [e for e in kept if label is None or label in e.labels]
    counts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for entry in by_label:
        counts[entry.verdict] = counts.get(entry.verdict, 0) + 1
    per_label: dict[str, int] = {}
    for entry in kept:
        if verdict is None or entry.verdict == verdict:
            for name in entry.labels:
                per_label[name] = per_label.get(name, 0) + 1
    for entry in (*open_entries, *merged):
        for name in entry.labels:
            per_label.setdefault(name, 0)
    if label is not None:
        per_label.setdefault(label, 0)
    shown = [e for e in by_label if verdict is None or e.verdict == verdict]
    waiting = dict.fromkeys(WAITING_STATES, 0)
    for entry in shown:
        if (whose := entry.waiting_state) is not None:
            waiting[whose] += 1
    recent = sorted(
        (e for e in merged if base(e) and (label is None or label in e.labels)
         and (verdict is None or e.verdict == verdict)),
        key=lambda e: (-(e.closed_at or 0.0), -e.number),
    )
    return LabelView(
        listed=tuple(sort_entries((e for e in shown if e.verdict != "quiet"), sort)),
        quiet=tuple(sort_entries((e for e in shown if e.verdict == "quiet"), sort)),
        recently_merged=tuple(recent),
        label_counts=tuple(sorted(per_label.items(), key=lambda item: _label_key(item[0]))),
        counts=counts,
        waiting=waiting,
        total_open=len(open_entries),
        filters=Filters(label, verdict, query, owner, sort, neighbours),
    )


def _label_key(name: str) -> tuple[bool, str]:
    # Alphabetical, case-insensitive; the unlabeled group last.
    return (name == "", name.casefold())


PER_PAGE = 50


@dataclass(frozen=True)
class ViewPage:
    """One page of a queue: the rows its groups show there. The groups read as one list
    (listed, then quiet, then recently merged), cut every `per_page` rows; the view's
    counts stay over every row."""

    listed: tuple[ViewEntry, ...]
    quiet: tuple[ViewEntry, ...]
    recently_merged: tuple[ViewEntry, ...]
    number: int  # from 1
    pages: int
    per_page: int = PER_PAGE

    @property
    def first_row(self) -> int:
        """The position of the page's first row in the whole list, from 1."""
        return (self.number - 1) * self.per_page + 1

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None


def page_of(view: LabelView, number: int, per_page: int = PER_PAGE) -> ViewPage:
    """Page `number` of `view` (past the last page: the last page)."""
    rows = len(view.listed) + len(view.quiet) + len(view.recently_merged)
    pages = max(1, -(-rows // per_page))
    number = min(max(1, number), pages)
    start, end = (number - 1) * per_page, number * per_page
    quiet_at = len(view.listed)
    merged_at = quiet_at + len(view.quiet)
    return ViewPage(
        listed=view.listed[start:end],
        quiet=view.quiet[max(0, start - quiet_at):max(0, end - quiet_at)],
        recently_merged=view.recently_merged[max(0, start - merged_at):max(0, end - merged_at)],
        number=number, pages=pages, per_page=per_page,
    )
