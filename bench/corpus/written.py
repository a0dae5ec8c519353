"""The corpus digests with the writer's recorded completions (issue 41).

A recorded completion (`DIR/pr<N>.json`: the raw assistant message content a model gave
for the exact request `python -m bench writer requests` writes) is verified against the
case's packet and rendered into the digest as the service would post it after the
writer's edit. The same `Rendered` shape as `render_case`, so the blind-judging packets,
the merge of judgements and the quality report work on either variant.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from bench.corpus.cases import ROOT, CorpusCase, Rendered, base_config, render_case, rules
from bench.corpus.cut import CutError, ReleaseRepo
from bench.corpus.releases import cache_dir, repo_dir
from bot.core.digest import build_digest
from bot.core.findings import Digest
from bot.core.render.comment import render_digest
from bot.core.vocabulary import Lang
from bot.core.writer.packet import Packet, build_packet
from bot.core.writer.request import DEFAULT_MAX_TOKENS, WriterRequest, build_request
from bot.core.writer.result import WriterResult
from bot.core.writer.verify import verify

COMPLETIONS = ROOT / "tests/fixtures/writer/completions"
WRITER_JUDGED = ROOT / "bench/judged/writer"


@cache
def _release_repo() -> ReleaseRepo | None:
    try:
        return ReleaseRepo(repo_dir(cache_dir()))
    except CutError:
        return None


def base_files(case: CorpusCase) -> dict[str, str]:
    """Each changed file's text at the case's base release, as the service reads it from
    the base commit; empty when the release repository is not on this machine (the packet
    then says no base source was given)."""
    repo = _release_repo()
    if repo is None:
        return {}
    found = {}
    for changed in case.facts.files:
        path = changed.previous_filename or changed.filename
        try:
            text = repo.text(case.base_release, path)
        except CutError:
            continue
        if text is not None:
            found[path] = text
    return found


def case_digest(case: CorpusCase, lang: Lang) -> Digest:
    return build_digest(case.facts, rules(), lang, repo_config=base_config(case.base_release))


def case_request(
    case: CorpusCase, lang: Lang, model: str, max_tokens: int = DEFAULT_MAX_TOKENS
) -> tuple[Digest, Packet, WriterRequest]:
    digest = case_digest(case, lang)
    packet = build_packet(digest, case.facts, base_files=base_files(case))
    return digest, packet, build_request(packet, model, lang, max_tokens)


def written_result(case: CorpusCase, completion: str, lang: Lang = "en"
                   ) -> tuple[Digest, WriterResult]:
    digest, packet, _ = case_request(case, lang, "recorded")
    return digest, verify(packet, completion, model="recorded", lang=lang)


def renderer(directory: Path) -> Callable[[CorpusCase], Rendered]:
    """`render_case` with each case's recorded completion in `directory` applied; a case
    with none renders as today (the writer's fallback)."""

    def render(case: CorpusCase) -> Rendered:
        recorded = directory / f"{case.name}.json"
        if not recorded.is_file():
            return render_case(case)
        digest, result = written_result(case, recorded.read_text(encoding="utf-8"))
        body = render_digest(digest, written=result)
        posted = "" if digest.verdict == "quiet" else body
        return Rendered(digest.verdict, digest.reading_minutes, posted, body)

    return render
