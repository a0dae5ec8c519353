"""`python -m bench writer …`: the writer (issue 41) on the real-PR corpus.

- `requests OUTDIR [--only prN…] [--lang en|zh] [--model M]`: one request JSON per case
  (`OUTDIR/pr<N>.json`, the exact body the writer would send), built from the digest
  the corpus report renders (bench/corpus/cases.py: the case's event and files, its base
  release's config, no thread).
- `run --url URL --model M [--only …] [--lang] [--timeout S]`: sends them, verifies each
  reply and reports per PR: items kept, dropped by reason, tokens in/out, latency.
- `replay DIR [--only …] [--lang] [--out OUTDIR]`: the same from recorded completions
  (`DIR/pr<N>.json`, the raw assistant message content); `--out` writes each written
  digest's Markdown (`OUTDIR/pr<N>.md`) for blind judging.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.corpus.cases import CorpusCase, base_config, load_corpus, rules
from bot.cli.writer_offline import DRY_RUN_MODEL, request_json
from bot.core.digest import build_digest
from bot.core.findings import Digest
from bot.core.render.comment import render_digest
from bot.core.vocabulary import Lang
from bot.core.writer.packet import Packet, build_packet
from bot.core.writer.request import DEFAULT_MAX_TOKENS, WriterRequest, build_request
from bot.core.writer.result import WriterResult
from bot.core.writer.verify import verify
from bot.writer.client import Endpoint, write


def case_digest(case: CorpusCase, lang: Lang) -> Digest:
    return build_digest(case.facts, rules(), lang, repo_config=base_config(case.base_release))


def case_request(
    case: CorpusCase, lang: Lang, model: str, max_tokens: int = DEFAULT_MAX_TOKENS
) -> tuple[Digest, Packet, WriterRequest]:
    digest = case_digest(case, lang)
    packet = build_packet(digest, case.facts)
    return digest, packet, build_request(packet, model, lang, max_tokens)


def write_requests(out: Path, only: Sequence[str], lang: Lang, model: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for case in load_corpus(only=only):
        _, packet, request = case_request(case, lang, model)
        path = out / f"{case.name}.json"
        path.write_text(request_json(request), encoding="utf-8")
        written.append(path)
        print(f"{case.name}: {packet.tokens} tokens in the packet"
              + (f", cut: {'; '.join(packet.budget_cuts)}" if packet.budget_cuts else ""))
    return written


@dataclass(frozen=True)
class Row:
    name: str
    result: WriterResult
    latency: float


def report(rows: Sequence[Row]) -> str:
    out = ["| PR | status | kept | dropped (by reason) | tokens in/out | latency s |",
           "| --- | --- | ---: | --- | ---: | ---: |"]
    reasons: Counter[str] = Counter()
    kept = dropped = 0
    for row in rows:
        r = row.result
        by = Counter(d.reason for d in r.dropped)
        reasons.update(by)
        kept += len(r.items)
        dropped += len(r.dropped)
        out.append(f"| {row.name} | {r.status} | {len(r.items)} | "
                   f"{', '.join(f'{k} {v}' for k, v in sorted(by.items())) or '—'} | "
                   f"{r.tokens.prompt}/{r.tokens.completion} | {row.latency:.2f} |")
    total = kept + dropped
    statuses = Counter(row.result.status for row in rows)
    out += ["", f"{len(rows)} PRs · statuses: "
            + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
            + f" · items kept {kept}, dropped {dropped}"
            + (f" ({100 * dropped / total:.0f}%)" if total else "")
            + (" · dropped by reason: " + ", ".join(f"{k} {v}" for k, v in
                                                    reasons.most_common()) if reasons else "")]
    return "\n".join(out)


def run_corpus(url: str, model: str, only: Sequence[str], lang: Lang, timeout: float,
               api_key: str | None = None) -> list[Row]:
    rows = []
    endpoint = Endpoint(url, api_key, timeout)
    for case in load_corpus(only=only):
        _, packet, request = case_request(case, lang, model)
        written = asyncio.run(write(endpoint, request, packet))
        rows.append(Row(case.name, written.result, written.latency))
    return rows


def replay_corpus(directory: Path, only: Sequence[str], lang: Lang, out: Path | None
                  ) -> list[Row]:
    rows = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for case in load_corpus(only=only):
        recorded = directory / f"{case.name}.json"
        if not recorded.is_file():
            continue
        digest, packet, _ = case_request(case, lang, "recorded")
        started = time.monotonic()
        result = verify(packet, recorded.read_text(encoding="utf-8"), model="recorded",
                        lang=lang)
        rows.append(Row(case.name, result, time.monotonic() - started))
        if out is not None:
            markdown = "" if digest.verdict == "quiet" else render_digest(digest, written=result)
            (out / f"{case.name}.md").write_text(markdown, encoding="utf-8")
    return rows


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench writer")
    sub = parser.add_subparsers(dest="command", required=True)
    requests = sub.add_parser("requests", help="write one request JSON per corpus case")
    requests.add_argument("out", type=Path, metavar="OUTDIR")
    requests.add_argument("--only", nargs="*", default=(), metavar="prN")
    requests.add_argument("--lang", choices=("en", "zh"), default="en")
    requests.add_argument("--model", default=DRY_RUN_MODEL)
    run = sub.add_parser("run", help="send the corpus' requests to an endpoint and report")
    run.add_argument("--url", required=True)
    run.add_argument("--model", required=True)
    run.add_argument("--timeout", type=float, default=120.0)
    run.add_argument("--only", nargs="*", default=(), metavar="prN")
    run.add_argument("--lang", choices=("en", "zh"), default="en")
    replay = sub.add_parser("replay", help="verify recorded completions DIR/pr<N>.json")
    replay.add_argument("dir", type=Path, metavar="DIR")
    replay.add_argument("--only", nargs="*", default=(), metavar="prN")
    replay.add_argument("--lang", choices=("en", "zh"), default="en")
    replay.add_argument("--out", type=Path, default=None, metavar="OUTDIR")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command == "requests":
        written = write_requests(args.out, args.only, args.lang, args.model)
        print(f"{len(written)} requests in {args.out}")
        return 0
    if args.command == "run":
        print(report(run_corpus(args.url, args.model, args.only, args.lang, args.timeout)))
        return 0
    rows = replay_corpus(args.dir, args.only, args.lang, args.out)
    if not rows:
        print(f"no recorded completions (pr<N>.json) in {args.dir}")
        return 2
    print(report(rows))
    return 0
