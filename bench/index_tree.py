"""A synthetic source tree the size and shape of vLLM's (no checkout is available offline):
~2,500 Python files, ~600k lines; model files subclassing a multimodal processor base
and overriding some of its methods, layers and utils called from everywhere, tests.

Deterministic (seeded): the same tree every run, so runs compare.
"""

from __future__ import annotations

import io
import random
import tarfile
from collections.abc import Iterator

TOP = "vllm-project-vllm-0123456"
N_MODELS = 420
N_LAYERS = 380
N_UTILS = 300
N_ENGINE = 600
N_TESTS = 800
HELPERS_PER_UTIL = 8


def _helper(u: int, h: int) -> str:
    return f"util{u}_helper{h}"


def _body(rng: random.Random, indent: str, lines: int, helpers: list[str]) -> Iterator[str]:
    yield f"{indent}value = inputs"
    for j in range(lines):
        kind = j % 5
        if kind == 0:
            yield f"{indent}value = {rng.choice(helpers)}(value, scale={j})"
        elif kind == 1:
            yield f"{indent}if value is None:"
            yield f"{indent}    raise ValueError('missing value at step {j}')"
        elif kind == 2:
            yield f"{indent}tmp_{j} = self_check(value) if value else [v for v in range({j})]"
        elif kind == 3:
            yield f"{indent}# keep the layout the kernel expects (step {j})"
            yield f"{indent}value = torch.cat([value, value], dim=-1).contiguous()"
        else:
            yield f"{indent}logger.debug('step %d', {j})"
    yield f"{indent}return value"


def _imports(rng: random.Random) -> tuple[list[str], list[str]]:
    """The import block, and the helpers it imports (what the bodies call)."""
    lines = ["# SPDX-License-Identifier: Apache-2.0", "import logging", "", "import torch",
             "from torch import nn", ""]
    helpers: list[str] = []
    for u in sorted(rng.sample(range(N_UTILS), 12)):
        names = [_helper(u, h) for h in range(0, HELPERS_PER_UTIL, 2)]
        lines.append(f"from vllm.utils.util{u} import {', '.join(names)}")
        helpers += names
    lines += ["", "logger = logging.getLogger(__name__)", ""]
    return lines, helpers


def _class(
    rng: random.Random, name: str, base: str, methods: list[str], size: int, helpers: list[str]
) -> list[str]:
    lines = ["", "", f"class {name}({base}):", f'    """{name}: synthetic."""', ""]
    for method in methods:
        if rng.random() < 0.2:
            lines.append("    @torch.inference_mode()")
        lines.append(f"    def {method}(self, inputs, config=None, *, prefix=''):")
        lines.extend(_body(rng, "        ", size, helpers))
        lines.append("")
    return lines


def files(seed: int = 0) -> Iterator[tuple[str, str]]:
    rng = random.Random(seed)
    base = ["# SPDX-License-Identifier: Apache-2.0", "from abc import abstractmethod", "",
            "", "class BaseMultiModalProcessor:", ""]
    for method in ("_get_prompt_updates", "_call_hf_processor", "_get_mm_fields_config",
                   "apply"):
        base += ["    @abstractmethod", f"    def {method}(self, mm_items, kwargs, out):",
                 "        raise NotImplementedError", ""]
    yield "vllm/multimodal/processing.py", "\n".join(base) + "\n"
    for u in range(N_UTILS):
        lines, helpers = _imports(rng)
        for h in range(HELPERS_PER_UTIL):
            lines += ["", "", f"def {_helper(u, h)}(inputs, scale=1, *, strict=False):"]
            lines.extend(_body(rng, "    ", 18, helpers))
        yield f"vllm/utils/util{u}.py", "\n".join(lines) + "\n"
    for m in range(N_MODELS):
        lines, helpers = _imports(rng)
        lines.append("from vllm.multimodal.processing import BaseMultiModalProcessor")
        overrides = [x for x in ("_get_prompt_updates", "_call_hf_processor",
                                 "_get_mm_fields_config") if rng.random() < 0.5]
        lines += _class(rng, f"Model{m}Processor", "BaseMultiModalProcessor", overrides, 14,
                        helpers)
        for part in ("Attention", "MLP", "DecoderLayer", "Model", "ForCausalLM"):
            lines += _class(rng, f"Model{m}{part}", "nn.Module",
                            ["__init__", "forward", "load_weights"], 12, helpers)
        yield f"vllm/model_executor/models/model{m}.py", "\n".join(lines) + "\n"
    for group, count, per in (("model_executor/layers", N_LAYERS, 4),
                              ("v1/engine", N_ENGINE, 3)):
        for i in range(count):
            lines, helpers = _imports(rng)
            for c in range(per):
                methods = ["__init__", "forward", f"_checked_op{c}", f"_checked_op{c + 1}"]
                lines += _class(rng, f"Part{i}x{c}", "nn.Module", methods, 9, helpers)
            yield f"vllm/{group}/part{i}.py", "\n".join(lines) + "\n"
    for t in range(N_TESTS):
        lines, helpers = _imports(rng)
        lines += ["import pytest", ""]
        for k in range(6):
            lines += ["", "@pytest.mark.parametrize('model', ['org/model-a', 'org/model-b'])",
                      f"def test_case{k}(model):"]
            lines.extend(_body(rng, "    ", 10, helpers))
        yield f"tests/test_part{t}.py", "\n".join(lines) + "\n"


def tarball(seed: int = 0) -> tuple[bytes, int, int]:
    """(the gzipped tarball GitHub would serve, files, lines)."""
    buffer = io.BytesIO()
    count = lines = 0
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files(seed):
            data = text.encode()
            info = tarfile.TarInfo(f"{TOP}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
            count += 1
            lines += text.count("\n")
    return buffer.getvalue(), count, lines
