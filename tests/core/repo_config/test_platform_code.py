"""Which platform a change's code runs on, from its paths and the branches it adds."""

from __future__ import annotations

from bot.core.facts import ChangedFile
from bot.core.repo_config.platform_code import change_platform, file_platform


def changed(path: str, *added: str, status: str = "modified") -> ChangedFile:
    patch = "@@ -1,1 +1,9 @@ class A:\n" + "".join(f"+{line}\n" for line in added)
    return ChangedFile(filename=path, status=status, additions=len(added), patch=patch)


def test_a_path_that_names_one_platform_is_that_platforms() -> None:
    assert file_platform(changed("vllm/platforms/xpu.py", "x = 1")) == "xpu"
    assert file_platform(changed("vllm/_xpu_ops.py", "x = 1")) == "xpu"
    assert file_platform(changed("vllm/v1/attention/backends/rocm_aiter_fa.py")) == "rocm"
    assert file_platform(changed("csrc/rocm/attention.cu", "int x;")) == "rocm"


def test_an_added_branch_on_one_platform_makes_the_file_that_platforms() -> None:
    assert file_platform(changed("vllm/models/vision.py", "        if (",
                                 "            current_platform.is_xpu()",
                                 "            and x.dtype == torch.uint8", "        ):",
                                 "            return fused(x)")) == "xpu"
    assert file_platform(changed("vllm/layers/rope.py",
                                 "        if self.use_aiter and q.dtype == bf16:")) == "rocm"
    assert file_platform(changed("vllm/layers/rope.py",
                                 "        if grid_y > _HIP_MAX_GRID_DIM:")) == "rocm"


def test_words_in_strings_comments_and_plain_statements_are_no_branch() -> None:
    assert file_platform(changed("vllm/env_override.py",
                                 '_PREFIXES = ("vllm::", "vllm_aiter::")',
                                 "# like ROCm's aiter ops",
                                 '    if name.startswith("vllm_aiter::"):')) == ""
    # Both platforms' branches: not one platform's.
    assert file_platform(changed("vllm/layers/rope.py", "    if current_platform.is_rocm():",
                                 "    elif current_platform.is_cuda():")) == ""
    assert file_platform(changed("vllm/cuda_graphs/rocm.py")) == ""  # both in the path


def test_the_change_is_one_platforms_only_when_every_source_file_is() -> None:
    xpu = changed("vllm/_xpu_ops.py", "x = 1")
    assert change_platform([xpu, changed("tests/test_xpu.py", "x = 1"),
                            changed("docs/xpu.md", "x")]) == ("xpu", ("vllm/_xpu_ops.py",))
    assert change_platform([xpu, changed("vllm/config.py", "x = 1")]) == ("", ())
    assert change_platform([xpu, changed("vllm/platforms/rocm.py", "x = 1")]) == ("", ())
    assert change_platform([changed("docs/a.md", "x")]) == ("", ())


def test_a_path_that_names_one_cuda_architecture_is_that_architectures() -> None:
    sm120 = "csrc/quantization/w8a8/cutlass/c3x/scaled_mm_blockwise_sm120_fp8.cu"
    assert file_platform(changed(sm120, "int x;")) == "sm12"
    assert file_platform(changed("csrc/attention/mla/sm100/kernel.cu", "int x;")) == "sm10"
    assert file_platform(changed("csrc/quantization/scaled_mm_sm90a.cu", "int x;")) == "sm9"
    # Two architectures, or none named: not one architecture's.
    assert file_platform(changed("csrc/quantization/sm90_sm100_dispatch.cu", "int x;")) == ""
    assert file_platform(changed("csrc/quantization/scaled_mm_entry.cu", "int x;")) == ""
    assert file_platform(changed("vllm/model_executor/layers/mamba/ssm2.py", "x = 1")) == ""
    dispatch = changed(sm120.replace(".cu", "_dispatch.cuh"), "int y;")
    assert change_platform([changed(sm120, "int x;"), dispatch]) == (
        "sm12", (sm120, dispatch.filename))


def test_a_pin_list_or_image_recipe_named_for_one_platform_is_that_platforms() -> None:
    assert file_platform(changed("requirements/rocm.txt", "torch==2.10.0")) == "rocm"
    assert file_platform(changed("docker/Dockerfile.xpu", "ARG TORCH=2.10")) == "xpu"
    # its lines install packages: a platform word in them is no branch
    assert file_platform(changed("requirements/common.txt", "amdsmi; platform_machine")) == ""
    assert change_platform([changed("requirements/xpu.txt", "torch==2.10"),
                            changed("requirements/test/xpu.txt", "pytest"),
                            changed("docs/xpu.md", "x")]) == (
        "xpu", ("requirements/xpu.txt", "requirements/test/xpu.txt"))
    assert change_platform([changed("requirements/xpu.txt", "torch==2.10"),
                            changed("requirements/cuda.txt", "torch==2.10")]) == ("", ())


def test_a_tuned_config_named_for_one_device_is_that_devices() -> None:
    folder = "vllm/model_executor/layers/fused_moe/configs/"
    assert file_platform(changed(
        folder + "E=256,N=256,device_name=NVIDIA_H20-3e,dtype=fp8_w8a8,block_shape=[128,128].json",
        "{}")) == "gpu:NVIDIA_H20-3e"
    assert file_platform(changed(folder + "E=8,N=14336,device_name=AMD_Instinct_MI300X.json",
                                 "{}")) == "rocm"
    assert file_platform(changed(
        folder + "N=1536,K=7168,device_name=Intel(R)_Arc(TM)_Pro_B70_Graphics,dtype=fp8_w8a8"
        ",block_shape=[128,128].json", "{}")) == "xpu"
    assert file_platform(changed(folder + "README.json", "{}")) == ""
    # two devices' tables are no one platform's
    assert change_platform([
        changed(folder + "E=8,N=1,device_name=NVIDIA_H200.json", "{}"),
        changed(folder + "E=8,N=1,device_name=NVIDIA_B200.json", "{}")]) == ("", ())
