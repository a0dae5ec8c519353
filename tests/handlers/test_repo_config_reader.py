"""Reading vLLM's own config at a base commit: the right files, few calls, never fatal."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bot.core.repo_config.config import read_repo_config
from bot.core.repo_config.files import CI_CONFIG_PATH, INTEL_CI_CONFIG_PATH, MAX_FILE_BYTES
from bot.handlers.repo_config import (
    DirectorySource,
    GitObjectCache,
    config_at_base,
    read_config_files,
)
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeGitHubState

REPO = "vllm-project/vllm"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_config"


def _tree(version: str) -> dict[str, str]:
    root = FIXTURES / version
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


def _read_by_the_walk(files: dict[str, str]) -> dict[str, str]:
    # The ROCm pipeline's own config is copied too, but not read (its steps are the main
    # config's AMD mirrors); Intel's is read with its job dir; a job dir is read at any
    # depth, as the generator's os.walk does (hardware_tests/intel_xpu_ci/).
    return {p: t for p, t in files.items() if p != ".buildkite/ci_config_rocm.yaml"}


def _with_source(files: dict[str, str]) -> dict[str, str]:
    # A repository has code besides its config: the walk must not read it.
    return {**files, "vllm/__init__.py": "x = 1\n", "docs/index.md": "# vLLM\n"}


async def test_a_base_commit_yields_every_config_file_of_vllm_0_34() -> None:
    state = FakeGitHubState()
    files = _tree("0.34.0")
    base = state.add_commit(REPO, _with_source(files))
    read, calls = await config_at_base(MemoryGitHub(state), REPO, base, GitObjectCache())
    assert read is not None
    assert read.problems == ()
    assert set(read.texts) == set(_read_by_the_walk(files))  # config, and no more
    owners = read.first((".github/CODEOWNERS", "CODEOWNERS"))
    assert owners is not None
    assert owners[0] == ".github/CODEOWNERS"
    job_files = read.job_files()
    assert CI_CONFIG_PATH in job_files
    assert ".buildkite/test_areas/attention.yaml" in job_files
    assert ".buildkite/hardware_tests/amd.yaml" in job_files
    assert ".buildkite/hardware_tests/intel_xpu_ci/test-intel.yaml" in job_files
    # Intel's pipeline: its config and every job file of its job dir
    assert INTEL_CI_CONFIG_PATH in job_files
    intel_jobs = {p for p in job_files if p.startswith(".buildkite/intel_jobs/")}
    assert len(intel_jobs) == 18
    assert ".buildkite/intel_jobs/engine_intel.yaml" in intel_jobs
    # A blob per file, and eight trees: root, .github, .buildkite, the main config's
    # three job dirs and the one folder nested in them, Intel's job dir.
    assert calls == len(_read_by_the_walk(files)) + 8


async def test_a_base_without_intels_pipeline_reads_the_rest_without_a_problem() -> None:
    state = FakeGitHubState()
    files = {p: t for p, t in _tree("0.34.0").items()
             if p != INTEL_CI_CONFIG_PATH and not p.startswith(".buildkite/intel_jobs/")}
    base = state.add_commit(REPO, _with_source(files))
    read, _ = await config_at_base(MemoryGitHub(state), REPO, base, GitObjectCache())
    assert read is not None
    assert read.problems == ()
    assert set(read.texts) == set(_read_by_the_walk(files))
    config = read_repo_config(read)
    assert config.intel_pipeline is None
    assert config.pipeline is not None
    assert len(config.pipeline.steps) > 100


async def test_an_intel_job_file_that_fails_to_read_loses_none_of_the_main_pipeline() -> None:
    state = FakeGitHubState()
    files = _tree("0.34.0")
    base = state.add_commit(REPO, _with_source(files))
    engine = ".buildkite/intel_jobs/engine_intel.yaml"
    data = files[engine].encode()
    sha = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    state.fail_next("GET", f"/repos/*/git/blobs/{sha}", 502)
    read, _ = await config_at_base(MemoryGitHub(state), REPO, base, GitObjectCache())
    assert read is not None
    assert read.problems == (f"{engine}: could not be read (HTTP 502)",)
    assert read.unread
    assert engine not in read.texts
    # Intel's walk stops there (the job is marked unread, to be read again); the main
    # pipeline and everything else are read in full
    intel = {p for p in files if p.startswith(".buildkite/intel_jobs/")}
    assert set(read.texts) - intel == set(_read_by_the_walk(files)) - intel
    assert INTEL_CI_CONFIG_PATH in read.texts


async def test_a_warm_cache_costs_one_call_per_new_base_and_reads_only_what_changed() -> None:
    state = FakeGitHubState()
    files = _with_source(_tree("0.34.0"))
    first = state.add_commit(REPO, files)
    gh, cache = MemoryGitHub(state), GitObjectCache()
    await config_at_base(gh, REPO, first, cache)

    # Same base again: nothing to ask.
    again, calls = await config_at_base(gh, REPO, first, cache)
    assert calls == 0
    assert again is not None
    assert again.problems == ()

    # A new base where only code moved: the root tree, nothing else.
    code_only = state.add_commit(REPO, {**files, "vllm/__init__.py": "x = 2\n"})
    _, calls = await config_at_base(gh, REPO, code_only, cache)
    assert calls == 1

    # One job file edited: root, .buildkite, test_areas and that blob.
    edited = dict(files)
    edited[".buildkite/test_areas/lora.yaml"] += "\n# edited\n"
    changed = state.add_commit(REPO, edited)
    read, calls = await config_at_base(gh, REPO, changed, cache)
    assert calls == 4
    assert read is not None
    assert read.texts[".buildkite/test_areas/lora.yaml"].endswith("# edited\n")


async def test_a_failing_call_loses_that_file_only() -> None:
    state = FakeGitHubState()
    base = state.add_commit(REPO, _with_source(_tree("0.34.0")))
    state.fail_next("GET", "/repos/*/git/blobs/*", 502)  # the first blob: CODEOWNERS
    read, _ = await config_at_base(MemoryGitHub(state), REPO, base, GitObjectCache())
    assert read is not None
    assert read.problems == (".github/CODEOWNERS: could not be read (HTTP 502)",)
    assert ".github/CODEOWNERS" not in read.texts
    assert ".github/mergify.yml" in read.texts
    assert CI_CONFIG_PATH in read.texts


async def test_an_unknown_base_is_one_problem_not_an_error() -> None:
    state = FakeGitHubState()
    state.add_commit(REPO, {"README.md": "hi\n"})
    read, _ = await config_at_base(MemoryGitHub(state), REPO, "0" * 40, GitObjectCache())
    assert read is not None
    assert read.texts == {}
    assert read.problems == ("base 0000000: could not be read (not found)",)


async def test_an_unknown_base_is_remembered_briefly_so_every_job_does_not_ask_again() -> None:
    state = FakeGitHubState()
    gh, cache = MemoryGitHub(state), GitObjectCache()
    _, calls = await config_at_base(gh, REPO, "0" * 40, cache)
    assert calls == 1
    again, calls = await config_at_base(gh, REPO, "0" * 40, cache)
    assert calls == 0
    assert again is not None
    assert again.problems == ("base 0000000: could not be read (not found)",)
    # Another repository's same SHA is its own question.
    _, calls = await config_at_base(gh, "someone/fork", "0" * 40, cache)
    assert calls == 1


async def test_oversized_and_binary_config_files_are_skipped_with_a_reason() -> None:
    state = FakeGitHubState()
    base = state.add_commit(REPO, {
        ".github/CODEOWNERS": "* @a\n" * (MAX_FILE_BYTES // 4),
        ".github/mergify.yml": b"\xff\xfe not utf-8",
        ".github/PULL_REQUEST_TEMPLATE.md": "## Purpose\n",
    })
    read, _ = await config_at_base(MemoryGitHub(state), REPO, base, GitObjectCache())
    assert read is not None
    assert set(read.texts) == {".github/PULL_REQUEST_TEMPLATE.md"}
    assert any("CODEOWNERS" in p and "cap" in p for p in read.problems)
    assert any("mergify.yml" in p and "UTF-8" in p for p in read.problems)


async def test_a_checkout_on_disk_reads_the_same_files_as_the_commit(tmp_path: Path) -> None:
    files = _tree("0.31.0")
    for path, text in _with_source(files).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    # A link out of the checkout is not followed.
    (tmp_path / ".github" / "mergify.yml").unlink()
    (tmp_path / ".github" / "mergify.yml").symlink_to("/etc/passwd")
    read = await read_config_files(DirectorySource(tmp_path), "checkout")
    expected = _read_by_the_walk(files)
    del expected[".github/mergify.yml"]
    assert read.texts == expected
