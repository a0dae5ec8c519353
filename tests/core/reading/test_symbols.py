"""extract_symbols on realistic unified-diff patches (as GitHub's PR-files endpoint returns)."""

from __future__ import annotations

from bot.core.facts import ChangedFile
from bot.core.reading.symbols import extract_symbols, moved_files, removed_files, same_content
from bot.core.vocabulary import Symbol

PROCESSOR_PATCH = """@@ -1288,20 +1288,14 @@ class BaseMultiModalProcessor(ABC, Generic[_I]):
     def _apply_hf_processor_main(
         self,
         prompt: str | list[int],
         mm_items: MultiModalDataItems,
     ) -> tuple[list[int], BatchFeature, bool]:
-        if isinstance(prompt, str):
-            prompt_ids = self._apply_hf_processor_text_only(prompt)
-        else:
-            prompt_ids = self._apply_hf_processor_tokens_only(prompt)
+        prompt_ids = self._to_prompt_ids(prompt)
         mm_processed_data = self._apply_hf_processor_mm_only(mm_items)
         return prompt_ids, mm_processed_data, False

-    def _apply_hf_processor_tokens_only(self, prompt_tokens: list[int]) -> list[int]:
-        tokenizer = self.info.get_tokenizer()
-        return tokenizer.decode(prompt_tokens)
+    def _to_prompt_ids(self, prompt: str | list[int]) -> list[int]:
+        if isinstance(prompt, str):
+            return self._apply_hf_processor_text_only(prompt)
+        return prompt

     def _cached_apply_hf_processor(
         self,
@@ -1400,6 +1394,7 @@ class BaseMultiModalProcessor(ABC, Generic[_I]):
             mm_hashes=mm_hashes,
         )
+        self._validate(mm_kwargs)


@@ -1500,3 +1495,8 @@ def _merge_mm_kwargs(a, b):
     return merged
+
+
+class EncDecMultiModalProcessor(BaseMultiModalProcessor[_I]):
+    def create_encoder_prompt(self, prompt):
+        return prompt
"""

YARN_PATCH = """@@ -60,7 +60,11 @@ class YaRNScalingRotaryEmbedding(RotaryEmbedding):
         beta_fast: int = 32,
         beta_slow: int = 1,
+        attention_factor: float | None = None,
     ) -> None:
@@ -75,7 +79,10 @@ class YaRNScalingRotaryEmbedding(RotaryEmbedding):
         self.beta_slow = beta_slow
-        self.mscale = float(yarn_get_mscale(self.scaling_factor) * attn_factor)
+        if attention_factor is not None:
+            self.mscale = float(attention_factor)
+        else:
+            self.mscale = float(yarn_get_mscale(self.scaling_factor) * attn_factor)
         super().__init__(head_size, rotary_dim, max_position_embeddings, base)
"""

CUDA_PATCH = """@@ -40,9 +40,9 @@ __global__ void rms_norm_kernel(
   __shared__ float s_variance;
-  float variance = 0.0f;
+  float variance = 0.0f;  // fp32 accumulation
   for (int idx = threadIdx.x; idx < hidden_size; idx += blockDim.x) {
@@ -120,6 +120,20 @@ void rms_norm(torch::Tensor& out,
   });
 }
+
+template <typename scalar_t, int width>
+__global__ std::enable_if_t<(width > 0)> fused_add_rms_norm_kernel(
+    scalar_t* __restrict__ input, const int hidden_size) {
+  TORCH_CHECK(hidden_size % width == 0);
+  if (threadIdx.x == 0) {
+    return;
+  }
+}
-void poly_norm(torch::Tensor& out) {
-  TORCH_CHECK(out.is_contiguous());
-}
"""


