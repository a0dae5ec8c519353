"""What build_digest hands the structure notes and Where to start: every new function
(not only the 40 symbols shown), and a moved file as a move."""

from __future__ import annotations

from pathlib import Path

from bot.core.digest import MAX_SYMBOLS_SHOWN, build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.rulebook.files import load_rules

RULES = load_rules(Path(__file__).resolve().parents[2] / "rules")


def _pr(*files: ChangedFile) -> PullRequestFacts:
    return PullRequestFacts(number=7, title="Refactor", body="", head_sha="b" * 40,
                            files=files)


def test_a_new_function_past_the_symbols_shown_is_still_new() -> None:
    # A bigger file first: its 50 functions fill the symbols shown.
    many = "".join(f"+def helper_{i}(x):\n+    return x\n" for i in range(50))
    big = ChangedFile(filename="vllm/big.py", additions=100,
                      patch=f"@@ -1,1 +1,101 @@\n{many} old = 1")
    new_method = ChangedFile(
        filename="vllm/serving.py", additions=4,
        patch="@@ -10,3 +10,7 @@ class Serving:\n"
              "+    def _preflight(self) -> None:\n"
              "+        if self.dead:\n"
              "+            raise self.dead_error\n"
              "+\n"
              "     def serve(self):",
    )
    digest = build_digest(_pr(big, new_method), RULES, "en")
    assert len(digest.symbols) == MAX_SYMBOLS_SHOWN
    assert all(s.file == "vllm/big.py" for s in digest.symbols)
    # `_preflight` is new: nothing "used to continue" in it.
    assert [n for n in digest.structure if n.symbol == "_preflight"] == []


def test_a_moved_file_is_a_move_not_a_removal_and_new_symbols() -> None:
    body = [f"def test_{i}():\n    assert check({i})" for i in range(10)]
    lines = "\n".join(body).split("\n")
    old = ChangedFile(filename="tests/test_monitor.py", status="removed", deletions=20,
                      patch="@@ -1,20 +0,0 @@\n" + "\n".join("-" + x for x in lines))
    new = ChangedFile(filename="tests/monitor/test_monitor.py", status="added", additions=20,
                      patch="@@ -0,0 +1,20 @@\n" + "\n".join("+" + x for x in lines))
    digest = build_digest(_pr(old, new), RULES, "en")
    assert digest.moved_files == (("tests/test_monitor.py", "tests/monitor/test_monitor.py"),)
    assert digest.removed_files == ()
    assert digest.symbols == ()


_CHECK = ChangedFile(
    filename="vllm/sampling_params.py", additions=2,
    patch="@@ -10,3 +10,5 @@ class SamplingParams:\n"
          "     def _verify_args(self) -> None:\n"
          "+        if not math.isfinite(self.temperature):\n"
          "+            raise ValueError('temperature must be finite')\n"
          "         if self.temperature < 0:",
)


def test_a_new_raise_the_title_asks_for_gets_no_note() -> None:
    """"Now raises ValueError; an explicit error where it used to continue?" asks what a
    title saying the PR rejects that input already answers."""
    def kinds(title: str) -> list[str]:
        facts = _pr(_CHECK).model_copy(update={"title": title})
        return [n.kind for n in build_digest(facts, RULES, "en").structure]

    assert kinds("Reject non-finite temperature values") == []
    assert kinds("Clamp the temperature") == ["raise-added"]


def test_a_quote_that_opens_with_linked_work_is_left_to_the_links_line() -> None:
    body = ("## Purpose\n\nFollow-up to #48390 (fp32 lm_head via `_verify_args`), requested "
            "by @reviewer.\n\n"
            "The check in `_verify_args` is kept explicit.\n")
    facts = _pr(_CHECK).model_copy(update={"body": body})
    digest = build_digest(facts, RULES, "en")
    assert [link.number for link in digest.links] == [48390]
    quotes = [d.quote for d in digest.decisions]
    assert any("kept explicit" in q for q in quotes)
    assert not any("48390" in q for q in quotes)
    # Without the links line to say it, the sentence is a quote like any other.
    unlinked = _pr(_CHECK).model_copy(update={"body": body.replace("#48390", "the fp32 PR")})
    assert any("fp32 PR" in d.quote for d in build_digest(unlinked, RULES, "en").decisions)


