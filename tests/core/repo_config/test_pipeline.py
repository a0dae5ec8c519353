"""vLLM's CI step selection against ci-infra's pipeline_generator: each rule on small job
files, vLLM's real configs (0.34.0, 0.31.0), hostile input and time, and agreement with a
plain re-implementation of the generator (`Reference`, at the end) on real changes."""

from __future__ import annotations

import os
import random
import re
import textwrap
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench import sdists
from bot.core.repo_config.pipeline import (
    MAX_DEPENDENCIES,
    MAX_FILES,
    MAX_MATCH_FILES,
    MAX_PATTERNS,
    MAX_PROBLEMS,
    MAX_STEPS,
    CiSelection,
    Pipeline,
    StepMatch,
    is_broad,
    is_docs_only,
    job_dirs,
    parse_pipeline,
    select_steps,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_config"
CI_CONFIG = ".buildkite/ci_config.yaml"
AREAS = ".buildkite/test_areas"
CONFIG = f"job_dirs:\n  - {AREAS}\n"
RUN_ALL_CONFIG = CONFIG + textwrap.dedent("""\
    run_all_patterns: ["docker/Dockerfile", "setup.py", "cmake/"]
    run_all_exclude_patterns: ["docker/Dockerfile\\\\.", "cmake/hipify.py"]
    """)
RUNTIME_SCRIPT = ".buildkite/scripts/hardware_ci/run-amd-test.sh"
ROCM_BASE = "docker/Dockerfile.rocm_base"
PROBLEM = re.compile(r"^\.?[\w./-]+:\d+: \S.*$")

StepId = tuple[str, str, str]  # (job file, key, label)


def pipeline(*jobs: str, config: str = CONFIG) -> Pipeline:
    """Job files `area0.yaml`, `area1.yaml`, ... under AREAS, texts dedented."""
    files = {CI_CONFIG: config}
    for number, text in enumerate(jobs):
        files[f"{AREAS}/area{number}.yaml"] = textwrap.dedent(text)
    return parse_pipeline(files)


def keys(matches: Iterable[StepMatch]) -> list[str]:
    return sorted(m.step.key for m in matches)


def well_formed(problems: Iterable[str]) -> bool:
    return all(PROBLEM.match(p) or p.endswith("more problems not shown") for p in problems)


# --- which paths a dependency matches ---------------------------------------------------

LORA = """\
    group: LoRA
    steps:
    - label: LoRA
      key: lora
      source_file_dependencies: [vllm/lora]
    - label: LoRA, written as a directory
      key: lora-dir
      source_file_dependencies: [vllm/lora/]
    """


@pytest.mark.parametrize(
    ("path", "reached"),
    [
        ("vllm/lora", True),
        ("vllm/lora/layers.py", True),
        ("vllm/lora/ops/triton/kernel.py", True),
        ("vllm/lora_x.py", False),
        ("vllm/lorax/layers.py", False),
        ("vllm/lor", False),
        ("vllm", False),
        ("src/vllm/lora/layers.py", False),
    ],
)
def test_a_dependency_matches_its_own_path_or_one_under_it_at_a_slash(
    path: str, reached: bool
) -> None:
    selection = select_steps(pipeline(LORA), [path])
    assert keys(selection.narrow) == (["lora", "lora-dir"] if reached else [])
    assert selection.broad_count == 0


KV = """\
    steps:
    - label: Distributed
      key: distributed
      source_file_dependencies: [vllm/distributed/, "!vllm/distributed/kv_transfer/"]
    - label: KV transfer
      key: kv
      source_file_dependencies: [vllm/distributed/kv_transfer]
    - label: Everything in vllm but kv_transfer
      key: all-but-kv
      source_file_dependencies: [vllm/, "!vllm/distributed/kv_transfer"]
    """


def test_a_bang_entry_takes_its_paths_back_from_every_entry_of_its_own_step_only() -> None:
    kv = pipeline(KV)
    assert (kv.steps[0].dependencies, kv.steps[0].excludes) == (
        ("vllm/distributed/",), ("vllm/distributed/kv_transfer/",))
    only_kv = select_steps(kv, ["vllm/distributed/kv_transfer/connector.py"])
    assert keys(only_kv.narrow) == ["kv"]
    assert only_kv.broad_count == 0  # `vllm/` took nothing back, but its step did
    elsewhere = select_steps(kv, ["vllm/distributed/parallel_state.py"])
    assert keys(elsewhere.narrow) == ["distributed"]
    assert elsewhere.broad_count == 1
    # One path the `!` entry does not cover is enough.
    both = select_steps(kv, ["vllm/distributed/kv_transfer/a.py", "vllm/distributed/utils.py"])
    assert keys(both.narrow) == ["distributed", "kv"]
    distributed = next(m for m in both.narrow if m.step.key == "distributed")
    assert distributed.files == ("vllm/distributed/utils.py",)


def test_a_glob_is_matched_literally_and_reported() -> None:
    globbed = pipeline("""\
        steps:
        - label: Globbed
          key: globbed
          source_file_dependencies: ["tests/v1/test_*.py"]
        """)
    assert globbed.problems == (
        f"{AREAS}/area0.yaml:4: dependency 'tests/v1/test_*.py' is matched literally, "
        "not as a glob",)
    assert select_steps(globbed, ["tests/v1/test_a.py"]).narrow == ()
    assert keys(select_steps(globbed, ["tests/v1/test_*.py/x"]).narrow) == ["globbed"]


# --- job files --------------------------------------------------------------------------


def test_a_files_depends_on_adds_its_own_path_to_every_step_in_it() -> None:
    areas = pipeline(
        """\
        group: A
        depends_on: [image-build]
        steps:
        - label: With dependencies
          key: a1
          source_file_dependencies: [vllm/a/]
        - label: Without
          key: a2
        """,
        """\
        group: B
        steps:
        - label: No depends_on
          key: b1
          source_file_dependencies: [vllm/b/]
        """,
        """\
        group: C
        depends_on: []
        steps:
        - label: Empty depends_on
          key: c1
          source_file_dependencies: [vllm/c/]
        """,
    )
    a_file = f"{AREAS}/area0.yaml"
    assert [s.dependencies for s in areas.steps] == [
        ("vllm/a/", a_file), (a_file,), ("vllm/b/",), ("vllm/c/",)]
    edited = select_steps(areas, [a_file])
    assert keys(edited.narrow) == ["a1", "a2"]
    assert {m.matched for m in edited.narrow} == {(a_file,)}
    for other in (f"{AREAS}/area1.yaml", f"{AREAS}/area2.yaml"):
        nothing = select_steps(areas, [other])
        assert (nothing.narrow, nothing.broad_count) == ((), 0)


def test_a_files_group_names_its_steps_else_their_own() -> None:
    grouped = pipeline(
        "group: Kernels\nsteps:\n- {label: a, key: a, group: Ignored}\n",
        "steps:\n- {label: b, key: b, group: Own}\n- {label: c, key: c}\n",
    )
    assert [s.group for s in grouped.steps] == ["Kernels", "Own", ""]


def test_job_files_are_the_yaml_files_under_the_job_dirs_at_any_depth() -> None:
    found = parse_pipeline({
        CI_CONFIG: 'job_dirs: [".buildkite/test_areas", "./.buildkite/hardware_tests/"]\n',
        f"{AREAS}/a.yaml": "steps:\n- {label: a, key: a}\n",
        ".buildkite/hardware_tests/intel/ci/b.yaml": "steps:\n- {label: b, key: b}\n",
        f"{AREAS}/c.yml": "steps:\n- {label: c, key: c}\n",
        ".buildkite/other/d.yaml": "steps:\n- {label: d, key: d}\n",
        ".buildkite/test_areas_old/e.yaml": "steps:\n- {label: e, key: e}\n",
    })
    assert found.problems == ()
    assert sorted((s.key, s.file) for s in found.steps) == [
        ("a", f"{AREAS}/a.yaml"), ("b", ".buildkite/hardware_tests/intel/ci/b.yaml")]
    assert job_dirs(
        'job_dirs: [".buildkite/test_areas", "./.buildkite/hardware_tests/", "/etc", "../x"]\n'
    ) == (".buildkite/test_areas", ".buildkite/hardware_tests")


def test_a_job_dir_without_job_files_is_a_problem() -> None:
    missing = parse_pipeline({
        CI_CONFIG: "job_dirs:\n  - .buildkite/test_areas\n  - .buildkite/gone\n",
        f"{AREAS}/a.yaml": "steps:\n- {label: a, key: a}\n",
    })
    assert missing.problems == (f"{CI_CONFIG}:3: job dir '.buildkite/gone': no .yaml files given",)
    assert [s.key for s in missing.steps] == ["a"]


def test_anchors_and_merge_keys_read_as_pyyaml_reads_them() -> None:
    anchored = pipeline("""\
        common: &common
          device: h100
          num_devices: 2
          source_file_dependencies: &deps [vllm/a/]
        steps:
        - <<: *common
          label: One
          key: one
          num_devices: 4
        - label: Two
          key: two
          source_file_dependencies: *deps
        """)
    assert anchored.problems == ()
    one, two = anchored.steps
    assert (one.device, one.gpus, one.dependencies) == ("h100", 4, ("vllm/a/",))
    assert (two.device, two.gpus, two.dependencies) == ("", 1, ("vllm/a/",))


@pytest.mark.parametrize(
    ("fields", "gpus"),
    [
        ("device: h100", 1),
        ("device: h100\n  num_devices: 4", 4),
        ("num_devices: 2", 2),
        ("device: cpu-small", 0),
        ("device: zen5", 0),
        ("device: h100\n  no_gpu: true", 0),
        ("device: mi355_8", 8),
        ("device: h100\n  num_gpus: 2", 1),  # Step has no num_gpus: the generator drops it
    ],
)
def test_a_steps_gpu_count(fields: str, gpus: int) -> None:
    step = pipeline(f"steps:\n- label: s\n  key: s\n  {fields}\n").steps[0]
    assert step.gpus == gpus


def test_an_image_build_runs_on_a_cpu_queue() -> None:
    build = pipeline('steps:\n- {label: ":docker: Build image", key: image-build}\n')
    assert build.steps[0].gpus == 0


# --- what runs --------------------------------------------------------------------------


def test_a_step_without_dependencies_runs_only_when_everything_runs() -> None:
    lonely = pipeline("steps:\n- {label: Lonely, key: lonely}\n", config=RUN_ALL_CONFIG)
    assert select_steps(lonely, ["vllm/x.py"]).broad_count == 0
    everything = select_steps(lonely, ["setup.py"])
    assert everything.run_all
    assert everything.broad_count == 1


OPTIONAL = """\
    steps:
    - label: Optional
      key: optional
      optional: true
      source_file_dependencies: [vllm/lora/]
    - label: Plain
      key: plain
      source_file_dependencies: [vllm/lora/]
    - label: Unrelated
      key: unrelated
      source_file_dependencies: [vllm/other/]
    """


def test_an_optional_step_waits_for_an_unblock_even_when_everything_runs() -> None:
    steps = pipeline(OPTIONAL, config=RUN_ALL_CONFIG)
    change = select_steps(steps, ["vllm/lora/a.py"])
    assert (keys(change.narrow), keys(change.optional), change.broad_count) == (
        ["plain"], ["optional"], 0)
    everything = select_steps(steps, ["vllm/lora/a.py", "setup.py"])
    assert everything.run_all
    assert (keys(everything.narrow), keys(everything.optional)) == (["plain"], ["optional"])
    assert everything.broad_count == 1  # `unrelated`, not `optional`


@pytest.mark.parametrize(
    ("path", "runs_all"),
    [
        ("docker/Dockerfile", True),
        ("docker/Dockerfile.cpu", False),  # excluded
        ("docker/Dockerfile_old", True),  # re.match: anchored at the start only
        ("third_party/docker/Dockerfile", False),
        ("setup.py", True),
        ("setup_py", True),  # `.` is a regex
        ("setup.pyc", True),
        ("cmake/utils.cmake", True),
        ("cmake/hipify.py", False),
        ("cmakefile", False),
    ],
)
def test_run_all_patterns_are_regexes_matched_at_the_start_and_exclusions_win(
    path: str, runs_all: bool
) -> None:
    selection = select_steps(pipeline(OPTIONAL, config=RUN_ALL_CONFIG), [path])
    assert selection.run_all is runs_all
    assert selection.run_all_files == ((path,) if runs_all else ())
    assert selection.broad_count == (2 if runs_all else 0)


def test_an_excluded_path_does_not_stop_another_from_running_everything() -> None:
    selection = select_steps(
        pipeline(OPTIONAL, config=RUN_ALL_CONFIG), ["docker/Dockerfile.cpu", "setup.py"])
    assert selection.run_all_files == ("setup.py",)


ALWAYS = """\
    group: Builds
    steps:
    - {label: ":docker: Build", key: image-build, optional: true,
       source_file_dependencies: [docker/Dockerfile]}
    - {label: CPU build, key: image-build-cpu, optional: true,
       source_file_dependencies: [docker/Dockerfile]}
    - {label: AMD base, key: ensure-ci-base-amd, optional: true,
       source_file_dependencies: [docker/Dockerfile]}
    - {label: ROCm base, key: refresh-rocm-base-amd, optional: true,
       source_file_dependencies: [docker/Dockerfile]}
    - {label: Not an image build, key: my-image-build, optional: true,
       source_file_dependencies: [docker/Dockerfile]}
    """


def test_image_builds_and_the_amd_base_steps_always_run_even_when_optional() -> None:
    builds = pipeline(ALWAYS)
    matched = select_steps(builds, ["docker/Dockerfile"])
    assert keys(matched.narrow) == [
        "ensure-ci-base-amd", "image-build", "image-build-cpu", "refresh-rocm-base-amd"]
    assert keys(matched.optional) == ["my-image-build"]
    # Running on every change, they are not counted among the steps a change reaches.
    assert select_steps(builds, ["vllm/x.py"]).broad_count == 0


DOCS = """\
    steps:
    - label: Everything
      key: everything
      source_file_dependencies: [docs/, vllm/, README.md, mkdocs.yaml, mkdocs.yml]
    """


@pytest.mark.parametrize(
    ("paths", "docs_only"),
    [
        (["docs/usage/faq.md"], True),
        (["README.md", "vllm/lora/README.md"], True),
        (["mkdocs.yaml", "docs/conf.py"], True),
        (["mkdocs.yml"], False),
        (["docs/usage/faq.md", "vllm/lora/layers.py"], False),
        ([], False),
    ],
)
def test_a_docs_only_change_runs_nothing(paths: list[str], docs_only: bool) -> None:
    selection = select_steps(pipeline(DOCS), paths)
    assert selection.docs_only is docs_only
    assert is_docs_only(paths) is docs_only
    runs = bool(selection.narrow) or selection.broad_count > 0
    assert runs is (not docs_only and paths != [])


def test_running_everything_beats_docs_only() -> None:
    docs_run_all = pipeline(DOCS, config=CONFIG + 'run_all_patterns: ["docs/"]\n'
                            "run_all_exclude_patterns: []\n")
    selection = select_steps(docs_run_all, ["docs/usage/faq.md"])
    assert (selection.docs_only, selection.run_all, selection.broad_count) == (False, True, 1)


# --- AMD mirrors ------------------------------------------------------------------------

MIRRORS = """\
    group: LoRA
    depends_on: [image-build]
    steps:
    - label: ":nvidia: (H200) LoRA"
      key: lora
      device: h200_35gb
      num_devices: 2
      source_file_dependencies: [vllm/lora/, "!vllm/lora/cuda_only.py"]
      mirror:
        amd:
          device: mi355_2
          source_file_dependencies: [vllm/platforms/rocm.py]
    - label: LoRA TP
      key: lora-tp
      device: h100
      mirror:
        amd:
          device: mi355_dpx
          label: ":amd: (MI355 DPX) LoRA TP"
          num_gpus: 1
    """


def test_an_amd_mirror_is_a_second_step_with_its_own_key_label_device_and_gpus() -> None:
    mirrors = pipeline(MIRRORS)
    assert mirrors.problems == ()
    lora, amd_lora, tp, amd_tp = mirrors.steps
    assert (lora.key, lora.device, lora.gpus, lora.platform) == ("lora", "h200_35gb", 2, "cuda")
    assert (amd_lora.key, amd_lora.label, amd_lora.device, amd_lora.gpus) == (
        "amd-lora", "AMD: :nvidia: (H200) LoRA (mi355_2)", "mi355_2", 2)
    assert (amd_lora.platform, amd_lora.mirror_of, amd_lora.group) == (
        "amd", lora.label, "LoRA")
    assert (amd_tp.key, amd_tp.label, amd_tp.gpus) == (
        "amd-lora-tp", ":amd: (MI355 DPX) LoRA TP", 1)
    assert tp.gpus == 1


def test_an_amd_mirror_runs_on_its_own_dependencies_then_its_steps() -> None:
    mirrors = pipeline(MIRRORS)
    own_file = f"{AREAS}/area0.yaml"
    assert mirrors.steps[1].dependencies == ("vllm/platforms/rocm.py", "vllm/lora/", own_file)
    assert mirrors.steps[1].excludes == ("vllm/lora/cuda_only.py",)
    assert keys(select_steps(mirrors, ["vllm/platforms/rocm.py"]).narrow) == ["amd-lora"]
    assert keys(select_steps(mirrors, ["vllm/lora/layers.py"]).narrow) == ["amd-lora", "lora"]
    assert select_steps(mirrors, ["vllm/lora/cuda_only.py"]).narrow == ()
    assert keys(select_steps(mirrors, [own_file]).narrow) == [
        "amd-lora", "amd-lora-tp", "lora", "lora-tp"]


def test_an_amd_mirror_is_optional_as_it_says_else_as_its_step() -> None:
    optional = pipeline("""\
        steps:
        - {label: A, key: a, optional: true, source_file_dependencies: [vllm/x/],
           mirror: {amd: {device: mi300_1, optional: false}}}
        - {label: B, key: b, optional: true, source_file_dependencies: [vllm/x/],
           mirror: {amd: {device: mi300_1}}}
        - {label: C, key: c, source_file_dependencies: [vllm/x/],
           mirror: {amd: {device: mi300_1, optional: true}}}
        - {label: D, key: d, optional: true, source_file_dependencies: [vllm/x/],
           mirror: {amd: {device: mi300_1, optional: null}}}
        """)
    selection = select_steps(optional, ["vllm/x/y.py"])
    assert keys(selection.narrow) == ["amd-a", "amd-d", "c"]
    assert keys(selection.optional) == ["a", "amd-b", "amd-c", "b", "d"]


def test_the_rocm_base_dockerfile_runs_every_amd_mirror_optional_or_not() -> None:
    mirrored = pipeline(
        MIRRORS,
        """\
        steps:
        - {label: "[Nightly] Sweep", key: sweep, optional: true,
           source_file_dependencies: [vllm/compile/], mirror: {amd: {device: mi355_1}}}
        - {label: Native, key: native, device: mi355_1, source_file_dependencies: [vllm/x/]}
        """,
    )
    selection = select_steps(mirrored, [ROCM_BASE])
    # amd-lora, amd-lora-tp and amd-sweep; not the CUDA steps, not the native AMD step
    assert (selection.narrow, selection.broad_count) == ((), 3)
    assert selection.broad_through == (ROCM_BASE,)
    assert select_steps(mirrored, [ROCM_BASE + ".bak"]).broad_count == 0


def test_the_amd_test_wrapper_runs_the_amd_steps_that_run_without_docker() -> None:
    native = pipeline("""\
        steps:
        - {label: Native, key: native, device: mi355_1, dind: false,
           source_file_dependencies: [vllm/x/]}
        - {label: In docker, key: docker, device: mi355_1, source_file_dependencies: [vllm/x/]}
        - {label: Optional native, key: optional, device: mi355_1, dind: false, optional: true,
           source_file_dependencies: [vllm/x/]}
        - {label: CUDA, key: cuda, device: h100, source_file_dependencies: [vllm/x/],
           mirror: {amd: {device: mi300_1, dind: false}}}
        """)
    selection = select_steps(native, [RUNTIME_SCRIPT])
    assert (selection.narrow, selection.broad_count) == ((), 2)  # native, amd-cuda
    assert selection.broad_through == (RUNTIME_SCRIPT,)


def test_a_step_on_an_amd_gpu_gets_no_mirror() -> None:
    native = pipeline("""\
        steps:
        - label: Native
          key: native
          device: mi355_1
          mirror:
            amd: {device: mi300_1}
        """)
    assert [s.key for s in native.steps] == ["native"]
    assert native.problems == (f"{AREAS}/area0.yaml:5: a step on an AMD GPU gets no AMD mirror",)


def test_an_amd_mirror_asking_for_other_than_its_devices_gpus_is_reported() -> None:
    wrong = pipeline("""\
        steps:
        - label: Four
          key: four
          device: h100
          num_devices: 2
          mirror:
            amd: {device: mi355_4}
        - label: Torch nightly
          key: torch
          mirror:
            torch_nightly: {}
        """)
    assert [s.gpus for s in wrong.steps] == [2, 4, 1]
    assert wrong.problems == (
        f"{AREAS}/area0.yaml:7: AMD device mi355_4 provides 4 GPUs, but 2 are asked",
        f"{AREAS}/area0.yaml:10: mirror 'torch_nightly' is not one the generator builds",
    )


# --- nightly ----------------------------------------------------------------------------

NIGHTLY = """\
    steps:
    - label: "[Nightly] Sweep"
      key: sweep
      optional: true
      source_file_dependencies: [vllm/compile/]
      mirror:
        amd: {device: mi355_1, label: ":amd: Sweep"}
    - label: "(H100) [Nightly] Sweep, AMD on PRs"
      key: sweep-pr
      optional: true
      source_file_dependencies: [vllm/compile/]
      mirror:
        amd: {device: mi355_1, optional: false}
    - label: "[Nightly] Not optional"
      key: not-optional
      source_file_dependencies: [vllm/compile/]
    """


def test_an_optional_nightly_step_is_nightly_with_its_mirror_unless_that_opts_into_prs() -> None:
    nightly = pipeline(NIGHTLY)
    selection = select_steps(nightly, ["vllm/compile/pass.py"])
    assert keys(selection.nightly) == ["amd-sweep", "sweep", "sweep-pr"]
    assert keys(selection.narrow) == ["amd-sweep-pr", "not-optional"]
    assert selection.optional == ()
    assert nightly.problems == (
        f"{AREAS}/area0.yaml:14: '[Nightly] Not optional' is labelled [Nightly] but not "
        "optional: it runs on PRs",)


@pytest.mark.parametrize(
    ("condition", "nightly"),
    [
        ('build.env("NIGHTLY") == "1"', True),
        ("build.env('TORCH_NIGHTLY') == '1'", True),
        ('build.source == "schedule"', True),
        ('build.branch == "main"', False),
    ],
)
def test_an_if_on_nightly_builds_keeps_a_step_off_prs(condition: str, nightly: bool) -> None:
    conditional = pipeline(
        "steps:\n- label: Step\n  key: step\n  if: " + repr(condition) + "\n"
        "  source_file_dependencies: [vllm/a/]\n  mirror: {amd: {device: mi300_1}}\n",
        config=RUN_ALL_CONFIG,
    )
    assert [s.nightly for s in conditional.steps] == [nightly, nightly]
    for paths in (["vllm/a/b.py"], ["vllm/a/b.py", "setup.py", ROCM_BASE]):
        selection = select_steps(conditional, paths)
        assert keys(selection.nightly) == (["amd-step", "step"] if nightly else [])
        assert keys(selection.narrow) == ([] if nightly else ["amd-step", "step"])


CONDITIONAL = """\
    steps:
    - {label: Nightly env, key: nightly-env, if: 'build.env("NIGHTLY") == "1"',
       source_file_dependencies: [vllm/a/], mirror: {amd: {device: mi300_1}}}
    - {label: Main only, key: main-only, if: 'build.branch == "main"',
       source_file_dependencies: [vllm/a/]}
    """


# --- narrow and broad -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dependency", "broad"),
    [
        ("vllm/", True),
        ("vllm", True),
        ("tests", True),
        ("csrc/", True),
        ("requirements/", True),
        ("setup.py", False),
        ("CMakeLists.txt", False),
        (".buildkite/", True),
        ("vllm/v1/", False),
        ("vllm/lora", False),
        (f"{AREAS}/lora.yaml", False),
        ("/", False),
        ("", False),
    ],
)
def test_a_broad_dependency_is_a_top_level_directory(dependency: str, broad: bool) -> None:
    assert is_broad(dependency) is broad


