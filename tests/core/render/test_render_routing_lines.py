"""Routing lines: an area line names its files' code owners or is not shown; a catch-all
area (every model file) gets no line of its own where more specific areas' lines route all
its files; suggested reviewers that miss every code owner get the specialist owners."""

from __future__ import annotations

from pathlib import Path

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.sections import who_lines
from bot.core.repo_config.codeowners import parse_codeowners
from bot.core.repo_config.config import RepoConfig
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[3]
RULES = load_rules(ROOT / "rules")
VL_MODEL = "vllm/model_executor/models/qwen2_5_vl.py"
TEXT_MODEL = "vllm/model_executor/models/llama.py"
SHARED = "vllm/model_executor/layers/attention/mm_encoder_attention.py"


def _lines(paths: tuple[str, ...], codeowners: str = "") -> list[str]:
    facts = PullRequestFacts(
        number=60010, title="[Model] Fix the vision tower's padding", head_sha="c" * 40,
        body="## Purpose\nFix.\n\n## Test Plan\npytest tests/models\n\n## Test Result\npassed\n",
        files=tuple(ChangedFile(filename=p, additions=6, deletions=2) for p in paths),
        changed_files=len(paths), additions=6 * len(paths), deletions=2 * len(paths))
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(codeowners))
    return list(who_lines(build_digest(facts, RULES, "en", repo_config=config)))


def _titled(lines: list[str], title: str) -> list[str]:
    return [line for line in lines if line.startswith(f"- **{title}**")]


def test_an_area_line_names_its_code_owners_or_is_not_shown() -> None:
    assert _lines((VL_MODEL, TEXT_MODEL)) == []
    lines = _lines((VL_MODEL, TEXT_MODEL), codeowners=f"/{TEXT_MODEL} @llama-owner\n")
    assert lines == ["- **Model implementation** (2 files) · code owners: @\u2060llama-owner"]


def test_a_model_file_a_specific_area_routes_gets_only_that_line() -> None:
    lines = _lines((VL_MODEL,), codeowners=f"/{VL_MODEL} @qwen-owner\n")
    assert lines == [
        "- **Multimodal input processing** (1 file) · code owners: @\u2060qwen-owner"]


def test_areas_of_the_same_files_and_owners_share_one_line() -> None:
    lines = _lines((SHARED,), codeowners=f"/{SHARED} @encoder-owner\n")
    assert lines == [
        "- **Attention backends** · **Multimodal input processing** (1 file)"
        " · code owners: @\u2060encoder-owner"]


def test_areas_with_other_owners_or_more_files_keep_their_own_lines() -> None:
    other = _lines((SHARED, VL_MODEL),
                   codeowners=f"/{SHARED} @encoder-owner\n/{VL_MODEL} @qwen-owner\n")
    assert len(_titled(other, "Attention backends")) == 1
    assert len(_titled(other, "Multimodal input processing")) == 1
    assert not any(" — " in line for line in other)


KERNEL = "csrc/quantization/gemm_sm120.cu"


def _reviewers(codeowners: str) -> tuple[str, ...]:
    facts = PullRequestFacts(
        number=60011, title="[Kernel] Fix the sm120 tile size", head_sha="d" * 40, author="someone",
        body="## Purpose\nFix.\n\n## Test Plan\npytest tests/kernels\n\n## Test Result\npassed\n",
        files=(ChangedFile(filename=KERNEL, additions=8, deletions=3),),
        changed_files=1, additions=8, deletions=3)
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(codeowners))
    return build_digest(facts, RULES, "en", repo_config=config).reviewers.users


def test_a_specialist_owner_the_label_pool_misses_is_suggested_too() -> None:
    pool = _reviewers("")
    assert pool
    assert "gemm-owner" not in pool
    assert _reviewers(f"/{KERNEL} @gemm-owner\n") == tuple(
        sorted((*pool, "gemm-owner"), key=str.casefold))


def test_a_broad_owner_group_or_an_owner_already_suggested_changes_nothing() -> None:
    pool = _reviewers("")
    broad = " ".join(f"@owner{i}" for i in range(4))
    assert _reviewers(f"/csrc/ {broad}\n") == pool
    assert _reviewers(f"/{KERNEL} @{pool[0]} @gemm-owner\n") == pool


