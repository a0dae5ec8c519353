"""Schema of rules/risks.yaml: the choices behind the risk checklist (phrases, paths, sizes).

Defaults are the vLLM values, so `RiskSettings()` is usable without the file; the
file exists so maintainers can change a choice without a code change.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.core.rules.patterns import pattern_problem


def _check_regex(value: str) -> str:
    # Loud and early, at load time, naming the pattern. These run on PR titles and bodies
    # through RE2 (bot/core/rules/patterns.py), so RE2 decides what is valid.
    problem = pattern_problem(value)
    if problem is not None:
        raise ValueError(f"invalid regular expression {value!r}: {problem}")
    return value


# defer_build (both models): a digest from cached rules unpickles its settings and
# never validates risks.yaml, so the validators are built when it is first parsed.
class HardwarePlatform(BaseModel):
    """A platform whose code paths need a run on that hardware before merge."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    paths: list[str] = Field(default_factory=list)  # gitignore-style globs
    title_pattern: str = ""  # regex on the title (case-insensitive); "" = none
    # Regexes (case-insensitive) naming the hardware in a body: "MI300X", "gfx950".
    hardware_names: list[str] = Field(default_factory=list)
    # Regex (case-insensitive) on a CI build link that ran on this platform ("" = none).
    ci_link_pattern: str = ""

    @field_validator("title_pattern", "ci_link_pattern")
    @classmethod
    def _title_regex(cls, value: str) -> str:
        return _check_regex(value)

    @field_validator("hardware_names")
    @classmethod
    def _name_regexes(cls, value: list[str]) -> list[str]:
        return [_check_regex(v) for v in value]


def _vllm_hardware() -> dict[str, HardwarePlatform]:
    return {
        "ROCm": HardwarePlatform(
            paths=[
                "vllm/platforms/rocm.py",
                "csrc/rocm/**",
                "vllm/v1/attention/backends/**/rocm*.py",
                "vllm/v1/attention/backends/**/*aiter*.py",
                "vllm/model_executor/layers/**/*rocm*.py",
                "vllm/model_executor/layers/**/*aiter*.py",
                "vllm/_aiter_ops.py",
            ],
            title_pattern=r"\[(?:rocm|amd)\]",
            hardware_names=[
                r"\bmi\d{2,3}[a-z]?\b",
                r"\bcdna\s?\d?\b",
                r"\bgfx9\d\d\b",
                r"\binstinct\b",
                r"\brocm/vllm",
                r"\bvllm-openai-rocm\b",
            ],
            ci_link_pattern=r"/(?:amd|rocm)[\w-]*/builds/",
        ),
        "CPU": HardwarePlatform(
            paths=[
                "vllm/platforms/cpu.py",
                "csrc/cpu/**",
                "vllm/v1/attention/backends/cpu_attn.py",
                "vllm/v1/worker/cpu*",
            ],
            title_pattern=r"\[cpu\]",
            hardware_names=[
                r"\bxeon\b",
                r"\bepyc\b",
                r"\bsapphire rapids\b",
                r"\bgranite rapids\b",
                r"\bgraviton\d?\b",
                r"\bapple m\d\b",
                r"\bavx-?512\b",
                r"\bamx\b",
                r"\bppc64le\b",
                r"\bs390x\b",
                r"\bneoverse\b",
                r"\bvllm-openai-cpu\b",
                r"\bvllm-cpu\b",
            ],
            ci_link_pattern=r"/(?:[\w-]*cpu|intel|arm|aarch64)[\w-]*/builds/",
        ),
        "XPU": HardwarePlatform(
            paths=[
                "vllm/platforms/xpu.py", "vllm/_xpu_ops.py", "csrc/xpu/**", "vllm/v1/worker/xpu*"
            ],
            title_pattern=r"\[(?:xpu|intel[ _-]?gpu)\]",
            hardware_names=[
                r"\barc\b",
                r"\bpvc\b",
                r"\bponte vecchio\b",
                r"\bdata center gpu max\b",
                r"\bmax\s?1[15]\d{2}\b",
                r"\bbmg\b",
                r"\bbattlemage\b",
                r"\bb[56]0\b",
            ],
            ci_link_pattern=r"/(?:[\w-]*xpu|intel)[\w-]*/builds/",
        ),
        "TPU": HardwarePlatform(
            paths=["vllm/platforms/tpu.py", "vllm/v1/worker/tpu*", "vllm/distributed/**/tpu*"],
            title_pattern=r"\[tpu\]",
            hardware_names=[r"\btpu\s?v?\d{1,2}[a-z]?\b", r"\btrillium\b"],
            ci_link_pattern=r"/[\w-]*tpu[\w-]*/builds/",
        ),
    }


