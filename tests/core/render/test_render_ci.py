"""The CI section with the head's statuses: one visible line for the build, each step's
status in the collapsed list, both languages. vLLM 0.34.0's real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, CommitStatus, HeadStatuses, PullRequestFacts
from bot.core.findings import Digest
from bot.core.render.ci import ci_detail_lines, ci_lines
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.render.words import risk_evidence
from bot.core.repo_config.config import RepoConfig
from bot.core.repo_config.pipeline import parse_pipeline
from bot.core.vocabulary import Lang
from bot.rulebook.files import load_rules
from tests.golden_files import assert_golden

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "vllm_config" / "0.34.0"
RULES = load_rules(ROOT / "rules")
CONFIG = RepoConfig(source="base 1a2b3c4", pipeline=parse_pipeline(
    {str(p.relative_to(FIXTURE)): p.read_text() for p in FIXTURE.rglob("*.yaml")}))
C = "buildkite/ci/pr"
FACTS = PullRequestFacts(
    number=60001, title="[Multimodal] Fix the processor cache key", head_sha="a" * 40,
    body="## Purpose\nFix.\n\n## Test Plan\npytest tests/multimodal\n\n## Test Result\n12 passed\n",
    files=(ChangedFile(filename="vllm/multimodal/processing.py", additions=12, deletions=3,
                       patch="@@ -1,2 +1,3 @@ def key():\n+    return (a, b)\n"),),
    changed_files=1, additions=12, deletions=3)


def statuses(*steps: tuple[str, str], build: tuple[str, str] | None,
             complete: bool = True) -> HeadStatuses:
    found = [CommitStatus(context=f"{C}/{name}", state=state) for name, state in steps]
    if build is not None:
        found.append(CommitStatus(context=C, state=build[0], description=build[1]))
    return HeadStatuses(context=C, statuses=tuple(found), complete=complete)


BLOCKED = statuses(("nvidia-h200-mig-35gb-v1-core", "success"),
                   ("amd-mi355-dpx-v1-core", "failure"),
                   ("nvidia-h200-mig-18gb-v1-executor-plus-worker", "success"),
                   build=("pending", "Build #64532 passed and blocked"))


def digest(head: HeadStatuses | None, lang: Lang = "en") -> Digest:
    return build_digest(FACTS, RULES, lang, repo_config=CONFIG, head_statuses=head)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_golden_ci_on_the_head(lang: Lang) -> None:
    assert_golden(f"ci_head.{lang}.md", render_digest(digest(BLOCKED, lang)))


def test_one_visible_line_says_how_the_build_and_its_steps_fared() -> None:
    lines = list(ci_lines(digest(BLOCKED)))
    head = [line for line in lines if line.startswith("- CI on this head")]
    # The steps whose commands run `tests/multimodal` (the changed module's) come first.
    assert head == [
        "- CI on this head: blocked — failed: V1 Core (MI355 DPX); not run: Async Engine, "
        "Inputs, Utils, Worker (H200 MIG 35GB, MI355 DPX), Multimodal + Config (CPU), "
        "Mooncake EC TCP E2E (L4 ×2, MI300 ×2), +16 more; 2 of 36 passed"]
    assert len(lines) <= 3


def test_each_device_has_its_status_in_the_collapsed_list() -> None:
    detail = "\n".join(ci_detail_lines(digest(BLOCKED)))
    assert "V1 Core (H200 MIG 35GB: passed, MI355 DPX: failed)" in detail


def test_without_a_build_on_the_head_one_line_says_so() -> None:
    lines = list(ci_lines(digest(statuses(build=None))))
    assert "- CI on this head: no build yet" in lines
    assert "relevant-ci-not-run" not in {r.id for r in digest(statuses(build=None)).risks}


def test_statuses_that_could_not_be_read_are_named_not_guessed() -> None:
    unread = HeadStatuses(context=C, problem="HTTP 502")
    lines = list(ci_lines(digest(unread, "zh")))
    assert "- 当前 head 的 CI：无法读取状态（HTTP 502）" in lines
    assert all(r.id != "relevant-ci-not-run" for r in digest(unread).risks)


def test_without_statuses_the_section_is_as_before() -> None:
    lines = list(ci_lines(digest(None)))
    assert not any("CI on this head" in line for line in lines)
    assert "passed" not in "\n".join(ci_detail_lines(digest(None)))


def test_the_json_carries_the_build_and_each_steps_status() -> None:
    found = digest(BLOCKED)
    ci = digest_json(found, render_digest(found))["ci"]
    assert ci["state"] == "blocked"
    assert ci["run"] == {"context": C, "state": "blocked",
                         "description": "Build #64532 passed and blocked", "reported": 3,
                         "complete": True, "problem": ""}
    by_key = {s["key"]: s["status"] for s in ci["steps"]}
    assert (by_key["v1-core"], by_key["amd-v1-core"]) == ("passed", "failed")
    assert by_key["v1-kv-offload"] == "not-run"
    none = digest_json(digest(None), "")["ci"]
    assert none["state"] is None
    assert none["run"] is None
    assert {s["status"] for s in none["steps"]} == {""}


def test_a_blocked_build_without_the_h200_step_is_a_risk() -> None:
    risk = {r.id: r for r in digest(BLOCKED).risks}["relevant-ci-not-run"]
    assert risk.severity == "medium"
    assert "V1 KV Offload (H200 MIG 35GB): not run" in risk_evidence(risk, "en")


# Twenty steps share `vllm/v1/`; one optional step also lists `vllm/v1/spec_decode/`
# and its command runs the spec decode tests; another lists it and runs e2e tests.
SHARED = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/e2e.yaml": "steps:\n" + "".join(
        f"- {{label: Shared {n}, key: shared-{n}, source_file_dependencies: [vllm/v1/]}}\n"
        for n in range(19)
    ) + "- {label: V1 e2e (2 GPUs), key: e2e-2, optional: true,"
        " source_file_dependencies: [vllm/v1/], commands: [pytest -v -s v1/e2e]}\n"
        "- {label: Acceptance Length, key: al, optional: true,"
        " source_file_dependencies: [vllm/v1/, vllm/v1/spec_decode/],"
        " commands: ['pytest -v -s v1/spec_decode/test_acceptance_length.py']}\n"
        "- {label: Eagle Correctness, key: eagle, optional: true,"
        " source_file_dependencies: [vllm/v1/spec_decode/],"
        " commands: ['pytest -v -s v1/spec_decode/test_eagle.py']}\n"
        "- {label: 2 Node, key: two-node, optional: true,"
        " source_file_dependencies: [vllm/v1/spec_decode/],"
        " commands: [pytest -v -s distributed/test_two_nodes.py]}\n",
}


def _not_run(path: str) -> list[str]:
    config = RepoConfig(source="base", pipeline=parse_pipeline(SHARED))
    facts = FACTS.model_copy(update={"files": (ChangedFile(filename=path, additions=1,
                                                           patch="@@ -1 +1 @@\n+x\n"),)})
    d = build_digest(facts, RULES, "en", repo_config=config)
    return [line for line in ci_lines(d) if line.startswith("- Not in this PR's build")]


def test_only_an_optional_step_whose_commands_test_the_change_is_named() -> None:
    # Eagle Correctness runs `tests/v1/spec_decode/test_eagle.py`, the changed module's
    # own test file: named. Acceptance Length runs another test of that folder, as it
    # does for any spec-decode change (judged misdirected on changes it does not
    # exercise); the 2-node step runs other tests, and V1 e2e is reached only through
    # `vllm/v1/`: all left to the collapsed list.
    (line,) = _not_run("vllm/v1/spec_decode/eagle.py")
    assert "Eagle Correctness" in line
    assert "Acceptance Length" not in line
    assert "V1 e2e" not in line
    assert "2 Node" not in line
    assert "1 optional step" in line
    assert _not_run("vllm/v1/spec_decode/ngram.py") == []
    # Nothing waiting runs the tests of `vllm/v1/worker/`: no line at all.
    assert _not_run("vllm/v1/worker/runner.py") == []


def _reached(*paths: str) -> str:
    config = RepoConfig(source="base", pipeline=parse_pipeline({
        **SHARED,
        ".buildkite/test_areas/sampler.yaml":
            "steps:\n- {label: Sampling, key: samplers,"
            " source_file_dependencies: [vllm/v1/sample/, tests/v1/sample/],"
            " commands: ['pytest -v -s v1/sample --ignore=v1/sample/test_slow.py']}\n"
            "- {label: Long name nobody shares, key: long,"
            " source_file_dependencies: [vllm/v1/sample/ops/topk_topp_sampler.py],"
            " commands: [pytest -v -s kernels/test_other.py]}\n",
    }))
    facts = FACTS.model_copy(update={"files": tuple(
        ChangedFile(filename=p, additions=1, patch="@@ -1 +1 @@\n+x\n") for p in paths)})
    (line,) = [x for x in ci_lines(build_digest(facts, RULES, "en", repo_config=config))
               if x.startswith("- CI to run")]
    return line


def test_the_step_running_the_changed_tests_leads_and_shared_ones_are_counted() -> None:
    line = _reached("vllm/v1/sample/ops/topk_topp_sampler.py", "tests/v1/sample/test_topk.py")
    # Sampling's command runs the changed test: first, before the step a longer entry
    # (listed by one step) reaches, whose command runs other tests.
    assert "`sampler.yaml`: Sampling (GPU), Long name nobody shares (GPU);" in line
    # The 19 steps only `vllm/v1/` (listed by 21 steps) reaches are counted, not named.
    assert "Shared" not in line
    assert "+19 more only through paths many steps share (`vllm/v1/`)" in line


def test_a_step_whose_command_ignores_the_changed_test_does_not_run_it() -> None:
    line = _reached("vllm/v1/sample/ops/topk_topp_sampler.py", "tests/v1/sample/test_slow.py")
    # `--ignore` takes the file back: no step runs it, so the entries decide again.
    assert line.index("Long name nobody shares") < line.index("Sampling")


def test_a_change_only_shared_paths_reach_says_so_and_names_no_step() -> None:
    line = _reached("vllm/v1/worker/runner.py")
    assert line == ("- CI to run: 19 steps through its paths, each reached only through "
                    "paths many steps share (`vllm/v1/`); none is tied to a test this PR "
                    "changes")


def _lines(files: tuple[ChangedFile, ...], config: RepoConfig = CONFIG,
           lang: Lang = "en") -> list[str]:
    facts = FACTS.model_copy(update={"files": files})
    return list(ci_lines(build_digest(facts, RULES, lang, repo_config=config)))


def test_an_xpu_only_change_says_no_step_runs_on_xpu_and_names_none() -> None:
    (line,) = [x for x in _lines((ChangedFile(
        filename="vllm/platforms/xpu.py", additions=2,
        patch="@@ -1 +1,2 @@ class XPUPlatform:\n+    x = 1\n+    y = 2\n"),))
               if x.startswith("- CI to run")]
    assert "none runs on XPU, where its changed code runs (`vllm/platforms/xpu.py`)" in line
    assert "`" + "misc.yaml" not in line
    assert "(CPU)" not in line
    (zh,) = [x for x in _lines((ChangedFile(filename="vllm/_xpu_ops.py", additions=1,
                                            patch="@@ -1 +1 @@\n+x = 1\n"),), lang="zh")
             if x.startswith("- 需运行的 CI")]
    # Only `vllm/` reaches it: the line still says no step runs on XPU.
    assert zh.startswith("- 需运行的 CI：没有一个在 XPU 上运行")


def test_a_rocm_branch_names_only_amd_steps_and_says_none_runs_its_tests() -> None:
    patch = ("@@ -10,2 +10,4 @@ class RotaryEmbedding:\n"
             "+        if self.use_aiter and q.dtype == torch.bfloat16:\n"
             "+            return self.cache_bf16\n")
    (line,) = [x for x in _lines((ChangedFile(
        filename="vllm/model_executor/layers/rotary_embedding/base.py", additions=2,
        patch=patch),)) if x.startswith("- CI to run")]
    assert "of which only the ROCm ones can run its changed ROCm code" in line
    assert "; none of them runs its tests" in line
    named = line.split("code (", 1)[1]
    assert "MI" in named
    assert "H200" not in named
    assert "H100" not in named


MIRRORED = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/jit.yaml": (
        "steps:\n- label: Engine\n  key: engine\n  device: h200_18gb\n"
        "  source_file_dependencies: [vllm/engine/]\n"
        "  commands: [pytest -v -s engine jit/test_hooks.py]\n"
        "  mirror: {amd: {device: mi325_1}}\n"),
}


def test_an_amd_mirror_prints_its_device_once_beside_its_step() -> None:
    config = RepoConfig(source="base", pipeline=parse_pipeline(MIRRORED))
    (line,) = [x for x in _lines((ChangedFile(filename="vllm/engine/core.py", additions=1,
                                              patch="@@ -1 +1 @@\n+x\n"),), config)
               if x.startswith("- CI to run")]
    assert "Engine (h200_18gb, mi325_1)" in line
    assert "(mi325_1) (mi325_1)" not in line
    assert "AMD:" not in line


def test_a_changed_test_a_command_runs_is_not_called_unrun() -> None:
    config = RepoConfig(source="base", pipeline=parse_pipeline(MIRRORED))
    hooks = ChangedFile(filename="tests/jit/test_hooks.py", additions=1, patch="@@ -1 +1 @@\n+x\n")
    other = ChangedFile(filename="tests/jit/test_other.py", additions=1, patch="@@ -1 +1 @@\n+x\n")
    # No dependency names either; the Engine step's command runs test_hooks.py.
    (line,) = [x for x in _lines((hooks, other), config) if x.startswith("- Not in this")]
    assert line == ("- Not in this PR's build: 1 changed test no step runs: "
                    "`tests/jit/test_other.py`")
    # A PR that edits a job file may add the step that runs it: the base cannot say.
    job = ChangedFile(filename=".buildkite/test_areas/jit.yaml", additions=1,
                      patch="@@ -1 +1 @@\n+x\n")
    assert not [x for x in _lines((other, job), config) if x.startswith("- Not in this")]


CPU_AND_GPU = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/models.yaml": (
        "steps:\n"
        "- {label: Models CPU, key: models-cpu, device: cpu,"
        " source_file_dependencies: [tests/models/], commands: ['pytest -v -s models']}\n"
        "- {label: Models, key: models, device: h200_35gb,"
        " source_file_dependencies: [tests/models/], commands: ['pytest -v -s models']}\n"
        "- {label: Extended, key: extended, optional: true, device: h200_35gb,"
        " source_file_dependencies: [tests/models/],"
        " commands: [\"pytest -v -s models -m 'not core_model'\"]}\n"),
}
CUDA_TEST_PATCH = (
    "@@ -10,3 +10,5 @@ def setup():\n"
    " @pytest.mark.skipif(not current_platform.is_cuda(), reason='Requires CUDA')\n"
    " def test_graph(vllm_runner):\n"
    "+    assert run(vllm_runner)\n")
CORE_ONLY_ADDED = ("@@ -0,0 +1,4 @@\n+import pytest\n+\n+@pytest.mark.core_model\n"
                   "+def test_smoke(vllm_runner): ...\n")


def _plan(*files: ChangedFile) -> list[str]:
    config = RepoConfig(source="base", pipeline=parse_pipeline(CPU_AND_GPU))
    facts = FACTS.model_copy(update={"files": files})
    return list(ci_lines(build_digest(facts, RULES, "en", repo_config=config)))


def test_a_cpu_step_does_not_lead_for_a_test_that_needs_cuda() -> None:
    (line,) = [x for x in _plan(ChangedFile(filename="tests/models/test_graph.py",
                                            additions=1, patch=CUDA_TEST_PATCH))
               if x.startswith("- CI to run")]
    assert line.index("Models (h200_35gb)") < line.index("Models CPU")
    # without the skip, the CPU step runs it as well and leads by its entries' order
    plain = CUDA_TEST_PATCH.replace("not current_platform.is_cuda()", "False")
    (line,) = [x for x in _plan(ChangedFile(filename="tests/models/test_graph.py",
                                            additions=1, patch=plain))
               if x.startswith("- CI to run")]
    assert line.index("Models CPU") < line.index("Models (h200_35gb)")


def test_an_optional_not_core_model_step_is_not_named_for_an_added_core_model_test() -> None:
    added = ChangedFile(filename="tests/models/test_new.py", status="added", additions=4,
                        patch=CORE_ONLY_ADDED)
    assert not [x for x in _plan(added) if x.startswith("- Not in this PR's build")]
    extra = CORE_ONLY_ADDED.replace("+@pytest.mark.core_model\n", "")
    (line,) = [x for x in _plan(added.model_copy(update={"patch": extra}))
               if x.startswith("- Not in this PR's build")]
    assert "1 optional step waits for an unblock (Extended)" in line


NAMED_FOR_IT = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/kernels.yaml": "steps:\n" + "".join(
        f"- {{label: Kernels {n}, key: k-{n}, source_file_dependencies: [vllm/layers/moe/]}}\n"
        for n in range(3)),
    ".buildkite/test_areas/compile.yaml": "steps:\n" + "".join(
        f"- {{label: Fusion E2E {n}, key: f-{n}, source_file_dependencies: [vllm/compile/]}}\n"
        for n in range(16)),
    ".buildkite/test_areas/eval.yaml": (
        "steps:\n- {label: LM Eval Humming, key: eval-h, optional: true,"
        " source_file_dependencies: [vllm/layers/moe/humming_moe.py]}\n"
        "- {label: LM Eval Large, key: eval-l, optional: true,"
        " source_file_dependencies: [vllm/layers/moe/humming_moe.py]}\n"
        "- {label: Humming Nightly, key: eval-n, optional: true,"
        " source_file_dependencies: [vllm/layers/moe/]}\n"),
}


def _named_for(*paths: str) -> list[str]:
    config = RepoConfig(source="base", pipeline=parse_pipeline(NAMED_FOR_IT))
    facts = FACTS.model_copy(update={"files": tuple(
        ChangedFile(filename=p, additions=1, patch="@@ -1 +1 @@\n+x\n") for p in paths)})
    return list(ci_lines(build_digest(facts, RULES, "en", repo_config=config)))


def test_a_step_whose_label_names_the_changed_module_leads_though_a_shared_folder_reaches_it(
) -> None:
    (line,) = [x for x in _named_for("vllm/compile/fusion_pass.py", "vllm/layers/moe/x.py")
               if x.startswith("- CI to run")]
    # `Fusion` names `fusion_pass.py`: named first, though `vllm/compile/` is listed by 16
    # steps; the kernel steps a narrow folder reaches follow; none runs a changed test.
    assert line.index("Fusion E2E 0") < line.index("Kernels 0")
    (line,) = [x for x in _named_for("vllm/compile/fusion_pass.py")
               if x.startswith("- CI to run")]
    assert line.startswith("- CI to run: 16 steps through its paths — `compile.yaml`: Fusion "
                           "E2E 0 (GPU), Fusion E2E 1 (GPU), +14 more; none of them runs its "
                           "tests")
    # a module whose name no label carries: the folder's steps are counted as before
    (line,) = [x for x in _named_for("vllm/compile/graph_pass.py")
               if x.startswith("- CI to run")]
    assert "Fusion" not in line
    assert "none is tied to a test this PR changes" in line


def test_an_optional_step_named_for_the_changed_file_it_lists_waits_visibly() -> None:
    (line,) = [x for x in _named_for("vllm/layers/moe/humming_moe.py")
               if x.startswith("- Not in this PR's build")]
    # LM Eval Large lists the file but its label names another thing; Humming Nightly is
    # named for it but only its folder reaches it: both stay in the collapsed list.
    assert line.endswith("1 optional step waits for an unblock (LM Eval Humming)")
    assert not [x for x in _named_for("vllm/layers/moe/other.py")
                if x.startswith("- Not in this PR's build")]


OPTIONAL_EVALS = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/eval.yaml": (
        "steps:\n- {label: DSv4-Flash Accuracy Eval, key: e-ds, optional: true, device: mi355_8,"
        " source_file_dependencies: [vllm/attention/flash_prefill.py]}\n"
        "- {label: Flash Prefill Eval, key: e-fp, optional: true, device: h100,"
        " source_file_dependencies: [vllm/attention/flash_prefill.py]}\n"
        "- {label: Flash Prefill Sweep, key: e-fp-amd, optional: true, device: mi355_1,"
        " source_file_dependencies: [vllm/attention/flash_prefill.py]}\n"),
}


def _waiting(path: str, added: str = "x") -> str:
    config = RepoConfig(source="base", pipeline=parse_pipeline(OPTIONAL_EVALS))
    facts = FACTS.model_copy(update={"files": (
        ChangedFile(filename=path, additions=1, patch=f"@@ -1 +1 @@\n+{added}\n"),)})
    lines = ci_lines(build_digest(facts, RULES, "en", repo_config=config))
    return next((x for x in lines if x.startswith("- Not in this PR's build")), "")


def test_a_model_named_in_a_step_label_names_no_module() -> None:
    # "Flash" of `DSv4-Flash` is the model's size; `Flash Prefill` names the module.
    line = _waiting("vllm/attention/flash_prefill.py")
    assert line.endswith(
        "2 optional steps wait for an unblock (Flash Prefill Eval, Flash Prefill Sweep)")
    assert "DSv4" not in line


def test_an_optional_step_of_another_platform_is_not_named_for_a_one_platform_change() -> None:
    # the change only ROCm runs: the CUDA copy of the step cannot take it
    rocm = _waiting("vllm/attention/flash_prefill.py", "if current_platform.is_rocm():")
    assert rocm.endswith("1 optional step waits for an unblock (Flash Prefill Sweep)")


def test_a_change_of_comments_and_docstrings_only_names_no_step() -> None:
    docstring = ('@@ -10,4 +10,4 @@ class SchedulerConfig:\n     max_num_seqs: int = 128\n'
                 '     """Maximum number of sequences\n-    per iteration."""\n'
                 '+    per iteration, across all DP ranks."""\n')
    files = (ChangedFile(filename="vllm/multimodal/processing.py", additions=1, deletions=1,
                         patch=docstring),
             ChangedFile(filename="docs/serving/dp.md", additions=1, patch="@@ -1 +1 @@\n+x\n"))
    (line,) = [x for x in _lines(files) if x.startswith("- CI to run")]
    assert line.startswith("- CI to run: ")
    assert "its code changes only comments and docstrings, which no step tests" in line
    assert "misc.yaml" not in line
    (zh,) = [x for x in _lines(files, lang="zh") if x.startswith("- 需运行的 CI")]
    assert "其代码改动只有注释和文档字符串" in zh
    # one changed line of code: the steps are named again
    code = docstring + "@@ -30 +30 @@ def key():\n-    return a\n+    return (a, b)\n"
    (line,) = [x for x in _lines((files[0].model_copy(update={"patch": code}),))
               if x.startswith("- CI to run")]
    assert "comments and docstrings" not in line
    assert "misc.yaml" in line


