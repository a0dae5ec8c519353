"""The risk checklist: one firing and one quiet case per risk id, plus real bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.findings import CiPlan, CiRun, CiStepRef
from bot.core.judging.risks import _hardware_gate, assess_risks, compile_risk_settings
from bot.core.reading.body import parse_body
from bot.core.render.words import risk_evidence, risk_text
from bot.core.rules.risk_settings import RiskSettings
from bot.core.vocabulary import AreaMatch, Clue, Criticality, Lang, Risk, Severity
from bot.rulebook.files import load_rules
from bot.settings.defaults import DEFAULT_RULES_DIR

ROOT = Path(__file__).resolve().parents[3]
CASES = {
    c["number"]: c
    for c in json.loads(
        (Path(__file__).resolve().parents[2] / "fixtures/cases/vllm_prs.json").read_text())
}
SETTINGS = RiskSettings()

GOOD_BODY = """## Purpose
Fix it.

## Test Plan
pytest -k fusion

## Test Result
12 passed

## Model evaluation
|Tasks|Version|Filter|n-shot|Metric|Value|
|gsm8k|3|strict-match|5|exact_match|0.7801|
"""


def area(
    area_id: str,
    files: tuple[str, ...] = (),
    *,
    numerics: bool = False,
    criticality: Criticality = "medium",
    quiet: bool = False,
) -> AreaMatch:
    return AreaMatch(
        id=area_id,
        title=area_id,
        audience="reviewers",
        criticality=criticality,
        numerics=numerics,
        files=files,
        quiet=quiet,
    )


def pr(*files: str | ChangedFile, **fields: Any) -> PullRequestFacts:
    changed = tuple(
        f if isinstance(f, ChangedFile) else ChangedFile(filename=f, additions=10, deletions=2)
        for f in files
    )
    return PullRequestFacts(files=changed, changed_files=len(changed), **fields)


@dataclass(frozen=True)
class Worded:
    """A risk (data) with its words as the digest shows them (bot/core/render/words.py)."""

    data: Risk
    text: str
    evidence: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.data.id

    @property
    def severity(self) -> Severity:
        return self.data.severity


def worded(risk: Risk, areas: tuple[AreaMatch, ...], lang: Lang) -> Worded:
    return Worded(risk, risk_text(risk, areas, lang), risk_evidence(risk, lang))


def assess(
    facts: PullRequestFacts,
    body: str | None = GOOD_BODY,
    areas: tuple[AreaMatch, ...] = (),
    lang: Lang = "en",
    settings: RiskSettings = SETTINGS,
) -> dict[str, Worded]:
    risks = assess_risks(facts, parse_body(body), areas, settings)
    assert len({r.id for r in risks}) == len(risks)
    return {r.id: worded(r, areas, lang) for r in risks}


COMPILE_FILE = "vllm/compilation/fusion.py"
COMPILE = area("compile", (COMPILE_FILE,), numerics=True, criticality="high")
TESTED = (COMPILE_FILE, "tests/compile/test_fusion.py")
# Code no numerics risk stands on, tested.
SERVED = ("vllm/entrypoints/openai/serving_chat.py", "tests/entrypoints/test_chat.py")
SCHEDULER_FILE = "vllm/v1/core/sched/scheduler.py"
SCHEDULER = area("core", (SCHEDULER_FILE,), criticality="critical")


# --- missing-gpu-eval ----------------------------------------------------------


def test_missing_gpu_eval_names_the_admission() -> None:
    body = GOOD_BODY.split("## Model evaluation")[0] + (
        "## Model evaluation\nNot yet run — needs a GPU run before merge.\n"
    )
    risk = assess(pr(*TESTED), body, (COMPILE,))["missing-gpu-eval"]
    assert risk.severity == "high"
    assert risk.evidence == ("Not yet run", "needs a GPU run", "compile")
    assert "compile" in risk.text


def test_missing_gpu_eval_is_low_when_tests_ran_but_nothing_measured() -> None:
    # Passing tests are evidence of a run, not of unchanged outputs: the item stays,
    # low (in the collapsed checklist).
    body = "## Purpose\nx\n## Test Plan\npytest\n## Test Result\n3 passed\n"
    risk = assess(pr(*TESTED), body, (COMPILE,))["missing-gpu-eval"]
    assert risk.severity == "low"
    assert risk.evidence == ("no accuracy/benchmark results in the body", "compile")


def test_missing_gpu_eval_for_kernels_without_a_numerics_area() -> None:
    body = "## Test Plan\npytest tests/kernels\n## Test Result\n3 passed\n"
    risk = assess(pr("csrc/layernorm_kernels.cu", "tests/kernels/test_ln.py"), body)[
        "missing-gpu-eval"
    ]
    assert "csrc/layernorm_kernels.cu" in risk.evidence


def test_no_missing_gpu_eval_with_an_lm_eval_table() -> None:
    assert "missing-gpu-eval" not in assess(pr(*TESTED), GOOD_BODY, (COMPILE,))


def test_no_missing_gpu_eval_for_a_non_numerics_area() -> None:
    frontend = area("frontend", ("vllm/entrypoints/openai/api_server.py",))
    assert "missing-gpu-eval" not in assess(pr(*frontend.files), "## Purpose\nx", (frontend,))


def test_no_missing_gpu_eval_when_the_area_matched_only_tests() -> None:
    tests_only = area("compile", ("tests/compile/test_fusion.py",), numerics=True)
    assert "missing-gpu-eval" not in assess(pr(*tests_only.files), "## Purpose\nx", (tests_only,))


# --- missing-test-results ------------------------------------------------------


@pytest.mark.parametrize(
    ("result_section", "evidence"),
    [
        ("## Test Result\nTBD\n", "TBD"),
        ("## Test Result\n\n", "empty Test Result section"),
        ("", "no Test Result section"),
    ],
)
def test_missing_test_results(result_section: str, evidence: str) -> None:
    # Tests changed and no numerics area: an empty result is the vLLM norm (CI shows
    # it), so the item is low.
    body = f"## Purpose\nx\n## Test Plan\npytest tests/a.py\n{result_section}"
    risk = assess(pr(*SERVED), body)["missing-test-results"]
    assert (risk.severity, risk.evidence) == ("low", (evidence,))


def test_missing_test_results_is_medium_for_untested_critical_code() -> None:
    # A plan without results: the gap is the results' own line (an empty plan too: below).
    planned = "## Purpose\nx\n## Test Plan\nrun the scheduler by hand\n## Test Result\n\n"
    risk = assess(pr(SCHEDULER_FILE), planned, (SCHEDULER,))["missing-test-results"]
    assert risk.severity == "medium"
    body = "## Purpose\nx\n## Test Plan\n\n## Test Result\n\n"
    # The same PR with a test change, or with a CI build linked, is low / quiet.
    tested = pr(SCHEDULER_FILE, "tests/v1/core/test_scheduler.py")
    assert assess(tested, body, (SCHEDULER,))["missing-test-results"].severity == "low"
    linked = body + "CI: https://buildkite.com/vllm/ci/builds/4242\n"
    assert "missing-test-results" not in assess(pr(SCHEDULER_FILE), linked, (SCHEDULER,))


def test_one_ask_for_a_run_the_most_specific_at_the_highest_severity() -> None:
    """Numerics code with no result: the GPU evaluation stands for the test output too,
    at the higher of the two severities; a platform file's run stands for both."""
    body = "## Purpose\nx\n## Test Plan\n\n## Test Result\n\n"
    risks = assess(pr(COMPILE_FILE), body, (COMPILE,))
    assert "missing-test-results" not in risks
    assert risks["missing-gpu-eval"].severity in ("medium", "high")
    body += "Not yet run on a GPU.\n"  # an admitted gap: the evaluation is high
    kernel = "csrc/xpu/fused_input_norm.cpp"
    patched = ChangedFile(filename=kernel, additions=1, patch="@@ -1 +1 @@\n+  out = x * s;")
    xpu = pr(patched, title="[XPU] fuse the norm")
    kernels = area("kernels", (kernel,), numerics=True, criticality="high")
    assert assess_risks(xpu, parse_body(body), (kernels,), SETTINGS)  # sanity
    both = assess(xpu, body, (kernels,))
    assert set(both) & {"missing-gpu-eval", "missing-test-results"} == set()
    assert both["hardware-unverified"].severity == "high"
    # A title tag alone (a low hardware item) is never the one kept: the evaluation is.
    tagged = assess(pr(COMPILE_FILE, title="[XPU] fusion"), body, (COMPILE,))
    assert "hardware-unverified" not in tagged
    assert tagged["missing-gpu-eval"].severity in ("medium", "high")
    alone = assess(pr("vllm/entrypoints/llm.py", title="[XPU] fix"), "## Purpose\nx\n", ())
    assert alone["hardware-unverified"].severity == "low"