BROAD = """\
    steps:
    - {label: All of vllm, key: all, source_file_dependencies: [vllm/]}
    - {label: LoRA, key: lora, source_file_dependencies: [vllm/lora/]}
    - {label: Both, key: both, source_file_dependencies: [vllm/, vllm/lora/]}
    - {label: Build, key: build, source_file_dependencies: [setup.py]}
    - {label: Kernels, key: kernels, source_file_dependencies: [csrc]}
    """


def test_a_step_reached_only_through_a_top_level_directory_is_counted_not_listed() -> None:
    broad = pipeline(BROAD)
    lora = select_steps(broad, ["vllm/lora/layers.py"])
    assert keys(lora.narrow) == ["both", "lora"]
    assert (lora.broad_count, lora.broad_through) == (1, ("vllm/",))
    both = next(m for m in lora.narrow if m.step.key == "both")
    assert (both.matched, both.files, both.narrow) == (
        ("vllm/", "vllm/lora/"), ("vllm/lora/layers.py",), True)
    other = select_steps(broad, ["vllm/engine/core.py", "csrc/ops.cu", "setup.py"])
    assert keys(other.narrow) == ["build"]
    assert (other.broad_count, other.broad_through) == (3, ("csrc", "vllm/"))


def test_a_match_lists_a_few_of_its_files() -> None:
    many = [f"vllm/lora/f{n:03}.py" for n in range(100)]
    match = select_steps(pipeline(LORA), many).narrow[0]
    assert match.files == tuple(many[:MAX_MATCH_FILES])


