"""Intel's pipeline (.buildkite/ci_config_intel.yaml) read as a second pipeline of the base:
its own job dirs and run-all patterns, its steps named for a change only XPU executes and
kept to the collapsed list for any other; a base without it reads as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.ci import ci_detail_lines, ci_lines
from bot.core.render.contract import digest_json
from bot.core.repo_config.config import RepoConfig, read_repo_config
from bot.core.repo_config.files import ConfigFiles
from bot.core.repo_config.pipeline import INTEL_CI_CONFIG_PATH, parse_pipeline, select_steps
from bot.core.vocabulary import Lang
from bot.handlers.repo_config import DirectorySource, read_config_files
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parents[3]
RULES = load_rules(ROOT / "rules")
FIXTURE = ROOT / "tests" / "fixtures" / "vllm_config" / "0.34.0"

MAIN = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/engine.yaml": (
        "group: Engine\ndepends_on: [image-build]\nsteps:\n"
        "- label: Engine\n  key: engine\n  device: h200_18gb\n"
        "  source_file_dependencies: [vllm/engine/, vllm/platforms/, tests/engine/]\n"
        "  commands: [pytest -v -s engine]\n"),
}
INTEL = {
    INTEL_CI_CONFIG_PATH: (
        "job_dirs:\n  - .buildkite/intel_jobs\n"
        "run_all_patterns:\n  - docker/Dockerfile.xpu\n  - csrc/\n"
        "run_all_exclude_patterns:\n  - csrc/cpu/\n"),
    ".buildkite/intel_jobs/test-intel.yaml": (
        "group: Intel\nsteps:\n"
        "- label: ':docker: Build XPU image'\n  key: image-build-xpu\n"
        "  commands: [bash build.sh]\n"),
    ".buildkite/intel_jobs/engine_intel.yaml": (
        "group: Engine Intel\ndepends_on: [image-build-xpu]\nsteps:\n"
        "- label: ':intel: (BMG) Engine'\n  key: engine\n  device: intel_gpu\n"
        "  source_file_dependencies: [vllm/engine/, vllm/platforms/, tests/engine/]\n"
        "  commands:\n  - >-\n    bash run-intel-test.sh 'cd tests && pytest -v -s\n"
        "    engine/test_xpu_engine.py'\n"
        "- label: ':intel: (BMG) Kernels'\n  key: kernels\n  device: intel_gpu\n"
        "  source_file_dependencies: [vllm/kernels/]\n"
        "  commands: [\"bash run-intel-test.sh 'cd tests && pytest -v -s kernels'\"]\n"),
}
FACTS = PullRequestFacts(number=60002, title="[XPU] Fix the engine on XPU", head_sha="b" * 40,
                         body="## Purpose\nFix.\n", changed_files=1, additions=2, deletions=0)
XPU_PATCH = "@@ -1 +1,2 @@ class Engine:\n+    if current_platform.is_xpu():\n+        x = 1\n"
PLAIN_PATCH = "@@ -1 +1 @@ class Engine:\n+    x = 1\n"


def config(files: dict[str, str]) -> RepoConfig:
    return read_repo_config(ConfigFiles(source="base 1a2b3c4", texts=files))


def lines(cfg: RepoConfig, files: tuple[ChangedFile, ...], lang: Lang = "en",
          detail: bool = False) -> list[str]:
    digest = build_digest(FACTS.model_copy(update={"files": files}), RULES, lang,
                          repo_config=cfg)
    return list(ci_detail_lines(digest) if detail else ci_lines(digest))


def changed(path: str, patch: str = PLAIN_PATCH) -> ChangedFile:
    return ChangedFile(filename=path, additions=1, patch=patch)


def ci_line(found: list[str]) -> str:
    (line,) = [x for x in found if x.startswith(("- CI to run", "- 需运行的 CI"))]
    return line


def test_the_intel_config_is_read_by_its_own_job_dirs_and_marks_its_steps() -> None:
    both = {**MAIN, **INTEL}
    main = parse_pipeline(both)
    intel = parse_pipeline(both, INTEL_CI_CONFIG_PATH)
    assert main.problems == ()
    assert intel.problems == ()
    assert [s.file for s in main.steps] == [".buildkite/test_areas/engine.yaml"]
    # job files in path order, as the generator walks them
    assert [(s.key, s.platform) for s in intel.steps] == [
        ("engine", "intel"), ("kernels", "intel"), ("image-build-xpu", "intel")]
    # the file's depends_on puts its own path among each of its steps' dependencies
    assert ".buildkite/intel_jobs/engine_intel.yaml" in intel.steps[0].dependencies
    assert intel.run_all_patterns == ("docker/Dockerfile.xpu", "csrc/")


def test_the_intel_configs_run_all_patterns_select_as_its_config_states() -> None:
    intel = parse_pipeline({**MAIN, **INTEL}, INTEL_CI_CONFIG_PATH)
    assert select_steps(intel, ["csrc/xpu/attention.cpp"]).run_all
    assert not select_steps(intel, ["csrc/cpu/attention.cpp"]).run_all
    engine = select_steps(intel, ["vllm/engine/core.py"])
    assert [m.step.key for m in engine.narrow] == ["engine"]
    assert engine.broad_count == 0  # the image build always runs and is not counted


def test_an_xpu_only_change_names_the_intel_step_that_runs_its_tests() -> None:
    files = (changed("vllm/engine/core.py", XPU_PATCH), changed("tests/engine/test_xpu_engine.py"))
    line = ci_line(lines(config({**MAIN, **INTEL}), files))
    assert line.startswith("- CI to run: 2 steps through its paths, of which only the XPU ones")
    assert "(`vllm/engine/core.py`): Engine (Intel BMG)" in line
    assert "none of them runs its tests" not in line
    assert "h200" not in line
    zh = ci_line(lines(config({**MAIN, **INTEL}), files, "zh"))
    assert "只有 XPU 步骤能运行" in zh
    assert "Engine (Intel BMG)" in zh
    # without Intel's pipeline the same change is told no step runs on XPU
    without = ci_line(lines(config(MAIN), files))
    assert "none runs on XPU" in without


def test_an_xpu_only_change_no_intel_step_tests_is_told_so() -> None:
    line = ci_line(lines(config({**MAIN, **INTEL}), (changed("vllm/engine/core.py", XPU_PATCH),)))
    assert "Engine (Intel BMG); none of them runs its tests" in line


def test_for_any_other_change_intel_steps_stay_in_the_collapsed_list() -> None:
    files = (changed("vllm/engine/core.py"), changed("tests/engine/test_xpu_engine.py"))
    with_intel, without = config({**MAIN, **INTEL}), config(MAIN)
    assert lines(with_intel, files) == lines(without, files)
    detail = "\n".join(lines(with_intel, files, detail=True))
    assert ("Run by Intel's pipeline (ci_config_intel.yaml):\n"
            "- `intel_jobs/engine_intel.yaml`: Engine (Intel BMG)") in detail
    assert "Intel" not in "\n".join(lines(without, files, detail=True))


def test_a_changed_test_only_an_intel_step_runs_is_not_called_unrun() -> None:
    files = (changed("tests/engine/test_xpu_engine.py"), changed("tests/other/test_x.py"))
    (without,) = [x for x in lines(config(MAIN), files) if x.startswith("- Not in this")]
    assert "`tests/engine/test_xpu_engine.py`" not in without  # tests/engine/ names it
    (line,) = [x for x in lines(config({**MAIN, **INTEL}), files) if x.startswith("- Not in")]
    assert line == "- Not in this PR's build: 1 changed test no step runs: `tests/other/test_x.py`"


def test_a_broken_intel_config_is_a_problem_and_leaves_the_main_pipeline_whole() -> None:
    cfg = config({**MAIN, INTEL_CI_CONFIG_PATH: "job_dirs: [\n"})
    assert cfg.intel_pipeline is not None
    assert cfg.intel_pipeline.steps == ()
    assert any(p.startswith(INTEL_CI_CONFIG_PATH + ":") for p in cfg.problems)
    assert cfg.pipeline is not None
    assert len(cfg.pipeline.steps) == 1


# --- vLLM 0.34.0's real configs -------------------------------------------------------


def real(without_intel: bool = False) -> RepoConfig:
    files = asyncio.run(read_config_files(DirectorySource(FIXTURE), "checkout 0.34.0"))
    texts = dict(files.texts)
    if without_intel:
        texts = {p: t for p, t in texts.items()
                 if p != INTEL_CI_CONFIG_PATH and not p.startswith(".buildkite/intel_jobs/")}
    return read_repo_config(ConfigFiles(source="base 0.34.0", texts=texts))


REAL, REAL_WITHOUT_INTEL = real(), real(without_intel=True)


def test_vllm_0_34s_intel_pipeline_is_read_whole() -> None:
    intel = REAL.intel_pipeline
    assert intel is not None
    assert intel.problems == ()
    assert {s.platform for s in intel.steps} == {"intel"}
    # 18 job files; model_executor_intel.yaml's one step is commented out
    assert len({s.file for s in intel.steps}) == 17
    assert REAL_WITHOUT_INTEL.intel_pipeline is None
    assert REAL.pipeline == REAL_WITHOUT_INTEL.pipeline


def test_vllm_0_34_an_xpu_backend_change_is_named_with_the_intel_step_testing_it() -> None:
    files = (
        changed("vllm/v1/attention/backends/mla/xpu_mla_sparse.py"),
        changed("tests/kernels/attention/test_xpu_mla_sparse.py"),
    )
    line = ci_line(lines(REAL, files))
    assert "of which only the XPU ones can run its changed XPU code" in line
    assert "XPU Sparse MLA Tests (Intel BMG)" in line.split("code (", 1)[1]
    assert "none of them runs its tests" not in line
    assert "none runs on XPU" in ci_line(lines(REAL_WITHOUT_INTEL, files))


def test_vllm_0_34_other_changes_read_as_without_intels_pipeline() -> None:
    for files in (
        (changed("vllm/v1/engine/core.py"), changed("tests/v1/engine/test_engine_core.py")),
        (changed("vllm/lora/layers/base.py"),),
        (changed("csrc/attention/attention_kernels.cu"),),
        (changed("docs/index.md"),),
    ):
        assert lines(REAL, files) == lines(REAL_WITHOUT_INTEL, files), files


def test_the_json_carries_intels_steps_apart_from_the_main_pipelines() -> None:
    files = (changed("vllm/engine/core.py"), changed("tests/engine/test_xpu_engine.py"))
    digest = build_digest(FACTS.model_copy(update={"files": files}), RULES, "en",
                          repo_config=config({**MAIN, **INTEL}))
    ci = digest_json(digest, "")["ci"]
    assert [s["file"] for s in ci["steps"]] == [".buildkite/test_areas/engine.yaml"]
    assert [(s["label"], s["device"]) for s in ci["intel"]["steps"]] == [
        (":intel: (BMG) Engine", "intel_gpu")]
    assert ci["intel"]["broad_count"] == 0


def test_vllm_0_34_an_xpu_change_only_vllm_reaches_says_intels_steps_run_through_it() -> None:
    files = (changed("vllm/_xpu_ops.py", "@@ -1 +1 @@\n+x = 1\n"),)
    line = ci_line(lines(REAL, files))
    # 18 of Intel's PR steps list `vllm/`: they run on XPU, and none runs a test of it
    intel = REAL.intel_pipeline
    assert intel is not None
    through_vllm = [s for s in intel.steps if "vllm/" in s.dependencies
                    and not s.optional and not s.key.startswith("image-build")]
    assert len(through_vllm) == 18
    assert line.startswith(
        "- CI to run: none runs on XPU, where its changed code runs (`vllm/_xpu_ops.py`); "
        "Intel's pipeline runs 18 XPU steps only through `vllm/`, none tied to a test of this "
        "change · +")
    zh = ci_line(lines(REAL, files, "zh"))
    assert "Intel 流水线仅经由 `vllm/` 运行 18 个 XPU 步骤" in zh
    assert "none runs on XPU, where" in ci_line(lines(REAL_WITHOUT_INTEL, files))
    assert "Intel" not in ci_line(lines(REAL_WITHOUT_INTEL, files))


def test_vllm_0_34_an_xpu_pin_bump_says_intels_pipeline_runs_every_step() -> None:
    # a pin list or image recipe named for XPU reaches only the XPU image; Intel's
    # run-all patterns list them, so its whole pipeline runs
    files = (changed("requirements/xpu.txt", "@@ -1 +1 @@\n-torch==2.9.0\n+torch==2.10.0\n"),
             changed("docker/Dockerfile.xpu", "@@ -1 +1 @@\n-ARG X=1\n+ARG X=2\n"))
    found = lines(REAL, files)
    line = ci_line(found)
    assert line.startswith(
        "- CI to run: none runs on XPU, where its changed code runs (`requirements/xpu.txt`, "
        "`docker/Dockerfile.xpu`); Intel's pipeline runs all its ")
    assert "XPU steps (its run-all patterns match `requirements/xpu.txt`" in line
    digest = build_digest(FACTS.model_copy(update={"files": files}), RULES, "en",
                          repo_config=REAL)
    assert digest_json(digest, "")["ci"]["intel"]["run_all"] is True
    assert "运行全部" in ci_line(lines(REAL, files, "zh"))
    # the same bump beside a shared pin list is no longer XPU's alone
    mixed = (*files, changed("requirements/common.txt", "@@ -1 +1 @@\n-a==1\n+a==2\n"))
    assert "XPU" not in ci_line(lines(REAL, mixed))
