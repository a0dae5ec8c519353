"""The specificity extractors (bot/core/mentions, decisions, structure, links,
value_tables, prose) on real vLLM bodies and patches (tests/fixtures) and on
synthetic hunks. Each table row says what a reviewer would want pulled out."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.core.facts import ChangedFile
from bot.core.reading.decisions import DECISION_KINDS, decision_kind, harvest_decisions, shorten
from bot.core.reading.links import find_links
from bot.core.reading.mentions import body_names, find_mentions
from bot.core.reading.prose import prose_units
from bot.core.reading.specifics import Decision, Link, ValueChange
from bot.core.reading.structure.read import read_structure, unanswered
from bot.core.reading.symbols import extract_symbols
from bot.core.reading.value_tables import find_value_changes
from bot.core.render.i18n import t
from bot.core.render.specific import decision_line

ROOT = Path(__file__).resolve().parents[3]
CASES: dict[int, dict[str, Any]] = {
    case["number"]: case
    for case in json.loads((ROOT / "tests/fixtures/cases/vllm_prs.json").read_text("utf-8"))
}
_EVENT = json.loads((ROOT / "tests/fixtures/cli/pr_56904.json").read_text("utf-8"))
BODY_56904: str = _EVENT.get("pull_request", _EVENT)["body"]
FILES_56904 = tuple(
    ChangedFile(filename=f["filename"], patch=f.get("patch"))
    for f in json.loads((ROOT / "tests/fixtures/cli/pr_56904_files.json").read_text("utf-8"))
)


def _files(number: int) -> tuple[ChangedFile, ...]:
    return tuple(
        ChangedFile(filename=f["filename"] if isinstance(f, dict) else f)
        for f in CASES[number]["files"]
    )


def _patch(filename: str, *lines: str, header: str = "") -> ChangedFile:
    patch = "\n".join((f"@@ -1,20 +1,20 @@ {header}".rstrip(), *lines))
    return ChangedFile(filename=filename, patch=patch)


# --- prose ---------------------------------------------------------------------------


def test_prose_skips_code_tables_quotes_and_template() -> None:
    body = (
        "## Why\nWe keep the old path\nbecause callers rely on it.\n\n"
        "```\nTraceback: instead of crashing\n```\n"
        "| a | b |\n> quoted instead of ours\n- item one\n- [ ] box\n"
        "<!-- hidden instead of shown -->\n"
    )
    units = list(prose_units(body))
    assert [u.text for u in units] == [
        "We keep the old path because callers rely on it.",
        "item one",
    ]
    assert units[0].heading == "why"
    assert not units[0].bullet
    assert units[1].bullet


# --- mentions -----------------------------------------------------------------------


def test_mentions_on_the_compile_pr_name_symbols_the_patch_touches() -> None:
    mentions = find_mentions(BODY_56904, FILES_56904, extract_symbols(FILES_56904))
    by_name = {m.name: m for m in mentions}
    # Defined in the patch first, with the file it lives in.
    assert mentions[0].name == "_active_check_mode"
    assert mentions[0].defined
    assert mentions[0].file == "vllm/utils/gpu_sync_debug.py"
    assert by_name["allow_in_graph"].file == "vllm/utils/gpu_sync_debug.py"
    assert by_name["torch.compiler.is_compiling"].file == "vllm/utils/gpu_sync_debug.py"
    # Named in the body but absent from the patch: `Tensor.to` (too short), `.cuda`.
    assert "Tensor.to" not in by_name
    assert ".cuda" not in by_name


@pytest.mark.parametrize(
    ("number", "expected_files"),
    [
        (
            46280,
            {
                "vllm/model_executor/layers/rotary_embedding/__init__.py",
                "vllm/model_executor/layers/rotary_embedding/yarn_scaling_rope.py",
            },
        ),
        (
            45033,
            {
                "vllm/v1/attention/backends/mla/prefill/aiter_flash_attn.py",
                "vllm/v1/attention/backends/mla/prefill/registry.py",
                "vllm/v1/attention/backends/mla/prefill/selector.py",
            },
        ),
        (51753, {"vllm/entrypoints/pooling/scoring/utils.py"}),
        # The body names `get_hf_processor` but there is no patch to confirm it.
        (45525, set()),
    ],
)
def test_file_paths_in_the_body_resolve_against_the_file_list(
    number: int, expected_files: set[str]
) -> None:
    files = _files(number)
    mentions = find_mentions(CASES[number]["body"], files, ())
    assert {m.file for m in mentions if m.kind == "file"} == expected_files


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("call `get_rope()` and `a.b.c_d(x)`", ("get_rope", "a.b.c_d")),
        (
            "see `transformers/modeling_rope_utils.py::_compute_yarn_parameters`",
            ("transformers/modeling_rope_utils.py", "_compute_yarn_parameters"),
        ),
        ("flags `--tokenizer-mode mistral`, `@user`, `$HOME`, `x`", ()),
        ("bare vllm/config/model.py here", ("vllm/config/model.py",)),
        ("```\n`in_fence_name`\n```", ()),
        ("`None` and `self` are too common", ()),
    ],
)
def test_body_names(text: str, names: tuple[str, ...]) -> None:
    assert body_names(text) == names


# --- decisions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (46280, "This PR intentionally handles only the explicit `attention_factor`"),
        (51753, "The `parameter` and `value` fields remain unset because"),
        (51753, "Offline callers now receive the typed `VLLMValidationError` instead of"),
        (45033, "calls `aiter.flash_attn_varlen_func` directly instead of falling back"),
        (50758, "instead of hard-coding the layer name string into the graph"),
        (48629, "while keeping the existing top-level mapping authoritative"),
    ],
)
def test_decisions_on_real_bodies(number: int, expected: str) -> None:
    quotes = [d.quote for d in harvest_decisions(CASES[number]["body"])]
    assert any(expected in q for q in quotes), quotes
    assert 1 <= len(quotes) <= 4


def test_decisions_never_come_from_tests_code_or_housekeeping() -> None:
    # 51753 has a duplicate-work check and an AI disclosure; 55857 only test prose.
    quotes = " ".join(d.quote for d in harvest_decisions(CASES[51753]["body"]))
    assert "searched open PRs" not in quotes
    assert "Codex" not in quotes
    assert harvest_decisions(CASES[55857]["body"]) == ()
    body = (
        "## Test Plan\nWe test X instead of Y because it is faster.\n```\nuse A instead of B\n```"
    )
    assert harvest_decisions(body) == ()


def test_a_decision_is_tied_to_the_symbol_it_names() -> None:
    mentions = find_mentions(BODY_56904, FILES_56904, extract_symbols(FILES_56904))
    decisions = harvest_decisions(BODY_56904, mentions)
    assert [(d.concerns, d.concerns_file) for d in decisions] == [
        ("allow_in_graph", "vllm/utils/gpu_sync_debug.py")
    ]
    assert decisions[0].quote.startswith("`allow_in_graph` needs a weak-referenceable callable")


def test_a_decision_heading_makes_its_sentences_decisions() -> None:
    body = "## Alternatives considered\nA global lock was considered and dropped.\n"
    assert [d.quote for d in harvest_decisions(body)] == [
        "A global lock was considered and dropped."
    ]


@pytest.mark.parametrize(
    ("sentence", "focus", "expected"),
    [
        ("short one.", 0, "short one."),
        (
            "a" * 150 + ", then `code with, comma` and " + "b" * 100,
            0,
            "a" * 150 + ", then `code with, comma`…",
        ),
        (
            "x " * 200 + "; we keep the lock instead of dropping it.",
            402,
            "…we keep the lock instead of dropping it.",
        ),
    ],
)
def test_shorten_cuts_at_a_clause_boundary(sentence: str, focus: int, expected: str) -> None:
    assert shorten(sentence, focus) == expected


# --- structure ----------------------------------------------------------------------


def test_structure_of_the_compile_pr() -> None:
    notes = {(n.symbol, n.kind): n.details for n in read_structure(FILES_56904)}
    assert notes[("_active_check_mode", "reordered")] == (
        "if torch.compiler.is_compiling():",
        "mode = _CHECK_MODE.get()",
    )
    assert notes[("_checked_to", "wrapped")] == ("torch.compiler.allow_in_graph",)
    assert notes[("test_voxtral_compiled", "parametrize")] == ("2", "2", "1")


STRUCTURE_TABLE: list[tuple[str, ChangedFile, tuple[str, str, tuple[str, ...]]]] = [
    (
        "condition changed",
        _patch(
            "a.py", "-    if x > 0:", "+    if x >= 0 and y:", "         go()", header="def f():"
        ),
        ("f", "condition", ("if x > 0:", "if x >= 0 and y:")),
    ),
    (
        "exception type changed",
        _patch(
            "vllm/s.py",
            '-        raise ValueError("empty")',
            '+        raise VLLMValidationError("empty")',
            header="def validate(x):",
        ),
        ("validate", "raise-changed", ("ValueError", "VLLMValidationError")),
    ),
    (
        "assert relaxed",
        _patch("k.py", "-    assert n % 16 == 0", "+    assert n % 8 == 0", header="def pad(n):"),
        ("pad", "assert-changed", ("assert n % 16 == 0", "assert n % 8 == 0")),
    ),
    (
        "assert dropped",
        _patch("k.py", "-    assert x.is_contiguous()", "     y = x", header="def g(x):"),
        ("g", "assert-removed", ("assert x.is_contiguous()",)),
    ),
    (
        "decorator added",
        _patch("m.py", "+@torch.compiler.allow_in_graph", " def fast(x):", "     return x"),
        ("fast", "decorator-added", ("torch.compiler.allow_in_graph",)),
    ),
    (
        "decorator removed",
        _patch("m.py", "-@functools.cache", " def load():", "     return 1"),
        ("load", "decorator-removed", ("functools.cache",)),
    ),
    (
        "keyword argument no longer passed",
        _patch(
            "attn.py",
            "-    out = update(kv, slot, layer_name=name, scale=s)",
            "+    out = update(kv, slot, scale=s)",
            header="def forward(self):",
        ),
        ("forward", "kwarg-removed", ("layer_name",)),
    ),
    (
        "TODO left",
        _patch("c.py", "+    # TODO(v0.12): drop the legacy path", "     x()", header="def run():"),
        ("run", "todo", ("drop the legacy path",)),
    ),
    (
        "function isolated in its own process",
        _patch(
            "vllm/distributed/launch.py", "+@spawn_new_process()", " def launch():", "     ok()"
        ),
        ("launch", "isolated", ("spawn_new_process",)),
    ),
    (
        "parametrize matrix grew",
        _patch(
            "tests/test_gate.py",
            ' @pytest.mark.parametrize("a", [True, False])',
            ' @pytest.mark.parametrize("b", [1, 2])',
            '-@pytest.mark.parametrize("c", ["x"])',
            '+@pytest.mark.parametrize("c", ["x", "y"])',
            " def test_gate(a, b, c):",
            "     assert gate(a, b, c)",
        ),
        ("test_gate", "parametrize", ("8", "2×2×2", "4")),
    ),
    (
        "assert replacing a fallback",
        _patch(
            "vllm/r.py",
            "-        if self.manager is None:",
            "-            self.manager = build()",
            "+        assert self.manager is not None",
            "         self.manager.run()",
            header="def capture(self):",
        ),
        ("capture", "assert-added", ("assert self.manager is not None",)),
    ),
]


def test_declarations_and_test_scaffolding_give_no_note() -> None:
    """A reviewer learns nothing from "staticmethod removed" or a test's fixture and
    process isolation that the code does not say; a decorator that changes behaviour
    in production code is still a note."""
    quiet = [
        _patch("vllm/a.py", "-    @staticmethod", "+    @classmethod", "     def f(cls):"),
        _patch("vllm/b.py", "+@dataclass", " class Config:", "     x: int = 1"),
        _patch("tests/test_c.py", "+@create_new_process_for_each_test()", " def test_c():"),
        _patch("tests/conftest.py", "+@pytest.fixture", " def mixin():", "     return 1"),
    ]
    assert read_structure(quiet) == ()
    cached = _patch("vllm/d.py", "+@lru_cache", " def lookup(key):", "     return key")
    assert [(n.symbol, n.kind) for n in read_structure([cached])] == [
        ("lookup", "decorator-added")
    ]


def test_a_keyword_is_not_dropped_when_its_call_is_replaced_or_an_attribute_is_set() -> None:
    replaced = _patch(
        "vllm/m.py",
        "-        x = torch.from_numpy(a).to(",
        "-            self.device,",
        "-            non_blocking=True,",
        "-        )",
        "+        x = async_tensor_h2d(a, device=self.device)",
        header="def forward(self):",
    )
    assert read_structure([replaced]) == ()
    attribute = _patch(
        "vllm/p.py",
        "-        self.hidden_dim = config.get_hidden_size()",
        "+        self.workspace_dim = widest(config)",
        header="def __init__(self, config):",
    )
    assert read_structure([attribute]) == ()


def test_a_rewrite_is_not_a_reorder() -> None:
    lines = [f"-    old_{i}()" for i in range(8)] + [f"+    new_{i}()" for i in range(8)]
    rewrite = _patch(
        "vllm/r.py",
        "-    version = pick()",
        "-    logger.warning_once(msg)",
        *lines,
        "+    logger.warning_once(msg)",
        "+    version = pick()",
        header="def select():",
    )
    assert all(n.kind != "reordered" for n in read_structure([rewrite]))


@pytest.mark.parametrize(
    ("changed", "expected"),
    [row[1:] for row in STRUCTURE_TABLE],
    ids=[r[0] for r in STRUCTURE_TABLE],
)
def test_structure_table(changed: ChangedFile, expected: tuple[str, str, tuple[str, ...]]) -> None:
    notes = [(n.symbol, n.kind, n.details) for n in read_structure([changed])]
    assert notes == [expected]


def test_template_notes_say_nothing() -> None:
    """Judged noise on real PRs every time: "can callers reach the new assert?" on any
    guard, a new test's parametrize matrix, a TODO that says nothing, and a condition
    that tests the same thing (`is not None`, a renamed variable)."""
    quiet = [
        _patch("vllm/a.py", "+    assert self.m is not None", "     self.m.run()",
               header="def run(self):"),
        _patch("tests/test_b.py", '+@pytest.mark.parametrize("n", [1, 2])',
               "+def test_b(n):", "+    assert n"),
        _patch("vllm/c.py", "+    # TODO", "+    x = 1  # FIXME: TODO", header="def c():"),
        _patch("vllm/d.py", "-    if config:", "+    if config is not None:", "         go()",
               header="def d(config):"),
        _patch("vllm/e.py", "-    current = count()", "-    if current + n > cap:",
               "+    current_requests = shared.value", "+    if current_requests + n > cap:",
               header="def e(n):"),
    ]
    assert read_structure(quiet) == ()
    # A condition that reads another value is a change, though it looks alike.
    other = _patch("vllm/f.py", "-    if current + n > cap:", "+    if queued + n > cap:",
                   "     x = current", header="def f(n):")
    assert [n.kind for n in read_structure([other])] == ["condition"]


def test_structure_ignores_moves_tests_asserts_and_non_python() -> None:
    moved = _patch("a.py", "-    x = compute(a)", "+    x = compute(a)", header="def f():")
    test_assert = _patch("tests/test_a.py", "+    assert y == 2", header="def test_a():")
    cuda = _patch("csrc/k.cu", "-    assert(n > 0);", "+    if (n > 1) {")
    assert read_structure([moved, test_assert, cuda]) == ()


def test_structure_keeps_one_line_per_function_and_the_cap() -> None:
    lines = [
        "-    if a:",
        "+    if b:",
        '+    raise KeyError("k")',
        "+    # TODO: later",
    ]
    many = [_patch(f"f{i}.py", *lines, header=f"def f{i}():") for i in range(10)]
    notes = read_structure(many)
    assert len(notes) == 6
    assert all(n.kind == "condition" for n in notes)
    assert len({n.symbol for n in notes}) == 6


# --- links --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "body", "expected"),
    [
        ("", "Supersedes #50752.", (Link("supersedes", 50752, ""),)),
        (
            "",
            "Test hardening (follow-up to #50257, #55701, #55735).",
            (
                Link("follow-up", 50257, ""),
                Link("follow-up", 55701, ""),
                Link("follow-up", 55735, ""),
            ),
        ),
        ("", "## Purpose\n\nPart of #48227.", (Link("part-of", 48227, ""),)),
        ("", "This is stacked on #48351, which adds", (Link("depends-on", 48351, ""),)),
        ('Revert "[Core] x"', "Reverts vllm-project/vllm#123", (Link("reverts", 123, ""),)),
        (
            "",
            "Fix https://github.com/vllm-project/vllm/issues/34250",
            (Link("fixes", 34250, ""),),
        ),
        (
            "",
            "like https://github.com/sgl-project/sglang/pull/77 does",
            (Link("related", 77, "sgl-project/sglang"),),
        ),
        ("", "```\nfixes #1 in a log\n```\nAs mentioned in #22945", ()),
    ],
)
def test_links(title: str, body: str, expected: tuple[Link, ...]) -> None:
    assert find_links(title, body, "vllm-project/vllm") == expected


def test_links_on_real_bodies() -> None:
    assert find_links("", CASES[50752]["body"], "vllm-project/vllm")[0] == Link("fixes", 50706, "")
    assert Link("fixes", 33267, "") in find_links("", CASES[50758]["body"])
    assert find_links("", CASES[48629]["body"])[:2] == (
        Link("fixes", 48621, ""),
        Link("depends-on", 48351, ""),
    )


# --- value tables -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "| Model | `max_model_len` before | `max_model_len` after |\n|---|---|---|\n"
            "| TeleChat3 | 131,072 | 32,768 |\n| Same | 4096 | 4096 |\n",
            (ValueChange("TeleChat3", "max_model_len", "131,072", "32,768"),),
        ),
        (
            "| Config | Old | New |\n| :-- | --: | --: |\n| `mscale` | **0.7** | 1.0 |\n",
            (ValueChange("mscale", "", "0.7", "1.0"),),
        ),
        # A benchmark table is a result, not configuration.
        ("| Model | Throughput before | Throughput after |\n|-|-|-|\n| L | 1 | 2 |\n", ()),
        # No before/after columns; a table in a fence is a paste.
        ("| Job | Exclusions |\n|-|-|\n| a | b |\n", ()),
        ("```\n| M | before | after |\n|-|-|-|\n| a | 1 | 2 |\n```\n", ()),
    ],
)
def test_value_tables(body: str, expected: tuple[ValueChange, ...]) -> None:
    assert find_value_changes(body) == expected


def test_the_real_ci_table_yields_no_value_change() -> None:
    assert find_value_changes(CASES[42059]["body"]) == ()


# --- bounded on hostile input ---------------------------------------------------------


def test_extractors_stay_linear_on_hostile_input() -> None:
    hostile_body = (
        ("`" + "a." * 5000 + "` instead of " + "#1, " * 3000 + "\n") * 50
        + "| before | after |\n" * 5000
        + ("x" * 100_000)
    )
    hostile_patch = "\n".join(
        ["@@ -1,1 +1,1 @@ def f():"]
        + ["-    if " + "(" * 5000 + ":", "+    f(" + "a=1, " * 2000 + ")"] * 2000
    )
    files = [ChangedFile(filename=f"f{i}.py", patch=hostile_patch) for i in range(5)]
    started = time.perf_counter()
    mentions = find_mentions(hostile_body, files, ())
    harvest_decisions(hostile_body, mentions)
    read_structure(files)
    find_links("", hostile_body)
    find_value_changes(hostile_body)
    # Generous for a shared 2-core machine; quadratic behaviour would take minutes.
    assert time.perf_counter() - started < 20


def test_a_quote_is_a_whole_sentence_as_written() -> None:
    body = (
        "## Purpose\n\n**Decode regressed ~14% at TP>1 since v0.27. This PR restores it.** "
        "The mechanism is generic but `NemotronH` is the only model that opts in, so it is "
        "the only one whose behaviour changes.\n\n"
        "Searched open PRs for the redaction instead of adding a new helper: no open PR or\n"
        "[...truncated...]\n\n"
        "It redacts the key to *** in the log instead of dropping the field, so operators "
        "still see it was set.\n"
    )
    quotes = [d.quote for d in harvest_decisions(body)]
    # The sentence after a bold span stands alone, without the span's closing marks...
    assert quotes[0].startswith("The mechanism is generic but `NemotronH`")
    assert not any(".**" in q for q in quotes)
    # ...a sentence the copy was cut in is never quoted, and a literal *** is not markup.
    assert not any("Searched open PRs" in q for q in quotes)
    assert any(q.startswith("It redacts the key to ***") for q in quotes)


def test_a_clause_split_out_of_a_parenthetical_is_not_quoted() -> None:
    body = (
        "## Changes\n\n"
        "- `bench.py`: XPU support (a curated `tuning_space()` of 96 configs instead of "
        "1280, because each Triton compile on the B70 takes 1-8s instead of under 100ms "
        "on CUDA; the space is only used when `current_platform.is_xpu()`)\n"
        "- We keep the CUDA space unchanged, because its configs are already tuned (see "
        "the earlier PR) and the sweep stays short.\n"
    )
    quotes = [d.quote for d in harvest_decisions(body)]
    assert not any(q.count("(") != q.count(")") for q in quotes)
    assert any(q.startswith("We keep the CUDA space unchanged") for q in quotes)


@pytest.mark.parametrize(
    ("quote", "kind"),
    [
        ("The subprocess still receives the real values; only the log line changes.", "scope"),
        ("A bad value no longer passes silently.", "behaviour"),
        ("Moving them to an environment variable is out of scope here.", "out-of-scope"),
        ("Power-of-two pages are byte-for-byte unchanged.", "kept"),
        ("We size the workspace from the draft model rather than the target.", "alternative"),
        ("The tile width is deliberately left at 32.", "deliberate"),
        ("Selection falls back to FA2 for attention sinks.", "fallback"),
        ("Pin the host tensor so that the copy does not block.", "reason"),
        ("The new kernel reads uint8 pixels directly.", "design"),
    ],
)
def test_a_decision_kind_is_its_earliest_cue(quote: str, kind: str) -> None:
    assert decision_kind(quote) == kind
    assert kind in DECISION_KINDS


def test_an_english_quote_in_chinese_carries_a_one_line_gist() -> None:
    english = Decision("Selection falls back to FA2 for attention sinks.", "", "", 3)
    line = decision_line(english, "zh")
    assert line.startswith("（作者说明回退路径）“Selection falls back")
    assert "\n" not in line
    assert decision_line(english, "en").startswith("“Selection")  # no gist in English
    chinese = Decision("这里刻意保留旧路径，因为调用方依赖它。", "", "", 3)
    assert decision_line(chinese, "zh").startswith("“这里")  # the author wrote Chinese
    # Every kind has its Chinese words.
    assert all("作者" in t("zh", f"decision.kind.{k}") or k == "design" for k in DECISION_KINDS)


def test_a_link_to_the_pr_itself_is_not_linked_work() -> None:
    body = ("Measured independently ([comment](https://github.com/o/r/pull/57042#issuecomment-1)).\n"
            "Follow-up to #49665.\n")
    links = find_links("Fix the order", body, "o/r", 57042)
    assert [(link.kind, link.number) for link in links] == [("follow-up", 49665)]
    # Another repository's #57042 is another PR.
    other = find_links("x", "see https://github.com/a/b/pull/57042", "o/r", 57042)
    assert [(link.repo, link.number) for link in other] == [("a/b", 57042)]


def test_a_rewrapped_call_still_passes_its_keyword() -> None:
    rewrapped = _patch(
        "vllm/q.py",
        "-        w = torch.ones(n, dtype=torch.float32)",
        "+        w = torch.ones(",
        "+            n, device=d,",
        "+            dtype=torch.float32)",
        header="def create_weights(self):",
    )
    assert read_structure([rewrapped]) == ()
    dropped = _patch(
        "vllm/q.py",
        "-        w = torch.ones(n, dtype=torch.float32)",
        "+        w = torch.ones(",
        "+            n, device=d)",
        header="def create_weights(self):",
    )
    assert [(n.symbol, n.kind, n.details) for n in read_structure([dropped])] == [
        ("create_weights", "kwarg-removed", ("dtype",))
    ]


def test_no_note_compares_code_the_base_does_not_have_with_the_base() -> None:
    raising = ("+    if not x:", "+        raise ValueError('empty')")
    # A new file, or a test's stub raising on purpose: nothing "used to continue".
    new_file = _patch("vllm/new.py", *raising, header="def check(x):")
    new_file = new_file.model_copy(update={"status": "added"})
    stub = _patch("tests/test_x.py", *raising, header="def fake_fn(x):")
    assert read_structure([new_file, stub]) == ()
    # The same raise in an existing file's function is a new rejection to check.
    old_file = _patch("vllm/old.py", *raising, header="def check(x):")
    assert [(n.symbol, n.kind) for n in read_structure([old_file])] == [
        ("check", "raise-added")]
    # A decorator on a function the patch adds was not "added" to anything.
    decorated = _patch("vllm/d.py", "+@contextmanager", "+def timed():", "+    yield")
    assert [n.kind for n in read_structure([decorated])] == ["decorator-added"]
    assert read_structure([decorated], new_symbols=frozenset({("vllm/d.py", "timed")})) == ()
    # A function the PR adds, in an existing file: nothing "used to continue" either.
    assert read_structure([old_file], new_symbols=frozenset({("vllm/old.py", "check")})) == ()
    # A raise that guards only a field the PR adds rejects nothing that used to pass.
    new_field = _patch(
        "vllm/config.py",
        "     temperature: float = 1.0",
        "+    stream_interval: int = 1",
        "@@ -40,6 +41,9 @@ class SamplingParams:",
        "     def verify(self) -> None:",
        "+        if self.stream_interval < 1:",
        "+            raise VLLMValidationError('stream_interval')",
        "         if self.temperature < 0:",
    )
    assert read_structure([new_field]) == ()
    old_field = _patch(
        "vllm/config.py",
        "     temperature: float = 1.0",
        "@@ -40,6 +41,9 @@ class SamplingParams:",
        "     def verify(self) -> None:",
        "+        if math.isnan(self.temperature):",
        "+            raise VLLMValidationError('temperature')",
    )
    assert [(n.symbol, n.kind) for n in read_structure([old_field])] == [
        ("verify", "raise-added")]


def test_a_why_is_it_needed_heading_is_background_not_a_decision() -> None:
    """"Why is X needed?" holds the problem (true of any PR in the area); "Why" alone or
    "Why this approach" holds the author's reasons."""
    background = "Methods need to verify K tokens for each sequence while decoding them."
    assert harvest_decisions(f"## Why is dynamic K needed?\n{background}\n") == ()
    reason = "The scheduler reads the proposal length once per step from the config."
    for heading in ("Why", "Why this approach"):
        (decision,) = harvest_decisions(f"## {heading}\n{reason}\n")
        assert decision.quote == reason