# --- test files no step runs ------------------------------------------------------------

TESTS = """\
    steps:
    - {label: LoRA, key: lora, source_file_dependencies: [tests/lora, "!tests/lora/test_slow.py"]}
    - {label: All tests, key: all, source_file_dependencies: [tests/]}
    - {label: "[Nightly] Kernels", key: kernels, optional: true,
       source_file_dependencies: [tests/kernels/]}
    """


def test_a_changed_test_file_that_no_narrow_entry_names_is_reported() -> None:
    selection = select_steps(pipeline(TESTS), [
        "tests/lora/test_layers.py",  # named
        "tests/lora/test_slow.py",  # taken back by the step that names it
        "tests/new/test_b.py",  # only `tests/`
        "tests/new/b_test.py",
        "tests/kernels/test_moe.py",  # named by a nightly step: named
        "tests/new/conftest.py",  # not a test module
        "tests/new/helpers.py",
        "vllm/test_utils.py",  # not under tests/
    ])
    assert selection.tests_without_step == (
        "tests/lora/test_slow.py", "tests/new/b_test.py", "tests/new/test_b.py")


# --- vLLM's own configs -----------------------------------------------------------------


@pytest.fixture(scope="module")
def v34() -> Pipeline:
    return parse_pipeline(fixture_files("0.34.0"))