ARCHITECTURES = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/kernels.yaml": (
        "steps:\n"
        "- label: Kernels Hopper\n  key: k-h100\n  device: h100\n"
        "  source_file_dependencies: [csrc/quantization/]\n"
        "  commands: [pytest -v -s kernels/quantization]\n"
        "- label: Kernels Blackwell\n  key: k-b200\n  device: b200-k8s\n"
        "  source_file_dependencies: [csrc/quantization/]\n"
        "  commands: [pytest -v -s kernels/quantization]\n"
        "- label: Kernels AMD\n  key: k-amd\n  device: mi300_1\n"
        "  source_file_dependencies: [csrc/quantization/]\n"
        "  commands: [pytest -v -s kernels/quantization]\n"),
}


def _kernel_line(path: str) -> str:
    config = RepoConfig(source="base", pipeline=parse_pipeline(ARCHITECTURES))
    (line,) = [x for x in _lines((ChangedFile(filename=path, additions=3,
                                              patch="@@ -1 +1,2 @@\n+int x;\n"),), config)
               if x.startswith("- CI to run")]
    return line


def test_a_kernel_of_one_cuda_architecture_names_only_the_steps_on_its_gpus() -> None:
    hopper = _kernel_line("csrc/quantization/scaled_mm_sm90_fp8.cu")
    assert "of which only the SM 9.x ones can run its changed SM 9.x code" in hopper
    assert "Kernels Hopper" in hopper
    assert "Blackwell" not in hopper
    assert "AMD" not in hopper
    consumer = _kernel_line("csrc/quantization/scaled_mm_blockwise_sm120_fp8.cu")
    assert "none runs on SM 12.x, where its changed code runs" in consumer


