"""Digest quality on the real-PR corpus, from blind judgements (issue 44).

Cases: tests/fixtures/cases/real/corpus/pr<N>.json, digested now as the bot would post
them when opened (bench/corpus/cases.py). Judgements: bench/judged/corpus/pr<N>.yaml,
written by fresh blind judges from the packets (`python -m bench corpus packets`), in the
shape bench/judged/JUDGE.md gives, each item with the `text` copied from items.md.

Today's items (bench/corpus/items.py) are matched to the verdicts by normalised text: an
item whose text changed since it was judged is *unjudged* (judge it again, blind). Per
part of the corpus (tuned, held out) and split by area (`areas_truth`) and by item kind:

- visible noise per judged PR, collapsed noise beside it, PRs with at most one visible
  noise item;
- recall of the judges' points (full 1, part ½), made anywhere / made visibly;
- specific share: useful specific visible items over all visible items;
- visible items not yet judged (count and share), and judgements whose points were given
  on another digest than today's ("stale": re-judge the points).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bench.corpus.cases import (
    CorpusCase,
    Rendered,
    content_sha,
    digest_document,
    render_case,
    sha256,
)
from bench.corpus.items import KIND_NAMES, KINDS, Item, split_items

ROOT = Path(__file__).resolve().parent.parent
JUDGED_DIR = ROOT / "bench/judged/corpus"
# Cases added together and judged blind before any rule was tuned on them; the report shows
# each batch apart, so its first figures are what the rules did on PRs they were not
# written for (the held-out part stays the final judge).
BATCHES = ROOT / "bench/judged/batches.yaml"
VERDICTS = ("useful", "noise", "unsure")
MADE = {"full": 1.0, "part": 0.5, "no": 0.0}
WHERE = ("visible", "collapsed")
_SPACE = re.compile(r"\s+")


class JudgementError(ValueError):
    """A judgement file that is not JUDGE.md's shape (the message names file and field)."""


def key(text: str) -> str:
    """The matching key of an item's text (items.md already shows it normalised)."""
    return _SPACE.sub(" ", text.replace("\u2060", "")).strip()


@dataclass(frozen=True)
class Verdict:
    verdict: str
    why: str
    specific: bool
    where: str


@dataclass(frozen=True)
class Point:
    text: str
    made: str
    where: str


@dataclass(frozen=True)
class Judgement:
    pr: int
    brief: str
    digest: str
    verdict_fits: bool | None
    points: tuple[Point, ...]
    items: Mapping[str, Verdict]
    content: str = ""  # the judged digest's content_sha (its text without the marker)

    def judged_as(self, digest_sha: str, content: str = "") -> bool:
        """Whether this judgement was made on that digest: the same Markdown, or the
        same text under a marker that moved (bench.corpus.cases.content_sha)."""
        return self.digest == digest_sha or bool(self.content and self.content == content)


def _choice(value: Any, allowed: Iterable[str], what: str, where: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise JudgementError(f"{where}: {what} is {value!r}; expected one of {', '.join(allowed)}")
    return str(value)


def _made(value: Any) -> Any:
    # YAML 1.1 reads a bare `made: no` as false: the judge meant the word.
    return "no" if value is False else value


def parse_judgement(raw: Any, where: str) -> Judgement:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("pr"), int):
        raise JudgementError(f"{where}: expected a mapping with `pr: <number>`")
    items: dict[str, Verdict] = {}
    for index, entry in enumerate(raw.get("items") or ()):
        here = f"{where}: items[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("text"), str):
            raise JudgementError(f"{here}: needs `text`")
        verdict = Verdict(
            verdict=_choice(entry.get("verdict"), VERDICTS, "verdict", here),
            why=str(entry.get("why") or ""),
            specific=bool(entry.get("specific", False)),
            where=_choice(entry.get("where", "visible"), WHERE, "where", here),
        )
        items.setdefault(key(entry["text"]), verdict)
    points = tuple(
        Point(
            text=str(point.get("text", "")),
            made=_choice(_made(point.get("made")), MADE, "made", f"{where}: points[{index}]"),
            where=str(point.get("where") or ""),
        )
        for index, point in enumerate(raw.get("points") or ())
        if isinstance(point, Mapping)
    )
    fits = raw.get("verdict_fits")
    return Judgement(
        pr=int(raw["pr"]),
        brief=str(raw.get("brief") or ""),
        digest=str(raw.get("digest") or ""),
        content=str(raw.get("content") or ""),
        verdict_fits=fits if isinstance(fits, bool) else None,
        points=points,
        items=items,
    )