@pytest.fixture(scope="module")
def v31() -> Pipeline:
    return parse_pipeline(fixture_files("0.31.0"))


@pytest.mark.parametrize("version", ["0.34.0", "0.31.0"])
def test_vllms_configs_read_whole_and_without_problems(version: str) -> None:
    files = fixture_files(version)
    read = parse_pipeline(files)
    assert read.problems == ()
    assert len(read.steps) == len(Reference(files).steps) > 400
    assert {s.file for s in read.steps} >= {
        f"{AREAS}/attention.yaml", ".buildkite/image_build/image_build.yaml",
        ".buildkite/hardware_tests/intel_xpu_ci/test-intel.yaml"}


def test_an_attention_backend_change_reaches_the_attention_steps_with_their_devices(
    v34: Pipeline,
) -> None:
    selection = select_steps(v34, ["vllm/v1/attention/backends/flash_attn.py"])
    attention = {(m.step.key, m.step.device, m.step.gpus) for m in selection.narrow
                 if m.step.file == f"{AREAS}/attention.yaml"}
    assert attention == {
        ("v1-attention-h100-mi300", "h100", 1), ("amd-v1-attention-h100-mi300", "mi300_1", 1),
        ("v1-attention-b200", "b200-k8s", 1), ("amd-v1-attention-b200", "mi355_dpx", 1)}
    by_key = {m.step.key: m.step for m in selection.narrow}
    assert (by_key["fusion-e2e-tp2-quick-h100"].gpus, by_key["v1-others-cpu"].gpus) == (2, 0)
    assert selection.broad_count > 0
    assert selection.broad_through == ("vllm/",)
    assert "attention-benchmarks-smoke-test-b200" in {m.step.key for m in selection.nightly}


