"""Reviewer choice from label pools, suggested reviewers, and the area-label plan."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.render.i18n import CATALOGUE
from bot.core.routing.config import RoutingConfig
from bot.core.routing.reviewers import (
    SKIP_REASONS,
    RoutingPlan,
    RoutingRequest,
    choose_reviewers,
    plan_labels,
    suggested_reviewers,
)
from bot.core.vocabulary import Reviewers

ROOT = Path(__file__).resolve().parents[3]


def _config(pools: Mapping[str, Any], **extra: Any) -> RoutingConfig:
    return RoutingConfig.model_validate({"pools": pools, **extra})


def _route(pools: Mapping[str, Any], labels: tuple[str, ...], **fields: Any) -> RoutingPlan:
    config_extra = fields.pop("config_extra", {})
    request = RoutingRequest(
        repo=fields.pop("repo", "vllm-project/vllm"),
        number=fields.pop("number", 1234),
        author=fields.pop("author", "contributor"),
        labels=labels,
        config=_config(pools, **config_extra),
        **fields,
    )
    return choose_reviewers(request)


VLLM_POOLS: dict[str, Any] = {
    "torch.compile": {"users": ["ProExpertProg", "zou3519", "youkaichao"], "cap": 1},
    "multi-modality": {
        "users": ["DarkLight1337", "ywang96", "Isotr0py", "NickLucche"],
        "cap": 2,
    },
    "frontend": {
        "users": ["DarkLight1337", "njhill", "aarnphm", "chaunceyjiang", "simon-mo"],
        "cap": 1,
    },
    "rocm": {"users": ["gshtras", "tjtanaa"], "teams": ["rocm-reviewers"], "cap": 2},
    "ci/build": {"users": [], "teams": ["ci-owners"], "cap": 1},
}


# --- determinism --------------------------------------------------------------


def test_same_inputs_same_plan() -> None:
    labels = ("multi-modality", "torch.compile", "frontend")
    first = _route(VLLM_POOLS, labels)
    assert first.users  # something was picked, so equality below means something
    assert all(_route(VLLM_POOLS, labels) == first for _ in range(5))


def test_input_order_does_not_matter() -> None:
    labels = ["multi-modality", "torch.compile", "frontend", "rocm", "bug"]
    requested = ["zou3519", "someone-else"]
    expected = _route(VLLM_POOLS, tuple(labels), already_requested_users=tuple(requested))
    rng = random.Random(7)
    for _ in range(20):
        pools = {
            label: {**pool, "users": rng.sample(pool["users"], len(pool["users"]))}
            for label, pool in VLLM_POOLS.items()  # pool order is priority (documented)
        }
        shuffled_labels = tuple(rng.sample(labels, len(labels)))
        shuffled_requested = tuple(rng.sample(requested, len(requested)))
        plan = _route(pools, shuffled_labels, already_requested_users=shuffled_requested)
        assert set(plan.users) == set(expected.users)
        assert set(plan.because) == set(expected.because)
        assert plan.skipped == expected.skipped


def test_same_picks_in_a_process_with_another_hash_seed() -> None:
    """Python's hash() is salted per process; the picks must not be."""
    script = (
        "import json\n"
        "from bot.core.routing.reviewers import RoutingRequest, choose_reviewers\n"
        "from bot.core.routing.config import RoutingConfig\n"
        "cfg = RoutingConfig.model_validate({'pools': {'x': {'users': "
        "['a1', 'b2', 'c3', 'd4', 'e5', 'f6'], 'cap': 2}}})\n"
        "print(json.dumps([list(choose_reviewers(RoutingRequest(repo='o/r', number=n, "
        "author='z', labels=('x',), config=cfg)).users) for n in range(30)]))\n"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env=env,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert len({tuple(users) for users in outputs[0]}) > 1


def test_every_eligible_member_gets_picked_across_200_prs() -> None:
    pool = {"area": {"users": ["a", "b", "c", "d", "e"], "cap": 2}}
    counts: Counter[str] = Counter()
    distinct = set()
    for number in range(1, 201):
        plan = _route(pool, ("area",), number=number, author="b")
        assert len(plan.users) == 2
        assert "b" not in plan.users
        counts.update(plan.users)
        distinct.add(frozenset(plan.users))
    assert set(counts) == {"a", "c", "d", "e"}
    # 400 picks over 4 people: 100 each on average; a fair hash stays well inside this.
    assert all(60 <= n <= 140 for n in counts.values()), counts
    assert len(distinct) == 6  # every pair of the four appears


def test_explicit_seed_overrides_repo_and_number() -> None:
    pool = {"area": {"users": [f"u{i}" for i in range(8)], "cap": 1}}
    by_seed = {_route(pool, ("area",), number=n, seed="fixed").users for n in range(20)}
    assert len(by_seed) == 1
    by_number = {_route(pool, ("area",), number=n).users for n in range(20)}
    assert len(by_number) > 1


# --- exclusions -----------------------------------------------------------------

EXCLUSIONS: list[tuple[str, dict[str, Any], str]] = [
    ("author", {"author": "bob"}, "author"),
    ("author-case", {"author": "BOB"}, "author"),
    ("away-config", {"config_extra": {"away": ["bob"]}}, "away"),
    ("away-extra", {"away": ("Bob",)}, "away"),
    ("requested", {"already_requested_users": ("bob",)}, "already-requested"),
    ("reviewed", {"already_reviewed": ("bob",)}, "already-reviewed"),
    ("removed", {"removed_by_humans": ("bob",)}, "removed-by-human"),
    ("not-collaborator", {"collaborators_ok": {"bob": False, "ann": True}}, "not-collaborator"),
    ("refused", {"refused": ("BOB",)}, "refused"),
]


@pytest.mark.parametrize(
    ("fields", "reason"), [(f, r) for _, f, r in EXCLUSIONS], ids=[i for i, _, _ in EXCLUSIONS]
)
def test_exclusion(fields: dict[str, Any], reason: str) -> None:
    pool = {"area": {"users": ["ann", "bob", "cid", "dee"], "cap": 5}}
    # bob has the lightest load, so only the exclusion can keep him out.
    load = {"ann": 3, "bob": 0, "cid": 3, "dee": 3}
    plan = _route(pool, ("area",), open_review_load=load, **fields)
    assert "bob" not in {u.casefold() for u in plan.users}
    assert ("bob", reason) in plan.skipped
    assert reason in SKIP_REASONS


def test_without_exclusions_bob_is_picked() -> None:
    pool = {"area": {"users": ["ann", "bob", "cid", "dee"], "cap": 1}}
    plan = _route(pool, ("area",), open_review_load={"ann": 3, "bob": 0, "cid": 3, "dee": 3})
    assert plan.users == ("bob",)


def test_unknown_collaborator_status_is_assumed_ok() -> None:
    pool = {"area": {"users": ["ann", "bob"], "cap": 2}}
    plan = _route(pool, ("area",), collaborators_ok={"ann": True})
    assert set(plan.users) == {"ann", "bob"}


def test_removed_by_human_never_requested_even_when_needed() -> None:
    pool = {"area": {"users": ["ann", "bob"], "cap": 2}}
    plan = _route(pool, ("area",), removed_by_humans=("ann", "bob"))
    assert plan.users == ()
    assert set(plan.skipped) == {("ann", "removed-by-human"), ("bob", "removed-by-human")}


def test_skip_reasons_are_in_the_catalogue() -> None:
    for reason in SKIP_REASONS:
        assert set(CATALOGUE[f"routing.skipped.{reason}"]) == {"en", "zh"}


# --- caps -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cap", "requested", "reviewed", "new_picks"),
    [
        (2, (), (), 2),
        (1, (), (), 1),
        (3, (), (), 3),
        (2, ("u1",), (), 1),  # an existing pool request counts toward the label
        (2, (), ("u2",), 1),  # so does a pool member who already reviewed
        (2, ("u1",), ("u2",), 0),
        (2, ("outsider",), (), 2),  # a non-pool request doesn't satisfy the label
    ],
)
def test_per_label_cap(
    cap: int, requested: tuple[str, ...], reviewed: tuple[str, ...], new_picks: int
) -> None:
    pool = {"area": {"users": [f"u{i}" for i in range(6)], "cap": cap}}
    plan = _route(
        pool,
        ("area",),
        already_requested_users=requested,
        already_reviewed=reviewed,
        config_extra={"max_reviewers_per_pr": 10},
    )
    assert len(plan.users) == new_picks
    assert not set(plan.users) & {*requested, *reviewed}