MODEL_STEPS = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/models.yaml": (
        "steps:\n"
        "- label: Distributed Models\n  key: dist\n  device: l4\n  num_devices: 2\n"
        "  source_file_dependencies: [vllm/model_executor/models/, tests/models/]\n"
        "  commands: [\"pytest models -v -s -m 'distributed(num_gpus=2)'\"]\n"
        "- label: Language Models\n  key: lang\n  device: h100\n"
        "  source_file_dependencies: [vllm/model_executor/models/]\n"
        "  commands: [pytest -v -s models/language]\n"),
}
MODEL_CONFIG = RepoConfig(source="base", pipeline=parse_pipeline(MODEL_STEPS))
# a model change with its new, unmarked test
ARIA = (ChangedFile(filename="vllm/model_executor/models/aria.py", additions=3,
                    patch="@@ -1 +1,2 @@\n+x = 1\n"),
        ChangedFile(filename="tests/models/test_aria.py", status="added", additions=3,
                    patch="@@ -0,0 +1,3 @@\n+import pytest\n+def test_load(): ...\n"))


def test_a_test_folder_reaches_a_step_as_its_own_only_when_it_runs_the_changed_test() -> None:
    facts = FACTS.model_copy(update={"files": ARIA})
    plan = build_digest(facts, RULES, "en", repo_config=MODEL_CONFIG).ci
    assert plan is not None
    (dist,) = [s for s in plan.steps if s.key == "dist"]
    # `-m 'distributed(...)'` does not run an unmarked test: the step is reached through
    # the models folder two steps list, not through tests/models/ (listed by one).
    assert not dist.runs_changed_tests
    assert dist.shared_by == 2


