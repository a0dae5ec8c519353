"""Matching: gitignore globs, labels, title/body/added regexes, combinators, real vLLM PRs."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pathspec import GitIgnoreSpec

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.judging.risks import weigh_areas
from bot.core.render.words import rule_text
from bot.core.rules import RuleSet, match_areas, parse_rules
from bot.core.rules.added import added_lines
from bot.core.rules.globs import PathIndex
from bot.core.vocabulary import RuleText
from bot.rulebook.files import load_rules

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RULES_DIR = Path(__file__).resolve().parents[3] / "rules"


def one_rule(match: str, extra: str = "") -> RuleSet:
    text = (
        f"id: probe\ntitle: Probe\naudience: readers\ncriticality: medium\nmatch: {match}\n{extra}"
    )
    return parse_rules({"probe.yaml": text})


def facts(*files: str, patch: str | None = None, **fields: object) -> PullRequestFacts:
    changed = tuple(ChangedFile(filename=name, patch=patch) for name in files)
    return PullRequestFacts(files=changed, **fields)


def fired(rules: RuleSet, pr: PullRequestFacts) -> bool:
    return bool(match_areas(pr, rules).areas)


PATCH = (
    "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n"
    " context allow_in_graph\n-removed support_torch_compile\n+added fullgraph here\n"
    "++++ starts with pluses\n"
)

CASES = [
    # (match condition, PR facts, fires?)
    ("{paths: ['vllm/*.py']}", facts("vllm/a.py"), True),
    ("{paths: ['vllm/*.py']}", facts("vllm/sub/a.py"), False),  # * stays in one directory
    ("{paths: ['vllm/**/a.py']}", facts("vllm/x/y/a.py"), True),  # ** crosses directories
    ("{paths: ['vllm/**']}", facts("vllm/x/y/z.cu"), True),
    ("{paths: ['docs/']}", facts("sub/docs/a.md"), True),  # directory pattern, any depth
    ("{paths: ['/setup.py']}", facts("tools/setup.py"), False),  # leading / anchors at root
    ("{paths: ['setup.py']}", facts("tools/setup.py"), True),  # no slash: any depth
    ("{paths: ['*.md']}", facts("a/b/README.md"), True),
    ("{paths: ['/*.md']}", facts("a/README.md"), False),
    ("{paths: ['vllm/**'], exclude: ['vllm/x/**']}", facts("vllm/x/a.py"), False),
    ("{paths: ['vllm/**'], exclude: ['vllm/x/**']}", facts("vllm/x/a.py", "vllm/y.py"), True),
    ("{labels: [rocm, cpu]}", facts(labels=("cpu",)), True),
    ("{labels: [rocm]}", facts(labels=("ROCm",)), False),  # labels are exact
    (r"{title: '^\[MM\]'}", facts(title="[MM] Simplify"), True),
    (r"{title: '^\[MM\]'}", facts(title="Fix [MM]"), False),
    ("{body: 'lm_eval'}", facts(body="<!-- run lm_eval -->Tested by hand"), False),
    ("{body: 'lm_eval'}", facts(body="<!-- template -->lm_eval gsm8k: 0.81"), True),
    ("{body: 'secret'}", facts(body="shown <!-- unclosed comment secret"), False),
    ("{added: 'fullgraph'}", facts("x.py", patch=PATCH), True),
    ("{added: 'allow_in_graph'}", facts("x.py", patch=PATCH), False),  # context line
    ("{added: 'support_torch_compile'}", facts("x.py", patch=PATCH), False),  # removed line
    ("{added: 'b/x.py'}", facts("x.py", patch=PATCH), False),  # '+++' file header
    ("{added: '^\\+\\+\\+ starts'}", facts("x.py", patch=PATCH), True),  # '++++' inside a hunk
    ("{paths: ['docs/**'], added: 'fullgraph'}", facts("x.py", patch=PATCH), False),
    ("{paths: ['*.py'], added: 'fullgraph'}", facts("x.py", patch=PATCH), True),
    ("{base: '^releases/'}", facts(base_ref="releases/v0.11.0"), True),
    ("{base: '^releases/'}", facts(base_ref="main"), False),
    ("{author: [DarkLight1337]}", facts(author="darklight1337"), True),
    ("{any: [{labels: [x]}, {title: Fix}]}", facts(title="Fix it"), True),
    ("{all: [{labels: [x]}, {title: Fix}]}", facts(title="Fix it"), False),
    ("{all: [{labels: [x]}, {title: Fix}]}", facts(title="Fix it", labels=("x",)), True),
    ("{title: Fix, not: {labels: [documentation]}}", facts(title="Fix"), True),
    (
        "{title: Fix, not: {labels: [documentation]}}",
        facts(title="Fix", labels=("documentation",)),
        False,
    ),
    ("{paths: ['a/**'], title: Fix}", facts("a/b.py", title="Other"), False),  # keys AND
    # `mentions` reads the names the description mentions in prose, one per line.
    ("{mentions: '^allow_in_graph$'}", facts(body="wrap it for `allow_in_graph`"), True),
    ("{mentions: '(^|\\.)is_compiling$'}", facts(body="`torch.compiler.is_compiling()`"), True),
    ("{mentions: 'allow_in_graph'}", facts(body="```\n`allow_in_graph`\n```"), False),
    ("{mentions: 'allow_in_graph'}", facts(body="plain allow_in_graph prose"), False),
]


@pytest.mark.parametrize(("match", "pr", "expected"), CASES)
def test_condition_table(match: str, pr: PullRequestFacts, expected: bool) -> None:
    assert fired(one_rule(match), pr) is expected


def test_added_lines_skip_headers_context_and_removed_lines() -> None:
    assert list(added_lines(PATCH)) == ["added fullgraph here", "+++ starts with pluses"]


def test_path_index_agrees_with_gitignore_spec() -> None:
    globs = [
        "vllm/**",
        "*.md",
        "docs/",
        "/setup.py",
        "vllm/models/*_vl.py",
        "a/**/b.py",
        "tests/compile/*",
        "csrc/**/*.cu",
        "x*y/z",
        "[ab]c/**",
        "**/test_*.py",
    ]
    index = PathIndex(globs)
    parts = ["vllm", "models", "docs", "a", "b", "tests", "compile", "csrc", "xqy", "ac", "z"]
    leaves = ["setup.py", "README.md", "q_vl.py", "b.py", "k.cu", "z", "test_a.py"]
    rng = random.Random(7)
    files = [
        "/".join([*rng.choices(parts, k=rng.randint(0, 4)), rng.choice(leaves)])
        for _ in range(3000)
    ]
    hits = index.match(files)
    for glob in globs:
        spec = GitIgnoreSpec.from_lines([glob])
        expected = [name for name in files if spec.match_file(name)]
        assert hits.get(index.ids[glob], []) == expected, glob


def test_reasons_focus_checklist_and_trace() -> None:
    rules = one_rule(
        "{any: [{paths: ['vllm/**']}, {title: '\\[MM\\]'}]}",
        "focus:\n  - text: {en: always, zh: 总是}\n"
        "  - text: docs only\n    when: {paths: [docs/**]}\n"
        "checklist:\n  - id: probe-a\n    text: {en: tick, zh: 勾选}\n",
    )
    result = match_areas(facts("vllm/a.py", title="[MM] x"), rules)
    (area,) = result.areas
    assert area.files == ("vllm/a.py",)
    # Rule texts are content: both languages, rendering picks one.
    assert area.focus == (RuleText(en="always", zh="总是"),)
    assert [rule_text(f, "zh") for f in area.focus] == ["总是"]
    assert area.focus_triggered == ()  # an unconditional question is a standing one
    assert [(c.id, rule_text(c.text, "zh")) for c in area.checklist] == [("probe-a", "勾选")]
    assert {(e.kind, e.subject) for e in area.reasons} == {("path", "vllm/a.py"), ("title", "[MM]")}
    assert result.trace[0].fired
    assert result.trace[0].rule == "probe"


@pytest.mark.parametrize(
    ("match", "pr", "note"),
    [
        (
            "{paths: ['vllm/**'], exclude: ['vllm/x/**']}",
            facts("vllm/x/a.py"),
            "paths matched 1 file(s) but every one was excluded",
        ),
        (
            "{all: [{title: Fix}, {paths: ['vllm/**']}]}",
            facts(title="Fix"),
            "all: 1 of 2 conditions held",
        ),
        ("{title: Fix, labels: [rocm]}", facts(title="Fix"), "title matched but labels did not"),
        ("{title: Fix}", facts(title="Other"), ""),
    ],
)
def test_near_misses_are_explained(match: str, pr: PullRequestFacts, note: str) -> None:
    (entry,) = match_areas(pr, one_rule(match)).trace
    assert not entry.fired
    assert note in entry.note


def test_areas_are_ordered_by_criticality_then_file_count() -> None:
    rules = load_rules(RULES_DIR)
    pr = facts("docs/a.md", "docs/b.md", "docs/c.md", "vllm/v1/attention/backends/flash_attn.py")
    ids = [a.id for a in match_areas(pr, rules).areas]
    assert ids == ["attention-backend", "docs"]


def _case_facts(case: dict[str, Any]) -> PullRequestFacts:
    files = tuple(ChangedFile(filename=f["filename"]) for f in case["files"])
    return PullRequestFacts(
        number=case["number"],
        title=case["title"],
        body=case["body"] or "",
        files=files,
    )


CASE_EXPECTED = {
    53275: {"multimodal"},
    # These cases carry no patches: an area their title alone names (tokenizer, CUDA
    # graphs) has no changed line to bear it out, so it stays closed (issue 40).
    50752: {"multimodal"},
    46280: {"yarn"},
    23958: {"attention-backend"},
    28934: {"attention-backend"},
    45033: {"attention-backend", "hardware"},
    51753: {"frontend"},
    51215: {"docs"},
    42059: {"ci"},
    22665: {"new-model", "docs"},
    34266: {"multimodal", "model"},  # the Qwen3-Omni thinker model file
}


@pytest.mark.parametrize(("number", "expected"), sorted(CASE_EXPECTED.items()))
def test_real_vllm_prs(number: int, expected: set[str]) -> None:
    cases = json.loads((FIXTURES / "cases" / "vllm_prs.json").read_text(encoding="utf-8"))
    (case,) = [c for c in cases if c["number"] == number]
    rules = load_rules(RULES_DIR)
    facts = _case_facts(case)
    # As the digest sees them: title-only areas of a docs/CI-only PR are dropped.
    result = match_areas(facts, rules)
    result = replace(result, areas=weigh_areas(facts, result.areas, rules.risks))
    assert {a.id for a in result.areas} == expected
    assert len(result.trace) == len(rules.areas)


def _patch(*added: str) -> str:
    return f"@@ -1,1 +1,{len(added) + 1} @@\n context\n" + "".join(f"+{a}\n" for a in added)


def test_a_token_on_a_test_or_import_line_alone_opens_no_area() -> None:
    rules = one_rule("{added: 'LoRARequest'}")
    use = "from vllm.lora.request import LoRARequest"
    assert not fired(rules, facts("vllm/entrypoints/llm.py", patch=_patch(use)))
    in_test = "    req = LoRARequest('a', 1, '/p')"
    assert not fired(rules, facts("tests/entrypoints/test_llm.py", patch=_patch(in_test)))
    assert not fired(rules, facts("vllm/x/test_utils.py", patch=_patch(in_test)))
    # The same token on a line of production code does open it...
    assert fired(rules, facts("vllm/entrypoints/llm.py", patch=_patch(in_test)))
    # ...and a weak signal of another kind beside the import does too.
    both = one_rule("{any: [{added: 'LoRARequest'}, {title: 'LoRA'}]}")
    assert fired(both, facts("vllm/entrypoints/llm.py", patch=_patch(use), title="LoRA fix"))
    trace = match_areas(facts("tests/t/test_a.py", patch=_patch(in_test)), rules).trace
    assert "not enough to open the area" in trace[0].note


def test_a_title_word_opens_an_area_only_with_a_second_kind_of_signal() -> None:
    rules = one_rule(
        "{any: [{title: '(?i)all-reduce'}, {paths: ['tests/distributed/**']},"
        " {all: [{title: '(?i)all-reduce'}, {added: 'all_reduce'}]}]}"
    )
    title = "Skip a redundant all-reduce"
    # The title alone, beside code that does not use the area's names: closed.
    other = _patch("    out = self.proj(x)")
    assert not fired(rules, facts("vllm/models/m.py", patch=other, title=title))
    # A comment or docstring that names it bears nothing out either.
    comment = _patch("    # one all_reduce after the transform suffices")
    assert not fired(rules, facts("vllm/models/m.py", patch=comment, title=title))
    doc = '@@ -1,2 +1,3 @@\n     """Sizes the buffer.\n+    Each all_reduce reuses it.\n     """\n'
    assert not fired(rules, facts("vllm/models/m.py", patch=doc, title=title))
    # The changed code using the area's name does; so does a test of the area.
    code = _patch("    out = tensor_model_parallel_all_reduce(out)")
    assert fired(rules, facts("vllm/models/m.py", patch=code, title=title))
    assert fired(rules, facts("vllm/models/m.py", "tests/distributed/test_ar.py",
                              patch=other, title=title))
    # Neither the identifier nor the test alone opens it.
    assert not fired(rules, facts("vllm/models/m.py", patch=code, title="Speed up"))
    assert not fired(rules, facts("tests/distributed/test_ar.py", patch=other, title="x"))


def test_a_decorator_or_interface_flag_alone_opens_no_area() -> None:
    rules = one_rule("{added: '\\b(support_torch_compile|SupportsLoRA)\\b'}")
    flags = _patch("@support_torch_compile", "class NewModel(nn.Module, SupportsLoRA):")
    assert not fired(rules, facts("vllm/model_executor/models/new.py", patch=flags))
    uses = _patch("    if isinstance(model, SupportsLoRA):")
    assert fired(rules, facts("vllm/lora/worker_manager.py", patch=uses))


def test_a_name_only_passed_on_as_a_keyword_argument_alone_opens_no_area() -> None:
    rules = one_rule("{added: '\\b(rope_parameters)\\b'}")
    model = "vllm/model_executor/models/new.py"
    passes = _patch(
        "        rope_parameters = config.rope_parameters.get(layer_type)",
        "        self.rotary_emb = get_rope(self.head_dim, rope_parameters=rope_parameters)",
        "        if rope_parameters is not None:",
    )
    assert not fired(rules, facts(model, patch=passes))
    trace = match_areas(facts(model, patch=passes), rules).trace
    assert "keyword argument" in trace[0].note
    # A second kind of signal beside it opens the area.
    both = one_rule("{any: [{added: '\\b(rope_parameters)\\b'}, {title: '(?i)rope'}]}")
    assert fired(both, facts(model, patch=passes, title="Fix RoPE scaling"))
    # A file that defines, sets or changes the name does change the area.
    for changes in (
        "    def rope_parameters(self) -> dict:",
        "        self.rope_parameters = {'rope_type': 'yarn'}",
        "        rope_parameters['factor'] = 4.0",
        "    rope_parameters: dict | None = None,",
    ):
        hand_over = "        get_rope(8, rope_parameters=rope_parameters)"
        assert fired(rules, facts(model, patch=_patch(hand_over, changes)))
    # Without the keyword hand-over it is ordinary code that uses the name.
    assert fired(rules, facts(model, patch=_patch("        p = config.rope_parameters")))


def test_a_type_named_only_in_annotations_alone_opens_no_area() -> None:
    rules = one_rule("{added: '\\b(TokenizerLike)\\b'}")
    parser = "vllm/parser/granite.py"
    uses = _patch(
        "    from vllm.tokenizers import TokenizerLike",
        "        tokenizer: TokenizerLike,",
        "    def tokenizer(self) -> TokenizerLike | None:",
    )
    assert not fired(rules, facts(parser, patch=uses))
    # code that calls or tests against the type does use it as code
    for code in ("        tok = TokenizerLike.from_pretrained(name)",
                 "        if isinstance(tok, TokenizerLike):"):
        assert fired(rules, facts(parser, patch=_patch(code)))


def test_without_a_file_list_the_title_still_opens_an_area() -> None:
    assert fired(one_rule("{title: '(?i)lora'}"), facts(title="LoRA fix"))


def test_a_checklist_item_the_file_list_already_meets_is_dropped() -> None:
    rules = one_rule(
        "{paths: ['vllm/**']}",
        "checklist:\n"
        "  - id: wants-test\n    text: {en: 'A test under tests/entrypoints that sends it.',"
        " zh: 在 tests/entrypoints 下加测试}\n"
        "  - id: wants-kernel-test\n    text: 'A tests/kernels test against a reference.'\n"
        "  - id: wants-entry\n    text: 'tests/models/registry.py has an entry for it.'\n"
        "  - id: wants-a-run\n    text: 'tests/entrypoints pass on this head.'\n",
    )

    def items(*files: tuple[str, int]) -> list[str]:
        changed = (
            ChangedFile(filename="vllm/a.py", additions=3),
            *(ChangedFile(filename=name, additions=added) for name, added in files),
        )
        (area,) = match_areas(PullRequestFacts(files=changed), rules).areas
        return [c.id for c in area.checklist]

    every = ["wants-test", "wants-kernel-test", "wants-entry", "wants-a-run"]
    assert items() == every
    assert items(("tests/entrypoints/openai/test_x.py", 40)) == every[1:]
    assert items(("tests/kernels/test_k.py", 9), ("tests/models/registry.py", 1)) == [
        "wants-test", "wants-a-run"
    ]
    # A deleted test or a look-alike folder meets nothing; a result is never met by files.
    assert items(("tests/entrypoints/test_gone.py", 0), ("tests/entrypoints_x/t.py", 5)) == every


def test_model_runner_v2_files_open_the_area_of_their_own_subsystem() -> None:
    rules = load_rules(RULES_DIR)

    def opened(path: str) -> set[str]:
        return {a.id for a in match_areas(facts(path, patch=_patch("x = 1")), rules).areas}

    # The runner's folder also holds the speculative decoders: not CUDA graph code.
    assert opened("vllm/v1/worker/gpu/spec_decode/eagle/utils.py") == {"spec-decode"}
    assert "cudagraph" in opened("vllm/v1/worker/gpu/cudagraph_utils.py")
    assert "cudagraph" in opened("vllm/v1/worker/gpu/spec_decode/autoregressive/cudagraph_utils.py")
    assert "cudagraph" not in opened("vllm/v1/worker/gpu/sample/penalties.py")


def test_a_file_that_only_scopes_an_added_pattern_opens_the_area_by_a_code_line() -> None:
    rules = one_rule("{paths: [vllm/platforms/cpu.py], added: '(?i)attn'}")
    comment = "        # Fused path used by the CPU_ATTN post-processing."
    assert not fired(rules, facts("vllm/platforms/cpu.py", patch=_patch(comment)))
    code = "        backend = AttentionBackendEnum.CPU_ATTN"
    assert fired(rules, facts("vllm/platforms/cpu.py", patch=_patch(code)))
    # The same file matched by a paths condition of its own is a signal by itself.
    both = one_rule("{any: [{paths: [vllm/platforms/cpu.py], added: '(?i)attn'},"
                    " {paths: [vllm/platforms/cpu.py]}]}")
    assert fired(both, facts("vllm/platforms/cpu.py", patch=_patch(comment)))