@pytest.mark.parametrize(
    ("max_per_pr", "requested_users", "requested_teams", "reviewed", "new_total"),
    [
        (4, (), (), (), 4),
        (3, (), (), (), 3),
        (4, ("codeowner1", "codeowner2"), (), (), 2),  # CODEOWNERS requests use slots
        (4, ("codeowner1",), ("some-team",), (), 2),
        (4, (), (), ("gemini-code-assist", "drive-by"), 4),  # non-pool reviews don't
        (2, ("codeowner1", "codeowner2"), (), (), 0),
        (1, ("codeowner1", "codeowner2"), (), (), 0),
    ],
)
def test_per_pr_hard_cap(
    max_per_pr: int,
    requested_users: tuple[str, ...],
    requested_teams: tuple[str, ...],
    reviewed: tuple[str, ...],
    new_total: int,
) -> None:
    pools = {
        "a": {"users": ["a1", "a2", "a3"], "cap": 2},
        "b": {"users": ["b1", "b2", "b3"], "cap": 2},
        "c": {"users": ["c1", "c2", "c3"], "cap": 2},
    }
    plan = _route(
        pools,
        ("a", "b", "c"),
        already_requested_users=requested_users,
        already_requested_teams=requested_teams,
        already_reviewed=reviewed,
        config_extra={"max_reviewers_per_pr": max_per_pr},
    )
    assert len(plan.users) + len(plan.teams) == new_total
    capped = [name for name, reason in plan.skipped if reason == "cap-reached"]
    assert len(capped) == 6 - new_total  # the ones that would have been picked next
    assert not set(capped) & set(plan.users)