def test_missing_test_results_on_an_empty_body_in_chinese() -> None:
    risk = assess(pr(*SERVED), None, lang="zh")["missing-test-results"]
    assert risk.evidence == ("描述为空",)
    assert "测试结果" in risk.text


def test_no_missing_test_results_when_results_are_posted() -> None:
    assert "missing-test-results" not in assess(pr(*TESTED), GOOD_BODY)


def test_no_missing_test_results_for_docs_only() -> None:
    body = CASES[51215]["body"]  # "## Testing: Not run; documentation-only change."
    assert "missing-test-results" not in assess(pr("docs/getting_started/quickstart.md"), body)


# --- missing-tests -------------------------------------------------------------


def test_missing_tests_lists_up_to_five_sources() -> None:
    files = [f"vllm/multimodal/m{i}.py" for i in range(7)]
    risk = assess(pr(*files, "docs/a.md"))["missing-tests"]
    assert risk.severity == "medium"
    assert risk.evidence == tuple(files[:5])
    assert risk.text.startswith("7 source files changed without any test change")


def test_missing_tests_names_one_source_in_the_singular() -> None:
    risk = assess(pr("vllm/multimodal/m0.py"))["missing-tests"]
    assert risk.text.startswith("1 source file changed without any test change")


def test_no_missing_tests_with_a_test_change() -> None:
    assert "missing-tests" not in assess(pr(*TESTED))