def test_an_added_test_the_reaching_runs_select_out_is_a_test_no_step_runs() -> None:
    (line,) = [x for x in _lines(ARIA, MODEL_CONFIG) if x.startswith("- Not in this PR's build")]
    assert line.endswith("1 changed test no step runs: `tests/models/test_aria.py` (the steps "
                         "whose pytest reaches it select `-m distributed`)")
    marked = ChangedFile(filename="tests/models/test_aria.py", status="added", additions=3,
                         patch="@@ -0,0 +1,3 @@\n+@pytest.mark.distributed(num_gpus=2)\n"
                               "+def test_load(): ...\n")
    assert not [x for x in _lines((ARIA[0], marked), MODEL_CONFIG)
                if x.startswith("- Not in this PR's build")]


# Two steps list the model folder: one beside three other source folders, one alone (it
# runs whenever a model changes); a third lists the worker folder, a fourth its `gpu/`.
MODEL_STEPS = {
    ".buildkite/ci_config.yaml": "job_dirs:\n  - .buildkite/test_areas\n",
    ".buildkite/test_areas/distributed.yaml":
        "steps:\n- {label: Pipeline Parallel, key: pp, num_devices: 4,"
        " source_file_dependencies: [vllm/distributed/, vllm/engine/, vllm/executor/,"
        " vllm/models/, tests/distributed/], commands: [pytest -v -s distributed]}\n"
        "- {label: DP Basic, key: dp, source_file_dependencies: [vllm/distributed/,"
        " vllm/worker/], commands: [pytest -v -s v1/distributed]}\n",
    ".buildkite/test_areas/models_basic.yaml":
        "steps:\n- {label: Model Initialization, key: init,"
        " source_file_dependencies: [vllm/models/, tests/models/registry.py],"
        " commands: [pytest -v -s models/test_initialization.py]}\n",
    ".buildkite/test_areas/runner.yaml":
        "steps:\n" + "".join(
            f"- {{label: Runner {i}, key: r{i}, source_file_dependencies: [vllm/worker/gpu/,"
            f" vllm/core/], commands: [pytest -v -s e2e/test_{i}.py]}}\n" for i in range(3)),
}


