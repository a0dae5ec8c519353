"""Whether a PR's changed code runs on one hardware platform only, read from the patch.

Blind judges called the CI line misdirected when a change only XPU or ROCm executes
(`vllm/platforms/xpu.py`, a branch under `current_platform.is_xpu()`, a `forward_hip`)
was offered CUDA and CPU steps as its CI: those steps never take that code. A changed
source file is one platform's when its path names the platform (`_xpu_ops.py`,
`rocm_aiter_fa.py`, `csrc/rocm/`), or when the conditions and definitions its patch
adds name that platform and no other (`if current_platform.is_xpu()`, `if
self.use_aiter and ...`, `if grid_y > _HIP_MAX_GRID_DIM`, `def forward_hip`): a platform
named in a string, a comment or a plain statement (`"vllm_aiter::"`) is no branch. The
change is that platform's when every changed source file is.

A CUDA architecture is one too when a file's path names it (`scaled_mm_sm120_fp8.cu`,
`sm90/`): only that architecture's GPUs run it, and the CI line was judged misdirected
offering every step to an SM 12.x kernel no step's GPU runs. It is keyed `sm<major>`
(a cubin runs on the later minor versions of its major: SM 12.0 code on a 12.1 GB10).

A tuned kernel config named for a device (`…,device_name=NVIDIA_H20-3e,….json`) is loaded
only on that device: ROCm's for an AMD one, XPU's for an Intel one, and `gpu:<name>` for an
NVIDIA one, which only a step on that GPU model runs (judged misdirected when the CI line
offered every fused-MoE step to an H20-3e table none of them loads).

CPU is not one of them: `cpu` in a path is as often an offload or a host buffer as the
CPU backend. Pure and bounded by the patch text GitHub gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.core.facts import ChangedFile
from bot.core.rules.added import added_lines

# the platform's words, as path or identifier components
_WORDS = {
    "rocm": frozenset({"rocm", "hip", "aiter", "amd"}),
    "xpu": frozenset({"xpu"}),
    "tpu": frozenset({"tpu"}),
    # not a platform of its own here (CUDA is the main pipeline's), but code that names
    # it as well as another runs on both
    "cuda": frozenset({"cuda", "nvidia"}),
}
# a path component naming a CUDA architecture: sm90, sm100a, sm120f (not sm_90: rare)
_SM_COMPONENT = re.compile(r"sm(\d{1,2})(\d)[af]?")
_SOURCE_SUFFIXES = (".py", ".cu", ".cuh", ".cpp", ".h", ".hpp", ".c")
_COMPONENT = re.compile(r"[A-Za-z0-9]+")
# an added line that decides or defines: its words say which platform takes the code
_DECIDES = re.compile(r"\s*(?:if|elif|while|assert|and|or|not|def)\b|.*\bis_[a-z]+\(")
_STRING = re.compile(r"\"[^\"]*\"|'[^']*'")
MAX_ADDED_CHARS = 200_000  # of one file's added code read for platform words


def _platforms(words: set[str]) -> set[str]:
    return {name for name, names in _WORDS.items() if words & names}


def _components(text: str) -> set[str]:
    return {c.lower() for c in _COMPONENT.findall(text)}


def _is_source(path: str) -> bool:
    return (path.endswith(_SOURCE_SUFFIXES) and not path.startswith(("tests/", "docs/"))
            and "/tests/" not in path and not path.rsplit("/", 1)[-1].startswith("test_"))


_DEVICE_CONFIG = re.compile(r"device_name=([^,/]{1,120}?)(?:,[^/]*)?\.json$")


def _device_config(path: str) -> str:
    """The platform of a tuned config named for one device, "" for any other file."""
    found = _DEVICE_CONFIG.search(path.rsplit("/", 1)[-1])
    if not found:
        return ""
    name = found.group(1)
    lowered = name.lower()
    if lowered.startswith(("amd", "radeon")) or "instinct" in lowered:
        return "rocm"
    if lowered.startswith("intel"):
        return "xpu"
    if lowered.startswith("nvidia_"):
        return f"gpu:{name}"
    return ""


def _is_build_file(path: str) -> bool:
    """A dependency pin list or an image recipe: what it installs reaches the one image
    its name says (`requirements/xpu.txt`, `docker/Dockerfile.rocm`), if it names one."""
    name = path.rsplit("/", 1)[-1]
    return (path.startswith("requirements/") and name.endswith(".txt")) or name.startswith(
        "Dockerfile")


def _one(platforms: set[str]) -> str:
    return next(iter(platforms)) if len(platforms) == 1 and "cuda" not in platforms else ""


def _architectures(components: set[str]) -> set[str]:
    return {f"sm{int(m.group(1))}" for c in components if (m := _SM_COMPONENT.fullmatch(c))}


def file_platform(changed: ChangedFile) -> str:
    """The one platform (not CUDA as a whole) a changed source file's code runs on: rocm,
    xpu, tpu or a CUDA architecture `sm<major>`; "" when none."""
    if device := _device_config(changed.filename):
        return device
    components = _components(changed.filename)
    by_path = _platforms(components)
    if by_path:
        return _one(by_path)
    if _is_build_file(changed.filename):
        return ""  # its lines install packages: no branch names a platform
    architectures = _architectures(components)
    if architectures:
        return next(iter(architectures)) if len(architectures) == 1 else ""
    code: list[str] = []
    size = 0
    for line in added_lines(changed.patch or ""):
        size += len(line)
        if size > MAX_ADDED_CHARS:
            break
        text = _STRING.sub("", line.split("#", 1)[0])
        if _DECIDES.match(text):
            code.append(text)
    return _one(_platforms(_components("\n".join(code))))


def change_platform(files: Sequence[ChangedFile]) -> tuple[str, tuple[str, ...]]:
    """The platform every changed source file is of, and those files; ("", ()) when
    the change is not one platform's."""
    sources = [f for f in files if f.status != "removed" and (
        _is_source(f.filename) or _is_build_file(f.filename) or _device_config(f.filename))]
    platform = ""
    for changed in sources:
        found = file_platform(changed)
        if not found or (platform and found != platform):
            return "", ()
        platform = found
    return platform, tuple(f.filename for f in sources)
