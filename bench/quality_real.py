"""The quality bench on real patches: visible items, judged useful or noise by a reviewer.

Cases: tests/fixtures/cases/real/real_prs.json (real vLLM PRs with their real patches;
vLLM's code and its contributors' text, Apache-2.0, see REAL_PRS.md next to it). Each PR is
digested as the service would digest it: from its `pull_request` event and files, with the
repository's own config read at the base (default tests/fixtures/vllm_config/0.34.0).

A **visible item** is a line of the rendered Markdown that a reader sees without opening a
`<details>` block (bench_quality.visible_lines: outside every `<details>`, the summary line
excluded here, comments and blank lines excluded) and that starts, after indentation, with
a list marker (`- `, `* `, `+ `, `1. `) or a quote marker (`>`). Headings, the verdict line,
plain paragraphs and the `<sub>` footer are not items. Its **normalised text** drops the
marker, a leading task box (`[ ]`, `[x]`), the word joiners the renderer puts after `@`/`#`
and the backslashes of Markdown escapes, then collapses whitespace.

The judged file (bench/judged/real_prs.yaml) maps each PR to its judged items: normalised
text -> `verdict` (`useful` | `noise`), `why`, and `specific: true` on useful items that
name a symbol or decision of this PR. Reported per run: noise items per PR (mean, max),
unjudged visible items (a digest change asks for re-judging them), recall = judged useful
specific items still visible / all of them, and median and max visible lines.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bot.core.facts import PullRequestFacts
from bot.core.pr_object import changed_files, facts_from_pull_request, pull_request_object

ROOT = Path(__file__).resolve().parent.parent
REAL_CASES = ROOT / "tests/fixtures/cases/real/real_prs.json"
JUDGED = ROOT / "bench/judged/real_prs.yaml"
# More real PRs, made the same way after the gates were tuned on REAL_CASES, and judged
# before anything looked at them: the check that the gates generalise.
HOLDOUT_CASES = ROOT / "tests/fixtures/cases/real/holdout_prs.json"
HOLDOUT_JUDGED = ROOT / "bench/judged/holdout_prs.yaml"
DEFAULT_CONFIG_DIR = ROOT / "tests/fixtures/vllm_config/0.34.0"

_ITEM = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}\.\s|>)")
_MARKER = re.compile(r"^\s*(?:[-*+]\s+|\d{1,3}\.\s+|>+\s*)(?:\[[ xX]\]\s+)?")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~&])")
_SPACE = re.compile(r"\s+")
VERDICTS = ("useful", "noise")


@dataclass(frozen=True)
class RealCase:
    name: str
    facts: PullRequestFacts


def load_real_cases(path: Path = REAL_CASES) -> list[RealCase]:
    cases: list[RealCase] = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        pr = pull_request_object(raw["event"])
        facts = facts_from_pull_request(pr, changed_files(raw["files"]))
        cases.append(RealCase(name=raw["name"], facts=facts))
    return cases


def normalise(line: str) -> str:
    text = _MARKER.sub("", line, count=1).replace("\u2060", "")
    return _SPACE.sub(" ", _ESCAPE.sub(r"\1", text)).strip()


def _normalise_key(text: str) -> str:
    # A judged key is already an item's text (no list marker): only tidy it.
    return _SPACE.sub(" ", _ESCAPE.sub(r"\1", text.replace("\u2060", ""))).strip()


def visible_items(shown: Sequence[str]) -> list[str]:
    """The normalised items among the visible lines (see the module docstring)."""
    return [
        normalise(line)
        for line in shown
        if _ITEM.match(line) and not line.lstrip().startswith("<details")
    ]


@dataclass(frozen=True)
class Judgement:
    verdict: str
    why: str
    specific: bool = False


Judged = dict[str, dict[str, Judgement]]


class JudgedFileError(ValueError):
    """The judged file is not the documented shape."""


def load_judged(path: Path = JUDGED) -> Judged:
    if not path.exists():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return parse_judged(raw, str(path))


def parse_judged(raw: Any, where: str) -> Judged:
    if not isinstance(raw, Mapping):
        raise JudgedFileError(f"{where}: expected a mapping of PR name to items")
    judged: Judged = {}
    for name, items in raw.items():
        entries: dict[str, Judgement] = {}
        for text, entry in (items or {}).items():
            if not isinstance(entry, Mapping) or entry.get("verdict") not in VERDICTS:
                raise JudgedFileError(f"{where}: {name}: {text!r}: verdict must be useful|noise")
            entries[_normalise_key(str(text))] = Judgement(
                verdict=str(entry["verdict"]),
                why=str(entry.get("why") or ""),
                specific=bool(entry.get("specific", False)),
            )
        judged[str(name)] = entries
    return judged


@dataclass
class RealReport:
    prs: int = 0
    noise: dict[str, int] = field(default_factory=dict)
    useful: dict[str, int] = field(default_factory=dict)
    unjudged: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    items: dict[str, list[str]] = field(default_factory=dict)
    recall_hits: int = 0
    recall_total: int = 0
    missed: list[str] = field(default_factory=list)
    noise_items: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        noise = list(self.noise.values())
        lines = list(self.lines.values())
        return {
            "prs": self.prs,
            "noise_mean": round(statistics.fmean(noise), 2) if noise else None,
            "noise_max": max(noise, default=0),
            "noise_total": sum(noise),
            "useful_total": sum(self.useful.values()),
            "unjudged_total": sum(len(v) for v in self.unjudged.values()),
            "specific_recall": (
                round(self.recall_hits / self.recall_total, 3) if self.recall_total else None
            ),
            "specific_recall_counts": [self.recall_hits, self.recall_total],
            "median_visible_lines": statistics.median(lines) if lines else None,
            "max_visible_lines": max(lines, default=0),
            "per_pr": {
                name: {
                    "verdict": self.verdicts[name],
                    "visible_lines": self.lines[name],
                    "noise": self.noise[name],
                    "unjudged": self.unjudged[name],
                }
                for name in self.lines
            },
            "missed_specific": self.missed,
            "noise_items": self.noise_items,
        }


def score(shown_of: Mapping[str, tuple[str, Sequence[str]]], judged: Judged) -> RealReport:
    """`shown_of`: PR name -> (verdict, visible lines). A quiet PR posts nothing, so it
    has no visible line at all (its judged items still count for recall)."""
    report = RealReport()
    for name, (verdict, shown) in shown_of.items():
        marks = judged.get(name, {})
        items = visible_items(shown) if verdict != "quiet" else []
        report.prs += 1
        report.verdicts[name] = verdict
        report.items[name] = items
        report.lines[name] = len(shown) if verdict != "quiet" else 0
        report.noise[name] = sum(1 for i in items if i in marks and marks[i].verdict == "noise")
        report.useful[name] = sum(1 for i in items if i in marks and marks[i].verdict == "useful")
        report.unjudged[name] = [i for i in items if i not in marks]
        report.noise_items.extend(
            f"{name}: {i[:110]} — {marks[i].why}"
            for i in items
            if i in marks and marks[i].verdict == "noise"
        )
        present = set(items)
        for text, mark in marks.items():
            if mark.verdict == "useful" and mark.specific:
                report.recall_total += 1
                if text in present:
                    report.recall_hits += 1
                else:
                    report.missed.append(f"{name}: {text[:80]}")
    return report


def measure_real(
    cases: Sequence[RealCase],
    render: Callable[[PullRequestFacts], tuple[str, Sequence[str]]],
    judged: Judged,
) -> RealReport:
    return score({case.name: render(case.facts) for case in cases}, judged)


def format_real(
    report: RealReport,
    *,
    show_items: bool = True,
    title: str = "real patches",
    judged: Path = JUDGED,
) -> str:
    s = report.summary()
    out = [f"## digest quality: {title} (tests/fixtures/cases/real)", ""]
    if show_items:
        for name, items in report.items.items():
            out.append(f"### {name} · {report.verdicts[name]} · {report.lines[name]} lines")
            for item in items:
                out.append(f"- {item}")
            out.append("")
    out.extend(
        [
            f"PRs: {s['prs']}; noise items per PR: mean {s['noise_mean']}, "
            f"max {s['noise_max']} (total {s['noise_total']}, useful {s['useful_total']})",
            f"unjudged visible items: {s['unjudged_total']}"
            + (f" (re-judge them in {judged.relative_to(ROOT)})" if s["unjudged_total"] else ""),
            f"recall of judged PR-specific useful items: "
            f"{s['specific_recall_counts'][0]}/{s['specific_recall_counts'][1]}",
            f"visible lines: median {s['median_visible_lines']}, max {s['max_visible_lines']}",
            "noise per PR: " + " ".join(f"{n}={v}" for n, v in report.noise.items()),
        ]
    )
    if show_items and report.noise_items:
        out.extend(["", "noise items (judged):", *(f"- {i}" for i in report.noise_items)])
    if report.missed:
        out.extend(["", "missed PR-specific items:", *(f"- {i}" for i in report.missed)])
    return "\n".join(out)
