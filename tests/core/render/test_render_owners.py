"""The owners part of the digest when CODEOWNERS matching ran out of budget (issue 38,
item 4): the owners found are shown, and one line says how many files' owners are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.findings import Digest, Owners
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.render.sections import who_lines
from bot.core.repo_config.codeowners import parse_codeowners
from bot.core.repo_config.config import RepoConfig
from bot.core.vocabulary import Lang
from bot.rulebook.files import load_rules
from tests.golden_files import assert_golden

ROOT = Path(__file__).resolve().parents[3]
RULES = load_rules(ROOT / "rules")
FILES = ("docs/usage.md", "vllm/v1/worker/gpu_model_runner.py", "vllm/v1/worker/utils.py",
         "vllm/compilation/backends.py")


def _facts(paths: tuple[str, ...]) -> PullRequestFacts:
    return PullRequestFacts(
        number=60002, title="[Core] Tidy the worker", head_sha="b" * 40,
        body="## Purpose\nTidy.\n\n## Test Plan\npytest tests/v1\n\n## Test Result\npassed\n",
        files=tuple(ChangedFile(filename=p, additions=2, deletions=1) for p in paths),
        changed_files=len(paths), additions=2 * len(paths), deletions=len(paths))


def _cut(lang: Lang) -> Digest:
    config = RepoConfig(source="base 1a2b3c4",
                        codeowners=parse_codeowners("/docs/ @docs-owner\n"))
    digest = build_digest(_facts(FILES), RULES, lang, repo_config=config)
    # As owners_for leaves it when the budget ran out after the first path.
    owners = Owners(users=("docs-owner",), by_file=(("docs/usage.md", ("@docs-owner",)),),
                    unmatched=FILES[1:])
    return digest.model_copy(update={"owners": owners})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_golden_owners_cut_short(lang: Lang) -> None:
    assert_golden(f"owners_cut.{lang}.md", render_digest(_cut(lang)))


def test_the_cut_line_counts_the_files_left_and_follows_the_owners_found() -> None:
    lines = list(who_lines(_cut("en")))
    assert lines[-1] == (
        "- Code owners of 3 files are not shown: the base's CODEOWNERS has too many wildcard "
        "rules to match every changed file.")
    assert any("docs-owner" in line for line in lines[:-1])


def test_no_cut_no_line() -> None:
    lines = list(who_lines(_cut("en").model_copy(update={"owners": Owners()})))
    assert not any("not shown" in line for line in lines)


def test_a_glob_bomb_digest_says_it_was_cut_in_the_comment_and_the_json() -> None:
    bomb = "".join(f"**/v*{i}q*/** @bomb{i}\n" for i in range(3_000))
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(bomb))
    paths = tuple(f"vllm/v1/worker/part_{i}.py" for i in range(200))
    digest = build_digest(_facts(paths), RULES, "en", repo_config=config)
    assert digest.owners is not None
    unmatched = len(digest.owners.unmatched)
    assert 0 < unmatched < 200
    assert digest.owners.unowned == paths[: 200 - unmatched]
    markdown = render_digest(digest)
    assert f"Code owners of {unmatched} files are not shown" in markdown
    assert digest_json(digest, markdown)["owners"]["unmatched_files"] == unmatched


def test_the_author_is_not_among_the_code_owners_who_should_read_it() -> None:
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(
        "/vllm/compilation/ @Author-Login @compile-owner\n/docs/ @author-login\n"))
    facts = _facts(FILES).model_copy(update={"author": "author-login"})
    digest = build_digest(facts, RULES, "en", repo_config=config)
    assert digest.owners is not None
    assert digest.owners.by_file == (("vllm/compilation/backends.py", ("@compile-owner",)),)
    assert [u.lower() for u in digest.owners.users] == ["compile-owner"]
    markdown = render_digest(digest)
    assert "compile-owner" in markdown
    assert "author-login" not in markdown.lower()
    # Someone else's PR lists them as usual.
    other = build_digest(_facts(FILES), RULES, "en", repo_config=config)
    assert other.owners is not None
    assert len(other.owners.by_file) == 2