def test_labels_are_served_in_config_order_when_capped() -> None:
    pools = {"first": {"users": ["f1", "f2"], "cap": 2}, "second": {"users": ["s1"], "cap": 1}}
    plan = _route(pools, ("second", "first"), config_extra={"max_reviewers_per_pr": 2})
    assert set(plan.users) == {"f1", "f2"}
    assert ("s1", "cap-reached") in plan.skipped


# --- load, overlap, teams ---------------------------------------------------------


@pytest.mark.parametrize("number", range(20))
def test_least_loaded_first(number: int) -> None:
    pool = {"area": {"users": ["busy", "idle", "medium"], "cap": 2}}
    plan = _route(
        pool, ("area",), number=number, open_review_load={"busy": 9, "idle": 0, "Medium": 2}
    )
    assert plan.users == ("idle", "medium")


@pytest.mark.parametrize("number", range(30))
def test_one_person_covering_two_labels_is_preferred(number: int) -> None:
    pools = {"A": {"users": ["x", "both"], "cap": 1}, "B": {"users": ["both", "z"], "cap": 1}}
    plan = _route(pools, ("A", "B"), number=number)
    assert plan.users == ("both",)
    assert set(plan.because) == {("both", "A"), ("both", "B")}


def test_overlap_beats_load() -> None:
    pools = {"A": {"users": ["x", "both"], "cap": 1}, "B": {"users": ["both", "z"], "cap": 1}}
    plan = _route(pools, ("A", "B"), open_review_load={"both": 5})
    assert plan.users == ("both",)


def test_pick_for_one_label_counts_for_the_next() -> None:
    pools = {"A": {"users": ["shared"], "cap": 1}, "B": {"users": ["shared", "b1", "b2"], "cap": 2}}
    plan = _route(pools, ("A", "B"))
    assert plan.users[0] == "shared"
    assert len(plan.users) == 2  # B needed only one more
    assert ("shared", "B") in plan.because