def test_a_condition_moved_into_a_new_function_is_not_said_to_have_changed() -> None:
    """The old check added again elsewhere in the file moved; the new check beside it is
    no replacement of it. A condition really replaced is still a note."""
    def conditions(*added_elsewhere: str) -> list[tuple[str, ...]]:
        patch = (
            "@@ -40,4 +40,4 @@ class Renderer:\n"
            "     def warmup(self) -> None:\n"
            "-        if self.mm_processor:\n"
            "+        if self._warmup_future is not None:\n"
            "             self.run()\n"
            "@@ -90,2 +90,6 @@ class Renderer:\n"
            "+    def warmup_mm(self) -> None:\n"
            + "".join(f"+        {line}\n" for line in added_elsewhere)
            + "+            self.run_mm()\n"
        )
        changed = ChangedFile(filename="vllm/renderers/base.py", additions=6, deletions=1,
                              patch=patch)
        digest = build_digest(_pr(changed), RULES, "en")
        return [n.details for n in digest.structure if n.kind == "condition"]

    assert conditions("if self.mm_processor:") == []
    assert conditions("if self.ready:") == [
        ("if self.mm_processor:", "if self._warmup_future is not None:")
    ]


def test_a_condition_kept_inside_a_longer_one_is_not_paired_with_another_check() -> None:
    """`if x.y is not None:` that became `if x is not None and x.y is not None:` stayed;
    pairing it by position with a new `if cpu():` above says the wrong check replaced it.
    Paired with the longer condition itself, the note says what changed."""
    def conditions(kept: str) -> list[tuple[str, ...]]:
        patch = (
            "@@ -10,5 +10,7 @@ def select(config):\n"
            "-    if config.backend is not None:\n"
            "+    if on_cpu():\n"
            "+        return cpu_backend()\n"
            f"+    {kept}\n"
            "         return config.backend\n"
        )
        return [d for k, _, d in _notes("vllm/attention/select.py", patch) if k == "condition"]

    assert conditions("if config is not None and config.backend is not None:") == []
    assert conditions("if config.ready:") == [
        ("if config.backend is not None:", "if on_cpu():")]


def test_a_condition_reworded_below_a_new_branch_is_not_paired_with_the_branch() -> None:
    """`if "Old" in cfg.model.arch:` became `if "Old" in architectures:` below a new
    `if any(a in NEW for a in architectures):`; position pairs the old test with the new
    branch, which says the old dispatch was dropped."""
    def conditions(kept: str) -> list[tuple[str, ...]]:
        patch = (
            "@@ -10,5 +10,8 @@ def init_speculator(config):\n"
            '-    if "LiLiCorrDraftModel" in config.draft_model_config.architectures:\n'
            "+    architectures = config.draft_model_config.architectures\n"
            "+    if any(arch in XPRESS_ARCHITECTURES for arch in architectures):\n"
            "+        return XPress(config)\n"
            f"+    {kept}\n"
            "         return LiLiCorr(config)\n"
        )
        return [d for k, _, d in _notes("vllm/spec_decode/init.py", patch) if k == "condition"]

    assert conditions('if "LiLiCorrDraftModel" in architectures:') == []
    assert conditions("if config.enabled:") != []


def test_a_raise_moved_with_its_message_into_a_helper_is_still_raised() -> None:
    def raises(helper_message: str) -> list[str]:
        selector = ChangedFile(
            filename="vllm/attention/select.py", additions=1, deletions=2,
            patch=("@@ -10,5 +10,4 @@ def select(config):\n"
                   "-    if not found:\n"
                   '-        raise ValueError("No valid prefill backend found.")\n'
                   "+    return platform.select(config)\n"))
        platform = ChangedFile(filename="vllm/platforms/cpu.py", additions=3, deletions=0,
                               patch=("@@ -40,2 +40,5 @@ class CpuPlatform:\n"
                                      "+    def select(self, config):\n"
                                      "+        if not found:\n"
                                      f'+            raise ValueError("{helper_message}")\n'))
        digest = build_digest(_pr(selector, platform), RULES, "en")
        return [n.kind for n in digest.structure if n.symbol == "select"]

    assert raises("No valid prefill backend found.") == []
    assert raises("Unsupported on this CPU.") == ["raise-removed"]


