"""The index on real vLLM code: changed functions of the 0.33.0 -> 0.34.0 release, each
as a one-file PR against 0.33.0 (tests/fixtures/repo_index/vllm/NOTICE.md). The overriders
and callers expected here are those the fixture holds (a few of each, real files); the
full tree's counts are in the comments, from bench/bench_index.py's run."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.reading.symbols import extract_symbols
from bot.core.render.comment import render_digest
from bot.core.render.words import verdict_reason
from bot.core.repo_index.context import overriders, repo_context
from bot.core.repo_index.findings import CallerFinding, RepoContext
from bot.core.repo_index.memory import MemoryIndex
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import parse_python
from bot.repo_index import store
from bot.rulebook.files import load_rules
from bot.settings.model import DEFAULT_RULES_DIR

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "repo_index" / "vllm"
BASE_SHA = "b" * 40  # the PRs' base: 0.33.0
HEAD_SHA = "e" * 40  # the default branch after other changes landed
MOE = "vllm/model_executor/layers/fused_moe"
ATTENTION = "vllm/model_executor/layers/attention"


def _records(root: Path) -> list[FileRecord]:
    records = []
    for path in sorted(root.rglob("*.py")):
        parsed = parse_python(path.relative_to(root).as_posix(), path.read_bytes())
        assert isinstance(parsed, FileRecord), parsed
        records.append(parsed)
    return records


@cache
def _base_records() -> tuple[FileRecord, ...]:
    return tuple(_records(FIXTURE / "base"))


def base_index() -> MemoryIndex:
    return MemoryIndex(_base_records(), commit=BASE_SHA)


def head_index() -> MemoryIndex:
    """The default branch's head: the drift file as it is there, the rest unchanged."""
    by_path = {r.path: r for r in _base_records()}
    by_path.update({r.path: r for r in _records(FIXTURE / "head")})
    return MemoryIndex(by_path.values(), commit=HEAD_SHA)


@cache
def _cases() -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in json.loads((FIXTURE / "cases.json").read_text())}


def pr(name: str) -> PullRequestFacts:
    case = _cases()[name]
    return PullRequestFacts(
        repo="vllm-project/vllm", number=1, title="[Misc] change", base_sha=BASE_SHA,
        files=(ChangedFile(filename=case["filename"], additions=case["additions"],
                           deletions=case["deletions"], patch=case["patch"]),),
    )


def test_a_nested_def_named_by_the_hunk_header_resolves_to_its_method() -> None:
    facts = pr("nested-def-header")
    # GitHub's header names the nearest def above the hunk: the nested helper...
    assert [s.name for s in extract_symbols(facts.files)] == ["_make_reason"]
    # ...but the changed line (`elif not cls.activation_format().is_superset(...)`) is in
    # the method's own body, after the helper ended. 18 overriders in the whole tree.
    (found,) = repo_context(base_index(), facts).overrides
    assert (found.class_name, found.method, found.nested) == (
        "FusedMoEExperts", "is_supported_config", ()
    )
    assert found.overriders == (
        (f"{MOE}/experts/cpu_int4_moe.py", "CPUExpertsInt4"),
        (f"{MOE}/experts/flashinfer_moe_ep.py", "FlashInferMoeEpExperts"),
        (f"{MOE}/experts/zentorch_moe.py", "ZentorchExpertsInt4"),
    )


def test_lines_inside_a_nested_def_name_both_functions() -> None:
    path = f"{MOE}/modular_kernel.py"
    record = base_index().file(path)
    assert record is not None
    helper = next(f for f in record.functions if f.name == "_make_reason")
    assert helper.nested_in == "FusedMoEExperts.is_supported_config"
    line = helper.line + 1
    patch = (f"@@ -{line},1 +{line},1 @@ def _make_reason(reason: str) -> str:\n"
             '-            return f"kernel does not support {reason}"\n'
             '+            return f"kernel does not support: {reason}"')
    facts = PullRequestFacts(base_sha=BASE_SHA, files=(ChangedFile(
        filename=path, additions=1, deletions=1, patch=patch),))
    (found,) = repo_context(base_index(), facts).overrides
    assert (found.method, found.nested) == ("is_supported_config", ("_make_reason",))
    markdown = render_digest(build_digest(
        facts, load_rules(DEFAULT_RULES_DIR), "en", repo_context=repo_context(base_index(), facts)
    ))
    (text,) = [x for x in markdown.splitlines() if "override" in x]
    assert "`FusedMoEExperts.is_supported_config`" in text
    assert "(the change is inside its nested `_make_reason`)" in text


def test_a_fixed_method_names_the_attention_classes_that_override_it() -> None:
    # 7 in the whole tree; 4 of them are in the fixture.
    (found,) = repo_context(base_index(), pr("overriders-get-kv-cache-spec")).overrides
    assert (found.class_name, found.method) == ("Attention", "get_kv_cache_spec")
    assert [cls for _, cls in found.overriders] == [
        "ChunkedLocalAttention", "EncoderOnlyAttention", "PrefillPrefixLMAttention",
        "RSWAAttention",
    ]


def test_the_producer_left_alone_is_the_consumers_look_alike() -> None:
    # The consumer stopped calling `streams[i].synchronize()` for ROCm; the producer,
    # same prefix and most parameters, still does.
    (sibling,) = repo_context(base_index(), pr("look-alike-producer")).siblings
    assert (sibling.changed, sibling.siblings) == (
        "packed_nccl_broadcast_consumer", ("packed_nccl_broadcast_producer",)
    )
    # `packed_ipc_producer` shares only the first word, and not its parameters.
    record = next(r for r in _base_records() if r.path.endswith("packed_tensor.py"))
    assert "packed_ipc_producer" in {f.name for f in record.functions}