def test_a_docs_only_change_to_vllm_runs_nothing(v34: Pipeline, v31: Pipeline) -> None:
    for config in (v34, v31):
        selection = select_steps(config, ["docs/usage/faq.md", "README.md"])
        assert selection.docs_only
        assert (selection.narrow, selection.broad_count, selection.nightly) == ((), 0, ())


def test_a_change_to_a_job_file_runs_that_files_steps(v34: Pipeline) -> None:
    lora_file = f"{AREAS}/lora.yaml"
    selection = select_steps(v34, [lora_file])
    in_file = [s for s in v34.steps if s.file == lora_file]
    assert {m.step.key for m in selection.narrow} == {
        s.key for s in in_file if not s.optional and not s.nightly}
    assert {m.step.key for m in selection.nightly} == {s.key for s in in_file if s.nightly}
    # The L4 TP step is nightly; its AMD mirror opts into PRs.
    tp = next(s for s in in_file if "[Nightly] LoRA TP" in s.label)
    assert tp.nightly
    assert tp.key in {m.step.key for m in selection.nightly}
    assert f"amd-{tp.key}" in {m.step.key for m in selection.narrow}
    assert selection.broad_count == 0


def test_csrc_runs_every_amd_step_in_0_34_and_everything_in_0_31(
    v34: Pipeline, v31: Pipeline
) -> None:
    kernel = ["csrc/attention/paged_attention_v1.cu"]
    newer = select_steps(v34, kernel)
    assert (newer.run_all, newer.amd_run_all) == (False, True)
    running = {m.step.key for m in newer.narrow}
    amd_pr_steps = {s.key for s in v34.steps
                    if s.platform == "amd" and not s.optional and not s.nightly_if}
    assert newer.broad_count >= len(amd_pr_steps - running) > 100
    older = select_steps(v31, kernel)
    assert older.run_all
    assert older.run_all_files == tuple(kernel)
    assert select_steps(v31, ["csrc/cpu/ops.cpp"]).run_all is False


# --- hostile input ----------------------------------------------------------------------


def test_a_missing_or_broken_ci_config_is_a_problem_not_an_error() -> None:
    assert parse_pipeline({}).problems == (f"{CI_CONFIG}:1: the CI config was not given",)
    assert parse_pipeline({CI_CONFIG: "job_dirs: [\n"}).problems == (
        f"{CI_CONFIG}:2: not valid YAML: did not find expected node content",)
    assert parse_pipeline({CI_CONFIG: "- a\n"}).problems == (
        f"{CI_CONFIG}:1: the CI config is not a mapping",)
    assert parse_pipeline({CI_CONFIG: "name: x\njob_dirs: 3\n"}).problems == (
        f"{CI_CONFIG}:2: `job_dirs` is not a non-empty list",)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("steps: [\n", "2: not valid YAML: did not find expected node content"),
        ("steps:\n\t- bad\n", "2: not valid YAML: found character that cannot start any token"),
        ("steps:\n  - a\n - b\n", "3: not valid YAML: did not find expected key"),
        ("---\nsteps: []\n---\nsteps: []\n", "3: not valid YAML: but found another document"),
        ("", "1: file is empty"),
        ("- 1\n", "1: a job file is a mapping with `group` and `steps`"),
        ("steps: {a: 1}\n", "1: `steps` is not a list"),
        ("steps:\n- label: 5\n", "2: a step needs a `label` (the generator refuses the file)"),
        ("steps:\n- {label: x, source_file_dependencies: vllm/}\n",
         "2: `source_file_dependencies` is not a list"),
        ("steps:\n- {label: x, optional: maybe}\n", "2: `optional` is not true or false"),
        ("steps:\n- label: x\n  key: a\n  key: b\n", "4: duplicate key 'key'"),
        ("a: &a [*a]\nsteps: []\n", "1: nested deeper than 64 levels"),
        ("steps: " + "[" * 100 + "]" * 100 + "\n", "1: nested deeper than 64 levels"),
    ],
)
def test_a_broken_job_file_is_a_problem_at_its_line_and_the_others_are_read(
    text: str, problem: str
) -> None:
    read = pipeline("steps:\n- {label: Good, key: good}\n", text)
    assert read.problems == (f"{AREAS}/area1.yaml:{problem}",)
    assert "good" in [s.key for s in read.steps]


def test_refused_regexes_are_reported_and_the_rest_still_run_everything() -> None:
    config = CONFIG + textwrap.dedent("""\
        run_all_patterns:
          - "(a)\\\\1"
          - "(?=x)y"
          - 7
          - "setup.py"
        run_all_exclude_patterns: ["(?<!a)b"]
        """)
    read = pipeline(OPTIONAL, config=config)
    assert [p.split(":")[1] for p in read.problems] == ["4", "5", "6", "8"]
    assert read.run_all_patterns == ("setup.py",)
    assert read.run_all_exclude_patterns == ()
    assert select_steps(read, ["setup.py"]).run_all


def test_an_alias_bomb_is_refused_in_bounded_time() -> None:
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]\n" for n in range(1, 9)
    ) + "steps: []\n"
    start = time.perf_counter()
    read = pipeline("steps:\n- {label: Good, key: good}\n", bomb)
    assert time.perf_counter() - start < 5.0
    assert [p.split(": ", 1)[1] for p in read.problems] == [
        "the CI config expands to more than 500,000 YAML nodes: the rest is not read"]


