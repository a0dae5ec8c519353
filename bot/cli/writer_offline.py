"""`digest … --writer-dry-run` and `--writer-url`: the writer (issue 41) offline.

The dry run prints the exact chat-completions request the writer would send (the packet
and the prompt) without sending it; `--writer-url` sends it, verifies the reply and
renders the written digest, or the deterministic one with the failure's status."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.core.facts import PullRequestFacts
from bot.core.findings import Digest
from bot.core.vocabulary import Lang
from bot.core.writer.packet import build_packet
from bot.core.writer.request import WriterRequest, build_request
from bot.core.writer.result import WriterResult
from bot.settings import Settings
from bot.writer.client import Endpoint, write

# A base file larger than this is not read for its functions' source.
MAX_BASE_FILE_BYTES = 1_000_000
DRY_RUN_MODEL = "MODEL"


def base_files_from_checkout(repo_dir: Path | None, facts: PullRequestFacts) -> dict[str, str]:
    """The changed Python files' text in the checkout (the PR's base, offline)."""
    if repo_dir is None:
        return {}
    found: dict[str, str] = {}
    root = repo_dir.resolve()
    for changed in facts.files:
        name = changed.previous_filename or changed.filename
        if not name.endswith(".py"):
            continue
        path = (root / name).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            continue
        if path.stat().st_size > MAX_BASE_FILE_BYTES:
            continue
        try:
            found[name] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found


def writer_request(
    digest: Digest, facts: PullRequestFacts, lang: Lang, *, model: str, max_tokens: int,
    base_files: Mapping[str, str],
) -> WriterRequest:
    packet = build_packet(digest, facts, base_files=base_files)
    return build_request(packet, model, lang, max_tokens)


def request_json(request: WriterRequest) -> str:
    """The request as written to a file or stdout: the body sent, pretty and stable."""
    return json.dumps(request.body(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write_offline(
    digest: Digest, facts: PullRequestFacts, lang: Lang, args: argparse.Namespace,
    settings: Settings,
) -> WriterResult:
    """Ask `--writer-url` for the written digest; a failure is a status, never an exit."""
    model = args.writer_model or settings.writer_model or DRY_RUN_MODEL
    packet = build_packet(digest, facts, base_files=base_files_from_checkout(args.repo_dir, facts))
    request = build_request(packet, model, lang,
                            args.writer_max_tokens or settings.writer_max_tokens)
    api_key = settings.writer_api_key.get_secret_value() if settings.writer_api_key else None
    endpoint = Endpoint(args.writer_url, api_key, args.writer_timeout or settings.writer_timeout)
    result = asyncio.run(write(endpoint, request, packet)).result
    if not result.written:
        print(f"digest-bot: writer: {result.status}: {result.reason}; the digest is the rules' "
              "own", file=sys.stderr)
    return result