def test_existing_request_covers_every_label_of_its_pools() -> None:
    plan = _route(
        VLLM_POOLS, ("multi-modality", "frontend"), already_requested_users=("DarkLight1337",)
    )
    assert "DarkLight1337" not in plan.users
    assert len(plan.users) == 1  # multi-modality needs one more; frontend is covered
    assert plan.users[0] in {"ywang96", "Isotr0py", "NickLucche"}


@pytest.mark.parametrize(
    ("pool", "requested_teams", "users", "teams"),
    [
        ({"users": [], "teams": ["t1"], "cap": 1}, (), 0, ("t1",)),
        ({"users": ["a"], "teams": ["t1"], "cap": 2}, (), 1, ("t1",)),  # users fall short
        ({"users": ["a", "b"], "teams": ["t1"], "cap": 2}, (), 2, ()),  # users suffice
        ({"users": [], "teams": ["t1", "t2"], "cap": 3}, (), 0, "one"),  # one team per label
        ({"users": ["a", "b"], "teams": ["t1"], "cap": 2}, ("t1",), 1, ()),  # team counts
        ({"users": [], "teams": ["t1", "t2"], "cap": 2}, ("T1",), 0, ()),  # already has a team
    ],
)
def test_teams_fill_only_what_users_cannot(
    pool: dict[str, Any], requested_teams: tuple[str, ...], users: int, teams: Any
) -> None:
    plan = _route({"area": pool}, ("area",), already_requested_teams=requested_teams)
    assert len(plan.users) == users
    if teams == "one":
        assert len(plan.teams) == 1
        assert plan.teams[0] in pool["teams"]
    else:
        assert plan.teams == teams
    for team in plan.teams:
        assert (team, "area") in plan.because


def test_already_requested_team_is_reported() -> None:
    plan = _route(
        {"area": {"users": [], "teams": ["t1"], "cap": 1}},
        ("area",),
        already_requested_teams=("t1",),
    )
    assert plan.teams == ()
    assert ("t1", "already-requested") in plan.skipped


def test_a_refused_team_is_not_asked_again_and_another_is() -> None:
    plan = _route({"area": {"users": [], "teams": ["t1", "t2"], "cap": 1}}, ("area",),
                  refused=("t1", "t2"))
    assert plan.teams == ()
    assert {("t1", "refused"), ("t2", "refused")} <= set(plan.skipped)
    plan = _route({"area": {"users": [], "teams": ["t1", "t2"], "cap": 1}}, ("area",),
                  refused=("T1",))
    assert plan.teams == ("t2",)


def test_team_shared_by_two_labels_is_requested_once() -> None:
    pools = {"A": {"teams": ["infra"], "cap": 1}, "B": {"teams": ["infra", "other"], "cap": 1}}
    plan = _route(pools, ("A", "B"))
    assert plan.teams == ("infra",)
    assert set(plan.because) == {("infra", "A"), ("infra", "B")}


def test_unrouted_labels_pick_nobody() -> None:
    plan = _route(VLLM_POOLS, ("bug", "documentation"))
    assert plan == RoutingPlan()


def test_label_match_ignores_case() -> None:
    plan = _route({"Torch.Compile": {"users": ["pe"], "cap": 1}}, ("torch.compile",))
    assert plan.users == ("pe",)


@settings(max_examples=150, deadline=None)
@given(
    members=st.lists(st.sampled_from([f"u{i}" for i in range(8)]), min_size=1, max_size=8),
    cap=st.integers(1, 5),
    max_per_pr=st.integers(1, 10),
    requested=st.lists(st.sampled_from([f"u{i}" for i in range(10)]), max_size=4),
    author=st.sampled_from(["u0", "u1", "nobody"]),
    number=st.integers(1, 10_000),
)
def test_invariants(
    members: list[str], cap: int, max_per_pr: int, requested: list[str], author: str, number: int
) -> None:
    pools = {"A": {"users": members, "cap": cap}, "B": {"users": members[::-1], "cap": cap}}
    plan = _route(
        pools,
        ("A", "B"),
        author=author,
        number=number,
        already_requested_users=tuple(requested),
        config_extra={"max_reviewers_per_pr": max_per_pr},
    )
    assert len(set(plan.users)) == len(plan.users)
    assert set(plan.users) <= set(members) - {author} - set(requested)
    assert len(plan.users) <= max(0, max_per_pr - len(set(requested)))
    assert len(plan.users) <= cap
    assert {name for name, _ in plan.skipped}.isdisjoint(plan.users)