def test_the_author_owning_the_file_is_not_suggested() -> None:
    assert "someone" not in _reviewers(f"/{KERNEL} @someone\n")


MODEL = "vllm/model_executor/models/nemotron_h.py"


def _reviewers_of(files: tuple[tuple[str, int], ...], codeowners: str) -> tuple[str, ...]:
    facts = PullRequestFacts(
        number=60012, title="[Perf] Overlap the MoE all-reduce", head_sha="e" * 40,
        author="someone", body="## Purpose\nFaster.\n",
        files=tuple(ChangedFile(filename=f, additions=n, deletions=0) for f, n in files),
        changed_files=len(files), additions=sum(n for _, n in files))
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(codeowners))
    return build_digest(facts, RULES, "en", repo_config=config).reviewers.users


def test_a_file_whose_owners_the_pool_misses_gets_its_owner_though_another_file_is_covered(
) -> None:
    files = ((KERNEL, 5), (MODEL, 20))
    owners = f"/{KERNEL} @mgoin\n/{MODEL} @model-owner\n"
    assert "model-owner" in _reviewers_of(files, owners)
    assert "model-owner" not in _reviewers_of(files, f"/{KERNEL} @mgoin\n")


def test_specialists_added_stop_at_three_people_the_most_changed_file_first() -> None:
    files = ((KERNEL, 5), (MODEL, 20), (TEXT_MODEL, 10))
    owners = (f"/{KERNEL} @mgoin\n/{MODEL} @a-owner @b-owner\n"
              f"/{TEXT_MODEL} @c-owner @d-owner\n")
    added = set(_reviewers_of(files, owners)) - set(_reviewers_of(files, ""))
    assert added == {"a-owner", "b-owner"}


CONNECTOR = "vllm/distributed/kv_transfer/kv_connector/v1/mooncake/stats.py"
DOCS_PAGE = "docs/features/mooncake_connector_usage.md"
KV_OWNERS = " ".join(f"@kv{i}" for i in range(6))  # too many to count as specialists


def _patched_reviewers(connector_patch: str, codeowners: str) -> tuple[str, ...]:
    files = (
        ChangedFile(filename=CONNECTOR, additions=40, deletions=1, patch=connector_patch),
        ChangedFile(filename=DOCS_PAGE, additions=20, deletions=0,
                    patch="@@ -1,1 +1,2 @@\n # Mooncake\n+| metric | meaning |\n"),
    )
    facts = PullRequestFacts(
        number=60013, title="[KV Connector] Export the transfer stats", head_sha="f" * 40,
        author="someone", body="## Purpose\nExport them.\n", files=files,
        changed_files=2, additions=60, deletions=1)
    config = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(codeowners))
    return build_digest(facts, RULES, "en", repo_config=config).reviewers.users


CODE_PATCH = ("@@ -10,2 +10,3 @@ class Stats:\n     def observe(self):\n"
              "-        pass\n+        self.n += 1\n")
DOCSTRING_PATCH = ('@@ -10,2 +10,3 @@ class Stats:\n     def observe(self):\n'
                   '-        """Count."""\n+        """Count each transfer."""\n')


def test_an_area_no_pool_represents_gets_the_first_owners_of_its_most_changed_file() -> None:
    owners = f"/vllm/distributed/kv_transfer/ {KV_OWNERS}\n"
    assert _patched_reviewers(CODE_PATCH, "") == ("hmellor",)  # the docs page's pool only
    assert _patched_reviewers(CODE_PATCH, owners) == ("hmellor", "kv0", "kv1")


def test_a_docstring_only_edit_or_an_owner_already_suggested_adds_no_one() -> None:
    owners = f"/vllm/distributed/kv_transfer/ {KV_OWNERS}\n"
    assert _patched_reviewers(DOCSTRING_PATCH, owners) == ("hmellor",)
    covered = "/vllm/distributed/kv_transfer/ @hmellor @kv1 @kv2 @kv3\n"
    assert _patched_reviewers(CODE_PATCH, covered) == ("hmellor",)