def test_long_lists_are_capped_and_reported() -> None:
    deps = "".join(f"  - vllm/d{n}\n" for n in range(MAX_DEPENDENCIES + 50))
    long_step = pipeline(
        f"steps:\n- label: Long\n  key: long\n  source_file_dependencies:\n{deps}")
    assert len(long_step.steps[0].dependencies) == MAX_DEPENDENCIES
    assert long_step.problems == (
        f"{AREAS}/area0.yaml:4: more than {MAX_DEPENDENCIES} dependencies: the rest is ignored",)
    many = pipeline("steps:\n" + "- {label: s, key: s}\n" * (MAX_STEPS + 10))
    assert len(many.steps) == MAX_STEPS
    assert many.problems == (
        f"{AREAS}/area0.yaml:{MAX_STEPS + 2}: more than {MAX_STEPS:,} steps: the rest is not read",)
    patterns = "".join(f"  - p{n}\n" for n in range(MAX_PATTERNS + 5))
    capped = pipeline(OPTIONAL, config=CONFIG + f"run_all_patterns:\n{patterns}")
    assert len(capped.run_all_patterns) == MAX_PATTERNS
    assert capped.problems == (
        f"{CI_CONFIG}:{MAX_PATTERNS + 4}: more than {MAX_PATTERNS} patterns",)
    files = pipeline(*["steps:\n- {label: s, key: s}\n"] * (MAX_FILES + 5))
    assert len(files.steps) == MAX_FILES
    assert files.problems == (
        f"{CI_CONFIG}:1: {MAX_FILES + 5} job files: only the first {MAX_FILES} are read",)


def test_a_config_larger_than_8_mib_in_all_is_read_up_to_that() -> None:
    comments = "#" + "x" * 1000 + "\n"
    big = comments * 1000  # ~1 MiB: YAML that costs little to read
    read = pipeline("steps:\n- {label: Good, key: good}\n", *[big] * 9)
    assert [s.key for s in read.steps] == ["good"]
    assert read.problems[:8] == tuple(f"{AREAS}/area{n}.yaml:1: file is empty" for n in range(1, 9))
    assert read.problems[8:] == (
        f"{AREAS}/area9.yaml:1: the CI config is larger than 8 MiB in all: this file is not read",)


def test_problems_are_capped_and_cost_no_more_than_the_file() -> None:
    # A long top-level mapping before `steps`, then many bad steps: each problem looks its
    # line up, and that walk must not start over at the top every time.
    keys_first = "".join(f"k{n}: 1\n" for n in range(20_000))
    start = time.perf_counter()
    read = pipeline(keys_first + "steps:\n" + "- 1\n" * 50_000)
    assert time.perf_counter() - start < 10.0
    assert len(read.problems) == MAX_PROBLEMS + 1
    assert read.problems[0] == f"{AREAS}/area0.yaml:20002: a step is a mapping"
    assert read.problems[-1] == f"{50_000 - MAX_PROBLEMS:,} more problems not shown"


def test_selection_is_near_linear_in_steps_and_paths() -> None:
    # Every step takes back a different file under the entry they share: a walk over the
    # paths per step would be 5,000 x 20,000.
    steps = "steps:\n" + "".join(
        f"- {{label: s{n}, key: s{n}, source_file_dependencies: [vllm/x, '!vllm/x/d{n % 50}']}}\n"
        for n in range(MAX_STEPS))
    wide = pipeline(steps)
    paths = [f"vllm/x/d{n % 50}/f{n}.py" for n in range(20_000)]
    start = time.perf_counter()
    selection = select_steps(wide, paths)
    assert time.perf_counter() - start < 10.0
    assert len(selection.narrow) == MAX_STEPS
    assert all(len(m.files) <= MAX_MATCH_FILES for m in selection.narrow)
    # Taken back: only the paths of its own directory, so step 0 runs on d1..d49.
    assert not any(p.startswith("vllm/x/d0/") for p in selection.narrow[0].files)


def test_the_changed_paths_are_taken_as_given_and_never_raise() -> None:
    read = pipeline(LORA)
    junk: list[Any] = [None, 3, "", "vllm/lora/a.py", "vllm/lora/a.py", "x" * 10_000]
    assert keys(select_steps(read, junk).narrow) == ["lora", "lora-dir"]


def test_mangled_real_job_files_never_raise_and_every_problem_names_a_line() -> None:
    some = ("attention", "lora", "pytorch", "kernels", "misc", "compile")
    files = {p: t for p, t in fixture_files("0.34.0").items()
             if not p.startswith(AREAS) or p.rsplit("/", 1)[-1][:-5] in some}
    # the main pipeline's files: Intel's job files are not its to read
    texts = sorted(p for p in files
                   if p.endswith(".yaml") and not p.startswith(".buildkite/intel_jobs/"))
    rng = random.Random(25)
    refused = 0
    for _ in range(40):
        mangled = dict(files)
        path = rng.choice(texts)
        text = mangled[path]
        cut = rng.randrange(len(text))
        how = rng.randrange(3)
        if how == 0:
            mangled[path] = text[:cut]
        elif how == 1:
            junk = rng.choice(["\t", ":", "- ", "&a ", "*a ", "[", "!"])
            mangled[path] = text[:cut] + junk + text[cut:]
        else:
            mangled[path] = text[:cut] + text[cut:].replace("  ", " ", 5)
        read = parse_pipeline(mangled)
        assert well_formed(read.problems), read.problems
        refused += bool(read.problems)
        select_steps(read, ["vllm/v1/attention/backends/flash_attn.py", path])
    assert refused >= 10


# --- the reference: ci-infra's rules, written out plainly -----------------------------
#
# From vllm-project/ci-infra buildkite/pipeline_generator (main, 3e4cfe4): step.py
# `read_steps_from_job_dir`, buildkite_step.py `convert_group_step_to_buildkite_step`,
# `_step_should_run`, `_get_amd_mirror_effective_step`, `_source_file_dependencies_match`,
# amd.py `_amd_mirror_should_run`, global_config.py `_should_run_all` and
# pipeline_generator.py `is_docs_only_change`. Python's `re`, yaml.safe_load, no caps.
# On top, the differences pipeline.py documents on purpose: `if:` nightly conditions,
# `amd_run_all_patterns`, AMD devices newer than the snapshot (`mi355_dpx`), and its own
# narrow/broad and nightly/optional split of the result.

_SNAPSHOT_AMD_GPUS = frozenset(f"mi{g}_{n}" for g in (250, 300, 325, 355) for n in (1, 2, 4, 8))
_ALWAYS_RUN = ("ensure-ci-base-amd", "refresh-rocm-base-amd")
_RUNTIME_SCRIPT = ".buildkite/scripts/hardware_ci/run-amd-test.sh"
_ROCM_BASE = "docker/Dockerfile.rocm_base"
_NIGHTLY_IF = ('build.env("NIGHTLY") == "1"', 'build.env("TORCH_NIGHTLY") == "1"',
               'build.source == "schedule"')