def test_no_missing_tests_for_docs_or_ci_only() -> None:
    assert "missing-tests" not in assess(pr("docs/a.md", ".buildkite/test_areas/misc.yaml"))


def test_deleted_sources_need_no_tests() -> None:
    gone = ChangedFile(filename="vllm/old.py", status="removed", deletions=40)
    assert "missing-tests" not in assess(pr(gone))


# --- release-branch ------------------------------------------------------------


def test_release_branch_by_base() -> None:
    risk = assess(pr(*TESTED, base_ref="releases/v0.11.1"))["release-branch"]
    assert (risk.severity, risk.evidence) == ("high", ("base: releases/v0.11.1",))
    assert "re-run the equivalent gates on the release branch" in risk.text


@pytest.mark.parametrize(
    ("title", "body", "phrase"),
    [
        ("[Bugfix] Cherry-pick #123 to v0.11", GOOD_BODY, "Cherry-pick"),
        ("[Bugfix] fix", GOOD_BODY + "\nBackport of #4567.", "Backport"),
    ],
)
def test_release_branch_by_words(title: str, body: str, phrase: str) -> None:
    risk = assess(pr(*TESTED, title=title), body)["release-branch"]
    assert risk.evidence == (phrase,)


def test_no_release_branch_on_main() -> None:
    assert "release-branch" not in assess(pr(*TESTED, title="[Bugfix] pick the right backend"))


# --- large-diff ----------------------------------------------------------------


def test_large_diff_low_then_medium() -> None:
    big = ChangedFile(filename="vllm/a.py", additions=900, deletions=200)
    risk = assess(pr(big, "tests/test_a.py"))["large-diff"]
    assert (risk.severity, risk.evidence) == ("low", ("+910/−202", "2 files"))
    huge = ChangedFile(filename="vllm/a.py", additions=3500, deletions=10)
    assert assess(pr(huge, "tests/test_a.py"))["large-diff"].severity == "medium"


def test_large_diff_says_how_many_files_github_listed() -> None:
    facts = pr(*TESTED).model_copy(update={"changed_files": 4200})
    risk = assess(facts)["large-diff"]
    assert risk.severity == "medium"
    assert "GitHub lists only 2 of 4200 files" in risk.text


def test_no_large_diff_for_a_normal_pr() -> None:
    assert "large-diff" not in assess(pr(*TESTED))


# --- new-model-checklist -------------------------------------------------------


def test_new_model_checklist_names_the_missing_file() -> None:
    facts = pr(
        "vllm/model_executor/models/registry.py",
        ChangedFile(filename="vllm/model_executor/models/sarvam.py", status="added"),
        "tests/models/registry.py",
    )
    risk = assess(facts)["new-model-checklist"]
    assert (risk.severity, risk.evidence) == ("medium", ("docs/models/supported_models.md",))


def test_new_model_file_without_registry_changes() -> None:
    added = ChangedFile(filename="vllm/model_executor/models/sarvam.py", status="added")
    risk = assess(pr(added))["new-model-checklist"]
    assert risk.evidence == ("tests/models/registry.py", "docs/models/supported_models.md")


def test_no_new_model_checklist_when_complete() -> None:
    files = [f["filename"] for f in CASES[22665]["files"]]  # SmolLM3: all three files
    assert "new-model-checklist" not in assess(pr(*files), CASES[22665]["body"])


def test_a_draft_architecture_in_the_registry_is_no_new_served_model() -> None:
    def registry(table: str) -> ChangedFile:
        return ChangedFile(
            filename="vllm/model_executor/models/registry.py", additions=1,
            patch=(f"@@ -649,3 +649,4 @@ {table} = {{\n"
                   '     "LlamaModel": ("llama", "LlamaForCausalLM"),\n'
                   '+    "XModel": ("x_draft", "XForCausalLM"),\n'))
    model = ChangedFile(filename="vllm/model_executor/models/x_draft.py", status="added",
                        additions=40)
    test = "tests/models/registry.py"
    assert "new-model-checklist" not in assess(
        pr(registry("_SPECULATIVE_DECODING_MODELS"), model, test))
    risk = assess(pr(registry("_TEXT_GENERATION_MODELS"), model, test))["new-model-checklist"]
    assert risk.evidence == ("docs/models/supported_models.md",)


