"""Reviewers' asks in one comment: a request cue and a kind in the same sentence, the kind
not before the cue; precision first (LGTM, questions about the code, thanks are not asks)."""

from __future__ import annotations

import time

import pytest

from bot.core.reading.asks import find_asks, mentions_kind
from bot.core.reading.remarks import first_sentence, only_promises, pasted_test_summaries


def kinds(text: str) -> list[str]:
    return [ask.kind for ask in find_asks(text)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Can you add a unit test for the None case?", ["tests"]),
    ("Would we be able to add a Gemma 3 [text-only] test in please?", ["tests"]),
    ("You should add this model to tests/models/multimodal/processing/test_common.py.",
     ["tests"]),
    ("maybe we could add a test case to `tests/v1/test_struct_output.py`?", ["tests"]),
    ("Alternatively you will need to modify `test_registry.py` for CI to pass.", ["tests"]),
    ("I think this needs more unit tests.", ["tests"]),
    ("Could you share the test results for the llama3 8b model?", ["test-results"]),
    ("Could you test `examples/client.py` and include the results in the description?",
     ["test-results"]),
    ("Have you run an accuracy smoke test?", ["gpu-eval"]),
    ("Could you post lm_eval gsm8k numbers before and after?", ["gpu-eval"]),
    ("Can you share benchmark numbers and lm_eval results?", ["gpu-eval", "numbers"]),
    ("Let's make sure the path without prefix caching performs well before merging.",
     ["numbers"]),
    ("I am not sure quick all-reduce is always faster here. Can we get some evidence first?",
     ["numbers"]),
    ("Have you tested this on MI300?", ["hardware-run"]),
    ("Can you update docs as well?", ["docs"]),
    ("Could you please add a doc about how to install the XPU backend?", ["docs"]),
    ("Can you fix the merge conflict?", ["rebase"]),
    ("This needs a rebase.", ["rebase"]),
    ("Please split this into two PRs: the refactor and the fix.", ["split"]),
    ("Thanks for adding tests, could you also update the docs?", ["docs"]),
])
def test_requests_are_asks(text: str, expected: list[str]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize("text", [
    "LGTM",
    "LGTM, thanks for adding the tests!",
    "Tests look good.",
    "Why is this changed?",
    "What's the new wheel size? :-)",
    "wouldn't `nodes[-1]` give the same result?",
    "nit: can you rename this variable?",
    "Could you explain why the kernel is faster?",
    "No need to add tests for this one.",
    "We don't need a doc update here.",
    "Let's wait for vllm IR here to avoid merge conflicts.",
    "Let's do this in a separate PR.",
    "Can you address in follow-up?",
    "You need to handle the None case.",
    "The CI failure looks unrelated.",
    "Is this a typo as `CUDA_VERSION` is set to 12.8 above?",
    "> Can you add tests?\nSure, done.",
    "```\n# please add tests\n```",
    "<!-- can you add a test? -->",
])
def test_what_is_not_an_ask(text: str) -> None:
    assert kinds(text) == []


def test_one_ask_per_kind_with_its_first_sentence() -> None:
    found = find_asks("Can you add a test? Also please add tests for fp8. And update the docs.")
    assert [(a.kind, a.sentence) for a in found] == [
        ("tests", "Can you add a test?"),
        ("docs", "And update the docs."),
    ]


def test_a_huge_comment_is_read_in_bounded_time() -> None:
    line = "please " + "x" * 5_000 + " add " + "word " * 2_000 + "\n"
    text = line * 500 + "Can you add a test?"
    started = time.perf_counter()
    found = find_asks(text)
    assert time.perf_counter() - started < 1.0
    assert found == ()  # the ask sits past what is read


def test_mentions_kind_names_what_a_reply_speaks_of() -> None:
    assert mentions_kind("Added `tests/test_fp8.py`", "tests")
    assert mentions_kind("Rebased on main.", "rebase")
    assert not mentions_kind("Thanks for the review!", "tests")


def test_pasted_test_summaries_and_promises() -> None:
    text = "Ran locally:\n```\n===== 12 passed, 1 skipped in 3.41s =====\n```"
    assert pasted_test_summaries(text) == ("12 passed, 1 skipped in 3.41s",)
    assert pasted_test_summaries("2 tests pending") == ()
    assert only_promises("Will add tests later.")
    assert not only_promises("Added a test in tests/test_x.py.")


def test_first_sentence_skips_quotes_code_and_headings() -> None:
    text = "> quoted\n## Heading\n```\ncode.\n```\nWrapping at the processor layer is wrong. " \
           "Please move it."
    assert first_sentence(text) == "Wrapping at the processor layer is wrong."
    assert first_sentence("") == ""