def ref_is_amd_gpu(device: object) -> bool:
    return isinstance(device, str) and (
        device in _SNAPSHOT_AMD_GPUS or re.fullmatch(r"mi\d+_dpx", device) is not None)


def ref_dep_matches(dependency: str, path: str) -> bool:
    name = dependency.rstrip("/")
    return name != "" and (path == name or path.startswith(name + "/"))


def ref_is_broad(dependency: str) -> bool:
    name = dependency.rstrip("/")
    return name != "" and "/" not in name and (dependency.endswith("/") or "." not in name)


@dataclass
class RefStep:
    file: str
    key: str
    label: str
    raw_key: str | None  # None for a mirror: the generator judges it on a keyless copy
    device: str
    dind: bool
    optional: bool
    deps: list[str]  # as the generator holds them, `!` entries included
    nightly_if: bool
    nightly_label: bool
    mirror: bool

    @property
    def id(self) -> StepId:
        return (self.file, self.key, self.label)

    def __post_init__(self) -> None:
        self.includes = [d for d in self.deps if not d.startswith("!")]
        self.excludes = [d[1:] for d in self.deps if d.startswith("!")]
        self.narrow_includes = [d for d in self.includes if not ref_is_broad(d)]

    @property
    def amd(self) -> bool:
        return self.mirror or ref_is_amd_gpu(self.device) or self.device == "amd_cpu"

    def reaches(self, path: str, entries: Iterable[str]) -> bool:
        return any(ref_dep_matches(e, path) for e in entries) and not any(
            ref_dep_matches(x, path) for x in self.excludes)


def _always(step: RefStep) -> bool:
    key = step.raw_key or ""
    return key.startswith("image-build") or key in _ALWAYS_RUN


def _nightly_if(step: Mapping[str, Any]) -> bool:
    condition = step.get("if")
    return isinstance(condition, str) and any(
        c in condition.replace("'", '"') for c in _NIGHTLY_IF)


class Reference:
    def __init__(self, files: Mapping[str, str]) -> None:
        config = yaml.safe_load(files[CI_CONFIG])
        self.run_all_patterns: list[str] = config.get("run_all_patterns") or []
        self.amd_run_all_patterns: list[str] = config.get("amd_run_all_patterns") or []
        self.exclude_patterns: list[str] = config.get("run_all_exclude_patterns") or []
        self.steps: list[RefStep] = []
        for job_dir in config["job_dirs"]:
            prefix = job_dir.strip("/") + "/"
            for path in sorted(p for p in files if p.startswith(prefix) and p.endswith(".yaml")):
                self._read(path, yaml.safe_load(files[path]))

    def _read(self, path: str, data: Mapping[str, Any]) -> None:
        for raw in data.get("steps") or []:
            deps = list(raw.get("source_file_dependencies") or [])
            if data.get("depends_on"):
                deps.append(path)
            label = raw["label"]
            key = raw.get("key") or ""
            device = raw.get("device") or ""
            nightly_if = _nightly_if(raw)
            self.steps.append(RefStep(
                file=path, key=key, label=label, raw_key=raw.get("key"), device=device,
                dind=raw.get("dind", True), optional=bool(raw.get("optional")), deps=deps,
                nightly_if=nightly_if, nightly_label="[nightly]" in label.lower(),
                mirror=False))
            amd = (raw.get("mirror") or {}).get("amd")
            if ref_is_amd_gpu(device) or not amd:
                continue
            mirror_deps = list(amd.get("source_file_dependencies") or [])
            mirror_deps += [d for d in deps if d not in mirror_deps]
            mirror_label = amd.get("label") or f"AMD: {label} ({amd['device']})"
            self.steps.append(RefStep(
                file=path, key=f"amd-{key}" if key else "", label=mirror_label, raw_key=None,
                device=amd["device"], dind=amd.get("dind", True),
                optional=bool(amd.get("optional", raw.get("optional", False))),
                deps=mirror_deps, nightly_if=nightly_if,
                # the same nightly test as the step it mirrors (pipeline.py's choice)
                nightly_label="[nightly]" in mirror_label.lower()
                or (bool(raw.get("optional")) and "[nightly]" in label.lower()),
                mirror=True))

    def _any_match(self, paths: Sequence[str], patterns: Sequence[str]) -> bool:
        for path in paths:
            if any(re.match(p, path) for p in patterns) and not any(
                    re.match(x, path) for x in self.exclude_patterns):
                return True
        return False

    def runs(self, step: RefStep, paths: Sequence[str], run_all: bool, amd_all: bool) -> bool:
        if step.nightly_if:
            return False
        native_wrapper = ref_is_amd_gpu(step.device) and not step.dind and any(
            ref_dep_matches(_RUNTIME_SCRIPT, p) for p in paths)
        if _always(step):
            should = True
        elif step.optional:
            should = False
        elif native_wrapper or run_all or (amd_all and step.amd):
            should = True
        else:
            should = any(step.reaches(p, step.includes) for p in paths)
        return should or (step.mirror and _ROCM_BASE in paths)

    def select(self, paths: Sequence[str]) -> RefResult:
        run_all = self._any_match(paths, self.run_all_patterns)
        amd_all = self._any_match(paths, self.amd_run_all_patterns)
        docs = bool(paths) and all(
            p.startswith("docs/") or p.endswith(".md") or p == "mkdocs.yaml" for p in paths)
        if docs and not run_all:
            return RefResult(frozenset(), 0, frozenset(), frozenset(), (), True, run_all)
        narrow: set[StepId] = set()
        nightly: set[StepId] = set()
        optional: set[StepId] = set()
        broad = 0
        for step in self.steps:
            reached = any(step.reaches(p, step.narrow_includes) for p in paths)
            if self.runs(step, paths, run_all, amd_all):
                if reached:
                    narrow.add(step.id)
                elif not _always(step):
                    broad += 1
            elif reached and (step.nightly_if or step.nightly_label):
                nightly.add(step.id)
            elif reached:
                optional.add(step.id)
        untested = tuple(sorted(
            p for p in paths
            if p.startswith("tests/") and p.endswith(".py")
            and (p.rsplit("/", 1)[-1].startswith("test_") or p.endswith("_test.py"))
            and not any(s.reaches(p, s.narrow_includes) for s in self.steps)))
        return RefResult(frozenset(narrow), broad, frozenset(nightly), frozenset(optional),
                         untested, False, run_all)


@dataclass(frozen=True)
class RefResult:
    narrow: frozenset[StepId]
    broad_count: int
    nightly: frozenset[StepId]
    optional: frozenset[StepId]
    tests_without_step: tuple[str, ...]
    docs_only: bool
    run_all: bool


def _ids(matches: Iterable[Any]) -> frozenset[StepId]:
    return frozenset((m.step.file, m.step.key, m.step.label) for m in matches)


def ours(selection: CiSelection) -> RefResult:
    return RefResult(_ids(selection.narrow), selection.broad_count, _ids(selection.nightly),
                     _ids(selection.optional), selection.tests_without_step,
                     selection.docs_only, selection.run_all)