def test_modified_model_file_is_not_a_new_model() -> None:
    assert "new-model-checklist" not in assess(pr("vllm/model_executor/models/llama.py"))


# --- perf-claim-without-numbers -------------------------------------------------


def test_perf_title_without_numbers() -> None:
    facts = pr(*TESTED, title="[ROCm][Perf][MLA] Add AITER prefill backend")
    risk = assess(facts, CASES[45033]["body"])["perf-claim-without-numbers"]
    assert (risk.severity, risk.evidence) == ("medium", ("[Perf]",))


def test_perf_claim_in_body_without_numbers() -> None:
    risk = assess(pr(*TESTED), "## Purpose\nThis is 2x faster.\n")["perf-claim-without-numbers"]
    assert risk.evidence == ("2x faster",)


def test_no_perf_risk_with_a_benchmark() -> None:
    body = "## Purpose\n2x faster.\n## Benchmarks\n| bs | before | after |\n| 1 | 12 ms | 6 ms |"
    assert "perf-claim-without-numbers" not in assess(pr(*TESTED, title="[Perf] x"), body)


def test_no_perf_risk_with_a_performance_section() -> None:
    body = "## Purpose\nTune the table.\n## Performance\nA/B on one H20-3e node, TP=8.\n"
    risks = assess(pr(*TESTED, title="[Kernel][Perf] Tune configs"), body)
    assert "perf-claim-without-numbers" not in risks
    assert "missing-test-results" not in risks


# --- hardware-unverified --------------------------------------------------------


def test_rocm_change_with_verification_pending() -> None:
    body = "## Test Plan\nBuilt the wheel; runtime verification needs a CDNA box.\n"
    risk = assess(pr("vllm/platforms/rocm.py", "tests/rocm/test_x.py"), body)["hardware-unverified"]
    assert risk.severity == "medium"
    assert risk.evidence == ("runtime verification needs a CDNA box", "vllm/platforms/rocm.py")
    assert "ROCm" in risk.text


def test_cpu_change_naming_no_hardware() -> None:
    risk = assess(pr("csrc/cpu/attention.cpp", "tests/kernels/test_cpu.py"))["hardware-unverified"]
    assert risk.evidence == ("no CPU hardware named in the description", "csrc/cpu/attention.cpp")


def test_no_hardware_risk_when_the_run_is_reported() -> None:
    body = GOOD_BODY + "\nRan on MI300X (gfx942): 12 passed.\n"
    assert "hardware-unverified" not in assess(pr("vllm/platforms/rocm.py", *TESTED), body)


def test_no_hardware_risk_for_docs_mentioning_xpu() -> None:
    assert "hardware-unverified" not in assess(
        pr("docs/getting_started/quickstart.md"), CASES[51215]["body"]
    )


# --- relevant-ci-not-run ---------------------------------------------------------


H200 = CiStepRef(label=":nvidia: (H200 MIG 35GB) Multimodal Processor", key="mm",
                 file=".buildkite/test_areas/models_multimodal.yaml", device="h200_35gb",
                 gpus=1, matched=("vllm/multimodal",), status="not-run")
B200 = CiStepRef(label=":nvidia: (B200) Fusion E2E TP2", key="fusion", device="b200-k8s",
                 gpus=2, matched=("vllm/compilation",), status="passed")
L4 = CiStepRef(label=":nvidia: (L4) Basic Correctness", key="basic", device="l4", gpus=1,
               matched=("vllm/multimodal",), status="not-run")
CPU = CiStepRef(label=":computer: (CPU) Multimodal Processor", key="cpu", device="cpu-medium",
                matched=("vllm/multimodal",), status="not-run")
BUILD = CiRun(context="buildkite/ci/pr", state="blocked", reported=42)


def ci(*steps: CiStepRef, run: CiRun | None = BUILD, **fields: Any) -> CiPlan:
    return CiPlan(steps=steps, run=run, **fields)


def assess_ci(plan: CiPlan, lang: Lang = "en",
              settings: RiskSettings = SETTINGS) -> Worded | None:
    risks = assess_risks(pr(*TESTED), parse_body(GOOD_BODY), (), settings, ci=plan)
    found = {r.id: r for r in risks}.get("relevant-ci-not-run")
    return worded(found, (), lang) if found else None


