"""Mergify label rules: vLLM's real files (0.34.0 and 0.31.0), each condition form, the
three-valued logic, the lookahead rewrite against Python's `re`, hostile input, and time."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.core.repo_config import mergify as mergify_module
from bot.core.repo_config.mergify import (
    MAX_CONDITIONS_PER_RULE,
    MAX_DEPTH,
    MAX_FILES,
    MAX_RULES,
    MERGIFY_PATHS,
    LabelInput,
    LabelRule,
    MergifyLabels,
    PredictedLabel,
    parse_mergify,
    predict_labels,
)
from bot.core.rules.patterns import LinePattern

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_config"


def _text(version: str) -> str:
    return (FIXTURES / version / ".github" / "mergify.yml").read_text()


@pytest.fixture(scope="module")
def v34() -> MergifyLabels:
    return parse_mergify(_text("0.34.0"))


@pytest.fixture(scope="module")
def v31() -> MergifyLabels:
    return parse_mergify(_text("0.31.0"))


def _pr(
    *files: str,
    title: str = "",
    body: str = "",
    added: tuple[str, ...] = (),
    labels: tuple[str, ...] = (),
    **extra: Any,
) -> LabelInput:
    return LabelInput(
        title=title, body=body, files=files, added_files=added, labels=labels, **extra
    )


def _labels(mergify: MergifyLabels, pr: LabelInput) -> list[str]:
    return [p.label for p in predict_labels(mergify, pr)]


def _config(*rules: dict[str, Any]) -> str:
    return yaml.safe_dump({"pull_request_rules": list(rules)}, sort_keys=False)


def _rule(conditions: Any, add: Any = ("L",), name: str = "r", **label: Any) -> dict[str, Any]:
    action: dict[str, Any] = {"add": list(add)} if add else {}
    action.update(label)
    return {"name": name, "conditions": conditions, "actions": {"label": action}}


def _one(conditions: Any, pr: LabelInput) -> bool:
    """Whether a single rule with these conditions adds its label."""
    parsed = parse_mergify(_config(_rule(conditions)))
    return _labels(parsed, pr) == ["L"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line == needle)


# --- the real files ------------------------------------------------------------------


def test_paths_follow_mergify_lookup_order() -> None:
    assert MERGIFY_PATHS[0] == ".mergify.yml"
    assert MERGIFY_PATHS.index(".mergify/config.yml") < MERGIFY_PATHS.index(".github/mergify.yml")
    assert ".github/mergify.yaml" in MERGIFY_PATHS


def test_v34_reports_only_the_conflict_attribute(v34: MergifyLabels) -> None:
    line = _line_of(_text("0.34.0"), "    - conflict")
    assert v34.problems == (
        f".github/mergify.yml:{line}: rule \"ping author on conflicts and add 'needs-rebase' "
        "label\": condition 'conflict' uses `conflict`, which is not predicted; the "
        "condition counts as unknown",
    )


def test_v34_keeps_only_label_rules_in_order(v34: MergifyLabels) -> None:
    names = [rule.name for rule in v34.rules]
    assert names[:3] == ["label-documentation", "label-recipe", "label-ci-build"]
    for ignored in (
        "comment-pre-commit-failure",
        "comment-dco-failure",
        "auto-rebase to keep merge candidate within 1 day behind main",
        "assign reviewer for tensorizer changes",
    ):
        assert ignored not in names
    by_name = {rule.name: rule for rule in v34.rules}
    assert by_name["label-tpu-remove"].add == ()
    assert by_name["label-tpu-remove"].remove == ("tpu",)
    assert by_name["label-documentation"].add == ("documentation",)
    assert by_name["label-documentation"].line == _line_of(
        _text("0.34.0"), "- name: label-documentation"
    )


def test_v34_attention_backend_paths(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("vllm/v1/attention/backends/flash_attn.py")) == []
    assert _labels(v34, _pr("vllm/v1/attention/backends/rocm_aiter_fa.py")) == ["rocm"]
    assert _labels(v34, _pr("vllm/v1/attention/backends/mla/rocm_aiter_mla.py")) == ["rocm"]
    assert _labels(v34, _pr("vllm/v1/attention/backends/flashinfer.py")) == ["nvidia"]
    assert _labels(v34, _pr("vllm/v1/attention/backends/mla/xpu_mla_sparse.py")) == ["intel-gpu"]


def test_v34_documentation(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("docs/features/quantization/fp8.md")) == ["documentation"]
    assert _labels(v34, _pr("examples/offline_inference/basic.py")) == ["documentation"]
    # 0.34.0 dropped `files~=^[^/]+\.md$`; 0.31.0 still labels a top-level README.
    assert _labels(v34, _pr("README.md")) == []


def test_v31_documentation_covers_top_level_markdown(v31: MergifyLabels) -> None:
    assert _labels(v31, _pr("README.md")) == ["documentation"]
    assert _labels(v31, _pr("docs/README.md")) == ["documentation"]


def test_v34_bug_titles(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr(title="[Bugfix] Fix crash on empty prompt")) == ["bug"]
    assert _labels(v34, _pr(title="[BUG] wrong output")) == ["bug"]
    assert _labels(v34, _pr(title="Debugging helpers for the scheduler")) == []


def test_v34_torch_compile(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("vllm/compilation/backends.py")) == ["torch.compile"]
    assert _labels(v34, _pr("tests/compile/test_fusion.py")) == ["torch.compile"]
    assert _labels(v34, _pr(title="Speed up torch.compile warmup")) == ["torch.compile"]
    assert _labels(v34, _pr(title="Speed up torchXcompile warmup")) == []


def test_v34_multimodal_and_models(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("vllm/multimodal/inputs.py")) == ["multi-modality"]
    assert _labels(v34, _pr("tests/models/multimodal/processing/test_common.py")) == [
        "multi-modality"
    ]
    assert _labels(v34, _pr("vllm/model_executor/models/qwen2_vl.py")) == ["qwen"]
    assert _labels(v34, _pr("vllm/model_executor/models/glm4.py")) == ["glm"]
    # The file anchors glm to the start of the name so that midashenglm is not glm.
    assert _labels(v34, _pr("vllm/model_executor/models/midashenglm.py")) == []
    assert _labels(v34, _pr("vllm/model_executor/models/pixtral.py")) == ["mistral"]


def test_v34_new_model_uses_added_files_and_the_rewritten_lookahead(v34: MergifyLabels) -> None:
    model = "vllm/model_executor/models/brand_new.py"
    registry = "vllm/model_executor/models/registry.py"
    assert "new-model" in _labels(v34, _pr(model, registry, added=(model,)))
    assert "new-model" not in _labels(v34, _pr(model, registry))  # modified, not added
    assert "new-model" not in _labels(v34, _pr(model, added=(model,)))  # no registry entry
    package = "vllm/models/brand_new/__init__.py"
    assert "new-model" in _labels(v34, _pr(package, added=(package,)))
    common = "vllm/models/common/__init__.py"
    assert "new-model" not in _labels(v34, _pr(common, added=(common,)))
    nested = "vllm/models/brand_new/sub/__init__.py"
    assert "new-model" not in _labels(v34, _pr(nested, added=(nested,)))


def test_v34_nvidia_and_cpu_lookaheads(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("requirements/cuda.txt")) == ["ci/build"]
    assert _labels(v34, _pr("vllm/platforms/cuda.py")) == ["nvidia"]
    assert _labels(v34, _pr("csrc/quantization/cutlass_w8a8/c3x.cu")) == ["nvidia"]
    assert _labels(v34, _pr("vllm/v1/worker/cpu_model_runner.py")) == ["cpu"]
    assert _labels(v34, _pr("vllm/v1/kv_offload/cpu.py")) == ["nixl"]  # kv_offload, not cpu
    assert _labels(v34, _pr("vllm/model_executor/cpu_offload.py")) == []


def test_v34_stale_label_blocks_all_but_pooling(v34: MergifyLabels) -> None:
    files = ("vllm/pooling_params.py", "docs/usage/pooling.md")
    assert _labels(v34, _pr(*files)) == ["documentation", "pooling"]
    assert _labels(v34, _pr(*files, labels=("stale",))) == ["pooling"]
    assert _labels(v34, _pr(*files, labels=("Stale",))) == ["documentation", "pooling"]


def test_v34_tpu_add_and_the_negated_files_remove(v34: MergifyLabels) -> None:
    assert _labels(v34, _pr("vllm/platforms/tpu.py")) == ["tpu"]
    assert _labels(v34, _pr("vllm/distributed/tpu/comm.py")) == ["tpu"]
    remover = next(rule for rule in v34.rules if rule.name == "label-tpu-remove")
    adder = LabelRule(name="seed", add=("tpu",), remove=(), line=1, tree=mergify_module._All(()))
    rules = MergifyLabels(v34.source, (adder, remover), ())
    assert _labels(rules, _pr("vllm/platforms/cuda.py")) == []  # -files~= holds: removed
    assert _labels(rules, _pr("vllm/platforms/tpu.py")) == ["tpu"]
    assert _labels(rules, _pr()) == []  # no file at all: no file matches either


def test_v34_conflict_rule_is_never_predicted(v34: MergifyLabels) -> None:
    assert "needs-rebase" not in _labels(v34, _pr("docs/a.md", labels=("ready",)))


def test_v34_many_labels_credit_their_rules(v34: MergifyLabels) -> None:
    predicted = predict_labels(
        v34,
        _pr(
            "vllm/distributed/kv_transfer/kv_connector/v1/mooncake/conn.py",
            "vllm/v1/core/sched/scheduler.py",
            title="[Bugfix][P/D] Qwen3 NIXL fix",
        ),
    )
    assert predicted == (
        PredictedLabel("qwen", "label-qwen"),
        PredictedLabel("bug", "label-bug"),
        PredictedLabel("kv-connector", "label-kv-connector"),
        PredictedLabel("mooncake", "label-mooncake"),
        PredictedLabel("nixl", "label-nixl"),
        PredictedLabel("scheduler", "label-scheduler"),
    )


def test_v31_reports_its_refused_lookbehind_style_pattern(v31: MergifyLabels) -> None:
    text = _text("0.31.0")
    line = _line_of(text, r"      - title~=(?i)(?:\bDSv4\b|deepseek[-\s_]?v4)(?![._]?1)")
    assert len(v31.problems) == 2
    assert v31.problems[0].startswith(
        f".github/mergify.yml:{line}: rule 'label-dsv4': pattern "
        r"'(?i)(?:\\bDSv4\\b|deepseek[-\\s_]?v4)(?![._]?1)' is refused (not supported by RE2"
    )
    assert "`conflict`" in v31.problems[1]


def test_v31_refused_pattern_only_blocks_its_own_branch(v31: MergifyLabels) -> None:
    # The title branch is unknown, the files branch decides the `or` on its own.
    assert _labels(v31, _pr("vllm/models/deepseek_v4/model.py")) == ["deepseek", "DSv4"]
    assert _labels(v31, _pr(title="DSv4 support")) == []
    assert _labels(v31, _pr(title="Kimi K3 launch")) == ["kimi", "k3"]


def test_v34_title_changes_against_v31(v34: MergifyLabels, v31: MergifyLabels) -> None:
    assert _labels(v34, _pr(title="DSv4 support")) == ["deepseek"]
    assert _labels(v34, _pr(title="Kimi K3 launch")) == ["kimi"]


# --- the lookahead rewrite, checked against Python's re ---------------------------------

_LOOKAHEADS = [
    r"^(?!requirements/).*cuda",
    r"^(?!.*kv_offload)(?!.*cpu_offload).*\bcpu.*",
    r"^vllm/models/(?!common/)[^/]+/__init__\.py$",
    r"^a/(?=b)[a-z]+$",
    r"^x\.(?!y|z)\w",
    r"(?i)^(?!TEST)[a-z]+$",
]
_ALPHABET = ["a/", "b", "x.", "y", "z", "cuda", "cpu", "_", "kv_offload", "cpu_offload", "/"]


def _strings(rng: random.Random) -> list[str]:
    fixed = [
        "requirements/cuda.txt",
        "csrc/cuda_utils.h",
        "vllm/models/common/__init__.py",
        "vllm/models/qwen/__init__.py",
        "vllm/models/qwen/x/__init__.py",
        "test",
        "TESTING",
        "alpha",
        "x.a",
        "x.y",
        "",
    ]
    return fixed + ["".join(rng.choices(_ALPHABET, k=rng.randint(0, 6))) for _ in range(300)]


@pytest.mark.parametrize("pattern", _LOOKAHEADS)
def test_lookahead_rewrite_agrees_with_python_re(pattern: str) -> None:
    parsed = parse_mergify(_config(_rule([f"files~={pattern}"])))
    assert parsed.problems == ()
    for text in _strings(random.Random(pattern)):
        expected = re.search(pattern, text) is not None
        assert (_labels(parsed, _pr(text)) == ["L"]) is expected, (pattern, text)


@pytest.mark.parametrize(
    "pattern",
    [r"(?=x)", r"a(?!b)", r"^a|(?!b)c", r"(a)\1", r"(?<=a)b", r"(?m)^(?!a)b", r"^a*(?!b)"],
)
def test_other_lookarounds_are_refused(pattern: str) -> None:
    parsed = parse_mergify(_config(_rule([f"title~={pattern}"])))
    assert len(parsed.problems) == 1
    assert f"rule 'r': pattern {pattern!r} is refused" in parsed.problems[0]
    assert _labels(parsed, _pr(title="x ab c b")) == []


# --- each condition form ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "files", "expected"),
    [
        ("files~=^docs/", ("docs/a.md",), True),
        ("files~=^docs/", ("src/docs/a.md",), False),
        ("files~=docs/", ("src/docs/a.md",), True),  # a search, not a full match
        ("files ~= ^docs/", ("docs/a.md",), True),
        ("files~=(?i)README", ("readme.md",), True),
        ("files=setup.py", ("setup.py",), True),
        ("files=setup.py", ("x/setup.py",), False),
        ("files:setup.py", ("setup.py",), True),
        ("files==setup.py", ("setup.py",), True),
        ("files!=setup.py", ("a.py", "b.py"), True),
        ("files!=setup.py", ("a.py", "setup.py"), False),
        ("files≠setup.py", ("a.py",), True),
        ("-files~=tpu", ("a.py", "b.py"), True),
        ("-files~=tpu", ("a.py", "tpu.py"), False),
        ("¬files~=tpu", ("tpu.py",), False),
        ("+files~=tpu", ("tpu.py",), True),
        ("-files=a.py", ("a.py",), False),
        ("files~=", ("anything",), True),
        ("files~=x", (), False),
        ("-files~=x", (), True),
        ('files="my file.txt"', ("my file.txt",), True),
        ("files>m", ("a", "z"), True),
        ("files<b", ("c", "z"), False),
    ],
)
def test_file_conditions(condition: str, files: tuple[str, ...], expected: bool) -> None:
    assert _one([condition], _pr(*files)) is expected


@pytest.mark.parametrize(
    ("condition", "count", "expected"),
    [
        ("#files>2", 3, True),
        ("#files>2", 2, False),
        ("#files<2", 1, True),
        ("#files>=2", 2, True),
        ("#files≥3", 2, False),
        ("#files<=2", 2, True),
        ("#files≤1", 2, False),
        ("#files=2", 2, True),
        ("#files!=2", 2, False),
        ("-#files>2", 3, False),
        ("# files > 2", 3, True),
    ],
)
def test_file_counts(condition: str, count: int, expected: bool) -> None:
    files = tuple(f"f{i}" for i in range(count))
    assert _one([condition], _pr(*files)) is expected


def test_file_count_is_githubs_count_with_renames() -> None:
    # A rename puts both paths in `files` but GitHub counts one changed file.
    renamed = _pr("old/a.py", "new/a.py", added=("new/a.py",), changed_files=1)
    assert _one(["#files=1"], renamed)
    assert _one(["files=old/a.py", "files=new/a.py", "added-files=new/a.py"], renamed)
    assert not _one(["added-files=old/a.py"], renamed)
    assert _one(["#files=2"], _pr("old/a.py", "new/a.py"))  # no count given: len(files)


def test_added_files() -> None:
    pr = _pr("a/x.py", "b/y.py", added=("b/y.py",))
    assert _one(["added-files~=^b/"], pr)
    assert not _one(["added-files~=^a/"], pr)
    assert _one(["-added-files~=^a/"], pr)
    assert _one(["#added-files=1"], pr)


def test_title_body_base_draft_state() -> None:
    pr = _pr(
        title="[Bugfix] Fix it",
        body="<!-- template: fixes #0 -->\nFixes #123\nmore",
        base="release/1.0",
        draft=True,
    )
    assert _one(["title~=(?i)\\[bugfix\\]"], pr)
    assert not _one(["title~=^Fix"], pr)
    assert _one(["title=[Bugfix] Fix it"], pr)
    assert _one(['title="[Bugfix] Fix it"'], pr)
    assert _one(["body~=Fixes #123"], pr)
    assert not _one(["body~=template"], pr)  # HTML comments are not part of `body`
    assert _one(["body-raw~=template"], pr)
    assert not _one(["body~=^Fixes"], pr)  # `^` is the body's start
    assert _one(["body~=(?m)^Fixes"], pr)
    assert not _one(["body~=123.more"], pr)  # never across a line break
    assert _one(["#title>5"], pr)
    assert _one(["base~=^release/"], pr)
    assert not _one(["base=main"], pr)
    assert _one(["base!=main"], pr)
    assert _one(["draft"], pr)
    assert not _one(["-draft"], pr)
    assert _one(["-draft"], _pr())
    assert _one(["-closed", "-merged"], pr)
    assert not _one(["closed"], pr)
    assert not _one(["merged"], pr)


def test_unterminated_html_comment_hides_the_rest_of_the_body() -> None:
    assert not _one(["body~=secret"], _pr(body="visible <!-- secret"))
    assert _one(["body~=visible"], _pr(body="visible <!-- secret"))


def test_label_conditions() -> None:
    pr = _pr(labels=("bug", "work-in-progress"))
    assert _one(["label=work-in-progress"], pr)
    assert not _one(["label=enhancement"], pr)
    assert not _one(["label!=work-in-progress"], pr)
    assert _one(["label != stale"], pr)
    assert _one(["label~=^work"], pr)
    assert not _one(["-label~=^work"], pr)
    assert _one(["-label=stale"], pr)
    assert _one(["#label=2"], pr)
    assert _one(['label="do not merge"'], _pr(labels=("do not merge",)))
    assert _one(["label=needs: CI"], _pr(labels=("needs: CI",)))


def test_and_or_not_nesting() -> None:
    pr = _pr("docs/a.md", title="WIP")
    assert _one([{"or": ["files~=^src/", "files~=^docs/"]}], pr)
    assert not _one([{"and": ["files~=^src/", "files~=^docs/"]}], pr)
    assert _one([{"not": "files~=^src/"}], pr)
    assert _one([{"not": {"and": ["files~=^src/", "files~=^docs/"]}}], pr)
    assert not _one([{"not": {"or": ["files~=^src/", "files~=^docs/"]}}], pr)
    assert not _one([{"not": ["files~=^docs/", "title=WIP"]}], pr)  # a list under not: all
    deep: Any = "title=WIP"
    for level in range(8):
        deep = {("and", "or", "not")[level % 3]: [deep] if level % 3 != 2 else deep}
    assert _one([deep], pr)  # and/or of one item are that item; the two `not`s cancel
    assert _one([{"or": [{"and": ["title=WIP", "files~=^docs/"]}, "files=x"]}], pr)
    assert _one([], pr)  # no condition: always
    assert _one(True, pr)
    assert not _one([{"or": []}], pr)
    assert _one([{"and": []}], pr)


def test_unknown_attributes_are_reported_once_and_use_kleene_logic() -> None:
    text = _config(
        _rule(["author=someone", "files~=^docs/"], name="a", add=("A",)),
        _rule([{"or": ["files~=^docs/", "author=other"]}], name="b", add=("B",)),
        _rule([{"not": "author=x"}], name="c", add=("C",)),
        _rule(["#approved-reviews-by>=1"], name="d", add=("D",)),
        _rule([{"and": ["conflict", "files~=^src/"]}], name="e", toggle=["E"], add=()),
    )
    parsed = parse_mergify(text)
    assert [p.split(": ", 1)[1] for p in parsed.problems] == [
        "rule 'a': condition 'author=someone' uses `author`, which is not predicted; the "
        "condition counts as unknown",
        "rule 'd': condition '#approved-reviews-by>=1' uses `#approved-reviews-by`, which is "
        "not predicted; the condition counts as unknown",
        "rule 'e': condition 'conflict' uses `conflict`, which is not predicted; the "
        "condition counts as unknown",
    ]
    assert parsed.problems[0].startswith(".github/mergify.yml:4: ")
    assert _labels(parsed, _pr("docs/a.md")) == ["B"]
    assert _labels(parsed, _pr("src/a.py")) == []


def test_glob_operator_and_unreadable_conditions_are_unknown() -> None:
    parsed = parse_mergify(
        _config(
            _rule(["files *= docs/**"], name="glob"),
            _rule(["title"], name="noop"),
            _rule(["#files~=3"], name="count"),
            _rule(["#files>many"], name="nan"),
            _rule(["draft=true"], name="bool"),
            _rule(['title="unbalanced'], name="quote"),
            _rule(["-"], name="empty"),
            _rule(["   "], name="blank"),
        )
    )
    assert len(parsed.problems) == 8
    assert "`*= (glob operator)`" in parsed.problems[0]
    assert "cannot read condition 'title': no operator after the attribute" in parsed.problems[1]
    assert "unbalanced quotes" in parsed.problems[5]
    assert _labels(parsed, _pr("docs/a", title="x")) == []


def test_refused_regexes_name_rule_and_pattern_once_per_rule() -> None:
    parsed = parse_mergify(
        _config(
            _rule(["files~=(?=x)", {"or": ["files~=(?=x)", "title~=ok"]}], name="look"),
            _rule(["title~=(?=x)"], name="again"),
            _rule(["title~=" + "a" * 2001], name="long"),
            _rule(["title~=a.{0,400}b.{0,400}c.{0,400}d"], name="big"),
            _rule(["title~=[unclosed"], name="broken"),
        )
    )
    assert [p.split(": ", 2)[1] for p in parsed.problems] == [
        "rule 'look'",
        "rule 'again'",
        "rule 'long'",
        "rule 'big'",
        "rule 'broken'",
    ]
    assert "'(?=x)' is refused (not supported by RE2" in parsed.problems[0]
    assert "longer than 2000 characters" in parsed.problems[2]
    assert "RE2 instructions" in parsed.problems[3]
    assert _labels(parsed, _pr("x", title="ok abcd")) == []


def test_each_distinct_pattern_compiles_once(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = LinePattern

    def counting(source: str) -> Any:
        compiled.append(source)
        return real(source)

    monkeypatch.setattr(mergify_module, "LinePattern", counting)
    parse_mergify(
        _config(
            *(
                _rule(["label != stale", "files~=^docs/", f"title~=t{i % 2}"], name=f"r{i}")
                for i in range(10)
            )
        )
    )
    assert sorted(compiled) == ["^docs/", "t0", "t1"]


# --- actions and label bookkeeping -----------------------------------------------------


def test_toggle_remove_and_order() -> None:
    parsed = parse_mergify(
        _config(
            _rule([], name="first", add=("A", "B", "C")),
            _rule([], name="second", add=("A", "D")),
            _rule(["files~=^docs/"], name="toggler", add=(), toggle=["B", "T"]),
            _rule([], name="remover", add=(), remove=["c"]),
            _rule(["files~=^src/"], name="again", add=("C",)),
        )
    )
    assert predict_labels(parsed, _pr("docs/a")) == (
        PredictedLabel("A", "first"),
        PredictedLabel("B", "first"),
        PredictedLabel("D", "second"),
        PredictedLabel("T", "toggler"),
    )
    assert predict_labels(parsed, _pr("src/a")) == (
        PredictedLabel("A", "first"),
        PredictedLabel("D", "second"),
        PredictedLabel("C", "again"),
    )


def test_unknown_toggle_leaves_labels_alone_and_remove_all_clears() -> None:
    parsed = parse_mergify(
        _config(
            _rule([], name="seed", add=("A",)),
            _rule(["conflict"], name="maybe", add=(), toggle=["A"]),
        )
    )
    assert _labels(parsed, _pr()) == ["A"]
    parsed = parse_mergify(
        _config(
            _rule([], name="seed", add=("A",)),
            _rule([], name="wipe", add=("W",), remove_all=True),
            _rule([], name="after", add=("Z",)),
        )
    )
    assert _labels(parsed, _pr()) == ["Z"]


def test_label_action_shapes() -> None:
    parsed = parse_mergify(
        _config(
            {"name": "string", "conditions": [], "actions": {"label": {"add": "single"}}},
            _rule([], name="items", add=("ok", 3, "", "{{ author }}", "ok")),
            {"name": "bad", "conditions": [], "actions": {"label": "nope"}},
            {"name": "none", "conditions": [], "actions": {"label": None}},
            {"name": "other", "conditions": ["bogus-attr=1"], "actions": {"comment": {}}},
            {
                "name": "off",
                "conditions": [],
                "actions": {"label": {"add": ["x"]}},
                "disabled": {"reason": "paused"},
            },
            {"conditions": [], "actions": {"label": {"add": ["anon"]}}},
            _rule("files~=x", name="conds"),
            _rule([], name="many", add=[f"l{i}" for i in range(60)]),
        )
    )
    messages = [p.split(": ", 1)[1] for p in parsed.problems]
    assert "rule 'items': a label is a non-empty string" in messages
    assert "rule 'items': label '{{ author }}' is a template; it is not predicted" in messages
    assert "rule 'bad': the label action is a mapping (add/remove/toggle)" in messages
    assert "rule #7: a rule needs a name" in messages
    assert "rule 'conds': conditions must be a list; the rule is not predicted" in messages
    assert "rule 'many': more than 50 labels in `add`" in messages
    assert not any("bogus" in m or "'off'" in m for m in messages)
    names = [rule.name for rule in parsed.rules]
    assert names == ["string", "items", "rule #7", "conds", "many"]
    assert _labels(parsed, _pr("x"))[:3] == ["single", "ok", "anon"]
    assert len(_labels(parsed, _pr("x"))) == 3 + 50


def test_duplicate_rule_names_and_extends_are_reported() -> None:
    text = "extends: org/.github\n" + _config(_rule([], name="x"), _rule([], name="x"))
    parsed = parse_mergify(text, source=".mergify.yml")
    second = [i for i, line in enumerate(text.splitlines(), 1) if line == "- name: x"][1]
    assert parsed.problems == (
        ".mergify.yml:1: `extends` is not followed: rules of the extended file are not predicted",
        f".mergify.yml:{second}: rule 'x': two rules have this name (Mergify refuses that)",
    )


# --- hostile and malformed input -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("pull_request_rules: [\n", ".github/mergify.yml:2: not valid YAML"),
        ("- a\n- b\n", ".github/mergify.yml:1: the configuration is a mapping"),
        ("pull_request_rules: {a: 1}\n", ".github/mergify.yml:1: pull_request_rules is a list"),
        ("pull_request_rules:\n  - 3\n", ".github/mergify.yml:2: a rule is a mapping"),
        ("x: &a [1]\ny: *a\n", ".github/mergify.yml:1: YAML anchors and aliases are not allowed"),
        ("a: 1\na: 2\n", ".github/mergify.yml:2: duplicate key 'a'"),
        ("x" * (1024 * 1024 + 1), ".github/mergify.yml:1: file is larger than 1024 KiB"),
        ("[" * 100, ".github/mergify.yml:1: nested deeper than 64 levels"),
        ("\x00\x01", ".github/mergify.yml:1: not valid YAML"),
    ],
)
def test_malformed_files_give_problems(text: str, problem: str) -> None:
    parsed = parse_mergify(text)
    assert parsed.rules == ()
    assert len(parsed.problems) == 1
    assert parsed.problems[0].startswith(problem), parsed.problems


def test_empty_and_rule_less_files_are_quiet() -> None:
    for text in ("", "# only a comment\n", "queue_rules: []\n", "pull_request_rules: []\n"):
        assert parse_mergify(text) == MergifyLabels(".github/mergify.yml", (), ())


def test_wrong_condition_shapes() -> None:
    parsed = parse_mergify(
        _config(
            _rule([3, None, ["files~=x"], {"and": "files~=x"}, {"or": [], "and": []}, {}]),
        )
    )
    messages = [p.split(": ", 1)[1] for p in parsed.problems]
    assert messages == [
        "rule 'r': a condition is a string or an and/or/not mapping, not int; it counts as unknown",
        "rule 'r': a condition is a string or an and/or/not mapping, not NoneType; it counts "
        "as unknown",
        "rule 'r': a condition is a string or an and/or/not mapping, not list; it counts as "
        "unknown",
        "rule 'r': `and` takes a list of conditions",
        "rule 'r': a condition mapping holds one of and/or/not, not and, or; it counts as unknown",
        "rule 'r': a condition mapping holds one of and/or/not, not nothing; it counts as unknown",
    ]
    assert _labels(parsed, _pr("x")) == []


def test_caps_on_depth_conditions_and_rules() -> None:
    deep: Any = "files~=x"
    for _ in range(MAX_DEPTH + 1):
        deep = {"or": [deep]}
    parsed = parse_mergify(_config(_rule([deep])))
    assert f"conditions nest deeper than {MAX_DEPTH}" in parsed.problems[0]
    assert _labels(parsed, _pr("x")) == []

    wide = [{"or": ["files~=x", "title=t"]} for _ in range(MAX_CONDITIONS_PER_RULE)]
    parsed = parse_mergify(_config(_rule(wide)))
    assert f"more than {MAX_CONDITIONS_PER_RULE} conditions" in parsed.problems[0]
    assert _labels(parsed, _pr("x")) == []  # the capped ones are unknown, not dropped

    text = "pull_request_rules:\n" + "".join(
        f"- {{name: r{i}, conditions: [], actions: {{label: {{add: [l{i}]}}}}}}\n"
        for i in range(MAX_RULES + 5)
    )
    parsed = parse_mergify(text)
    assert len(parsed.rules) == MAX_RULES
    assert parsed.problems == (
        f".github/mergify.yml:{MAX_RULES + 2}: more than {MAX_RULES:,} rules; "
        "the rest are not read",
    )


def test_too_many_files_make_file_conditions_unknown() -> None:
    parsed = parse_mergify(
        _config(_rule(["-files~=^x"], name="f", add=("F",)), _rule(["title=t"], add=("T",)))
    )
    files = tuple(f"a/{i}" for i in range(MAX_FILES + 1))
    assert _labels(parsed, _pr(*files, title="t")) == ["T"]
    assert _labels(parsed, _pr(*files[:10], title="t")) == ["F", "T"]


def test_search_budget_bounds_a_hostile_file() -> None:
    rules = [
        _rule(
            [{"or": [f"files~=[a-z]{{{i % 7 + 1}}}[0-9]x{i}", f"files~=[0-9]{{{i % 3 + 1}}}y{i}"]}],
            name=f"r{i}",
        )
        for i in range(700)
    ]
    rules.append(_rule(["title=last"], name="cheap", add=("C",)))
    rules.append(_rule(["files~=/file_0\\.py$"], name="late", add=("M",)))
    parsed = parse_mergify(_config(*rules))
    assert parsed.problems == ()
    files = tuple(f"vllm/model_executor/models/m{i}/file_{i}.py" for i in range(3000))
    start = time.perf_counter()
    predicted = _labels(parsed, _pr(*files, title="last"))
    assert time.perf_counter() - start < 1.0
    # Past the budget a regex is unknown (the late rule would match); equality is not.
    assert predicted == ["C"]
    assert _labels(parsed, _pr(*files[:5], title="last")) == ["C", "M"]


def test_huge_texts_and_odd_characters_do_not_raise() -> None:
    parsed = parse_mergify(
        _config(_rule(["body~=needle", "title~=(?i)ünï", "files~=\U0001f600"], add=("X",)))
    )
    pr = _pr(
        "emoji/\U0001f600.py",
        "bad/\udcff.py",
        title="ÜNÏCODE",
        body="x" * 2_000_000 + "needle",
    )
    assert _labels(parsed, pr) == []  # the needle is past what a pattern reads
    assert _labels(parsed, _pr("emoji/\U0001f600.py", title="ÜNÏ", body="a needle")) == ["X"]


def test_mutated_real_files_never_raise() -> None:
    rng = random.Random(7)
    lines = _text("0.34.0").splitlines()
    junk = ["", "  - ", "- or:", "  and:", "- '#files>'", ": :", "- files~=(", "\t", "{", "&x"]
    pr = _pr("docs/a.md", "vllm/platforms/cuda.py", title="[Bugfix] x", labels=("stale",))
    for _ in range(150):
        mutated = list(lines)
        for _ in range(rng.randint(1, 6)):
            index = rng.randrange(len(mutated))
            action = rng.random()
            if action < 0.4:
                del mutated[index]
            elif action < 0.8:
                mutated[index] = rng.choice(junk) + mutated[index][rng.randint(0, 8) :]
            else:
                mutated.insert(index, rng.choice(junk))
        parsed = parse_mergify("\n".join(mutated))
        assert all(
            isinstance(p, str) and p.startswith(".github/mergify.yml:") for p in parsed.problems
        )
        predict_labels(parsed, pr)


# --- time ------------------------------------------------------------------------------

_DIRS = (
    "vllm/model_executor/models",
    "vllm/model_executor/layers/quantization",
    "vllm/model_executor/layers/fused_moe",
    "vllm/v1/attention/backends",
    "vllm/v1/worker/gpu",
    "vllm/v1/core/sched",
    "vllm/entrypoints/openai",
    "vllm/distributed/kv_transfer/kv_connector/v1",
    "vllm/compilation",
    "vllm/multimodal",
    "csrc/quantization",
    "tests/models/multimodal/processing",
    "tests/v1/spec_decode",
    "docs/features",
    "benchmarks",
)
_NAMES = (
    "qwen2", "llama", "deepseek_v2", "mixtral", "glm4", "utils", "kernel", "cuda_graph",
    "rocm_aiter", "cpu_worker", "tpu_runner", "flashinfer", "nixl_connector", "eagle",
)  # fmt: skip


def _vllm_like_paths(count: int) -> tuple[str, ...]:
    return tuple(
        f"{_DIRS[i % len(_DIRS)]}/{_NAMES[i * 5 % len(_NAMES)]}_{i}.py" for i in range(count)
    )


def test_three_thousand_files_on_the_real_file_are_fast(v34: MergifyLabels) -> None:
    files = _vllm_like_paths(3000)
    pr = _pr(*files, added=files[:300], title="[Bugfix][Kernel] Qwen3 MoE for ROCm")
    best = min(_timed(lambda: predict_labels(v34, pr)) for _ in range(3))
    assert best < 0.2
    # `tpu_runner_*.py` is neither `tpu.py` nor under `/tpu/`; `cpu_worker_*` is cpu.
    assert _labels(v34, pr) == [
        "documentation", "deepseek", "frontend", "llama", "multi-modality", "mistral",
        "performance", "quantization", "qwen", "glm", "nvidia", "rocm", "cpu",
        "speculative-decoding", "mrv2", "bug", "kv-connector", "nixl", "scheduler",
        "torch.compile",
    ]  # fmt: skip


def _timed(call: Any) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start