def test_an_assert_on_a_value_read_anew_asks_nothing() -> None:
    def removed(new_source: str) -> list[str]:
        patch = (
            "@@ -20,4 +20,4 @@ class Asr:\n"
            "     def frames(self, config):\n"
            '-        hop = config.get("stride")\n'
            "-        assert hop is not None\n"
            f"+        {new_source}\n"
            "         return seconds / hop\n"
        )
        return [k for k, _, _ in _notes("vllm/models/asr.py", patch) if k == "assert-removed"]

    assert removed('hop = int(config["stride"] * config["rate"])') == []
    assert removed('rate = config["rate"]') == ["assert-removed"]


def _notes(path: str, patch: str) -> list[tuple[str, str, tuple[str, ...]]]:
    changed = ChangedFile(filename=path, additions=patch.count("\n+"),
                          deletions=patch.count("\n-"), patch=patch)
    return [(n.kind, n.symbol, n.details) for n in build_digest(_pr(changed), RULES,
                                                                "en").structure]


def test_a_guard_inverted_into_an_early_return_is_no_changed_condition() -> None:
    inverted = (
        "@@ -10,6 +10,7 @@ class Model:\n"
        "     def get_input_embeddings(self, ids, mm):\n"
        "         embeds = self.embed(ids)\n"
        "-        if mm is not None:\n"
        "-            embeds = merge(embeds, mm)\n"
        "+        if mm is None:\n"
        "+            return embeds\n"
        "+        embeds = merge(embeds, mm)\n"
        "         return embeds\n"
    )
    assert [n for n in _notes("vllm/models/m.py", inverted) if n[0] == "condition"] == []
    # the same flip with no early exit changes what the body runs for: still a note
    flipped = inverted.replace("+            return embeds\n",
                               "+            embeds = merge(embeds, mm)\n")
    flipped = flipped.replace("+        embeds = merge(embeds, mm)\n", "")
    assert ("condition", "get_input_embeddings",
            ("if mm is not None:", "if mm is None:")) in _notes("vllm/models/m.py", flipped)


def test_an_assert_wrapped_over_lines_is_not_compared_by_its_first_line() -> None:
    rewrapped = (
        "@@ -5,4 +5,8 @@ def main(args):\n"
        "-    assert current_platform.is_cuda() or current_platform.is_rocm(), (\n"
        "-        \"needs a GPU\"\n"
        "+    assert (\n"
        "+        current_platform.is_cuda()\n"
        "+        or current_platform.is_rocm()\n"
        "+        or current_platform.is_xpu()\n"
        "+    ), \"needs a GPU\"\n"
        "     run(args)\n"
    )
    assert [n for n in _notes("vllm/tools/bench.py", rewrapped)
            if n[0].startswith("assert")] == []
    one_line = (
        "@@ -5,3 +5,3 @@ def main(args):\n"
        "-    assert args.n > 0\n"
        "+    assert args.n >= 0\n"
        "     run(args)\n"
    )
    assert ("assert-changed", "main", ("assert args.n > 0", "assert args.n >= 0")) in _notes(
        "vllm/tools/bench.py", one_line)


def test_a_todo_in_a_helper_the_hunk_adds_is_the_helpers() -> None:
    patch = (
        "@@ -30,6 +30,12 @@ def has_unsupported_features(schema):\n"
        "     return False\n"
        " \n"
        "+def _schema_types(obj):\n"
        "+    # TODO: read anyOf branches too, this misses nested unions\n"
        "+    kind = obj.get(\"type\")\n"
        "+    return {kind} if isinstance(kind, str) else set(kind or ())\n"
        "+\n"
        " def _has_pattern_and_length_bounds(obj):\n"
    )
    todos = [n for n in _notes("vllm/structured/utils.py", patch) if n[0] == "todo"]
    assert todos == [("todo", "_schema_types",
                      ("read anyOf branches too, this misses nested unions",))]