def test_a_special_hardware_step_the_finished_build_did_not_run() -> None:
    risk = assess_ci(ci(H200, B200))
    assert risk is not None
    # The finding is data: how many steps, the build's state, each step and its status.
    assert risk.data.params == (("count", 1), ("state", "blocked"))
    assert risk.data.evidence == (Clue(kind="ci-step", text=H200.label, detail="not-run",
                                       device=H200.device, numbers=(H200.gpus,)),)
    assert risk.severity == "medium"
    assert risk.evidence == ("Multimodal Processor (H200 MIG 35GB): not run",)
    assert "1 CI step" in risk.text
    assert "(build blocked)" in risk.text
    zh = assess_ci(ci(H200, B200), "zh")
    assert zh is not None
    assert "未运行" in zh.evidence[0]


@pytest.mark.parametrize("state", ["passed", "failed", "error", "blocked"])
def test_a_blocked_or_pending_step_of_a_settled_build_did_not_run(state: str) -> None:
    pending = H200.model_copy(update={"status": "pending"})
    blocked = B200.model_copy(update={"status": "blocked"})
    run = BUILD.model_copy(update={"state": state})
    risk = assess_ci(ci(pending, blocked, run=run))
    assert risk is not None
    # B200 first: the longer dependency entry is closer to the change.
    assert risk.evidence == ("Fusion E2E TP2 (B200 ×2): waiting for an unblock",
                             "Multimodal Processor (H200 MIG 35GB): pending")


def test_a_multi_gpu_step_on_the_default_gpu_is_special() -> None:
    two = L4.model_copy(update={"gpus": 2})
    risk = assess_ci(ci(two))
    assert risk is not None
    assert risk.evidence == ("Basic Correctness (L4 ×2): not run",)


def test_an_optional_step_counts_unless_the_settings_say_not() -> None:
    plan = ci(B200, optional=(H200.model_copy(update={"optional": True, "status": "blocked"}),))
    assert assess_ci(plan) is not None
    assert assess_ci(plan, settings=RiskSettings(ci_not_run_optional=False)) is None


@pytest.mark.parametrize(("why", "plan"), [
    ("the build has not started (no ready label)",
     ci(H200.model_copy(update={"status": ""}),
        run=CiRun(context="buildkite/ci/pr", state="not-started"))),
    ("the build still runs", ci(H200.model_copy(update={"status": "pending"}),
                                run=BUILD.model_copy(update={"state": "running"}))),
    ("the statuses could not be read",
     ci(H200, run=CiRun(context="buildkite/ci/pr", state="unreadable", problem="HTTP 502"))),
    ("the statuses were not read", ci(H200, run=None)),
    ("not every status was read", ci(H200, run=BUILD.model_copy(update={"complete": False}))),
    ("no status named any step: nothing proves an absence",
     ci(H200, run=BUILD.model_copy(update={"reported": 0}))),
    ("a status could be the step's", ci(H200.model_copy(update={"status": "unknown"}))),
    ("the step ran", ci(H200.model_copy(update={"status": "failed"}), B200)),
    ("the default runners", ci(L4, CPU)),
    ("a nightly-only step", ci(B200, nightly=(H200.model_copy(update={"nightly": True}),))),
])
def test_no_relevant_ci_not_run(why: str, plan: CiPlan) -> None:
    assert assess_ci(plan) is None, why


def test_no_relevant_ci_not_run_without_a_ci_plan() -> None:
    assert "relevant-ci-not-run" not in assess(pr(*TESTED))


def test_ordinary_devices_are_a_setting() -> None:
    h200_is_ordinary = RiskSettings(ci_ordinary_devices=["", "l4", "h200*", "cpu*"])
    assert assess_ci(ci(H200, CPU), settings=h200_is_ordinary) is None
    suffix = RiskSettings(ci_ordinary_devices=["*_35gb"])
    assert assess_ci(ci(H200), settings=suffix) is None


# --- ordering, settings, real cases ------------------------------------------


def test_high_risks_come_first() -> None:
    facts = pr(
        ChangedFile(filename=COMPILE_FILE, additions=1200, deletions=10), base_ref="releases/v1"
    )
    risks = assess_risks(facts, parse_body("## Test Result\nTBD"), (COMPILE,), SETTINGS)
    severities = [r.severity for r in risks]
    assert severities == sorted(severities, key=["high", "medium", "low"].index)
    assert [r.id for r in risks][:2] == ["missing-gpu-eval", "release-branch"]
    assert risks[-1].id == "large-diff"


def test_settings_change_the_choice() -> None:
    strict = RiskSettings(large_diff_lines=5, release_branch_pattern=r"^stable$")
    found = assess(pr(*TESTED, base_ref="stable"), settings=strict)
    assert {"large-diff", "release-branch"} <= set(found)


def test_settings_compile_once_per_object() -> None:
    assert compile_risk_settings(SETTINGS) is compile_risk_settings(SETTINGS)
    other = RiskSettings()
    assert compile_risk_settings(other) is not compile_risk_settings(SETTINGS)


