"""Find a PR's neighbours among the other open PRs: competing (fixes the same issue, or a
near-identical title over a near-identical file set) and overlapping (changes the same
function, or, weaker, the same file). Other authors only: an author's own stacked PRs
are dependencies, not competition.

Bounded: the others are indexed by file, symbol and fixed issue, so a PR meets only the
PRs it shares one of those with, never all 2,000 open ones; a file more than
`HOT_FILE_PRS` other PRs touch (a registry, `envs.py`) says nothing about any one of
them and is not a same-file signal (a shared function in it still is); nor is one shared
file alone (`MIN_SHARED_FILES`)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from bot.core.neighbours.model import (
    ChangedSymbol,
    Dependency,
    DependencyRef,
    DependencyState,
    LiveState,
    Neighbour,
    Neighbours,
    OpenPr,
    Reason,
)

MAX_SHOWN = 3  # shown in the comment's visible part; the rest are counted
MAX_KEPT = 20  # kept in the JSON
HOT_FILE_PRS = 30
# One shared file is weak: judged blind on the corpus, 6 of 8 one-file overlaps were
# unrelated edits of a big shared module (scheduler, async_llm, envs); PRs sharing two or
# more files, or a function, were right each time.
MIN_SHARED_FILES = 2
MAX_SHARED = 5  # shared names kept per neighbour
TITLE_SIMILAR = 0.8  # Jaccard of the titles' words
FILES_SIMILAR = 0.6  # Jaccard of the file sets
_MIN_TITLE_WORDS = 3
_RANK: dict[Reason, int] = {"same-issue": 0, "same-title": 1, "same-function": 2, "same-file": 3}
_TAG = re.compile(r"\[[^\]]{0,40}\]")
_WORD = re.compile(r"[a-z0-9_]+")
_CI_FAILED = frozenset({"failed", "error"})


class OpenPrIndex:
    """The other open PRs by file, symbol and fixed issue: built once, asked per PR."""

    def __init__(self, others: Iterable[OpenPr]) -> None:
        self.by_number: dict[int, OpenPr] = {}
        self.by_file: dict[str, list[int]] = defaultdict(list)
        self.by_symbol: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.by_issue: dict[int, list[int]] = defaultdict(list)
        for pr in others:
            if pr.state != "open" or pr.number in self.by_number:
                continue
            self.by_number[pr.number] = pr
            for path in set(pr.files):
                self.by_file[path].append(pr.number)
            for symbol in {(s.file, s.name) for s in pr.symbols}:
                self.by_symbol[symbol].append(pr.number)
            for issue in set(pr.fixes):
                self.by_issue[issue].append(pr.number)

    def __len__(self) -> int:
        return len(self.by_number)


def find_neighbours(
    subject: OpenPr,
    others: Sequence[OpenPr] | OpenPrIndex,
    *,
    dependencies: Sequence[DependencyRef] = (),
    dependency_states: Mapping[int, DependencyState] | None = None,
) -> Neighbours:
    """`subject`'s neighbours among `others` (records or their index), strongest first;
    its dependencies with the states read of them; its live state."""
    index = others if isinstance(others, OpenPrIndex) else OpenPrIndex(others)
    author = subject.author.casefold()
    found: dict[int, Neighbour] = {}

    def mine(number: int) -> OpenPr | None:
        other = index.by_number.get(number)
        if other is None or number == subject.number or other.author.casefold() == author:
            return None
        return other

    for issue in dict.fromkeys(subject.fixes):
        for number in index.by_issue.get(issue, ()):
            if (other := mine(number)) is not None:
                _keep(found, _neighbour(other, "same-issue", (f"#{issue}",)))
    files = dict.fromkeys(subject.files)
    shared_files: dict[int, list[str]] = defaultdict(list)
    for path in files:
        holders = index.by_file.get(path, ())
        for number in holders:
            if mine(number) is not None:
                shared_files[number].append(path)
    shared_symbols: dict[int, list[ChangedSymbol]] = defaultdict(list)
    for symbol in dict.fromkeys(subject.symbols):
        if _is_class_scope(symbol):
            continue
        for number in index.by_symbol.get((symbol.file, symbol.name), ()):
            if mine(number) is not None:
                shared_symbols[number].append(symbol)
    title = _title_words(subject.title)
    for number, paths in shared_files.items():
        other = index.by_number[number]
        if _similar(title, _title_words(other.title), TITLE_SIMILAR, _MIN_TITLE_WORDS) and \
                _similar(set(files), set(other.files), FILES_SIMILAR, 1):
            _keep(found, _neighbour(other, "same-title", tuple(paths)))
    for number, symbols in shared_symbols.items():
        names = tuple(f"{s.file}::{s.name}" for s in symbols)
        _keep(found, _neighbour(index.by_number[number], "same-function", names))
    for number, paths in shared_files.items():
        cold = tuple(p for p in paths if len(index.by_file[p]) <= HOT_FILE_PRS)
        if len(cold) >= MIN_SHARED_FILES:
            _keep(found, _neighbour(index.by_number[number], "same-file", cold))
    ranked = sorted(found.values(), key=_strength)
    return Neighbours(
        neighbours=tuple(ranked[:MAX_KEPT]),
        dependencies=_dependencies(dependencies, dependency_states or {}),
        live=live_state(subject),
        compared=len(index),
    )


def _is_class_scope(symbol: ChangedSymbol) -> bool:
    """A CapWords name is a class the patch changed outside any method it shows (the
    digest's symbols name the enclosing scope): two PRs editing `Scheduler` somewhere
    share a file, not a function (on the corpus: `Scheduler`, `AsyncLLM`, judged loose)."""
    return symbol.name[:1].isupper()


def live_state(pr: OpenPr) -> LiveState:
    state = pr.mergeable_state.lower()
    return LiveState(mergeable_state=state, conflicts=state == "dirty",
                     behind=state == "behind", ci_failed=pr.ci in _CI_FAILED)


def shown_and_more(neighbours: Neighbours) -> tuple[tuple[Neighbour, ...], int]:
    """The neighbours the comment shows, and how many more it only counts."""
    return neighbours.neighbours[:MAX_SHOWN], max(0, len(neighbours.neighbours) - MAX_SHOWN)


def _neighbour(other: OpenPr, reason: Reason, shared: tuple[str, ...]) -> Neighbour:
    return Neighbour(
        number=other.number, relation="competes" if reason in ("same-issue", "same-title")
        else "overlaps", reason=reason, shared=shared[:MAX_SHARED], shared_count=len(shared),
        title=other.title, author=other.author, created_at=other.created_at,
        draft=other.draft, approved=other.approved, ci=other.ci,
    )


def _keep(found: dict[int, Neighbour], candidate: Neighbour) -> None:
    """One entry per PR: its strongest reason."""
    known = found.get(candidate.number)
    if known is None or _RANK[candidate.reason] < _RANK[known.reason]:
        found[candidate.number] = candidate


def _strength(n: Neighbour) -> tuple[int, int, int, int]:
    # Then the more shared, then the further along (approved, not a draft, CI passed),
    # then the older number: the PR a reviewer would look at first.
    along = (0 if n.approved else 1) + (1 if n.draft else 0) + (0 if n.ci == "passed" else 1)
    return (_RANK[n.reason], -n.shared_count, along, n.number)


def _title_words(title: str) -> set[str]:
    return set(_WORD.findall(_TAG.sub(" ", title[:300]).lower()))


def _similar(a: set[str], b: set[str], threshold: float, minimum: int) -> bool:
    if len(a) < minimum or len(b) < minimum:
        return False
    return len(a & b) / len(a | b) >= threshold


def _dependencies(
    refs: Sequence[DependencyRef], states: Mapping[int, DependencyState]
) -> tuple[Dependency, ...]:
    return tuple(Dependency(number=ref.number, cue=ref.cue, state=states.get(ref.number, "unknown"))
                 for ref in refs)