def test_a_fixme_right_above_a_new_helper_is_the_helpers() -> None:
    patch = (
        "@@ -242,6 +242,10 @@ def _has_pattern_and_length_bounds(schema):\n"
        "     )\n"
        " \n"
        " \n"
        "+# FIXME(someone): the approach needs a redesign, see the linked issue\n"
        "+def _schema_types(schema):\n"
        "+    kind = schema.get(\"type\")\n"
        "+    return {kind} if isinstance(kind, str) else set(kind or ())\n"
    )
    todos = [n for n in _notes("vllm/structured/utils.py", patch) if n[0] == "todo"]
    assert todos == [("todo", "_schema_types",
                      ("the approach needs a redesign, see the linked issue",))]


def test_a_parameter_that_gains_a_type_is_not_a_keyword_no_longer_passed() -> None:
    patch = (
        "@@ -10,8 +10,8 @@ class Model:\n"
        "     def get_input_embeddings(\n"
        "         self,\n"
        "-        mm_embeddings=None,\n"
        "+        mm_embeddings: Embeddings | None = None,\n"
        "     ) -> torch.Tensor:\n"
        "         return self.embed(mm_embeddings)\n"
    )
    assert [n for n in _notes("vllm/models/m.py", patch) if n[0] == "kwarg-removed"] == []
    dropped = (
        "@@ -10,4 +10,4 @@ def run(self):\n"
        "-        out = self.embed(ids, mm_embeddings=mm)\n"
        "+        out = self.embed(ids)\n"
        "         return out\n"
    )
    assert ("kwarg-removed", "run", ("mm_embeddings",)) in _notes("vllm/models/m.py", dropped)


def test_a_decorator_call_wrapped_over_lines_is_the_next_classs() -> None:
    patch = (
        "@@ -442,6 +443,12 @@ class Block(nn.Module):\n"
        "         return hidden_states, residual\n"
        " \n"
        " \n"
        "+@support_torch_compile(\n"
        "+    dynamic_arg_dims={\n"
        "+        \"input_ids\": 0,\n"
        "+    }\n"
        "+)\n"
        " class Model(nn.Module):\n"
        "     mapper = None\n"
    )
    notes = [n for n in _notes("vllm/models/sarvam.py", patch) if n[0] == "decorator-added"]
    assert [n[1] for n in notes] == ["Model"]


def test_a_function_the_pr_removes_no_longer_raises_nothing() -> None:
    patch = (
        "@@ -10,8 +10,2 @@ import json\n"
        "-def _span(text):\n"
        "-    if not text:\n"
        "-        raise ValueError(\"empty\")\n"
        "-    return text\n"
        "-\n"
        "-\n"
        " def parse(text):\n"
        "-    raise ValueError(\"old\")\n"
        "+    return json.loads(text)\n"
    )
    notes = _notes("vllm/parser/p.py", patch)
    assert [n for n in notes if n[1] == "_span"] == []
    assert ("raise-removed", "parse", ("ValueError",)) in notes


def test_a_test_that_stops_passing_a_keyword_follows_the_api() -> None:
    patch = (
        "@@ -10,4 +10,4 @@ def test_linear():\n"
        "-    out = linear(x, w, bmm_batch_size=None)\n"
        "+    out = linear(x, w, weight_shape=w.shape)\n"
        "     assert out is not None\n"
    )
    assert [n for n in _notes("tests/quant/test_linear.py", patch)
            if n[0] == "kwarg-removed"] == []
    assert [n[0] for n in _notes("vllm/quant/use.py", patch.replace("def test_linear", "def use"))
            if n[0] == "kwarg-removed"] == ["kwarg-removed"]