def test_rules_file_is_valid_and_matches_the_defaults() -> None:
    data = yaml.safe_load((ROOT / "rules" / "risks.yaml").read_text())
    assert RiskSettings.model_validate(data) == RiskSettings()


def test_unknown_keys_and_bad_regexes_are_rejected() -> None:
    with pytest.raises(ValueError, match="extra"):
        RiskSettings.model_validate({"large_diff_line": 10})
    with pytest.raises(ValueError, match="invalid regular expression"):
        RiskSettings.model_validate({"backport_patterns": ["(unclosed"]})


REAL = [
    # (case, areas, expected risk ids): what a reviewer would flag on the real PR.
    # One ask for a run: the GPU evaluation stands for the missing test output too.
    (34031, (area("compile", ("vllm/compilation/fusion.py",), numerics=True),),
     {"missing-gpu-eval", "missing-tests"}),
    (50758, (area("compile", ("vllm/compilation/passes/rope_kvcache_fusion.py",),
                  numerics=True),),
     {"missing-gpu-eval", "missing-tests"}),
    (28934, (area("cudagraph", ("vllm/v1/attention/backends/linear_attn.py",), numerics=True),),
     {"missing-tests"}),
    (55857, (area("frontend", ("tests/entrypoints/openai/parser/test_harmony_utils.py",)),),
     {"missing-test-results"}),
    (51753, (area("frontend", ("vllm/entrypoints/pooling/scoring/utils.py",)),), set()),
]  # fmt: skip


@pytest.mark.parametrize(("number", "areas", "expected"), REAL)
def test_real_cases(number: int, areas: tuple[AreaMatch, ...], expected: set[str]) -> None:
    case = CASES[number]
    files = [f["filename"] for f in case["files"]] or [f for a in areas for f in a.files]
    facts = pr(*files, title=case["title"], body=case["body"] or "")
    assert set(assess(facts, case["body"], areas)) == expected


def test_real_case_gpu_eval_evidence() -> None:
    case = CASES[50758]
    compile_area = area("compile", ("vllm/compilation/fusion.py",), numerics=True)
    risk = assess(pr("vllm/compilation/fusion.py"), case["body"], (compile_area,))
    assert risk["missing-gpu-eval"].evidence[0] == "requires CUDA hardware/CI"


# --- missing-tests: what it does not ask for ----------------------------------------


def _source(path: str, patch: str, additions: int = 10, deletions: int = 2) -> ChangedFile:
    return ChangedFile(filename=path, additions=additions, deletions=deletions, patch=patch)


DOCSTRING_ONLY = (
    "@@ -10,4 +10,6 @@ class SchedulerConfig:\n"
    "     max_num_seqs: int = 128\n"
    '     """Maximum number of sequences per iteration.\n'
    "+\n"
    "+    Applies per data-parallel rank, not to the whole server.\n"
    '     """\n'
)
CODE_CHANGE = (
    "@@ -10,3 +10,3 @@ def admit(self, request):\n"
    "-        if len(self.queue) > self.limit:\n"
    "+        if len(self.queue) >= self.limit:\n"
    "             return False\n"
)


def test_missing_tests_not_for_a_docstring_or_comment_change() -> None:
    docs = pr(_source("vllm/config/scheduler.py", DOCSTRING_ONLY, 2, 0))
    assert "missing-tests" not in assess(docs, "## Purpose\nClarify the limit.")
    code = pr(_source("vllm/config/scheduler.py", CODE_CHANGE, 12, 2))
    assert assess(code, "## Purpose\nFix.")["missing-tests"].severity == "medium"


def test_missing_tests_is_low_on_a_tiny_change() -> None:
    tiny = pr(_source("vllm/config/scheduler.py", CODE_CHANGE, 1, 1))
    assert assess(tiny, "## Purpose\nOff by one.")["missing-tests"].severity == "low"
    # Unknown patches are not known to be tiny.
    unknown = pr(ChangedFile(filename="vllm/config/scheduler.py", additions=1, deletions=1))
    assert assess(unknown, "## Purpose\nFix.")["missing-tests"].severity == "medium"


def test_missing_tests_is_low_on_model_definitions_a_pr_that_fixes_nothing_changes() -> None:
    model = _source("vllm/model_executor/models/sarvam.py", CODE_CHANGE, 12, 2)
    enable = pr(model, title="[Model] Enable torch.compile for Sarvam MLA")
    assert assess(enable, "## Purpose\nCompile it.")["missing-tests"].severity == "low"
    # a fix to a model, or a model change beside other code, still asks for the test
    fix = pr(model, title="[Bugfix][Model] Fix Sarvam weight loading")
    assert assess(fix, "## Purpose\nLoads.")["missing-tests"].severity == "medium"
    layer = _source("vllm/model_executor/layers/linear.py", CODE_CHANGE, 12, 2)
    both = pr(model, layer, title="[Model] Enable torch.compile for Sarvam MLA")
    assert assess(both, "## Purpose\nCompile it.")["missing-tests"].severity == "medium"


