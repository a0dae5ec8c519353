"""Whether a patch changes only prose (comments, docstrings, blank lines)."""

from __future__ import annotations

import time

from bot.core.facts import ChangedFile
from bot.core.reading.prose_lines import patch_is_prose, prose_only


def _hunk(*lines: str, header: str = "@@ -10,6 +10,8 @@ class Config:") -> str:
    return "\n".join((header, *lines))


def test_a_docstring_grown_from_inside_is_prose() -> None:
    # The hunk starts in the middle of a docstring and closes it.
    patch = _hunk(
        "     at the same time, or None for no limit.",
        '-    primarily a coarse capacity valve."""',
        "+    primarily a coarse capacity valve.",
        "+",
        "+    Unlike ``max_num_seqs``, this applies to the whole server.",
        '+    Size it as ``dp * max_num_seqs``."""',
        " ",
        "     max_num_queued_tokens: int | None = Field(default=None, ge=0)",
    )
    assert patch_is_prose(patch)


def test_a_hunk_in_the_middle_of_a_long_docstring_is_prose() -> None:
    patch = _hunk(
        "     prefill-decode setup this maps directly to the prefill pool's",
        "     capacity.",
        "+    Like ``max_num_queued_reqs``, this limit is enforced in the API",
        "+    server process.",
        "     Note: the count is conservative.",
    )
    assert patch_is_prose(patch)


def test_comments_and_a_new_docstring_are_prose() -> None:
    patch = _hunk(
        " def size(config):",
        '+    """The widest hidden size of the models sharing the workspace."""',
        "+    # The draft may be wider than the target.",
        "     return config.hidden_size",
    )
    assert patch_is_prose(patch)


def test_code_next_to_a_docstring_is_not_prose() -> None:
    code = _hunk(" def f(x):", '     """Doc."""', "-    return x", "+    return x + 1")
    assert not patch_is_prose(code)
    assert not patch_is_prose(_hunk("-    limit = 4", "+    limit = 8"))
    # `x = """...` assigns a string: code, not a docstring.
    assert not patch_is_prose(_hunk('+    TEMPLATE = """', "+    Hello {name}", '+    """'))


def test_an_unclear_quote_counts_as_code() -> None:
    # A bare triple quote opens or closes a string: nothing tells which.
    assert not patch_is_prose(_hunk('+    """', "+    text here and more", '     """'))


def test_prose_only_needs_python_patches() -> None:
    doc = ChangedFile(filename="vllm/a.py", patch=_hunk("+    # why we keep it"))
    assert prose_only([doc])
    assert not prose_only([doc, ChangedFile(filename="csrc/a.cu", patch=_hunk("+  // x"))])
    assert not prose_only([ChangedFile(filename="vllm/a.py")])  # unknown patch
    assert not prose_only([])


def test_a_huge_patch_is_read_in_bounded_time() -> None:
    patch = _hunk(*(["+    # note " + "x" * 5000] * 50_000))
    started = time.perf_counter()
    assert not patch_is_prose(patch)  # past the line cap: not known to be prose
    assert time.perf_counter() - started < 2.0