def _model_line(path: str) -> str:
    config = RepoConfig(source="base", pipeline=parse_pipeline(MODEL_STEPS))
    facts = FACTS.model_copy(update={"files": (
        ChangedFile(filename=path, additions=1, patch="@@ -1 +1 @@\n+x\n"),)})
    (line,) = [x for x in ci_lines(build_digest(facts, RULES, "en", repo_config=config))
               if x.startswith("- CI to run")]
    return line


def test_of_steps_one_entry_reaches_the_one_listing_only_it_leads() -> None:
    line = _model_line("vllm/models/llama.py")
    assert line.index("Model Initialization") < line.index("Pipeline Parallel")
    # the order of the job files alone would put Pipeline Parallel first
    assert list(MODEL_STEPS).index(".buildkite/test_areas/distributed.yaml") < list(
        MODEL_STEPS).index(".buildkite/test_areas/models_basic.yaml")


def test_a_step_a_deeper_entry_reaches_leads_though_more_steps_list_it() -> None:
    # `vllm/worker/gpu/` is listed by 3 steps, `vllm/worker/` by 1: the folder closer to
    # the change says more about which step is its own
    line = _model_line("vllm/worker/gpu/input_batch.py")
    assert line.index("Runner 0") < line.index("DP Basic")



def test_a_run_all_change_names_the_steps_that_test_it() -> None:
    config = RepoConfig(source="base", pipeline=parse_pipeline({
        ".buildkite/ci_config.yaml":
            "job_dirs:\n  - .buildkite/test_areas\nrun_all_patterns:\n  - csrc/\n",
        ".buildkite/test_areas/kernels.yaml":
            "steps:\n- {label: Quantization Kernels, key: qk,"
            " source_file_dependencies: [csrc/quantization/, tests/kernels/quantization/],"
            " commands: [pytest -v -s kernels/quantization]}\n"
            "- {label: Attention Kernels, key: ak,"
            " source_file_dependencies: [csrc/attention/],"
            " commands: [pytest -v -s kernels/attention]}\n",
    }))

    def line(*paths: str) -> str:
        facts = FACTS.model_copy(update={"files": tuple(
            ChangedFile(filename=p, additions=1, patch="@@ -1 +1 @@\n+x\n") for p in paths)})
        (found,) = [x for x in ci_lines(build_digest(facts, RULES, "en", repo_config=config))
                    if x.startswith("- CI to run")]
        return found

    tested = line("csrc/quantization/hadamard.cu", "tests/kernels/quantization/test_had.py")
    assert tested == ("- CI to run: every step (a path matches the pipeline's run-all "
                      "patterns) — of them, those that test it: `kernels.yaml`: "
                      "Quantization Kernels (GPU)")
    # nothing of its own tests it: the run-all line says all there is
    assert line("csrc/quantization/hadamard.cu") == (
        "- CI to run: every step (a path matches the pipeline's run-all patterns)")


def test_a_table_for_one_gpu_model_names_only_steps_on_that_model() -> None:
    from bot.core.findings import CiStepRef
    from bot.core.render.ci import on_platform, platform_name

    def on(device: str, platform: str) -> bool:
        return on_platform(CiStepRef(label="x", device=device), platform)

    assert on("h200_35gb", "gpu:NVIDIA_H200")
    assert on("h100", "gpu:NVIDIA_H100_80GB_HBM3")
    assert on("a100", "gpu:NVIDIA_A100-SXM4-80GB")
    assert not on("h200_35gb", "gpu:NVIDIA_H20-3e")
    assert not on("b200-k8s", "gpu:NVIDIA_GB200")
    assert platform_name("gpu:NVIDIA_H20-3e", "en") == "NVIDIA H20-3e"
