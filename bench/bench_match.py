"""Time match_areas on a synthetic 3,000-file vLLM PR against a naive per-pattern baseline.

Run: python -m bench.bench_match
The baseline does what a straightforward engine would: one pathspec pattern object per
glob asked about every file, and every added-line regex run over every patch.
"""

from __future__ import annotations

import random
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from pathspec import GitIgnoreSpec

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.rules import match_areas
from bot.core.rules.added import added_lines
from bot.rulebook.files import load_rules

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
DIRS = [
    "vllm/model_executor/models",
    "vllm/model_executor/layers/fused_moe",
    "vllm/model_executor/layers/quantization",
    "vllm/v1/attention/backends",
    "vllm/v1/attention/backends/mla",
    "vllm/v1/worker",
    "vllm/compilation",
    "vllm/multimodal/processing",
    "vllm/entrypoints/openai",
    "vllm/tokenizers",
    "vllm/model_executor/layers/rotary_embedding",
    "csrc/attention",
    "csrc/quantization",
    "tests/models/multimodal/processing",
    "tests/kernels/attention",
    "tests/v1/core",
    "docs/models",
    "examples/offline_inference",
    ".buildkite/test_areas",
    "benchmarks",
]
WORDS = [
    "self.layer",
    "torch.empty",
    "return x",
    "cu_seqlens",
    "allow_in_graph(fn)",
    "slot_mapping.copy_(src)",
    "rope_scaling",
    "PromptReplacement(",
    "import os",
    "logger.info",
    "VLLMValidationError(",
    "for i in range(n):",
]


def synthetic_pr(files: int = 3000, seed: int = 1) -> PullRequestFacts:
    rng = random.Random(seed)
    changed = []
    for i in range(files):
        name = f"{rng.choice(DIRS)}/file_{i}.{rng.choice(['py', 'py', 'py', 'cu', 'md'])}"
        lines = [f"+{rng.choice(WORDS)} {rng.random():.6f}" for _ in range(20)]
        lines += [f" context {j}" for j in range(5)] + [f"-old {j}" for j in range(5)]
        patch = "@@ -1,10 +1,25 @@\n" + "\n".join(lines)
        changed.append(ChangedFile(filename=name, additions=20, deletions=5, patch=patch))
    return PullRequestFacts(
        title="[Perf] synthetic", body="bench", files=tuple(changed), changed_files=files
    )


_VENDOR_DIRS = [
    "csrc/third_party/cutlass/include/cute/atom",
    "csrc/third_party/cutlass/include/cutlass/gemm/kernel",
    "csrc/third_party/flashinfer/include/attention",
    "vllm/third_party/triton_kernels/matmul_ogs",
    "vllm/model_executor/layers/quantization/utils",
    "tests/kernels/quantization",
]
_CODE = [
    "  CUTLASS_DEVICE void operator()(Params const& params, char* smem) {{",
    "  using ElementAccumulator = float;  // {n}",
    "template <int kBlockM = {n}, int kBlockN = 128>",
    "  for (int i = threadIdx.x; i < {n}; i += blockDim.x) {{",
    "    acc[i] += static_cast<float>(a[i]) * b[i];",
    "#include \"cute/tensor.hpp\"",
    "  }}",
    "def _kernel_{n}(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):",
    "    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)",
    "    mask = offsets < n_elements",
    "    return torch.empty(({n},), dtype=torch.float16, device=\"cuda\")",
    "@pytest.mark.parametrize(\"m\", [1, 16, {n}])",
    "        self.weight = Parameter(torch.empty(out_features, {n}))",
    "    scale = layer.weight_scale.to(torch.float32)  # fp8 block {n}",
]


def vendored_pr(files: int = 3000, seed: int = 2) -> PullRequestFacts:
    """A big PR as they come: a vendored kernel library (mostly new files with code),
    renames without a patch, a few removals, and small edits around it."""
    rng = random.Random(seed)
    changed = []
    for i in range(files):
        directory = rng.choice(_VENDOR_DIRS)
        cpp = rng.choice([".h", ".cuh", ".cu"])
        ext = ".py" if directory.startswith(("vllm", "tests")) else cpp
        name = f"{directory}/unit_{i}{ext}"
        kind = rng.random()
        if kind < 0.2:  # moved: GitHub sends no patch for a pure rename
            changed.append(ChangedFile(filename=name, status="renamed",
                                       previous_filename=name.replace("unit_", "old_unit_")))
            continue
        if kind < 0.23:
            changed.append(ChangedFile(filename=name, status="removed", deletions=40))
            continue
        added = rng.choice([1, 2, 3, 5, 8, 13, 40, 120]) if kind < 0.5 else rng.randint(5, 80)
        lines = [rng.choice(_CODE).format(n=rng.randint(1, 4096)) for _ in range(added)]
        if kind < 0.5:  # a small edit with context
            patch = (f"@@ -10,{3 + 1} +10,{3 + added} @@\n   // context\n-  old();\n"
                     + "\n".join("+" + line for line in lines) + "\n   }\n   return;")
            changed.append(ChangedFile(filename=name, additions=added, deletions=1, patch=patch))
        else:
            patch = f"@@ -0,0 +1,{added} @@\n" + "\n".join("+" + line for line in lines)
            changed.append(ChangedFile(filename=name, status="added", additions=added,
                                       patch=patch))
    return PullRequestFacts(
        title="[Kernel] Vendor cutlass and flashinfer kernels", body="Vendored as is.",
        files=tuple(changed), changed_files=files,
    )


def naive_match(pr: PullRequestFacts, globs: list[str], patterns: list[str]) -> int:
    specs = [GitIgnoreSpec.from_lines([glob]) for glob in globs]
    regexes = [re.compile(pattern) for pattern in patterns]
    hits = 0
    for changed in pr.files:
        hits += sum(1 for spec in specs if spec.match_file(changed.filename))
        lines = list(added_lines(changed.patch or ""))
        hits += sum(1 for regex in regexes for line in lines if regex.search(line))
    return hits


def timings(runs: int, fn: Callable[[], object]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _row(label: str, times: list[float]) -> str:
    # Best-of is the headline (least disturbed by other load); the median shows the noise.
    best, median = min(times) * 1000, statistics.median(times) * 1000
    return f"{label:<26}{best:8.1f} ms   (median {median:7.1f} ms, {len(times)} runs)"


def main() -> None:
    rules = load_rules(RULES_DIR)
    pr = synthetic_pr()
    globs = list(rules.path_index.globs)
    patterns = list(rules.added_scanner.patterns)
    names = [f.filename for f in pr.files]
    patches = [(f.filename, f.patch) for f in pr.files if f.patch]
    ours = timings(7, lambda: match_areas(pr, rules))
    paths = timings(7, lambda: rules.path_index.match(names))
    added = timings(7, lambda: rules.added_scanner.scan(patches))
    naive = timings(3, lambda: naive_match(pr, globs, patterns))
    areas = [a.id for a in match_areas(pr, rules).areas]
    print(
        f"PR: {len(pr.files)} files, {len(globs)} globs, {len(patterns)} added-line patterns, "
        f"{len(rules.areas)} areas; matched {len(areas)} areas"
    )
    print(_row("match_areas (all rules):", ours))
    print(_row("  of which path globs:", paths))
    print(_row("  of which added lines:", added))
    print(_row("naive baseline:", naive))
    print(f"{'speed-up (best of each):':<26}{min(naive) / min(ours):8.1f}x")


if __name__ == "__main__":
    main()
