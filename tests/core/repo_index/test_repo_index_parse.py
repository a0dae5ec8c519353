"""Source text -> index records, with tree-sitter; bad input is a counted skip, never a crash."""

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
    assert (update.first_line, update.line, update.body_line, update.end_line) == (10, 11, 12, 12)
    assert update.signature == (
        "def _get_prompt_updates(self, mm_items, hf_processor_mm_kwargs, out_mm_kwargs):"
    )
    # Calls to functions of the same file, per function; every call, per file.
    assert by_name["apply"].calls == ("_get_prompt_updates", "_call_hf_processor")
    assert ("call_hf_processor", 1) in record.calls


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
    record = _parse("m.py", "def f(\n    a,\n    b=1,\n) -> None:\n    return None\n")
    (fn,) = record.functions
    assert (fn.line, fn.body_line, fn.end_line) == (1, 5, 5)
    assert fn.params == ("a", "b=")  # `=`: the parameter has a default
    assert fn.signature == "def f(\na,\nb=1,\n) -> None:"


def test_docstrings_and_nested_defs_are_spans_of_their_function() -> None:
    record = _parse("m.py", (
        "class A:\n"
        "    def run(self, x):\n"
        "        \"\"\"Run it.\n\n        Twice.\"\"\"\n"
        "        def _helper(y):\n"
        "            return y\n"
        "        return _helper(x)\n"
    ))
    run, helper = record.functions
    assert (run.qualname, run.doc_line, run.doc_end, run.nested_in) == ("A.run", 3, 5, None)
    assert (helper.name, helper.class_name, helper.nested_in) == ("_helper", None, "A.run")
    assert (helper.line, helper.end_line) == (6, 7)
    assert run.calls == ("_helper",)


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


def test_every_call_in_the_file_is_counted_by_name() -> None:
    record = _parse("m.py", "register(Model)\ndef f():\n    x.register(g(1))\n")
    assert [(f.name, f.calls) for f in record.functions] == [("f", ())]
    assert record.calls == (("g", 1), ("register", 2))


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
    assert parse_python("deep.py", deep) == Skipped("deep.py", "too-deep")
    result = parse_python("nested.py", nested.encode())
    assert isinstance(result, Skipped | FileRecord)


def test_a_call_chain_a_hundred_thousand_deep_is_read_in_bounded_time() -> None:
    """tree-sitter's query takes minutes on `f(a)(a)(a)…` a hundred thousand deep (past
    some depth its matching turns quadratic); no match starts deeper than a bound, so
    the file is read in well under a second."""
    import time

    data = ("def g():\n    return f" + "(aaaa)" * 100_000 + "\n").encode()
    started = time.process_time()
    assert isinstance(parse_python("chain.py", data, max_bytes=10**7), FileRecord)
    assert time.process_time() - started < 5.0


@pytest.mark.parametrize(("path", "module"), [
    ("vllm/utils/__init__.py", "vllm.utils"),
    ("vllm/a/b.py", "vllm.a.b"),
    ("setup.py", "setup"),
])
def test_module_names(path: str, module: str) -> None:
    assert module_name(path) == module
