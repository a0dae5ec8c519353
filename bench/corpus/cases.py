"""The corpus cases (tests/fixtures/cases/real/corpus/pr<N>.json) and their digests.

Each case is digested as the service would digest it when the PR was opened: from its
`pull_request` event and files, with the repository config of its base release
(tests/fixtures/vllm_config/<release A>/), without the thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bot.core.digest import build_digest
from bot.core.facts import PullRequestFacts
from bot.core.pr_object import changed_files, facts_from_pull_request, pull_request_object
from bot.core.render.comment import render_digest
from bot.core.repo_config.config import RepoConfig, read_repo_config
from bot.core.rules import RuleSet
from bot.handlers.repo_config import DirectorySource, read_config_files
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests/fixtures/cases/real/corpus"
CONFIGS = ROOT / "tests/fixtures/vllm_config"
RULES = ROOT / "rules"


@dataclass(frozen=True)
class CorpusCase:
    name: str
    number: int
    facts: PullRequestFacts
    holdout: bool
    base_release: str
    areas: tuple[str, ...]
    raw: dict[str, Any]


class CorpusError(ValueError):
    """A case file that is not the documented shape, or whose base config is missing."""


def load_case(path: Path) -> CorpusCase:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        pr = pull_request_object(raw["event"])
        facts = facts_from_pull_request(pr, changed_files(raw["files"]))
        return CorpusCase(
            name=str(raw["name"]),
            number=int(raw["event"]["pull_request"]["number"]),
            facts=facts,
            holdout=bool(raw["holdout"]),
            base_release=str(raw["source"]["release_pair"][0]),
            areas=tuple(raw.get("areas_truth") or ()),
            raw=raw,
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        raise CorpusError(f"{path}: not a corpus case: {error}") from error


def load_corpus(directory: Path = CORPUS, only: Sequence[str] = ()) -> list[CorpusCase]:
    wanted = set(only)
    cases = [
        load_case(p) for p in sorted(directory.glob("pr*.json")) if not wanted or p.stem in wanted
    ]
    return sorted(cases, key=lambda c: c.number)


@cache
def base_config(release: str, root: Path = CONFIGS) -> RepoConfig:
    directory = root / release
    if not directory.is_dir():
        raise CorpusError(
            f"no repository config for {release}: run `python -m bench corpus config {release}`"
        )
    files = asyncio.run(read_config_files(DirectorySource(directory), f"checkout {directory}"))
    return read_repo_config(files)


@cache
def rules() -> RuleSet:
    return load_rules(RULES)


@dataclass(frozen=True)
class Rendered:
    verdict: str
    minutes: int
    markdown: str  # "" when the bot posts nothing (a quiet PR)
    body: str  # what render_digest gives, even for a quiet PR


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_sha(document: str) -> str:
    """sha256 of digest.md without its hidden marker line. The marker names the rules'
    version, which any rule edit moves, while no reader sees it (JUDGE.md: not an item):
    a digest whose visible and collapsed text is unchanged keeps its judged points."""
    first, _, rest = document.partition("\n")
    return sha256(rest if first.startswith("<!-- pr-digest ") else document)


def digest_document(rendered: Rendered) -> str:
    """digest.md: the posted Markdown, or a line saying nothing is posted (a quiet PR).
    Its sha256 is the `digest:` a judgement records and the report compares."""
    return rendered.markdown or (
        "_(No comment is posted on this PR: the digest's verdict is **quiet**, "
        "so the bot stays silent.)_\n"
    )


def render_case(
    case: CorpusCase, rule_set: RuleSet | None = None, config: RepoConfig | None = None
) -> Rendered:
    """The digest as the bot posts it when the PR is opened (a quiet PR gets no comment)."""
    digest = build_digest(
        case.facts, rule_set or rules(), "en", repo_config=config or base_config(case.base_release)
    )
    body = render_digest(digest)
    posted = "" if digest.verdict == "quiet" else body
    return Rendered(digest.verdict, digest.reading_minutes, posted, body)


def import_legacy(path: Path, *, holdout: bool) -> Iterator[dict[str, Any]]:
    """Old-style cases (a list in one file) as corpus cases: same fields, plus the thread
    (none was captured) and the held-out mark."""
    for raw in json.loads(path.read_text(encoding="utf-8")):
        case = dict(raw)
        case.setdefault("thread", [])
        case["holdout"] = holdout
        source = dict(case["source"])
        source.setdefault("imported_from", f"tests/fixtures/cases/real/{path.name}")
        case["source"] = source
        yield case
