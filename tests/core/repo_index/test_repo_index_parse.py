"""Source text -> index records, with `ast` only; bad input is a counted skip, never a crash."""

from __future__ import annotations

import pytest

from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import Skipped, module_name, parse_python
from tests.repo_index_tree import TREE


def _parse(path: str, text: str) -> FileRecord:
    parsed = parse_python(path, text.encode())
    assert isinstance(parsed, FileRecord), parsed
    return parsed


def test_classes_methods_decorators_signatures_and_calls() -> None:
    path = "vllm/multimodal/processing.py"
    record = _parse(path, (TREE / path).read_text())
    assert record.module == "vllm.multimodal.processing"
    assert [(c.name, c.bases, c.line, c.end_line) for c in record.classes] == [
        ("BaseMultiModalProcessor", (), 4, 19),
    ]
    by_name = {f.name: f for f in record.functions}
    update = by_name["_get_prompt_updates"]
    assert update.class_name == "BaseMultiModalProcessor"
    assert update.decorators == ("abstractmethod",)
    assert update.params == ("mm_items", "hf_processor_mm_kwargs", "out_mm_kwargs")
    assert (update.line, update.body_line, update.end_line) == (11, 12, 12)
    assert by_name["apply"].calls == ("_get_prompt_updates", "_call_hf_processor")


def test_signature_shape_marks_stars_and_drops_self() -> None:
    record = _parse("m.py", (
        "class A:\n"
        "    @staticmethod\n"
        "    def s(self, a, /, b, *rest, c, **kw): pass\n"
        "    def m(self, x, *, y): pass\n"
        "def f(*args, **kwargs): pass\n"
    ))
    params = {f.qualname: f.params for f in record.functions}
    assert params == {
        "A.s": ("self", "a", "b", "*rest", "c", "**kw"),
        "A.m": ("x", "*", "y"),
        "f": ("*args", "**kwargs"),
    }


def test_multi_line_signature_span_ends_where_the_body_starts() -> None:
    record = _parse("m.py", "def f(\n    a,\n    b,\n) -> None:\n    return None\n")
    (fn,) = record.functions
    assert (fn.line, fn.body_line, fn.end_line) == (1, 5, 5)


def test_imports_are_absolute_even_when_relative() -> None:
    record = _parse(
        "vllm/model_executor/models/llama.py",
        "import torch.nn as nn\nfrom ..layers import linear\nfrom .utils import maybe_prefix\n"
        "from . import registry\n",
    )
    assert record.imports == (
        "torch.nn", "vllm.model_executor.layers", "vllm.model_executor.layers.linear",
        "vllm.model_executor.models.utils", "vllm.model_executor.models.utils.maybe_prefix",
        "vllm.model_executor.models", "vllm.model_executor.models.registry",
    )


def test_definitions_under_if_and_try_blocks_are_found() -> None:
    record = _parse("m.py", (
        "try:\n    import fast\nexcept ImportError:\n    def fallback(x): return x\n"
        "if True:\n    class Late(Base): pass\n"
    ))
    assert [f.name for f in record.functions] == ["fallback"]
    assert [(c.name, c.bases) for c in record.classes] == [("Late", ("Base",))]


def test_module_level_calls_are_kept_under_a_pseudo_caller() -> None:
    record = _parse("m.py", "register(Model)\ndef f(): pass\n")
    assert [(f.name, f.calls) for f in record.functions] == [("f", ()), ("<module>", ("register",))]


@pytest.mark.parametrize(("data", "reason"), [
    (b"x = 1\n" * 10, "too-large"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    (b"name = '\xff\xfe'\n", "not-utf8"),
    (b"def broken(:\n    pass\n", "syntax-error"),
])
def test_bad_files_are_skipped_with_a_reason(data: bytes, reason: str) -> None:
    assert parse_python("x.py", data, max_bytes=50) == Skipped("x.py", reason)  # type: ignore[arg-type]


def test_pathologically_deep_code_is_a_skip_not_a_crash() -> None:
    deep = ("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n").encode()
    nested = "".join(" " * i + "if x:\n" for i in range(150)) + " " * 150 + "pass\n"
    assert isinstance(parse_python("deep.py", deep), Skipped)
    result = parse_python("nested.py", nested.encode())
    assert isinstance(result, Skipped | FileRecord)


@pytest.mark.parametrize(("path", "module"), [
    ("vllm/utils/__init__.py", "vllm.utils"),
    ("vllm/a/b.py", "vllm.a.b"),
    ("setup.py", "setup"),
])
def test_module_names(path: str, module: str) -> None:
    assert module_name(path) == module
