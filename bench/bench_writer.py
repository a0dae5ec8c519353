"""`python -m bench writer …`: the writer (issue 41) on the real-PR corpus.

- `requests OUTDIR [--only prN…] [--lang en|zh] [--model M]`: one request JSON per case
  (`OUTDIR/pr<N>.json`, the exact body the writer would send), built from the digest
  the corpus report renders (bench/corpus/cases.py: the case's event and files, its base
  release's config, no thread).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.corpus.cases import CorpusCase, base_config, load_corpus, rules
from bot.cli.writer_offline import DRY_RUN_MODEL, request_json
from bot.core.digest import build_digest
from bot.core.findings import Digest
from bot.core.vocabulary import Lang
from bot.core.writer.packet import Packet, build_packet
from bot.core.writer.request import DEFAULT_MAX_TOKENS, WriterRequest, build_request


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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench writer")
    sub = parser.add_subparsers(dest="command", required=True)
    requests = sub.add_parser("requests", help="write one request JSON per corpus case")
    requests.add_argument("out", type=Path, metavar="OUTDIR")
    requests.add_argument("--only", nargs="*", default=(), metavar="prN")
    requests.add_argument("--lang", choices=("en", "zh"), default="en")
    requests.add_argument("--model", default=DRY_RUN_MODEL)
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command == "requests":
        written = write_requests(args.out, args.only, args.lang, args.model)
        print(f"{len(written)} requests in {args.out}")
        return 0
    return 2