# --- suggested reviewers --------------------------------------------------------


def test_suggested_reviewers_is_the_sorted_union() -> None:
    got = suggested_reviewers(["frontend", "multi-modality", "rocm", "bug"], _config(VLLM_POOLS))
    expected_users = sorted(
        {
            *VLLM_POOLS["frontend"]["users"],
            *VLLM_POOLS["multi-modality"]["users"],
            *VLLM_POOLS["rocm"]["users"],
        },
        key=str.casefold,
    )
    assert got == Reviewers(users=tuple(expected_users), teams=("rocm-reviewers",))


def test_suggested_reviewers_exclude_and_empty() -> None:
    config = _config(VLLM_POOLS)
    got = suggested_reviewers(["torch.compile"], config, exclude=["ZOU3519"])
    assert got.users == ("ProExpertProg", "youkaichao")
    assert suggested_reviewers([], config) == Reviewers()


# --- area labels ----------------------------------------------------------------

LABEL_CASES: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[str, ...]]] = [
    (
        "add-missing",
        {"current": ["bug"], "desired": ["torch.compile"], "bot": []},
        ("torch.compile",),
        (),
    ),
    (
        "already-there",
        {"current": ["torch.compile"], "desired": ["torch.compile"], "bot": []},
        (),
        (),
    ),
    (
        "case-insensitive",
        {"current": ["Torch.Compile"], "desired": ["torch.compile"], "bot": []},
        (),
        (),
    ),
    (
        "remove-own-stale",
        {"current": ["torch.compile", "bug"], "desired": [], "bot": ["torch.compile"]},
        (),
        ("torch.compile",),
    ),
    ("keep-human-label", {"current": ["torch.compile", "v1"], "desired": [], "bot": []}, (), ()),
    (
        "keep-mergify-label-even-if-bot-wants-others",
        {"current": ["v1", "frontend"], "desired": ["frontend"], "bot": ["frontend"]},
        (),
        (),
    ),
    ("bot-added-but-gone", {"current": [], "desired": [], "bot": ["torch.compile"]}, (), ()),
    (
        "human-removed-not-re-added",
        {"current": [], "desired": ["torch.compile"], "bot": [], "removed": ["torch.compile"]},
        (),
        (),
    ),
    (
        "sorted-and-deduped",
        {"current": [], "desired": ["rope", "CUDA graphs", "rope"], "bot": []},
        ("CUDA graphs", "rope"),
        (),
    ),
]


@pytest.mark.parametrize(
    ("case", "add", "remove"),
    [(c, a, r) for _, c, a, r in LABEL_CASES],
    ids=[i for i, _, _, _ in LABEL_CASES],
)
def test_plan_labels(case: dict[str, Any], add: tuple[str, ...], remove: tuple[str, ...]) -> None:
    plan = plan_labels(
        case["current"], case["desired"], case["bot"], removed_by_humans=case.get("removed", ())
    )
    assert plan.add == add
    assert plan.remove == remove
    # What the bot owns afterwards: its kept labels plus what it adds, never others'.
    after = {label.casefold() for label in [*case["current"], *add] if label not in remove}
    assert {label.casefold() for label in plan.owned_after} <= after
    assert set(add) <= set(plan.owned_after)


def test_owned_after_carries_kept_labels_forward() -> None:
    plan = plan_labels(["torch.compile", "bug"], ["torch.compile", "rope"], ["torch.compile"])
    assert plan.add == ("rope",)
    assert plan.owned_after == ("rope", "torch.compile")
