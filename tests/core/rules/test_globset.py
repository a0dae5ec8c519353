"""GlobSet answers exactly what pathspec's GitIgnoreSpec answers, only faster."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from bot.core.rules.globset import GlobSet, PathGroups
from bot.core.rules.risk_settings import RiskSettings

_PARTS = ["vllm", "tests", "docs", "csrc", "x", "a.py", "b.md", "k.cu", "CMakeLists.txt", ""]
_GLOBS = [
    "tests/", "tests/**", "**/test_*.py", "*.md", "docs/", "/csrc/**", "vllm/*/x",
    "a.py", "**/k.cu", "x/", "!a.py", "!docs/", "vllm/**/*.cu", "*", "?.py", "[ab].*",
    # anchored: a path (a file or a directory), a prefix running into the name
    "vllm/a.py", "docs/b.md", "vllm/x", "tests/x*", "vllm/k*.cu",
]
_paths = st.lists(st.sampled_from(_PARTS), min_size=1, max_size=5).map("/".join)
_path_like = st.one_of(
    _paths, _paths.map(lambda p: "/" + p), _paths.map(lambda p: "./" + p),
    _paths.map(lambda p: p + "\n"), st.text(max_size=30),
)


def _spec(globs: list[str]) -> GitIgnoreSpec:
    return GitIgnoreSpec.from_lines(globs, backend="simple")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_GLOBS), max_size=6), st.lists(_path_like, max_size=8))
def test_globset_answers_like_gitignorespec(globs: list[str], paths: list[str]) -> None:
    fast, spec = GlobSet(globs), _spec(globs)
    for path in paths:
        assert fast.match_file(path) == spec.match_file(path), (globs, path)


def test_bundled_risk_globs_answer_like_gitignorespec() -> None:
    settings_ = RiskSettings()
    lists = [
        settings_.test_paths, settings_.source_paths, settings_.docs_ci_paths,
        settings_.numerics_paths, settings_.forward_paths, settings_.model_registry_paths,
        settings_.model_file_paths, *(p.paths for p in settings_.hardware.values()),
    ]
    paths = [
        "tests/kernels/test_moe.py", "vllm/model_executor/models/llama.py", "docs/a.md",
        "csrc/attention/x.cu", ".buildkite/test-pipeline.yaml", "vllm/platforms/rocm.py",
        "README.md", "setup.py", "vllm/v1/attention/backends/flash_attn.py", "lone\ud800.py",
        "vllm/model_executor/models/registry.py", "requirements/rocm.txt",
    ]
    for globs in lists:
        fast, spec = GlobSet(globs), _spec(list(globs))
        assert [fast.match_file(p) for p in paths] == [spec.match_file(p) for p in paths]
    assert any(GlobSet(settings_.test_paths).match_file(p) for p in paths)  # not vacuous


_RISK_SETTINGS = RiskSettings()
_RISK_LISTS = [
    _RISK_SETTINGS.test_paths, _RISK_SETTINGS.source_paths, _RISK_SETTINGS.docs_ci_paths,
    _RISK_SETTINGS.numerics_paths, _RISK_SETTINGS.forward_paths,
    _RISK_SETTINGS.model_registry_paths, _RISK_SETTINGS.model_file_paths,
    *(p.paths for p in _RISK_SETTINGS.hardware.values()),
]
# Pieces of the bundled globs' literals and near misses, so paths pass and fail the
# literal test in front of the regex.
_RISK_PARTS = st.sampled_from([
    "vllm/", "csrc/", "tests/", "docs/", "rocm/", "cpu", "xpu", "tpu", "aiter", "rocm",
    "model_executor/", "layers/", "models/", "v1/", "worker/", "attention/", "backends/",
    "platforms/", "test_", ".py", ".md", "LICENSE", "x", "/", "./", ".buildkite/", "é",
])


@settings(max_examples=1500, deadline=None)
@pytest.mark.property
@given(st.sampled_from(range(len(_RISK_LISTS))),
       st.lists(st.lists(_RISK_PARTS, min_size=1, max_size=7).map("".join), max_size=10))
def test_the_literal_test_skips_only_paths_no_glob_matches(which: int, paths: list[str]) -> None:
    globs = list(_RISK_LISTS[which])
    fast, spec = GlobSet(globs), _spec(globs)
    loaded = pickle.loads(pickle.dumps(fast))  # noqa: S301  # our own bytes
    want = [spec.match_file(p) for p in paths]
    assert [fast.match_file(p) for p in paths] == want
    assert [loaded.match_file(p) for p in paths] == want
    chosen = {p for p, yes in zip(paths, want, strict=True) if yes}
    assert fast.select(paths) == chosen
    assert loaded.select(PathGroups(paths)) == chosen
    plain = [p for p in paths if not p.startswith(("/", "./"))]
    assert fast.select(plain) == {p for p in plain if p in chosen}


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_GLOBS), max_size=6), st.lists(_path_like, max_size=8))
def test_select_is_the_paths_match_file_says_yes_to(globs: list[str], paths: list[str]) -> None:
    fast, spec = GlobSet(globs), _spec(globs)
    assert fast.select(paths) == {p for p in paths if spec.match_file(p)}
    # Without a path to normalise ("/x", "./x"), the directory-wise answer is taken.
    plain = [p for p in paths if not p.startswith(("/", "./"))]
    assert PathGroups(plain).plain
    assert fast.select(plain) == {p for p in plain if spec.match_file(p)}


def test_the_bundled_risk_globs_all_have_a_literal_test() -> None:
    assert all(GlobSet(globs)._prefixes is not None for globs in _RISK_LISTS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_GLOBS), max_size=6), st.lists(_path_like, max_size=8))
def test_a_pickled_globset_answers_alike(globs: list[str], paths: list[str]) -> None:
    fast = GlobSet(globs)
    loaded = pickle.loads(pickle.dumps(fast))  # noqa: S301  # our own bytes
    assert loaded.globs == fast.globs
    assert [loaded.match_file(p) for p in paths] == [fast.match_file(p) for p in paths]


def test_a_negation_keeps_pathspecs_own_walk() -> None:
    fast = GlobSet(["docs/**", "!docs/keep.md"])
    assert fast.match_file("docs/a.md")
    assert not fast.match_file("docs/keep.md")


def test_the_directory_wise_answer_at_its_edges() -> None:
    # A file glob also matches its name with a final newline (`$`) and as a directory;
    # a prefix may run from the directory into the name.
    globs = ["vllm/a.py", "tests/x*", "docs/**", "**/test_*.py"]
    paths = ["vllm/a.py\n", "vllm/a.py", "vllm/a.py/b", "vllm/a.pyc", "tests/xy.py",
             "tests/y.py", "tests/sub/x.py", "docs/z", "docsy/z", "a/test_b.py", "x"]
    fast, spec = GlobSet(globs), _spec(globs)
    want = {p for p in paths if spec.match_file(p)}
    assert want == {"vllm/a.py\n", "vllm/a.py", "vllm/a.py/b", "tests/xy.py", "docs/z",
                    "a/test_b.py"}
    assert fast.select(paths) == want
    assert {p for p in paths if fast.match_file(p)} == want