def test_missing_tests_not_on_a_performance_change() -> None:
    code = _source("vllm/model_executor/layers/fused_moe/runner.py", CODE_CHANGE, 12, 2)
    assert "missing-tests" not in assess(pr(code, title="[Perf] Skip a redundant all-reduce"), "x")
    numbers = (
        "## Purpose\nFaster.\n\n| tp | before | after |\n|---|---|---|\n| 4 | 4.64 ms | 4.08 ms |\n"
    )
    assert "missing-tests" not in assess(pr(code, title="[Kernel] Swizzle"), numbers)
    assert "missing-tests" in assess(pr(code, title="[Kernel] Swizzle"), "## Purpose\nFix.")


SMEM_BRANCH = (
    "@@ -132,8 +133,10 @@ void launch_persistent_topk(const Tensor& logits,\n"
    "     if (needs_cooperative && total_ctas > hw_resident_cap) {\n"
    "-      STD_TORCH_CHECK(\n"
    "-          max_smem_per_block >= 128 * 1024,\n"
    "-          \"fallback requires >=128KB smem (have \", max_smem_per_block, \").\");\n"
    "+      // Low-smem devices take the generic decode kernel.\n"
    "+      if (max_smem_per_block < 128 * 1024) {\n"
    "+        top_k_per_row_decode(logits, next_n, lengths, output, num_rows);\n"
    "+        return;\n"
    "+      }\n"
    "       cudaError_t status = launch_filtered(logits);\n"
)
CAPABILITY_ENTRIES = (
    "@@ -47,6 +47,12 @@ CUSTOM_ALL_REDUCE_MAX_SIZES = {\n"
    "         8: 4 * MiB,  # 4 MB\n"
    "     },\n"
    "+    \"10.7\": {  # reuse the 10.3 thresholds\n"
    "+        2: 4 * MiB,\n"
    "+        8: 4 * MiB,\n"
    "+    },\n"
    " }\n"
)


def test_missing_tests_is_low_behind_a_hardware_gate() -> None:
    """A branch only a device property reaches (an smem threshold, a compute capability's
    table entry) cannot fail a CI test without that device: the ask is a run on one, which
    the results line names."""
    empty = EMPTY_SECTIONS
    core = area("kernels", ("csrc/topk.cu",), criticality="high")
    smem = assess(pr(_source("csrc/topk.cu", SMEM_BRANCH, 9, 10)), empty, (core,))
    assert smem["missing-tests"].severity == "low"
    assert smem["missing-test-results"].severity == "medium"
    assert smem["missing-test-results"].evidence == (
        "empty Test Plan and Test Result sections",
        "the changed code runs only where max_smem_per_block < 128 * 1024: "
        "a run on such a device",
    )
    table = "vllm/distributed/device_communicators/all_reduce_utils.py"
    comm = area("distributed", (table,), criticality="high")
    entries = assess(pr(_source(table, CAPABILITY_ENTRIES, 6, 0)), empty, (comm,), lang="zh")
    assert entries["missing-tests"].severity == "low"
    assert "改动只为设备 10.7 添加表项" in entries["missing-test-results"].evidence[1]
    # Code past the gate's hunk runs everywhere: the regression test is asked for.
    ungated = CAPABILITY_ENTRIES + "@@ -90,2 +96,3 @@ def pick(size):\n+    size = size * 2\n"
    both = assess(pr(_source(table, ungated, 7, 0)), empty, (comm,))
    assert both["missing-tests"].severity == "medium"
    assert "missing-test-results" not in both  # told once, as a clue of missing-tests
    # A removed check no gate replaces is a change on every device.
    removed = "@@ -1,2 +1,1 @@\n-    if size > limit:\n-        size = limit\n     return size\n"
    assert assess(pr(_source(table, removed, 0, 12)), empty)["missing-tests"].severity == "medium"


def test_a_size_table_keyed_by_integers_is_no_hardware_gate() -> None:
    """`128:` is a size, not a compute capability; `100:` (SM 10.0) is one."""
    compiled = compile_risk_settings(load_rules(DEFAULT_RULES_DIR).risks)
    entry = "@@ -10,2 +10,4 @@ SIZES = {{\n     64: 16,\n+    {key}: {{\n+        2: 4 * MiB,\n"
    assert _hardware_gate(entry.format(key="128"), compiled) == ""
    assert _hardware_gate(entry.format(key="100"), compiled) == "key:100"
    assert _hardware_gate(entry.format(key='"10.7"'), compiled) == "key:10.7"


