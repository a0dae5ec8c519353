"""`python -m bench neighbours [--out DIR]`: how often each neighbours signal fires on the
real-PR corpus (issue 42).

The corpus holds no snapshot of vLLM's open PRs, so the cases of one release window
(`source.release_pair`: they were open in the same weeks) stand in as each other's open
PRs. For every case: other PRs changing the same function / the same file, fixing the
same issue, with a near-identical title and files; dependencies it states; conflicts
(never: the corpus has no `mergeable_state`). With `--out`, each fired item is written
as one line of `items.jsonl` (the PR, its neighbour's number, reason and what is shared,
both titles) for a blind judge, who answers whether a reviewer of the PR would want it."""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bot.core.neighbours.dependencies import find_dependencies
from bot.core.neighbours.find import OpenPrIndex, find_neighbours
from bot.core.neighbours.model import OpenPr
from bot.core.neighbours.record import record_from_facts
from bot.core.pr_object import changed_files, facts_from_pull_request, pull_request_object

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cases" / "real" / "corpus"


def _case(path: Path) -> tuple[str, OpenPr, dict[str, Any]]:
    case = json.loads(path.read_text())
    pr = pull_request_object(case["event"])
    facts = facts_from_pull_request(pr, changed_files(case.get("files") or []))
    record = record_from_facts(facts).model_copy(update={"state": "open"})
    window = "-".join(case.get("source", {}).get("release_pair") or ["?"])
    return window, record, case


def _author_comments(case: dict[str, Any], author: str) -> list[str]:
    return [str(item.get("text", "")) for item in case.get("thread") or []
            if item.get("kind") == "comment" and str(item.get("author", "")).casefold()
            == author.casefold()]


def measure(corpus: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    windows: dict[str, list[tuple[OpenPr, dict[str, Any]]]] = defaultdict(list)
    for path in sorted(corpus.glob("pr*.json")):
        window, record, case = _case(path)
        windows[window].append((record, case))
    fired: Counter[str] = Counter()
    prs_with: Counter[str] = Counter()
    items: list[dict[str, Any]] = []
    cases = 0
    for window, members in sorted(windows.items()):
        index = OpenPrIndex(record for record, _ in members)
        for record, case in members:
            cases += 1
            body = str(pull_request_object(case["event"]).body or "")
            refs = find_dependencies(body, _author_comments(case, record.author),
                                     own=record.number)
            found = find_neighbours(record, index, dependencies=refs)
            reasons = {n.reason for n in found.neighbours}
            for neighbour in found.neighbours:
                fired[neighbour.reason] += 1
                items.append({"window": window, "pr": record.number, "title": record.title,
                              "neighbour": neighbour.number, "neighbour_title": neighbour.title,
                              "reason": neighbour.reason, "shared": list(neighbour.shared)})
            for dependency in found.dependencies:
                fired["dependency"] += 1
                items.append({"window": window, "pr": record.number, "title": record.title,
                              "dependency": dependency.number, "cue": dependency.cue})
            for reason in reasons | ({"dependency"} if found.dependencies else set()):
                prs_with[reason] += 1
            if found.live.conflicts:
                prs_with["conflicts"] += 1
    report = {
        "cases": cases, "windows": len(windows),
        "largest_window": max((len(m) for m in windows.values()), default=0),
        "signals": {reason: {"items": fired[reason], "prs": prs_with[reason]}
                    for reason in ("same-issue", "same-title", "same-function", "same-file",
                                   "dependency", "conflicts")},
    }
    return report, items


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench neighbours")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=None,
                        help="write items.jsonl (one fired item a line) for a blind judge")
    args = parser.parse_args(argv)
    report, items = measure(args.corpus)
    print(json.dumps(report, indent=2))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        with (args.out / "items.jsonl").open("w", encoding="utf-8") as out:
            for item in items:
                out.write(json.dumps(item) + "\n")
        print(f"{len(items)} items written to {args.out / 'items.jsonl'}")
    return 0