def test_python_patch_symbols() -> None:
    files = [ChangedFile(filename="vllm/multimodal/processing/processor.py", patch=PROCESSOR_PATCH)]
    assert [(s.name, s.change) for s in extract_symbols(files)] == [
        ("_apply_hf_processor_main", "modified"),
        ("_apply_hf_processor_tokens_only", "removed"),
        ("_to_prompt_ids", "added"),
        ("BaseMultiModalProcessor", "modified"),  # a change at class level, outside any def
        # _merge_mm_kwargs is only followed by added blank lines: not modified.
        ("EncDecMultiModalProcessor", "added"),
        ("create_encoder_prompt", "added"),
    ]


def test_hunk_header_names_the_class_when_git_shows_no_method() -> None:
    files = [ChangedFile(filename="vllm/model_executor/layers/rotary_embedding/yarn.py",
                         patch=YARN_PATCH)]  # fmt: skip
    assert extract_symbols(files) == (
        Symbol(
            file="vllm/model_executor/layers/rotary_embedding/yarn.py",
            name="YaRNScalingRotaryEmbedding",
            change="modified",
        ),
    )


def test_removed_and_added_again_is_modified() -> None:
    patch = (
        "@@ -10,4 +10,4 @@ import torch\n"
        "-def get_rope(head_size, rotary_dim):\n"
        "+def get_rope(head_size, rotary_dim, dtype=None):\n"
        " \n"  # a blank context line, as git writes it
        "     return _ROPE_DICT[key]\n"
    )
    found = extract_symbols([ChangedFile(filename="vllm/rope.py", patch=patch)])
    assert [(s.name, s.change) for s in found] == [("get_rope", "modified")]


def test_cuda_signatures() -> None:
    files = [ChangedFile(filename="csrc/layernorm_kernels.cu", patch=CUDA_PATCH)]
    assert [(s.name, s.change) for s in extract_symbols(files)] == [
        ("rms_norm_kernel", "modified"),
        ("fused_add_rms_norm_kernel", "added"),
        ("poly_norm", "removed"),
    ]


def test_a_compiler_attribute_is_not_the_kernel_it_heads() -> None:
    # git's hunk header shows the line it found, here the kernel's attribute line: the
    # kernel's name (`cross_device_reduce_2stage`) is on the next line, outside the hunk.
    patch = (
        "@@ -44,7 +44,9 @@ __global__ void __launch_bounds__(512, 1)\n"
        "   for (int i = 0; i < ngpus; i++) {\n"
        "-    ptrs[i] = (const P*)_dp->ptrs[target];\n"
        "+    ptrs[i] = (const P*)_dp->ptrs[i];\n"
        "   }\n"
    )
    files = [ChangedFile(filename="csrc/custom_all_reduce.cuh", patch=patch)]
    assert extract_symbols(files) == ()


def test_most_changed_file_first_and_limit() -> None:
    small = ChangedFile(filename="vllm/a.py", patch=YARN_PATCH, additions=5, deletions=1)
    big = ChangedFile(filename="vllm/b.py", patch=PROCESSOR_PATCH, additions=50, deletions=20)
    found = extract_symbols([small, big])
    assert [s.file for s in found] == ["vllm/b.py"] * 6 + ["vllm/a.py"]
    assert len(extract_symbols([small, big], limit=3)) == 3


def test_counts_come_from_the_patch_when_missing() -> None:
    # PROCESSOR_PATCH changes more lines than YARN_PATCH; no counts are given.
    files = [
        ChangedFile(filename="vllm/a.py", patch=YARN_PATCH),
        ChangedFile(filename="vllm/b.py", patch=PROCESSOR_PATCH),
    ]
    assert extract_symbols(files)[0].file == "vllm/b.py"


def test_ignores_non_code_and_patchless_files() -> None:
    files = [
        ChangedFile(filename="docs/models/supported_models.md", patch="@@ -1 +1 @@\n-a\n+def x():"),
        ChangedFile(filename="vllm/big.py", patch=None, additions=5000),  # GitHub omits big diffs
    ]
    assert extract_symbols(files) == ()


