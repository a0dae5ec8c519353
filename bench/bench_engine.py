"""Digest a 3,000-file PR with patches: time and memory of the whole pure pipeline.

Run: python -m bench.bench_engine
Baselines from the same run: parsing the PR-files JSON into models (what any bot must
do before it can look at the files) and rendering alone. Ratios hold on a noisy
machine; absolute times don't.
"""

from __future__ import annotations

import json
import resource
import tracemalloc
from pathlib import Path

from bench.bench_match import _row, synthetic_pr, timings
from bot.core.digest import build_digest
from bot.core.pr_object import changed_files
from bot.core.render import render_digest
from bot.rules_files import load_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"


def main() -> None:
    rules = load_rules(RULES_DIR)
    pr = synthetic_pr(3000)
    files_json = json.dumps([f.model_dump() for f in pr.files])
    patch_bytes = sum(len(f.patch or "") for f in pr.files)

    parse = timings(5, lambda: changed_files(json.loads(files_json)))
    digest = build_digest(pr, rules, "en")
    build = timings(5, lambda: build_digest(pr, rules, "en"))
    render = timings(5, lambda: render_digest(digest))
    full = timings(5, lambda: render_digest(build_digest(pr, rules, "en")))

    tracemalloc.start()
    markdown = render_digest(build_digest(pr, rules, "zh"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"PR: {len(pr.files)} files, {patch_bytes / 1e6:.1f} MB of patches, "
          f"{len(rules.areas)} area rules; verdict {digest.verdict}, "
          f"{len(digest.areas)} areas, {len(digest.risks)} risks, {len(digest.symbols)} symbols")
    print(_row("floor: parse files JSON:", parse))
    print(_row("build_digest:", build))
    print(_row("render_digest:", render))
    print(_row("digest + render (total):", full))
    print(f"total / floor: {min(full) / min(parse):.1f}x   comment: {len(markdown):,} chars "
          f"(budget 60,000)")
    print(f"peak Python allocations during one digest: {peak / 1e6:.1f} MB; "
          f"process max RSS: {rss_mb:.0f} MB")


if __name__ == "__main__":
    main()
