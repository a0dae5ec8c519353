"""How good is the digest on real vLLM PRs? The blind figures first, then risks and areas.

Run: python -m bench quality [--json PATH] [--noise-items] [--holdout] [--self-judged]

First, the real-PR corpus judged blind (bench/quality_corpus.py, issue 44): every case in
tests/fixtures/cases/real/corpus/ digested as the bot would post it when opened, with its
base release's config, scored against bench/judged/corpus/pr<N>.yaml (written by fresh
blind judges from `python -m bench corpus packets`): visible noise per PR (collapsed
beside it), PRs with at most one visible noise item, recall of the judges' points, the
specific share and the unjudged visible items; by item kind and by area; the tuned part
and the held-out part apart.

`--self-judged` also prints the older real-patch report, judged by the rules' author
(bench/judged/real_prs.yaml; kept for comparison only: it is not blind).
The older real-patch set (bench/quality_real.py, whose docstring defines a "visible
item"): 25 vLLM PRs with their real patches, each digested with vLLM's own config at the
base as the service reads it (`--real-config`, default tests/fixtures/vllm_config/0.34.0).
It prints each PR's visible items and scores them against bench/judged/real_prs.yaml:
noise items per PR (mean, max), unjudged items, recall of the judged PR-specific useful
items, median and max visible lines.

Then the labelled cases: every labelled case in tests/fixtures/cases/ — `vllm_prs.json` (a
reviewer's `area_expected`) and `reviewer_asks.json` (what the reviewers of each PR actually asked
for, quoted, plus `areas_truth`). File lists are partial and line counts were not
recorded, so the digest runs on what a partial-data run would see.

Reported, per risk id: fires; on the reviewer-asks cases, fires where a reviewer asked
for that thing, where the visible thread shows no such ask, and where it cannot be
told; high-severity items and whether each was asked for or admitted by the author;
the verdict distribution; area recall and precision against the truth tags that are
area ids of the rules (other tags are "not scored" and listed); the median visible
lines and open (unticked) items per posted digest (quiet PRs get no comment, so they
are left out of both medians); specificity: the share of posted digests whose visible
part names, in a code span, a function or class the patch touches or a name the
description mentions, and the share that quote at least one of the author's design
decisions. `--holdout` also reports the same numbers on a fixed
quarter of the cases (PR number divisible by 4) next to the rest, so tuning on the
rest can be checked for generalisation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import quality_corpus, quality_real
from bench.corpus.cases import load_corpus
from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.findings import Digest
from bot.core.reading.mentions import body_names
from bot.core.reading.symbols import extract_symbols
from bot.core.render.comment import render_digest
from bot.core.render.i18n import t
from bot.core.repo_config.config import RepoConfig
from bot.core.rules import RuleSet
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "tests/fixtures/cases"
RULES_DIR = ROOT / "rules"

# The reviewer's ask each risk stands for (reviewer_asks.json `asks` keys).
RISK_ASKS: dict[str, tuple[str, ...]] = {
    "missing-gpu-eval": ("gpu_eval",),
    "missing-test-results": ("test_results",),
    "missing-tests": ("tests",),
    "release-branch": ("release_gate",),
    "perf-claim-without-numbers": ("perf_numbers",),
    "hardware-unverified": ("hardware_run",),
    "new-model-checklist": ("tests", "docs"),
    "large-diff": (),
}
# Truth tags outside the area vocabulary that still name one of our areas.
TAG_TO_AREA = {"rocm": "hardware", "cpu": "hardware", "speculative-decoding": "spec-decode"}
# The area ids the project started with (docs/architecture.md): recall on these alone
# stays comparable when new areas join the vocabulary.
ORIGINAL_AREAS = frozenset(
    {
        "compile", "cudagraph", "multimodal", "tokenizer", "yarn", "attention-backend",
        "frontend", "new-model", "docs", "ci", "kernels", "quantization", "spec-decode",
        "structured-output", "hardware",
    }
)  # fmt: skip
# The bench's own yardstick for "the author admits a gap", kept apart from the
# parser under test (bot/core/reading/body_vocabulary.py) so the two cannot agree by construction.
_ADMISSION = re.compile(
    r"not\s+(?:yet\s+)?(?:been\s+)?(?:run|tested|verified|evaluated)|\btbd\b"
    r"|will\s+add\s+(?:\w+\s+)?(?:tests?|results?|later)|needs?\s+a\s+\w+\s+run"
    r"|requires?\s+\w+\s+hardware|\buntested\b|haven'?t\s+(?:yet\s+)?(?:run|tested)",
    re.IGNORECASE,
)
_FOOTER = "**BEFORE SUBMITTING"
_OPEN_ITEM = re.compile(r"^- \[ \] ")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,80}")


@dataclass(frozen=True)
class Case:
    source: str  # file name the case came from
    number: int
    facts: PullRequestFacts
    truth: frozenset[str]  # truth tags as given
    asks: dict[str, bool | None] = field(default_factory=dict)  # empty: no ask data

    @property
    def holdout(self) -> bool:
        return self.number % 4 == 0


def case_facts(case: dict[str, Any]) -> PullRequestFacts:
    """The facts a partial-data run sees: unknown status/sizes default, patches kept."""
    files = tuple(
        ChangedFile(
            filename=f["filename"],
            status=f.get("status") or "modified",
            additions=f.get("additions") or 0,
            deletions=f.get("deletions") or 0,
            patch=f.get("patch"),
        )
        for f in case.get("files") or ()
    )
    return PullRequestFacts(
        number=case["number"],
        title=case["title"],
        body=case.get("body") or "",
        author=case.get("author") or "",
        labels=tuple(case.get("labels") or ()),
        base_ref=case.get("base_ref") or "main",
        files=files,
    )


def load_cases(directory: Path = CASES_DIR) -> list[Case]:
    cases: list[Case] = []
    for path in sorted(directory.glob("*.json")):
        for raw in json.loads(path.read_text(encoding="utf-8")):
            truth = raw.get("areas_truth") or raw.get("area_expected")
            if truth is None:
                continue
            asks = raw.get("asks") or {}
            cases.append(
                Case(
                    source=path.name,
                    number=raw["number"],
                    facts=case_facts(raw),
                    truth=frozenset(truth),
                    asks={k: v for k, v in asks.items() if k != "other"},
                )
            )
    return cases


@dataclass
class RiskCount:
    fires: int = 0
    high: int = 0
    above_low: int = 0
    asked: int = 0  # reviewer-asks cases only
    no_ask: int = 0
    unknown: int = 0


@dataclass
class Report:
    cases: int = 0
    ask_cases: int = 0
    risks: dict[str, RiskCount] = field(default_factory=dict)
    high_total: int = 0
    high_asked_or_admitted: int = 0  # reviewer-asks cases
    high_unjustified: list[str] = field(default_factory=list)
    test_results_above_low_on_asks: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    small_known: int = 0  # changes of known size <= 20 lines
    small_deep_read: int = 0
    recall_hits: int = 0
    recall_total: int = 0
    original_hits: int = 0
    original_total: int = 0
    found_total: int = 0
    found_right: int = 0
    not_scored: Counter[str] = field(default_factory=Counter)
    # Areas the digest found that no case's truth can name (added after the labelling).
    found_unscorable: Counter[str] = field(default_factory=Counter)
    no_area: int = 0
    visible_lines: list[int] = field(default_factory=list)
    open_items: list[int] = field(default_factory=list)
    posted: int = 0
    names_symbol: int = 0  # visible part names a patch or body symbol
    with_decision: int = 0  # visible part quotes an author decision
    misses: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        return {
            "cases": self.cases,
            "reviewer_ask_cases": self.ask_cases,
            "risks": {k: vars(v) for k, v in sorted(self.risks.items())},
            "high_total": self.high_total,
            "high_asked_or_admitted": self.high_asked_or_admitted,
            "high_unjustified": self.high_unjustified,
            "test_results_above_low_share_on_asks": ratio(
                self.test_results_above_low_on_asks, self.ask_cases
            ),
            "verdicts": dict(sorted(self.verdicts.items())),
            "deep_read_share": ratio(self.verdicts["deep-read"], self.cases),
            "small_known": self.small_known,
            "small_deep_read": self.small_deep_read,
            "area_recall": ratio(self.recall_hits, self.recall_total),
            "area_recall_original_areas": ratio(self.original_hits, self.original_total),
            "area_precision": ratio(self.found_right, self.found_total),
            "area_counts": {
                "truth_scored": self.recall_total,
                "found": self.found_total,
                "right": self.found_right,
            },
            "not_scored_tags": dict(sorted(self.not_scored.items())),
            "found_unscorable": dict(sorted(self.found_unscorable.items())),
            "no_area": self.no_area,
            "median_visible_lines": _median(self.visible_lines),
            "median_open_items": _median(self.open_items),
            "posted": self.posted,
            "names_symbol_share": ratio(self.names_symbol, self.posted),
            "author_decision_share": ratio(self.with_decision, self.posted),
            "area_misses": self.misses,
            "area_wrong": self.wrong,
        }


def _median(values: Sequence[int]) -> float | None:
    return statistics.median(values) if values else None


def visible_lines(markdown: str) -> list[str]:
    """Non-blank lines a reader sees without opening a collapsed `<details>` (no marker)."""
    shown: list[str] = []
    depth = 0
    for line in markdown.split("\n"):
        stripped = line.strip()
        opened = stripped.startswith("<details")
        if opened:
            depth += 1
        if depth == 0 and stripped and not stripped.startswith("<!--"):
            shown.append(line)
        if "</details>" in stripped:
            depth = max(0, depth - 1)
        elif opened and "<summary>" in stripped and depth == 1:
            shown.append(line)  # the summary line itself is visible
    return shown


# Every rendered decision line ends with the author's attribution; the bench reads
# the Markdown, as a reviewer would.
_DECISION_MARK = t("en", "render.decision.by")


def names_a_symbol(facts: PullRequestFacts, shown: Sequence[str]) -> bool:
    """Does a visible code span name a function/class the patch touches, or an
    identifier the description mentions (not a file path)?"""
    names = {symbol.name for symbol in extract_symbols(facts.files)}
    for name in body_names(facts.body):
        if "/" not in name and not name.endswith((".py", ".yaml", ".md", ".cu", ".h")):
            names.add(name.rsplit(".", 1)[-1])
    if not names:
        return False
    for line in shown:
        for span in _CODE_SPAN.findall(line):
            if "/" in span:
                continue
            if any(ident in names for ident in _IDENTIFIER.findall(span)):
                return True
    return False


def _truth_areas(case: Case, vocabulary: frozenset[str], report: Report) -> set[str]:
    areas: set[str] = set()
    for tag in case.truth:
        area = TAG_TO_AREA.get(tag, tag)
        if area in vocabulary:
            areas.add(area)
        else:
            report.not_scored[tag] += 1
    return areas


def _admitted(case: Case) -> bool:
    body = case.facts.body
    cut = body.find(_FOOTER)
    return bool(_ADMISSION.search(body if cut < 0 else body[:cut]))


def measure(
    cases: Iterable[Case], rules: RuleSet, digest_of: Callable[[Case], Digest] | None = None
) -> Report:
    vocabulary = frozenset(area.id for area in rules.areas)
    cases = list(cases)
    # What the labellers could name: an area no truth uses was not an option for them,
    # so finding it is neither right nor wrong (listed, not scored).
    labelled = frozenset(TAG_TO_AREA.get(tag, tag) for case in cases for tag in case.truth)
    report = Report()
    for case in cases:
        digest = digest_of(case) if digest_of else build_digest(case.facts, rules, "en")
        markdown = render_digest(digest)
        report.cases += 1
        report.verdicts[digest.verdict] += 1
        lines = case.facts.total_additions + case.facts.total_deletions
        if 0 < lines <= 20:
            report.small_known += 1
            report.small_deep_read += digest.verdict == "deep-read"
        if digest.verdict != "quiet":  # a quiet PR gets no comment at all
            shown = visible_lines(markdown)
            report.visible_lines.append(len(shown))
            report.open_items.append(sum(1 for line in shown if _OPEN_ITEM.match(line)))
            report.posted += 1
            report.names_symbol += names_a_symbol(case.facts, shown)
            report.with_decision += bool(getattr(digest, "decisions", ())) and any(
                _DECISION_MARK in line for line in shown
            )
        _score_areas(case, digest, vocabulary, labelled, report)
        _score_risks(case, digest, report)
    return report


def _score_areas(
    case: Case, digest: Digest, vocabulary: frozenset[str], labelled: frozenset[str],
    report: Report,
) -> None:
    truth = _truth_areas(case, vocabulary, report)
    found = {area.id for area in digest.areas}
    report.no_area += not found
    report.found_unscorable.update(found - labelled)
    found &= labelled
    report.recall_total += len(truth)
    report.recall_hits += len(truth & found)
    original = truth & ORIGINAL_AREAS
    report.original_total += len(original)
    report.original_hits += len(original & found)
    report.found_total += len(found)
    report.found_right += len(found & truth)
    report.misses.extend(f"{case.number}:{a}" for a in sorted(truth - found))
    report.wrong.extend(f"{case.number}:{a}" for a in sorted(found - truth))


def _score_risks(case: Case, digest: Digest, report: Report) -> None:
    has_asks = bool(case.asks)
    report.ask_cases += has_asks
    for risk in digest.risks:
        count = report.risks.setdefault(risk.id, RiskCount())
        count.fires += 1
        count.high += risk.severity == "high"
        count.above_low += risk.severity != "low"
        if risk.severity == "high":
            report.high_total += 1
        if not has_asks:
            continue
        answers = [case.asks.get(key) for key in RISK_ASKS.get(risk.id, ())]
        if any(a is True for a in answers):
            count.asked += 1
        elif answers and all(a is False for a in answers):
            count.no_ask += 1
        else:
            count.unknown += 1
        if risk.id == "missing-test-results" and risk.severity != "low":
            report.test_results_above_low_on_asks += 1
        if risk.severity == "high":
            if any(a is True for a in answers) or _admitted(case):
                report.high_asked_or_admitted += 1
            else:
                report.high_unjustified.append(f"{case.number}:{risk.id}")


def format_report(summary: dict[str, Any], title: str) -> str:
    out = [f"## {title}", ""]
    out.append(f"cases: {summary['cases']} (with reviewer asks: {summary['reviewer_ask_cases']})")
    out.append("")
    out.append("| risk | fires | high | above low | asked | no ask | unknown |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for risk_id, c in summary["risks"].items():
        out.append(
            f"| {risk_id} | {c['fires']} | {c['high']} | {c['above_low']} | {c['asked']} "
            f"| {c['no_ask']} | {c['unknown']} |"
        )
    out.append("")
    share = summary["test_results_above_low_share_on_asks"]
    out.extend(
        [
            f"high-severity items: {summary['high_total']} "
            f"(on reviewer-asks cases: {summary['high_asked_or_admitted']} asked or admitted, "
            f"{len(summary['high_unjustified'])} neither: "
            f"{', '.join(summary['high_unjustified']) or '-'})",
            f"missing-test-results above low on reviewer-asks cases: {_pct(share)}",
            f"verdicts: {summary['verdicts']}  deep-read share: {_pct(summary['deep_read_share'])}",
            f"changes of known size <= 20 lines: {summary['small_known']}, "
            f"deep-read: {summary['small_deep_read']}",
            f"area recall: {_pct(summary['area_recall'])} "
            f"(original 15 areas only: {_pct(summary['area_recall_original_areas'])}), "
            f"precision: {_pct(summary['area_precision'])} {summary['area_counts']}; "
            f"PRs with no area: {summary['no_area']}",
            f"not scored (truth tags outside the area ids): {summary['not_scored_tags']}; "
            f"found, no truth can name them: {summary['found_unscorable']}",
            f"median visible lines: {summary['median_visible_lines']}, "
            f"median open items: {summary['median_open_items']}",
            f"posted digests naming a patch/body symbol: {_pct(summary['names_symbol_share'])}, "
            f"quoting an author decision: {_pct(summary['author_decision_share'])} "
            f"(of {summary['posted']} posted)",
            f"area misses: {' '.join(summary['area_misses']) or '-'}",
            f"areas found but not in truth: {' '.join(summary['area_wrong']) or '-'}",
        ]
    )
    return "\n".join(out)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _repo_config(directory: Path) -> RepoConfig:
    from bot.core.repo_config.config import read_repo_config
    from bot.handlers.repo_config import DirectorySource, read_config_files

    files = asyncio.run(read_config_files(DirectorySource(directory), f"checkout {directory}"))
    return read_repo_config(files)


def run_real(
    rules: RuleSet,
    config: RepoConfig,
    cases: Path = quality_real.REAL_CASES,
    judged: Path = quality_real.JUDGED,
) -> quality_real.RealReport:
    """The real-patch set, digested with `config` as the base's repository config."""

    def render(facts: PullRequestFacts) -> tuple[str, list[str]]:
        digest = build_digest(facts, rules, "en", repo_config=config)
        return digest.verdict, visible_lines(render_digest(digest))

    return quality_real.measure_real(
        quality_real.load_real_cases(cases), render, quality_real.load_judged(judged)
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench quality", description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    parser.add_argument(
        "--holdout", action="store_true", help="also report the held-out quarter separately"
    )
    parser.add_argument(
        "--repo-dir", type=Path, default=None, metavar="DIR",
        help="also digest every case with this checkout's own config (CODEOWNERS, "
             ".buildkite/, mergify.yml, the PR template), as the service reads a base's; "
             "e.g. tests/fixtures/vllm_config/0.34.0",
    )
    parser.add_argument(
        "--real-config", type=Path, default=quality_real.DEFAULT_CONFIG_DIR, metavar="DIR",
        help="the base checkout whose config digests the real-patch set (default: vLLM "
             "0.34.0's, tests/fixtures/vllm_config/0.34.0)",
    )
    parser.add_argument(
        "--no-items", action="store_true", help="with --self-judged: do not print each item"
    )
    parser.add_argument(
        "--noise-items", action="store_true", help="list every visible item judged noise"
    )
    parser.add_argument(
        "--writer", type=Path, metavar="DIR", nargs="?", const=None, default=False,
        help="also report the written digests of the recorded completions in DIR (default "
             "tests/fixtures/writer/completions), judged in bench/judged/writer, beside the "
             "plain ones",
    )
    parser.add_argument(
        "--self-judged", action="store_true",
        help="also print the older real-patch report judged by the rules' author (not blind)",
    )
    args = parser.parse_args(argv)
    rules = load_rules(RULES_DIR)
    try:
        judgements = quality_corpus.load_judgements()
    except quality_corpus.JudgementError as error:
        print(f"bench quality: {error}", file=sys.stderr)
        return 2
    scores = quality_corpus.measure(load_corpus(), judgements)
    try:
        batches = quality_corpus.load_batches()
    except quality_corpus.JudgementError as error:
        print(f"bench quality: {error}", file=sys.stderr)
        return 2
    print(quality_corpus.format_report(scores, show_noise=args.noise_items, batches=batches))
    print()
    result: dict[str, Any] = {"corpus": quality_corpus.summary(scores)}
    if args.writer is not False:
        from bench.corpus.written import COMPLETIONS, WRITER_JUDGED, renderer

        directory = args.writer or COMPLETIONS
        recorded = {path.stem for path in directory.glob("pr*.json")}
        with_completion = [case for case in load_corpus() if case.name in recorded]
        try:
            written_judgements = quality_corpus.load_judgements(WRITER_JUDGED)
        except quality_corpus.JudgementError as error:
            print(f"bench quality: {error}", file=sys.stderr)
            return 2
        plain = [score for score in scores if score.name in recorded]
        written = quality_corpus.measure(with_completion, written_judgements,
                                         renderer(directory))
        print(f"## the writer (issue 41): {len(with_completion)} PRs with a recorded completion "
              f"in {directory}, plain vs written")
        print()
        print(quality_corpus.format_side_by_side(plain, written))
        print()
        result["writer"] = {"plain": quality_corpus.summary(plain),
                            "written": quality_corpus.summary(written)}
    if args.self_judged:
        config = _repo_config(args.real_config)
        real = run_real(rules, config)
        print(quality_real.format_real(real, show_items=not args.no_items))
        print()
        result["real"] = real.summary()
        if quality_real.HOLDOUT_CASES.exists():
            held = run_real(
                rules, config, quality_real.HOLDOUT_CASES, quality_real.HOLDOUT_JUDGED
            )
            print(quality_real.format_real(
                held, show_items=not args.no_items, title="real patches, held out",
                judged=quality_real.HOLDOUT_JUDGED,
            ))
            print()
            result["real, held out"] = held.summary()
    cases = load_cases()
    result["all"] = measure(cases, rules).summary()
    if args.repo_dir is not None:
        config = _repo_config(args.repo_dir)
        result["all, with the repository's config"] = measure(
            cases, rules, lambda case: build_digest(case.facts, rules, "en", repo_config=config)
        ).summary()
    if args.holdout:
        result["tune"] = measure([c for c in cases if not c.holdout], rules).summary()
        result["holdout"] = measure([c for c in cases if c.holdout], rules).summary()
    for name, summary in result.items():
        if name.startswith("real") or name in ("corpus", "writer"):
            continue
        print(format_report(summary, f"digest quality: {name} cases"))
        print()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