@pytest.mark.parametrize(("name", "cls", "method"), [
    ("docstring-only-activation-format", "FusedMoEExperts", "activation_format"),
    ("docstring-only-request-finished", "KVConnectorBase_V1", "request_finished"),
])
def test_a_docstring_only_edit_says_nothing_of_overriders(
    name: str, cls: str, method: str
) -> None:
    index = base_index()
    record = index.file(_cases()[name]["filename"])
    assert record is not None
    # The subclasses are there (47 and 15 in the whole tree)...
    assert overriders(index, record, cls, method)
    # ...and the change cannot concern them.
    assert repo_context(index, pr(name)).empty


def test_a_parameter_added_with_a_default_counts_the_callers_without_listing_them() -> None:
    # 97 call sites in the whole tree; the fixture holds two model files.
    context = repo_context(base_index(), pr("compatible-added-default"))
    assert context.callers == (CallerFinding(
        file="vllm/model_executor/models/utils.py",
        function="make_empty_intermediate_tensors_factory", call_sites=2,
        files=("vllm/model_executor/models/gpt_j.py", "vllm/model_executor/models/mamba.py"),
        breaking=False,
    ),)


def test_a_removed_parameter_lists_the_call_sites() -> None:
    facts = pr("breaking-removed-param")
    # The hunk header names `get_scale_perms`, the function above the changed one.
    assert (facts.files[0].patch or "").startswith("@@ -522,10 +522,10 @@ def get_scale_perms")
    (caller,) = repo_context(base_index(), facts).callers
    assert (caller.function, caller.breaking, caller.reasons) == (
        "marlin_permute_scales", True, ("removed `is_a_8bit`",)
    )
    assert caller.files == (
        "vllm/model_executor/kernels/linear/mixed_precision/marlin.py",
        "vllm/model_executor/layers/quantization/utils/marlin_utils_test.py",
    )


ALLOCATE = CallerFinding(
    file="vllm/v1/worker/utils.py", function="allocate_kv_cache", call_sites=2,
    files=("vllm/v1/hisparse/binding.py", "vllm/v1/worker/gpu/attn_utils.py"),
    breaking=False,  # `allocate: ... = None` added
)


def test_a_function_that_drifted_on_the_default_branch_is_re_anchored() -> None:
    head = head_index().file("vllm/v1/worker/utils.py")
    base = base_index().file("vllm/v1/worker/utils.py")
    assert head is not None
    assert base is not None
    (moved,) = [f.line for f in head.functions if f.name == "allocate_kv_cache"]
    (there,) = [f.line for f in base.functions if f.name == "allocate_kv_cache"]
    assert there - moved == 7  # the default branch dropped a 7-line method above it
    context = repo_context(head_index(), pr("drift-allocate-kv-cache"))
    assert (context.base, context.callers) == ("", (ALLOCATE,))


@pytest.mark.parametrize("source", ["index at the base", "base records", "sqlite"])
def test_the_base_answers_exactly_whatever_the_index_is_at(
    source: str, tmp_path: Path
) -> None:
    facts = pr("drift-allocate-kv-cache")
    if source == "index at the base":
        context = repo_context(base_index(), facts)
    elif source == "base records":
        base = {r.path: r for r in _base_records() if r.path == "vllm/v1/worker/utils.py"}
        context = repo_context(head_index(), facts, base=base)
    else:
        context = _sqlite_context(tmp_path, facts)
    assert context == RepoContext(
        commit=context.commit, base=BASE_SHA, callers=(ALLOCATE,),
        changed_functions=(("vllm/v1/worker/utils.py", "allocate_kv_cache"),))


def _sqlite_context(tmp_path: Path, facts: PullRequestFacts) -> RepoContext:
    """Head indexed in SQLite; the base's record of the changed file found by its blob."""
    with store.opened(tmp_path / "index.db") as conn:
        writer = store.IndexWriter(conn, "vllm-project/vllm", HEAD_SHA)
        for record in head_index().records():
            writer.add(record)
        generation = writer.finish()
        path = "vllm/v1/worker/utils.py"
        data = (FIXTURE / "base" / path).read_bytes()
        parsed = parse_python(path, data, blob="base-blob")
        assert isinstance(parsed, FileRecord)
        writer = store.IndexWriter(conn, "vllm-project/vllm", BASE_SHA)
        writer.add(parsed)
        writer.abort()  # its record goes with it: nothing found by that blob now
        assert store.stored_records(conn, {path: "base-blob"}) == {}
        view = store.SqliteIndexView(conn, generation)
        return repo_context(view, facts, base={path: parsed})


def test_a_quiet_change_with_a_finding_still_shows_it() -> None:
    # No area rule matches vllm/v1/worker/utils.py: without the index no area speaks for
    # it (only its open risks may make it a skim); the finding makes it a skim, and it is
    # shown.
    facts = pr("drift-allocate-kv-cache")
    rules = load_rules(DEFAULT_RULES_DIR)
    context = repo_context(base_index(), facts)
    digest = build_digest(facts, rules, "en", repo_context=context)
    without = build_digest(facts, rules, "en")
    assert not without.areas
    assert without.verdict == ("skim" if any(r.severity != "low" for r in without.risks)
                               else "quiet")
    assert digest.verdict == "skim"
    assert digest.verdict_grounds is not None
    assert digest.verdict_grounds.context
    assert verdict_reason(digest.verdict_grounds, digest.areas, "en").endswith(
        "; the code around it has findings")
    line = "- `allocate_kv_cache()`: 2 call sites, unaffected (only parameters with defaults added)"
    assert line in render_digest(digest).splitlines()
    # A digest forced quiet (a skipped author) keeps the finding too.
    assert line in render_digest(digest.model_copy(update={"verdict": "quiet"})).splitlines()
