"""`.github/pr-digest.yml` is validated like the bundled rules (issue 14 item 7) and any
failure to read it leaves the bundled rules in force with a note (issue 8 item 7).

Before: a 2,000-deep override raised RecursionError out of `rules_for` (every job on the
repository failed and was parked); errors inside an override area cited the line of a
re-dumped bundled-style file (`compile.yaml:3`), unknown `disable:` ids and duplicate
keys passed silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.rules import RuleFileError, match_areas
from bot.core.rules.override import OVERRIDE_PATH, parse_override
from bot.core.rules.parse import read_rule_files
from bot.handlers.repo_rules import RulesProvider
from bot.rulebook.files import read_rule_sources

RULES_DIR = Path(__file__).resolve().parents[3] / "rules"
SOURCES = read_rule_sources(RULES_DIR)
FILES = read_rule_files(SOURCES)

AREA = """\
areas:
  - id: hostile
    title: Hostile
    audience: whoever
    criticality: low
    match: {paths: ['weird/**']}
"""


def problems(text: str) -> list[str]:
    with pytest.raises(RuleFileError) as caught:
        parse_override(FILES, text)
    return [str(problem) for problem in caught.value.problems]


def deep(levels: int) -> str:
    return "areas:\n" + "".join("  " * i + "- \n" for i in range(1, levels)) + "  " * levels + "x\n"


def test_a_2000_deep_override_leaves_the_bundled_rules_with_a_note() -> None:
    provider = RulesProvider(SOURCES)
    repo = provider.rules_from_text("areas: " + "[" * 2000 + "]" * 2000 + "\n")
    assert repo.rules is provider.bundled
    assert repo.problem is not None
    assert repo.problem.startswith(f"{OVERRIDE_PATH}:1: ")
    assert "nest" in repo.problem  # ours, or libyaml's own limit on flow collections
    block = provider.rules_from_text(deep(200))
    assert block.rules is provider.bundled
    assert block.problem is not None
    assert block.problem.startswith(f"{OVERRIDE_PATH}:65: nested deeper")


def test_an_honest_nesting_depth_is_fine() -> None:
    nested = "{paths: ['weird/**']}"
    for _ in range(20):
        nested = "{not: " + nested + "}"
    rules = parse_override(FILES, AREA.replace("{paths: ['weird/**']}", nested))
    assert "hostile" in {area.id for area in rules.areas}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "areas: []\nrouteing: {}\n",
            [f"{OVERRIDE_PATH}:2: unknown key 'routeing'"],
            id="unknown-top-key",
        ),
        pytest.param(
            AREA + "    pathz: [x]\n",
            [f"{OVERRIDE_PATH}:7: rule 'hostile': areas.0: unknown key 'pathz'"],
            id="unknown-area-key",
        ),
        pytest.param(
            AREA.replace("criticality: low", "criticality: extreme"),
            [f"{OVERRIDE_PATH}:5: rule 'hostile': areas.0.criticality: Input should be "
             "'low', 'medium', 'high' or 'critical'"],
            id="bad-value",
        ),
        pytest.param(
            "disable: [docs, no-such-area]\n",
            [f"{OVERRIDE_PATH}:1: disable.1: no bundled area 'no-such-area' (bundled: "],
            id="unknown-disable-id",
        ),
        pytest.param(
            "disable: [docs]\nrisks: {}\ndisable: [ci]\n",
            [f"{OVERRIDE_PATH}:3: duplicate key 'disable'"],
            id="duplicate-key",
        ),
        pytest.param(
            "routing:\n  trusted: ['@someone']\n",
            [f"{OVERRIDE_PATH}:2: routing.trusted: '@someone' is not a GitHub login "
             "(no '@', no 'org/')"],
            id="bad-routing",
        ),
        pytest.param(
            "risks:\n  large_diff_lines: 10\n  backport_patterns: ['(?<!no )backport']\n",
            [f"{OVERRIDE_PATH}:3: risks.backport_patterns: invalid regular expression "
             "'(?<!no )backport': not supported by RE2"],
            id="lookbehind-in-risks",
        ),
        pytest.param(
            AREA.replace("{paths: ['weird/**']}", "{body: '(?=x)'}"),
            [f"{OVERRIDE_PATH}:6: rule 'hostile': areas.0.match.body: invalid regex '(?=x)': "
             "not supported by RE2"],
            id="lookahead-in-area",
        ),
        pytest.param(
            AREA + "    checklist:\n      - id: compile-spawn-tests\n        text: again\n",
            [f"{OVERRIDE_PATH}:8: rule 'hostile': areas.0.checklist.0.id: "
             "'compile-spawn-tests' is already used at compile.yaml"],
            id="checklist-id-taken",
        ),
        pytest.param(
            AREA + "    routing: {labels: [no-such-label]}\n",
            [f"{OVERRIDE_PATH}:7: rule 'hostile': areas.0.routing.labels.0: label "
             "'no-such-label' has no pool in routing.yaml"],
            id="label-without-pool",
        ),
        pytest.param(
            "routing:\n  pools: {}\n",
            [f"{OVERRIDE_PATH}:2: routing.pools: no pool for label "],
            id="kept-area-loses-its-pool",
        ),
        pytest.param(
            "- just a list\n",
            [f"{OVERRIDE_PATH}:1: expected a mapping with areas, disable, routing, risks"
             " or delivery"],
            id="not-a-mapping",
        ),
        pytest.param(
            "areas: [{id: x, bogus: 1}]\n",
            [f"{OVERRIDE_PATH}:1: rule 'x': areas.0: unknown key 'bogus'"],
            id="flow-style",
        ),
    ],
)
def test_each_mistake_names_the_override_file_and_line(text: str, expected: list[str]) -> None:
    found = problems(text)
    for want in expected:
        assert any(got.startswith(want) for got in found), (want, found)


def test_every_problem_is_reported_at_once() -> None:
    text = "disable: [nope]\n" + AREA + "    pathz: [x]\n"
    found = problems(text)
    assert [p.split(":")[1] for p in found] == ["1", "8"], found


def test_a_part_or_an_item_of_the_wrong_kind_hides_nothing_else() -> None:
    # Before (issue 31), any error of the top level stopped the check there: lines 1, 3
    # and 10 only. A refused `routing` is not the bundled one either: the area's label
    # `mine` is not checked against pools the override meant to replace.
    text = (
        "disable: docs\n"
        "areas:\n"
        "  - just a string\n"
        "  - id: hostile\n"
        "    title: Hostile\n"
        "    audience: whoever\n"
        "    criticality: extreme\n"
        "    match: {paths: ['weird/**']}\n"
        "    routing: {labels: [mine]}\n"
        "routing: [mine]\n"
        "risks: {large_diff_lines: lots}\n"
    )
    assert problems(text) == [
        f"{OVERRIDE_PATH}:1: disable: Input should be a valid list",
        f"{OVERRIDE_PATH}:3: areas.0: Input should be a valid dictionary",
        f"{OVERRIDE_PATH}:7: rule 'hostile': areas.1.criticality: Input should be 'low', "
        "'medium', 'high' or 'critical'",
        f"{OVERRIDE_PATH}:10: routing: Input should be a valid dictionary",
        f"{OVERRIDE_PATH}:11: risks.large_diff_lines: Input should be a valid integer, "
        "unable to parse string as an integer",
    ]


def test_a_valid_override_replaces_adds_disables_and_merges_settings() -> None:
    text = (
        "disable: [docs]\n"
        + AREA
        + "  - id: compile\n"
        "    title: Compile (ours)\n"
        "    audience: us\n"
        "    criticality: medium\n"
        "    match: {paths: ['vllm/compilation/**']}\n"
        "routing:\n"
        "  max_reviewers_per_pr: 2\n"
        "risks:\n"
        "  large_diff_lines: 10\n"
    )
    rules = parse_override(FILES, text)
    ids = [area.id for area in rules.areas]
    assert "docs" not in ids
    assert ids.count("compile") == 1
    assert "hostile" in ids
    compile_area = next(area for area in rules.areas if area.id == "compile")
    assert compile_area.title.en == "Compile (ours)"
    assert compile_area.source == OVERRIDE_PATH
    assert rules.routing.max_reviewers_per_pr == 2
    assert rules.routing.pools == FILES.routing.pools  # keys not given stay bundled
    assert rules.risks.large_diff_lines == 10
    assert rules.risks.release_branch_pattern == FILES.risks.release_branch_pattern
    assert rules.version != read_rule_files(SOURCES).version
    facts = PullRequestFacts(files=(ChangedFile(filename="weird/a.py", additions=1),))
    assert "hostile" in {area.id for area in match_areas(facts, rules).areas}


def test_an_empty_override_is_the_bundled_rules() -> None:
    rules = parse_override(FILES, "# nothing yet\n")
    assert [area.id for area in rules.areas] == [rule.id for _, rule in FILES.areas]


def test_the_provider_shows_the_first_problems_in_its_note() -> None:
    provider = RulesProvider(SOURCES)
    repo = provider.rules_from_text("disable: [a, b, c, d, e]\n")
    assert repo.rules is provider.bundled
    assert repo.problem is not None
    assert repo.problem.startswith(f"{OVERRIDE_PATH}:1: disable.0: no bundled area 'a'")
    assert repo.problem.endswith("(and 2 more)")


def test_an_override_written_for_older_rules_still_loads() -> None:
    # `new_model_areas` left the bundled risks.yaml when nothing read it any more; an
    # override that still sets it must keep loading, not be refused as an unknown key.
    rules = parse_override(FILES, "risks:\n  new_model_areas: [models]\n  large_diff_lines: 9\n")
    assert rules.risks.large_diff_lines == 9
    assert problems("risks:\n  new_model_area: [models]\n")  # a misspelt key is refused
