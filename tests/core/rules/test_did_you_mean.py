"""An unknown key names the key meant (issue 43 item 6): `routng` -> `routing`, at every
nesting level the schema defines (top, inside routing, a pool, an area, its match)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.routing.config import RoutingConfig
from bot.core.rules import RuleFileError, parse_rules
from bot.core.rules.override import parse_override
from bot.core.rules.parse import read_rule_files
from bot.core.rules.schema import AreaRule
from bot.core.rules.suggest import allowed_keys, nearest
from bot.rulebook.files import read_rule_sources

FILES = read_rule_files(read_rule_sources(Path(__file__).resolve().parents[3] / "rules"))

AREA = """\
  - id: hostile
    title: Hostile
    audience: whoever
    criticality: low
"""


def problems(text: str) -> list[str]:
    with pytest.raises(RuleFileError) as caught:
        parse_override(FILES, text)
    return [str(problem) for problem in caught.value.problems]


def test_every_level_of_the_override_names_the_key_meant() -> None:
    found = problems(
        "routng: {}\n"
        "routing:\n"
        "  max_reviewer_per_pr: 2\n"
        "  pools:\n"
        "    torch.compile: {usrs: [a], cap: 1}\n"
        "areas:\n" + AREA +
        "    mach: {paths: ['weird/**']}\n"
        "  - id: other\n    title: O\n    audience: a\n    criticality: low\n"
        "    match: {pths: ['weird/**']}\n"
    )
    assert ".github/pr-digest.yml:1: unknown key 'routng' (did you mean 'routing'?)" in found
    assert (".github/pr-digest.yml:3: routing: unknown key 'max_reviewer_per_pr' "
            "(did you mean 'max_reviewers_per_pr'?)") in found
    assert any(p.startswith(".github/pr-digest.yml:5: ") and
               "unknown key 'usrs' (did you mean 'users'?)" in p for p in found)
    assert (".github/pr-digest.yml:11: rule 'hostile': areas.0: unknown key 'mach' "
            "(did you mean 'match'?)") in found
    assert (".github/pr-digest.yml:16: rule 'other': areas.1.match: unknown key 'pths' "
            "(did you mean 'paths'?)") in found


def test_a_key_nothing_resembles_gets_no_guess() -> None:
    [found] = problems("risks:\n  zzzzzz: 1\n")
    assert found == ".github/pr-digest.yml:2: risks: unknown key 'zzzzzz'"


def test_the_bundled_rule_files_get_the_same_hint() -> None:
    sources = read_rule_sources(Path(__file__).resolve().parents[3] / "rules")
    sources["compile.yaml"] = sources["compile.yaml"].replace("title:", "titel:", 1)
    with pytest.raises(RuleFileError) as caught:
        parse_rules(sources)
    assert any("unknown key 'titel' (did you mean 'title'?)" in str(p)
               for p in caught.value.problems)


def test_allowed_keys_follow_lists_mappings_and_optional_parts() -> None:
    assert "paths" in allowed_keys(AreaRule, ("match",))
    assert "users" in allowed_keys(RoutingConfig, ("pools", "any-label"))
    assert allowed_keys(RoutingConfig, ("no", "such", "place")) == ()


def test_nearest_is_difflib_close_or_a_case_slip() -> None:
    assert nearest("routng", ["areas", "disable", "routing", "risks"]) == "routing"
    assert nearest("ROUTING", ["routing"]) == "routing"
    assert nearest("xyz", ["routing"]) is None