def test_no_missing_test_results_for_a_docstring_only_code_change() -> None:
    """Docs plus a docstring: nothing runs differently, so there is no output to paste."""
    docs = pr(_source("vllm/config/scheduler.py", DOCSTRING_ONLY, 2, 0), "docs/serving/dp.md")
    told = assess(docs, "## Purpose\nDocument the scope.", (SCHEDULER,))
    assert set(told) & {"missing-test-results", "missing-tests"} == set()
    code = pr(_source("vllm/config/scheduler.py", CODE_CHANGE, 12, 2), "docs/serving/dp.md")
    fixed = assess(code, "## Purpose\nFix.", (SCHEDULER,))["missing-tests"]
    assert "no Test Plan or Test Result section" in fixed.evidence


def test_missing_test_results_is_low_when_the_weighty_area_holds_no_source() -> None:
    """A CI image's Dockerfile in a critical area is checked by the build it changes."""
    docker = area("rocm", ("docker/Dockerfile.rocm",), criticality="high")
    risk = assess(pr("docker/Dockerfile.rocm"), "## Purpose\nCache the build.", (docker,))
    assert risk["missing-test-results"].severity == "low"
    planned = "## Purpose\nFix.\n## Test Plan\nrun the scheduler by hand\n## Test Result\n\n"
    scheduler = assess(pr(SCHEDULER_FILE), planned, (SCHEDULER,))
    assert scheduler["missing-test-results"].severity == "medium"


# --- an empty Test Plan and Test Result, told once -------------------------------------


EMPTY_SECTIONS = "## Purpose\nx\n## Test Plan\n\n## Test Result\n\n"


def test_empty_plan_and_result_beside_a_missing_test_is_one_line() -> None:
    """Two stock lines saying the same (no test, no results) are one: missing-tests says
    the sections are empty too."""
    risks = assess(pr(SCHEDULER_FILE), EMPTY_SECTIONS, (SCHEDULER,))
    assert "missing-test-results" not in risks
    told = "empty Test Plan and Test Result sections"
    assert risks["missing-tests"].evidence == (told, SCHEDULER_FILE)
    zh = assess(pr(SCHEDULER_FILE), EMPTY_SECTIONS, (SCHEDULER,), lang="zh")
    assert zh["missing-tests"].evidence[0] == "Test Plan 与 Test Result 部分均为空"


def test_empty_plan_and_result_stay_said_by_the_run_ask_kept() -> None:
    """Folded into the GPU-evaluation ask, the empty sections are still named (issue 40:
    folding lost the one signal the results ask carried)."""
    risks = assess(pr(*TESTED), EMPTY_SECTIONS, (COMPILE,))
    assert "missing-test-results" not in risks
    assert risks["missing-gpu-eval"].evidence[0] == "empty Test Plan and Test Result sections"
    # With results posted there is nothing to fold, and nothing is said about sections.
    posted = assess(pr(*TESTED), "## Test Plan\npytest\n## Test Result\n3 passed\n", (COMPILE,))
    assert all("section" not in e for e in posted["missing-gpu-eval"].evidence)


# --- missing-tests answered by the plan ---------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        "pytest -s -v tests/models/multimodal/generation/test_whisper.py::test_models[True]",
        "```\npytest tests/entrypoints/launchers/\n```",
    ],
)
def test_a_test_named_in_the_plan_answers_missing_tests(plan: str) -> None:
    body = f"## Purpose\nx\n## Test Plan\n{plan}\n## Test Result\n3 passed\n"
    assert "missing-tests" not in assess(pr(SCHEDULER_FILE), body)


def test_a_plan_naming_only_source_files_leaves_missing_tests() -> None:
    body = (f"## Purpose\nx\n## Test Plan\npre-commit run --files {SCHEDULER_FILE}\n"
            "## Test Result\nall hooks passed\n")
    assert "missing-tests" in assess(pr(SCHEDULER_FILE), body)


# --- evidence wherever it is posted ----------------------------------------------------


@pytest.mark.parametrize(
    "report",
    [
        # A sentence quoting the command it ran, then its score.
        "Verified with `vllm serve m --tensor-parallel-size 4 --kv-cache-dtype fp8` on B300: "
        "95% on GSM8k",
        # A ticked box of the author's own naming the evaluation.
        "- [x] LM-eval GSM8K (`--limit 256`) remains in the baseline range.",
    ],
)
def test_posted_evaluation_clears_missing_gpu_eval(report: str) -> None:
    body = f"## Purpose\nx\n## Test Plan\n\n## Test Result\n{report}\n"
    assert "missing-gpu-eval" not in assess(pr(*TESTED), body, (COMPILE,))


def test_an_unticked_evaluation_box_is_a_plan() -> None:
    body = "## Purpose\nx\n## Test Plan\n- [ ] lm_eval gsm8k before/after\n"
    assert "missing-gpu-eval" in assess(pr(*TESTED), body, (COMPILE,))