def test_a_new_raise_is_no_question_when_the_title_says_the_pr_rejects_input() -> None:
    """"Now raises ValueError; an explicit error where it used to continue?" is what a PR
    titled "Reject non-finite temperature" is for; other notes and other titles stay."""
    check = _patch(
        "vllm/sampling_params.py",
        "     def _verify_args(self) -> None:",
        "+        if not math.isfinite(self.temperature):",
        "+            raise ValueError(f'temperature must be finite, got {self.temperature}')",
        "         if self.temperature < 0:",
        header="class SamplingParams:",
    )
    notes = read_structure([check])
    assert [n.kind for n in notes] == ["raise-added"]
    assert unanswered(notes, "[Security] Reject non-finite temperature values") == ()
    assert unanswered(notes, "[Bugfix] Validate tool names early") == ()
    assert unanswered(notes, "[Sampler] Speed up temperature scaling") == notes


def test_a_sentence_about_a_file_the_change_does_not_touch_concerns_none_of_its_names() -> None:
    from bot.core.reading.specifics import Mention
    mentions = [Mention("torch.empty_strided", "vllm/quant/quark_moe.py", "symbol", False),
                Mention("vllm/quant/online.py", "vllm/quant/online.py", "file", False)]
    body = (
        "## Purpose\n\n"
        "On the online path `reload/meta.py` materializes with `torch.empty_strided`, so "
        "this is uninitialized memory that flows into the GEMM, because nothing zeroes it.\n\n"
        "In `vllm/quant/online.py` we zero the buffer instead of skipping it, because "
        "`torch.empty_strided` leaves garbage.\n"
    )
    decisions = harvest_decisions(body, mentions)
    assert [d.concerns for d in decisions if "reload/meta.py" in d.quote] in ([], [""])
    about_online = [d for d in harvest_decisions(body, mentions) if "zero the buffer" in d.quote]
    assert [d.concerns_file for d in about_online] == ["vllm/quant/online.py"]