def test_removed_files() -> None:
    files = [
        ChangedFile(filename="vllm/a.py", status="removed"),
        ChangedFile(filename="vllm/b.py"),
        ChangedFile(filename="vllm/model_executor/layers/rotary_embedding/telechat3.py",
                    status="removed"),
    ]  # fmt: skip
    assert removed_files(files) == (
        "vllm/a.py",
        "vllm/model_executor/layers/rotary_embedding/telechat3.py",
    )


def _new_file(name: str, status: str, lines: list[str]) -> ChangedFile:
    marker = "+" if status == "added" else "-"
    body = "\n".join(marker + line for line in lines)
    return ChangedFile(filename=name, status=status, patch=f"@@ -1 +1 @@\n{body}")


def test_a_file_removed_and_added_again_elsewhere_is_a_move() -> None:
    body = [f"def test_{i}():" if i % 2 == 0 else f"    assert f({i})" for i in range(20)]
    old = _new_file("tests/test_monitor.py", "removed", body)
    # Most of its lines went to one new file; a conftest took a few, an e2e test is new.
    hooks = _new_file("tests/monitor/test_hooks.py", "added", ["import pytest", *body[:18]])
    conftest = _new_file("tests/monitor/conftest.py", "added", body[18:])
    e2e = _new_file("tests/monitor/test_e2e.py", "added", [f"x_{i} = {i}" for i in range(30)])
    files = [old, hooks, conftest, e2e]
    moves = moved_files(files)
    assert moves == (("tests/test_monitor.py", "tests/monitor/test_hooks.py"),)
    # The new file holds the old lines (and little else): nothing in it is new.
    assert same_content(files, moves) == {"tests/monitor/test_hooks.py"}
    # A removed file whose lines are not found again was removed, not moved; nor is a
    # stub of a few lines.
    rewritten = _new_file("tests/monitor/test_hooks.py", "added", [f"y = {i}" for i in range(20)])
    assert moved_files([old, rewritten]) == ()
    stub = _new_file("vllm/stub.py", "removed", ["pass"])
    assert moved_files([stub, _new_file("vllm/b/stub.py", "added", ["pass"])]) == ()


CONFIG_FIELDS_PATCH = "".join(line + "\n" for line in (
    '@@ -208,6 +208,16 @@ class SchedulerConfig:',
    '     already-admitted prompt, so a long prompt can take up to N times as many',
    '     steps to finish prefilling."""',
    ' ',
    '+    admission_window: int = Field(default=0, ge=0)',
    '+    """Look-ahead window for cache-aware admission. Note: within the first N',
    '+    waiting requests, cached ones go first.',
    '+',
    '+    Default: 0 admits in arrival order."""',
    '+',
    '+    admission_threshold: float = (',
    '+        0.5',
    '+    )',
    '+',
    '     async_scheduling: bool | None = None',
    '     """If set to False, disable async scheduling."""',
    '@@ -300,4 +310,4 @@ class SchedulerConfig:',
    '         if self.enable_chunked_prefill:',
    '-            limit = 1',
    '+            limit = 2',
    '         return limit',
    '',
))


def test_fields_a_class_body_adds_are_named_and_its_docstrings_are_prose() -> None:
    files = [ChangedFile(filename="vllm/config/scheduler.py", patch=CONFIG_FIELDS_PATCH)]
    assert [(s.name, s.change) for s in extract_symbols(files)] == [
        ("SchedulerConfig.admission_window", "added"),
        ("SchedulerConfig.admission_threshold", "added"),
        # a method's body under a class-only hunk header is not a field
        ("SchedulerConfig", "modified"),
    ]
    only_fields = CONFIG_FIELDS_PATCH.split("@@ -300")[0]
    # the fields (and their docstrings) are the whole change: the class is not "modified"
    assert [s.name for s in extract_symbols(
        [ChangedFile(filename="vllm/config/scheduler.py", patch=only_fields)])] == [
        "SchedulerConfig.admission_window", "SchedulerConfig.admission_threshold"]
