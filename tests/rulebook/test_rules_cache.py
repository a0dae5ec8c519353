"""The compiled-rules cache: a hit gives the same digests as parsing the rules; a stale,
corrupt or foreign entry is ignored (with a log line) and rebuilt, never trusted."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import shutil
from pathlib import Path

import pytest

from bench.bench_match import synthetic_pr, vendored_pr
from bot.cli.main import main
from bot.core.digest import build_digest
from bot.core.facts import PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.rules import RuleSet
from bot.rulebook.cache import FORMAT, RulesCache, cache_key
from bot.rulebook.files import load_rules, load_rules_cached, read_rule_sources

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"
EVENT = ROOT / "tests/fixtures/cli/pr_56904.json"
FILES = ROOT / "tests/fixtures/cli/pr_56904_files.json"


@pytest.fixture
def rules_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "rules"
    shutil.copytree(RULES, copy)
    return copy


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("rules-*.pickle"))


def _filled_cache(tmp_path: Path) -> tuple[Path, Path]:
    """A cache holding the bundled rules' one entry: (the cache folder, the entry)."""
    cache = tmp_path / "cache"
    load_rules_cached(RULES, cache)
    [entry] = _entries(cache)
    return cache, entry


def _refused(cache: Path, sources: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """The cache declines its entry for these sources, with a warning."""
    with caplog.at_level(logging.WARNING, logger="bot.rulebook.cache"):
        assert RulesCache(cache).load(sources) is None


def _digests(facts: PullRequestFacts, rules: RuleSet) -> list[str]:
    out = []
    for lang in ("en", "zh"):
        digest = build_digest(facts, rules, lang, explain=True)
        markdown = render_digest(digest)
        out.append(json.dumps(digest_json(digest, markdown), ensure_ascii=False))
    return out


def test_cached_rules_give_the_same_digests_as_parsed_rules(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    load_rules_cached(RULES, cache)  # builds and stores
    assert len(_entries(cache)) == 1
    cached = RulesCache(cache).load(read_rule_sources(RULES))
    assert cached is not None  # a hit, not another parse
    parsed = load_rules(RULES)
    assert cached.version == parsed.version
    for facts in (synthetic_pr(300), vendored_pr(300)):
        assert _digests(facts, cached) == _digests(facts, parsed)


def test_cli_digest_from_the_cache_equals_the_first_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    args = ["digest", "--event", str(EVENT), "--files", str(FILES), "--format", "json"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert len(_entries(tmp_path / "pr-digest")) == 1  # the first run stored the rules
    assert main(args) == 0
    assert capsys.readouterr().out == first


def test_an_edited_rule_file_is_a_new_key_and_a_rebuild(rules_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    before = load_rules_cached(rules_dir, cache)
    rule = rules_dir / "docs.yaml"
    rule.write_text(rule.read_text().replace("title:", "title:  ", 1))
    sources = read_rule_sources(rules_dir)
    assert RulesCache(cache).load(sources) is None  # the old entry is not this version
    after = load_rules_cached(rules_dir, cache)
    assert after.version != before.version
    assert after.version == load_rules(rules_dir).version
    assert len(_entries(cache)) == 2


def test_a_corrupt_entry_is_logged_ignored_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, entry = _filled_cache(tmp_path)
    data = bytearray(entry.read_bytes())
    data[-100] ^= 0xFF
    entry.write_bytes(bytes(data))
    sources = read_rule_sources(RULES)
    _refused(cache, sources, caplog)
    assert "corrupt" in caplog.text
    rules = load_rules_cached(RULES, cache)  # rebuilt and rewritten
    assert rules.version == load_rules(RULES).version
    assert RulesCache(cache).load(sources) is not None


def test_a_truncated_or_empty_entry_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, entry = _filled_cache(tmp_path)
    sources = read_rule_sources(RULES)
    for cut in (entry.read_bytes()[:-1], b""):
        entry.write_bytes(cut)
        _refused(cache, sources, caplog)
    assert "rules cache" in caplog.text


def test_a_well_formed_entry_that_is_not_a_ruleset_is_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    sources = read_rule_sources(RULES)
    key = cache_key(sources)
    payload = pickle.dumps({"not": "rules"})

    path = RulesCache(cache).path_for(key)
    assert path is not None
    path.write_bytes(FORMAT + key.encode() + b"\n" + hashlib.sha256(payload).digest() + payload)
    path.chmod(0o600)
    _refused(cache, sources, caplog)
    assert "holds dict" in caplog.text


def test_an_entry_written_for_another_key_is_not_used(
    rules_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, entry = _filled_cache(tmp_path)
    rule = rules_dir / "docs.yaml"
    rule.write_text(rule.read_text() + "\n# edited\n")
    other = read_rule_sources(rules_dir)
    target = RulesCache(cache).path_for(cache_key(other))
    assert target is not None
    os.replace(entry, target)  # the bundled rules' entry under the edited rules' name
    _refused(cache, other, caplog)
    assert "not an entry for this rules version" in caplog.text


def test_an_entry_others_can_write_is_not_trusted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache, entry = _filled_cache(tmp_path)
    sources = read_rule_sources(RULES)
    entry.chmod(0o666)
    _refused(cache, sources, caplog)
    assert "not a private file" in caplog.text
    entry.chmod(0o600)
    cache.chmod(0o777)
    assert RulesCache(cache).load(sources) is None
    assert "not a private directory" in caplog.text


def test_an_unwritable_cache_dir_costs_time_not_a_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    rules = load_rules_cached(RULES, blocker / "cache")
    assert rules.version == load_rules(RULES).version