class RiskSettings(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    # gitignore-style globs: which changed files are tests, and which are source
    # code that ought to come with a test change.
    test_paths: list[str] = Field(default_factory=lambda: ["tests/**", "**/test_*.py"])
    source_paths: list[str] = Field(default_factory=lambda: ["vllm/**", "csrc/**"])
    large_diff_lines: int = Field(default=1000, ge=1)
    large_diff_files: int = Field(default=40, ge=1)
    release_branch_pattern: str = r"^releases?/"

    # Beyond these, a large diff is a medium (not low) risk: hard to review in one pass.
    huge_diff_lines: int = Field(default=3000, ge=1)
    huge_diff_files: int = Field(default=100, ge=1)
    # Docs/CI-only PRs (every file matches): no test or evaluation is expected.
    docs_ci_paths: list[str] = Field(
        default_factory=lambda: [
            "docs/**",
            "*.md",
            "examples/**",
            ".github/**",
            ".buildkite/**",
            "mkdocs.yaml",
            ".readthedocs.yaml",
            ".pre-commit-config.yaml",
            "LICENSE",
            "CODEOWNERS",
        ]
    )
    # Kernels and quantization change numerics even when no numerics area rule matched.
    numerics_paths: list[str] = Field(
        default_factory=lambda: [
            "csrc/**",
            "vllm/_custom_ops.py",
            "vllm/model_executor/layers/quantization/**",
            "vllm/model_executor/layers/fused_moe/**",
            "vllm/attention/ops/**",
            "vllm/v1/attention/ops/**",
            "vllm/lora/ops/**",
            "vllm/vllm_flash_attn/**",
        ]
    )
    # Model forward paths: a compute change here changes outputs (layers, models,
    # attention, sampling, fusion passes). Together with numerics_paths these are the
    # files a GPU-evaluation risk can stand on; a numerics area's other files
    # (processors, configs, platform glue) make it a medium at most.
    forward_paths: list[str] = Field(
        default_factory=lambda: [
            "vllm/model_executor/layers/**",
            "vllm/model_executor/models/**",
            "vllm/attention/**",
            "vllm/v1/attention/**",
            "vllm/v1/sample/**",
            "vllm/v1/spec_decode/**",
            "vllm/compilation/passes/**",
            "vllm/compilation/*fusion*.py",
            "vllm/lora/layers/**",
            "vllm/lora/ops/**",
        ]
    )
    # Regexes on one added line (without "+" and indentation) that are plumbing, not
    # compute: comments, imports, logging, errors and their messages, string entries
    # (allow-lists, registries), closing brackets. A patch made only of these (and
    # deletions) is not what changes a model's numbers.
    plumbing_line_patterns: list[str] = Field(
        default_factory=lambda: [
            r"^$",
            r"""^(?:#|//|/\*|\*|["']{3})""",
            r"^(?:import|from)\s",
            r"^(?:logger|logging|log|warnings|_logger)\.\w+\(",
            r"^print\(",
            r"^(?:raise|assert|except|try:|finally:|pass$)",
            r"^(?:TORCH_CHECK|STD_TORCH_CHECK|TORCH_WARN|AT_ERROR|AT_ASSERT)\w*\(",
            r"""^(?:[rbfu]{0,2}["'])""",
            r"^[\)\]\}]+[,;:]?$",
            r"^class\s+\w*(?:Error|Exception|Warning)\b",
            r"""^\[[\w.\s"',]*\][\w.\s,]*$""",
        ]
    )
    # Regexes (case-insensitive) on one added line (without "+" and indentation) that
    # gate what follows in its hunk to one kind of device: a condition on a device
    # property (shared memory, compute capability, an SM or gfx arch) or a table entry
    # keyed by a compute capability. Code added only behind such gates cannot get a
    # regression test that fails in CI without that device: missing-tests is noted, not
    # raised (the ask a reviewer makes there is a run on the device). A bare integer key
    # counts only as a compute capability vLLM's tables use (100, 101, 103, 107, 110, 120,
    # 121): any 100-139 also read a size table's `128:`.
    hardware_gate_patterns: list[str] = Field(
        default_factory=lambda: [
            r"^(?:#\s*|\}\s*)?(?:else\s+)?(?:el)?if\b.*(?:smem|shared_?mem|device_capability"
            r"|compute_capability|__CUDA_ARCH__|\bsm_?\d{2,3}\b|\bgfx\d{3,4})",
            r"""^(?:["']\d{1,2}\.\d{1,2}["']|\(\d{1,2},\s*\d{1,2}\)"""
            r"""|["'](?:sm_?|gfx)\d{2,4}\w?["']|1(?:0[0137]|10|2[01]))\s*:""",
        ]
    )
    # Regexes (case-insensitive) in the title or body that mean "this goes to a release".
    backport_patterns: list[str] = Field(
        default_factory=lambda: [
            r"\bcherry[- ]?pick(?:ed|s|ing)?\b",
            r"\bback-?port(?:ed|s|ing)?\b",
        ]
    )
    # Title tags that announce a performance change (case-insensitive regex).
    perf_title_pattern: str = r"\[(?:perf|performance)\]"
    # New models: touching the registry (or adding a model file) requires these in the PR.
    model_registry_paths: list[str] = Field(
        default_factory=lambda: ["vllm/model_executor/models/registry.py"]
    )
    # Registry tables whose entries are no servable model (a draft architecture for
    # speculative decoding): an entry added there asks for no supported-models row.
    model_registry_draft_tables: list[str] = Field(
        default_factory=lambda: ["_SPECULATIVE_DECODING_MODELS"]
    )
    model_file_paths: list[str] = Field(default_factory=lambda: ["vllm/model_executor/models/*.py"])
    new_model_required_files: list[str] = Field(
        default_factory=lambda: ["tests/models/registry.py", "docs/models/supported_models.md"]
    )
    # Read by nothing since the checklist keys on files, not areas; still accepted so a
    # repository override written for an older rules/risks.yaml keeps loading.
    new_model_areas: list[str] = Field(default_factory=lambda: ["new-model"])
    hardware: dict[str, HardwarePlatform] = Field(default_factory=_vllm_hardware)
    # How many files a risk names before it says "and N more".
    evidence_files: int = Field(default=5, ge=1, le=50)
    # relevant-ci-not-run: a step the change reaches through a narrow dependency, on
    # hardware other than these runners, that the PR's finished (or blocked) build did
    # not run. Device names as the pipeline writes them, case-insensitive; "" is the
    # generic GPU queue; a leading or trailing `*` matches a suffix or prefix. A step
    # on more than one GPU is never ordinary.
    ci_ordinary_devices: list[str] = Field(
        default_factory=lambda: ["", "l4", "cpu*", "*_cpu", "zen*"]
    )
    # Count optional steps (block steps waiting for a manual unblock) too.
    ci_not_run_optional: bool = True

    @field_validator("release_branch_pattern", "perf_title_pattern")
    @classmethod
    def _one_regex(cls, value: str) -> str:
        return _check_regex(value)

    @field_validator("backport_patterns", "plumbing_line_patterns", "hardware_gate_patterns")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        return [_check_regex(v) for v in value]