def load_judgements(directory: Path = JUDGED_DIR) -> dict[int, Judgement]:
    found: dict[int, Judgement] = {}
    for path in sorted(directory.glob("pr*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise JudgementError(f"{path}: not YAML: {error}") from error
        judgement = parse_judgement(raw, str(path))
        found[judgement.pr] = judgement
    return found


@dataclass
class KindCount:
    visible: int = 0
    noise: int = 0
    useful: int = 0
    specific: int = 0
    unsure: int = 0
    unjudged: int = 0
    collapsed: int = 0
    collapsed_noise: int = 0


@dataclass(frozen=True)
class PrScore:
    """One PR's digest today against its judgement (None: not judged at all)."""

    name: str
    holdout: bool
    areas: tuple[str, ...]
    judged: bool
    visible: int
    visible_noise: int
    collapsed_noise: int
    specific: int
    unjudged: int
    points: int
    made_any: float
    made_visible: float
    stale: bool
    verdict_fits: bool | None
    kinds: Mapping[str, KindCount]
    noise_items: tuple[str, ...]


def score_pr(
    name: str,
    holdout: bool,
    areas: Sequence[str],
    items: Sequence[Item],
    digest_sha: str,
    judgement: Judgement | None,
    content: str = "",
) -> PrScore:
    kinds: dict[str, KindCount] = {}
    visible = visible_noise = collapsed_noise = specific = unjudged = 0
    noise_items: list[str] = []
    marks = judgement.items if judgement else {}
    for item in items:
        count = kinds.setdefault(item.kind, KindCount())
        mark = marks.get(key(item.text))
        if item.where == "collapsed":
            count.collapsed += 1
            if mark is not None and mark.verdict == "noise":
                count.collapsed_noise += 1
                collapsed_noise += 1
            continue
        visible += 1
        count.visible += 1
        if mark is None:
            unjudged += 1
            count.unjudged += 1
        elif mark.verdict == "noise":
            visible_noise += 1
            count.noise += 1
            noise_items.append(f"{name} [{KIND_NAMES[item.kind]}] {item.text[:100]} — {mark.why}")
        elif mark.verdict == "useful":
            count.useful += 1
            if mark.specific:
                specific += 1
                count.specific += 1
        else:
            count.unsure += 1
    points = judgement.points if judgement else ()
    return PrScore(
        name=name,
        holdout=holdout,
        areas=tuple(areas),
        judged=judgement is not None,
        visible=visible,
        visible_noise=visible_noise,
        collapsed_noise=collapsed_noise,
        specific=specific,
        unjudged=unjudged,
        points=len(points),
        made_any=sum(MADE[p.made] for p in points),
        made_visible=sum(MADE[p.made] for p in points if p.where == "visible"),
        stale=judgement is not None and not judgement.judged_as(digest_sha, content),
        verdict_fits=judgement.verdict_fits if judgement else None,
        kinds=kinds,
        noise_items=tuple(noise_items),
    )


@dataclass
class Figures:
    """The blind figures of a set of PRs."""

    prs: int = 0
    judged: int = 0
    visible_noise: int = 0
    collapsed_noise: int = 0
    at_most_one: int = 0
    points: int = 0
    made_any: float = 0.0
    made_visible: float = 0.0
    specific: int = 0
    visible_judged_prs: int = 0  # visible items of judged PRs
    visible_all: int = 0
    unjudged: int = 0
    stale: int = 0
    fits: int = 0
    fits_known: int = 0
    kinds: dict[str, KindCount] = field(default_factory=dict)

    def add(self, pr: PrScore) -> None:
        self.prs += 1
        self.visible_all += pr.visible
        self.unjudged += pr.unjudged
        for kind, count in pr.kinds.items():
            total = self.kinds.setdefault(kind, KindCount())
            for name in vars(count):
                setattr(total, name, getattr(total, name) + getattr(count, name))
        if not pr.judged:
            return
        self.judged += 1
        self.visible_noise += pr.visible_noise
        self.collapsed_noise += pr.collapsed_noise
        self.at_most_one += pr.visible_noise <= 1
        self.points += pr.points
        self.made_any += pr.made_any
        self.made_visible += pr.made_visible
        self.specific += pr.specific
        self.visible_judged_prs += pr.visible
        self.stale += pr.stale
        if pr.verdict_fits is not None:
            self.fits_known += 1
            self.fits += pr.verdict_fits

    def summary(self) -> dict[str, Any]:
        def ratio(a: float, b: float, digits: int = 3) -> float | None:
            return round(a / b, digits) if b else None

        return {
            "prs": self.prs,
            "judged_prs": self.judged,
            "visible_noise_per_pr": ratio(self.visible_noise, self.judged, 2),
            "collapsed_noise_per_pr": ratio(self.collapsed_noise, self.judged, 2),
            "prs_at_most_one_visible_noise": self.at_most_one,
            "recall_any": ratio(self.made_any, self.points),
            "recall_visible": ratio(self.made_visible, self.points),
            "points": self.points,
            "specific_share": ratio(self.specific, self.visible_judged_prs),
            "unjudged_visible": self.unjudged,
            "unjudged_share": ratio(self.unjudged, self.visible_all),
            "visible_items": self.visible_all,
            "stale_points": self.stale,
            "verdict_fits": [self.fits, self.fits_known],
            "kinds": {k: vars(v) for k, v in sorted(self.kinds.items())},
        }


def figures(scores: Iterable[PrScore]) -> Figures:
    total = Figures()
    for pr in scores:
        total.add(pr)
    return total


def by_area(scores: Sequence[PrScore]) -> dict[str, Figures]:
    areas = sorted({area for pr in scores for area in pr.areas})
    split = {area: figures(pr for pr in scores if area in pr.areas) for area in areas}
    unlabelled = [pr for pr in scores if not pr.areas]
    if unlabelled:
        split["(no area)"] = figures(unlabelled)
    return split


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def headline(f: Figures) -> str:
    s = f.summary()
    return (
        f"{s['judged_prs']}/{s['prs']} PRs judged · visible noise/PR "
        f"{_num(s['visible_noise_per_pr'])} (collapsed {_num(s['collapsed_noise_per_pr'])})"
        " · ≤1 visible noise: "
        f"{s['prs_at_most_one_visible_noise']}/{s['judged_prs']} · recall {_pct(s['recall_any'])}"
        f" any / {_pct(s['recall_visible'])} visible ({s['points']} points) · specific "
        f"{_pct(s['specific_share'])} · unjudged visible {s['unjudged_visible']}/"
        f"{s['visible_items']} ({_pct(s['unjudged_share'])}) · stale points {s['stale_points']}"
        f" · verdict fits {s['verdict_fits'][0]}/{s['verdict_fits'][1]}"
    )


def area_table(split: Mapping[str, Figures]) -> list[str]:
    out = [
        "| area | PRs | judged | visible noise/PR | collapsed/PR | ≤1 noise | recall any | "
        "recall visible | specific | unjudged |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for area, f in split.items():
        s = f.summary()
        out.append(
            f"| {area} | {s['prs']} | {s['judged_prs']} | {_num(s['visible_noise_per_pr'])} | "
            f"{_num(s['collapsed_noise_per_pr'])} | {s['prs_at_most_one_visible_noise']} | "
            f"{_pct(s['recall_any'])} | {_pct(s['recall_visible'])} | "
            f"{_pct(s['specific_share'])} | {s['unjudged_visible']} |"
        )
    return out


def kind_table(f: Figures) -> list[str]:
    out = [
        "| kind | visible | noise | useful | specific | unsure | unjudged | noise share | "
        "collapsed | collapsed noise |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind in KINDS:
        c = f.kinds.get(kind)
        if c is None:
            continue
        judged = c.visible - c.unjudged
        share = _pct(c.noise / judged if judged else None)
        out.append(
            f"| {KIND_NAMES[kind]} | {c.visible} | {c.noise} | {c.useful} | {c.specific} | "
            f"{c.unsure} | {c.unjudged} | {share} | {c.collapsed} | {c.collapsed_noise} |"
        )
    return out


def load_batches(path: Path = BATCHES) -> dict[str, frozenset[str]]:
    """Each batch's case names (`pr<N>`), from `batches:` {name: {cases: [...]}}."""
    if not path.exists():
        return {}
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise JudgementError(f"{path.name}: not YAML ({error})") from None
    batches = raw.get("batches") if isinstance(raw, dict) else None
    if not isinstance(batches, dict):
        raise JudgementError(f"{path.name}: expected `batches:`, a mapping of name to cases")
    out = {}
    for name, batch in batches.items():
        cases = batch.get("cases") if isinstance(batch, dict) else None
        if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
            raise JudgementError(f"{path.name}: batch {name}: `cases` should be a list of pr<N>")
        out[str(name)] = frozenset(cases)
    return out


def format_report(scores: Sequence[PrScore], *, show_noise: bool = False,
                  batches: Mapping[str, frozenset[str]] | None = None) -> str:
    parts = {
        "tuned": [pr for pr in scores if not pr.holdout],
        "held out": [pr for pr in scores if pr.holdout],
    }
    out = [
        "## digest quality, judged blind: the real-PR corpus (tests/fixtures/cases/real/corpus)",
        "",
    ]
    for name, part in parts.items():
        out.append(f"- {name}: {headline(figures(part))}")
    out.append(f"- all: {headline(figures(scores))}")
    for name, cases in (batches or {}).items():
        batch = [pr for pr in scores if pr.name in cases]
        held = sum(pr.holdout for pr in batch)
        out.append(f"- batch {name} ({len(batch)} PRs, {held} of them held out): "
                   f"{headline(figures(batch))}")
        parts[f"batch {name}"] = batch
    for name, part in parts.items():
        if not part:
            continue
        out += ["", f"### {name}: by item kind", "", *kind_table(figures(part))]
        out += ["", f"### {name}: by area (a PR counts in each of its areas)", ""]
        out += area_table(by_area(part))
    unjudged = [pr.name for pr in scores if not pr.judged]
    if unjudged:
        out += ["", f"not judged yet ({len(unjudged)}): {' '.join(unjudged)}"]
    stale = [pr.name for pr in scores if pr.stale]
    if stale:
        out += [f"points judged on another digest ({len(stale)}): {' '.join(stale)}"]
    if show_noise:
        # Only the tuned part: rules are tuned on these lines, and the held-out part must
        # stay unseen by whoever changes the rules.
        noise = [line for pr in scores if not pr.holdout for line in pr.noise_items]
        out += ["", "visible noise items (tuned part only):", *(f"- {line}" for line in noise)]
    return "\n".join(out)


def format_side_by_side(plain: Sequence[PrScore], written: Sequence[PrScore]) -> str:
    """The same PRs' plain and written digests, each part apart (tuned, held out, all).
    Each variant's recall is against the points its own blind judges set down before
    reading it."""
    out = []
    for name, keep in (("tuned", False), ("held out", True), ("all", None)):
        pick = [pr for pr in plain if keep is None or pr.holdout == keep]
        if not pick:
            continue
        names = {pr.name for pr in pick}
        out.append(f"- {name}, plain: {headline(figures(pick))}")
        out.append(f"- {name}, written: "
                   f"{headline(figures(pr for pr in written if pr.name in names))}")
    out += ["", "### written: by item kind (all)", "", *kind_table(figures(written))]
    return "\n".join(out)


def measure(cases: Sequence[CorpusCase], judgements: Mapping[int, Judgement],
            render: Callable[[CorpusCase], Rendered] = render_case) -> list[PrScore]:
    """Each case's digest today (`render`: another variant of it, e.g. with the writer's
    recorded completions), scored against its blind judgement."""
    scores = []
    for case in cases:
        rendered = render(case)
        scores.append(
            score_pr(
                case.name,
                case.holdout,
                case.areas,
                split_items(rendered.markdown),
                sha256(digest_document(rendered)),
                judgements.get(case.number),
                content_sha(digest_document(rendered)),
            )
        )
    return scores


def summary(scores: Sequence[PrScore]) -> dict[str, Any]:
    tuned = [pr for pr in scores if not pr.holdout]
    held = [pr for pr in scores if pr.holdout]
    return {
        part: {
            **figures(prs).summary(),
            "by_area": {a: f.summary() for a, f in by_area(prs).items()},
        }
        for part, prs in (("tuned", tuned), ("held_out", held), ("all", list(scores)))
    }