def disagreements(read: Pipeline, reference: Reference,
                  path_sets: Sequence[Sequence[str]]) -> list[str]:
    out: list[str] = []
    for paths in path_sets:
        mine, theirs = ours(select_steps(read, paths)), reference.select(paths)
        if mine != theirs:
            fields = [f for f in RefResult.__dataclass_fields__
                      if getattr(mine, f) != getattr(theirs, f)]
            detail = "; ".join(
                f"{f}: ours-only {_diff(getattr(mine, f), getattr(theirs, f))} "
                f"reference-only {_diff(getattr(theirs, f), getattr(mine, f))}" for f in fields)
            out.append(f"{list(paths)[:4]}{'...' if len(paths) > 4 else ''}: {detail}")
    return out


def _diff(a: object, b: object) -> object:
    if isinstance(a, (frozenset, tuple)) and isinstance(b, (frozenset, tuple)):
        return sorted(set(a) - set(b))[:5]
    return a


def fixture_files(version: str) -> dict[str, str]:
    root = FIXTURES / version
    return {p.relative_to(root).as_posix(): p.read_text()
            for p in (root / ".buildkite").rglob("*") if p.is_file()}


def tree_config_files(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for directory, _dirs, names in os.walk(root / ".buildkite"):
        for name in names:
            if name.endswith((".yaml", ".yml")):
                full = Path(directory, name)
                out[full.relative_to(root).as_posix()] = full.read_text()
    return out


def changed_paths(base: Path, head: Path) -> list[str]:
    def files(root: Path) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for directory, _dirs, names in os.walk(root):
            for name in names:
                full = Path(directory, name)
                rel = full.relative_to(root).as_posix()
                if rel != "PKG-INFO" and ".egg-info/" not in rel:
                    found[rel] = full
        return found

    old, new = files(base), files(head)
    return sorted(p for p in old.keys() | new.keys()
                  if p not in old or p not in new
                  or old[p].read_bytes() != new[p].read_bytes())


def real_path_sets(changed: Sequence[str], count: int, seed: int) -> list[list[str]]:
    """Changes as PRs make them: one file, a directory's files, a mix across the tree."""
    rng = random.Random(seed)
    by_dir: dict[str, list[str]] = {}
    for path in changed:
        by_dir.setdefault(path.rsplit("/", 1)[0] if "/" in path else "", []).append(path)
    dirs = sorted(d for d, ps in by_dir.items() if len(ps) > 1)
    sets: list[list[str]] = []
    while len(sets) < count:
        kind = len(sets) % 3
        if kind == 0:
            sets.append([rng.choice(changed)])
        elif kind == 1:
            group = by_dir[rng.choice(dirs)]
            sets.append(rng.sample(group, min(len(group), rng.randint(2, 5))))
        else:
            sets.append(rng.sample(changed, rng.randint(3, 12)))
    return sets


# --- agreement with the reference -------------------------------------------------------

# Paths with rules of their own, beside what the configs' entries give.
SPECIAL = [
    ROCM_BASE, RUNTIME_SCRIPT, "csrc/attention/paged_attention_v1.cu", "csrc/cpu/ops.cpp",
    "csrc/rocm/ops.cu", "docs/usage/faq.md", "README.md", "mkdocs.yaml", "setup.py",
    "docker/Dockerfile", "docker/Dockerfile.cpu", "cmake/hipify.py", "tests/brand_new/test_x.py",
    f"{AREAS}/lora.yaml", f"{AREAS}/crcr_report.yaml", "vllm/v1/attention/backends/flash_attn.py",
    "vllm/distributed/kv_transfer/kv_connector/v1/moriio/connector.py",
]


def entry_path_sets(reference: Reference, count: int, seed: int) -> list[list[str]]:
    """For a sample of the config's own entries: a path at, under and beside each; then
    mixes of those with the special paths, as multi-file PRs."""
    entries = sorted({d.lstrip("!") for s in reference.steps for d in s.deps if d.strip("!/")})
    rng = random.Random(seed)
    sets: list[list[str]] = []
    for entry in rng.sample(entries, min(count, len(entries))):
        name = entry.rstrip("/")
        sets += [[name], [f"{name}/sub/test_new.py"], [f"{name}_x.py"]]
    pool = [p for paths in sets for p in paths] + SPECIAL
    sets += [rng.sample(pool, rng.randint(2, 6)) for _ in range(count // 2)]
    return sets + [[p] for p in SPECIAL]


def test_the_reference_agrees_on_the_small_job_files() -> None:
    files = {CI_CONFIG: RUN_ALL_CONFIG}
    for number, text in enumerate((LORA, KV, OPTIONAL, ALWAYS, DOCS, MIRRORS, NIGHTLY,
                                   CONDITIONAL, BROAD, TESTS)):
        files[f"{AREAS}/area{number}.yaml"] = textwrap.dedent(text)
    reference = Reference(files)
    sets = entry_path_sets(reference, 200, 25)
    assert len(reference.steps) == 34
    assert len(sets) > 100
    assert disagreements(parse_pipeline(files), reference, sets) == []


@pytest.mark.parametrize("version", ["0.34.0", "0.31.0"])
def test_the_selection_agrees_with_the_reference_on_vllms_configs(version: str) -> None:
    files = fixture_files(version)
    reference = Reference(files)
    sets = entry_path_sets(reference, 40, 25)
    assert len(sets) > 150
    assert disagreements(parse_pipeline(files), reference, sets) == []


_RELEASE_VERSIONS = ("0.33.0", "0.34.0")


@pytest.fixture(scope="module")
def releases() -> list[Path]:
    """vLLM 0.33.0 and 0.34.0 unpacked (bench/sdists.py); skipped, saying how, without them."""
    trees = sdists.release_trees(*_RELEASE_VERSIONS)
    if trees is None:
        pytest.skip(sdists.missing_message(*_RELEASE_VERSIONS))
    return trees


@pytest.fixture(scope="module")
def real_changes(releases: list[Path]) -> list[str]:
    return changed_paths(*releases)


@pytest.mark.property
@pytest.mark.parametrize("side", [0, 1], ids=["base-0.33.0", "head-0.34.0"])
def test_the_selection_agrees_with_the_reference_on_the_real_0_33_to_0_34_diff(
    side: int, releases: list[Path], real_changes: list[str]
) -> None:
    config = releases[side]
    assert len(real_changes) > 1000
    sets = real_path_sets(real_changes, 60, 25) + [[p] for p in SPECIAL] + [real_changes]
    files = tree_config_files(config)
    assert disagreements(parse_pipeline(files), Reference(files), sets) == []


def test_listed_by_counts_the_steps_that_list_an_entry() -> None:
    steps = pipeline(OPTIONAL)
    assert steps.listed_by("vllm/lora/") == 2
    assert steps.listed_by("vllm/lora") == 2  # a trailing `/` is the same entry
    assert steps.listed_by("vllm/other/") == 1
    assert steps.listed_by("vllm/nowhere/") == 0
