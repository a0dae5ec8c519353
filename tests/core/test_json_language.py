"""The digest's JSON is data: the same for every language but `lang` and `markdown`
(issue 39). Real vLLM patches, digested as the bench does (bench/quality_real.py) with
the repository's own config at its base."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bench.quality_real import DEFAULT_CONFIG_DIR, REAL_CASES, load_real_cases
from bot.core.digest import build_digest
from bot.core.label_view import summarize
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json, worded_in
from bot.core.render.words import rule_text, verdict_reason
from bot.core.vocabulary import Lang
from bot.handlers.repo_config import DirectorySource, read_config_files
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = load_rules(ROOT / "rules")
CASES = {case.name: case for case in load_real_cases(REAL_CASES)}


def _config() -> Any:
    from bot.core.repo_config.config import read_repo_config

    source = DirectorySource(DEFAULT_CONFIG_DIR)
    return read_repo_config(asyncio.run(read_config_files(source, "checkout")))


CONFIG = _config()


def _json(name: str, lang: Lang) -> dict[str, Any]:
    digest = build_digest(CASES[name].facts, RULES, lang, repo_config=CONFIG)
    return digest_json(digest, render_digest(digest))


def _pick() -> list[str]:
    """Three cases whose digests say the most: risks, areas, a verdict with a lead area."""
    def said(name: str) -> int:
        data = _json(name, "en")
        return len(data["risks"]) + len(data["areas"])

    return sorted(CASES, key=said, reverse=True)[:3]


PICKED = _pick()


@pytest.mark.parametrize("name", PICKED)
def test_the_json_is_the_same_in_every_language_but_lang_and_markdown(name: str) -> None:
    en, zh = _json(name, "en"), _json(name, "zh")
    assert en["risks"], "the case has findings to word"
    assert en["areas"]
    assert (en["lang"], zh["lang"]) == ("en", "zh")
    assert en["markdown"] != zh["markdown"]  # the comment itself is worded in its language
    for data in (en, zh):
        del data["lang"], data["markdown"]
    assert en == zh


def test_findings_carry_their_data_and_the_rule_texts_both_languages() -> None:
    data = _json(PICKED[0], "zh")
    risk = data["risks"][0]
    assert risk["clues"]  # the evidence as data
    assert {clue["kind"] for clue in risk["clues"]} <= {
        "quote", "file", "area", "absent", "base", "diff", "files", "platform", "ci-step"}
    area = data["areas"][0]
    assert set(area["texts"]["title"]) == {"en", "zh"}
    assert data["verdict_grounds"]["files"] == data["files_total"]
    # The worded keys the label view reads are English in a Chinese digest's JSON too.
    assert area["title"] == area["texts"]["title"]["en"]


def test_the_label_view_words_a_chinese_summary_in_chinese() -> None:
    digest = build_digest(CASES[PICKED[0]].facts, RULES, "zh", repo_config=CONFIG)
    payload = digest_json(digest, render_digest(digest))
    summary = summarize(worded_in(payload, digest, "zh"))
    assert digest.verdict_grounds is not None
    assert summary.who == tuple(rule_text(area.title, "zh") for area in digest.areas)
    assert summary.verdict_reason == verdict_reason(digest.verdict_grounds, digest.areas, "zh")
    assert summary.verdict_reason != payload["verdict_reason"]  # the JSON's is English
