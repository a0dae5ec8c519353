"""Siblings, overrides and callers on the fixture tree, from memory and from SQLite alike;
and the digest lines they become (golden Markdown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.repo_index.context import name_prefix, repo_context
from bot.core.repo_index.findings import (
    CallerFinding,
    OverrideFinding,
    RepoContext,
    SiblingFinding,
)
from bot.core.repo_index.memory import MemoryIndex
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import parse_python
from bot.core.vocabulary import Lang
from bot.repo_index import store
from bot.rulebook.files import load_rules
from bot.settings.model import DEFAULT_RULES_DIR
from tests.golden_files import assert_golden
from tests.repo_index_tree import pr_facts, tree_index, tree_records

MODELS = "vllm/model_executor/models"
EXPECTED = RepoContext(
    commit="f" * 40,
    changed_functions=(
        ("vllm/utils/gpu_sync_debug.py", "_checked_to"),
        ("vllm/utils/gpu_sync_debug.py", "enable_sync_checks"),
        ("vllm/multimodal/processing.py", "BaseMultiModalProcessor._get_prompt_updates"),
        ("tests/models/test_qwen2_vl.py", "test_prompt_updates"),
    ),
    siblings=(SiblingFinding(
        file="vllm/utils/gpu_sync_debug.py", changed="_checked_to", shape="prefix:_checked_",
        siblings=("_checked_cuda", "_checked_copy_"),
    ),),
    overrides=(OverrideFinding(
        file="vllm/multimodal/processing.py", class_name="BaseMultiModalProcessor",
        method="_get_prompt_updates",
        # Phi3V inherits without overriding; `Unrelated` subclasses a same-named class
        # from another module; Qwen2.5-Omni overrides through Qwen2-VL.
        overriders=(
            (f"{MODELS}/llava.py", "LlavaMultiModalProcessor"),
            (f"{MODELS}/qwen2_5_omni.py", "Qwen2_5OmniThinkerMultiModalProcessor"),
            (f"{MODELS}/qwen2_vl.py", "Qwen2VLMultiModalProcessor"),
        ),
        named_by_tests=1,
    ),),
    callers=(CallerFinding(
        # elsewhere.py calls its own `enable_sync_checks`; worker.py's method of that name
        # is not a call; runner.py calls it twice and worker.py through a module alias.
        # The PR only adds a keyword-only parameter with a default: they are unaffected.
        file="vllm/utils/gpu_sync_debug.py", function="enable_sync_checks", call_sites=3,
        files=("vllm/engine/runner.py", "vllm/engine/worker.py"), breaking=False,
    ),),
)


def test_the_fixture_pr_finds_siblings_overrides_and_callers() -> None:
    assert repo_context(tree_index(), pr_facts()) == EXPECTED


def test_the_sqlite_index_answers_exactly_like_the_memory_one(tmp_path: Path) -> None:
    with store.opened(tmp_path / "index.db") as conn:
        writer = store.IndexWriter(conn, "vllm-project/vllm", "f" * 40)
        for record in tree_records():
            writer.add(record)
        generation = writer.finish()
        assert generation.files == len(tree_records())
        assert repo_context(store.SqliteIndexView(conn, generation), pr_facts()) == EXPECTED


def _patched(facts: PullRequestFacts, filename: str, patch: str) -> PullRequestFacts:
    files = [f for f in facts.files if f.filename != filename]
    return facts.model_copy(update={"files": (
        *files, ChangedFile(filename=filename, additions=1, deletions=1, patch=patch),
    )})


def test_a_body_only_change_of_a_public_function_has_no_caller_line() -> None:
    facts = _patched(pr_facts(), "vllm/utils/gpu_sync_debug.py", (
        "@@ -28,3 +28,3 @@ def _checked_copy_(self, *args, **kwargs):\n"
        " def enable_sync_checks(mode, strict):\n"
        "-    _mode.set(mode)\n"
        "+    _mode.set(mode or None)\n"
        "     return strict"
    ))
    assert repo_context(tree_index(), facts).callers == ()


API = "def serve(\n    host,\n    port,\n):\n    return host, port\n"
CLI = "from vllm.api import serve\n\n\ndef main():\n    serve('0.0.0.0', 8000)\n"


@pytest.mark.parametrize(("patch", "breaking", "reasons"), [
    # A parameter line replaced inside the multi-line signature (lines 1-4).
    ("@@ -2,3 +2,4 @@ def serve(\n     host,\n-    port,\n+    port,\n+    timeout=10,\n ):",
     False, ()),
    # A parameter line inserted between two of its lines, with a default: still breaks
    # the callers that pass `port` by position.
    ("@@ -2,3 +2,4 @@ def serve(\n     host,\n+    timeout=10,\n     port,\n ):",
     True, ("positional parameters moved",)),
    ("@@ -2,3 +2,4 @@ def serve(\n     host,\n     port,\n+    timeout,\n ):",
     True, ("new required `timeout`",)),
    ("@@ -1,4 +1,3 @@\n def serve(\n     host,\n-    port,\n ):", True, ("removed `port`",)),
    ("@@ -2,3 +2,3 @@ def serve(\n-    host,\n-    port,\n+    port,\n+    host,\n ):",
     True, ("positional parameters moved",)),
    ("@@ -1,4 +1,4 @@\n-def serve(\n+def serve(*,\n     host,\n     port,\n ):",
     True, ("`host` became keyword-only", "`port` became keyword-only")),
])
def test_a_signature_change_counts_its_callers_and_lists_them_only_when_it_breaks(
    patch: str, breaking: bool, reasons: tuple[str, ...],
) -> None:
    records = [_record("vllm/api.py", API), _record("vllm/cli.py", CLI)]
    facts = PullRequestFacts(files=(
        ChangedFile(filename="vllm/api.py", additions=2, deletions=1, patch=patch),
    ))
    (caller,) = repo_context(MemoryIndex(records), facts).callers
    assert (caller.function, caller.files) == ("serve", ("vllm/cli.py",))
    assert (caller.breaking, caller.reasons) == (breaking, reasons)


def _record(path: str, text: str) -> FileRecord:
    parsed = parse_python(path, text.encode())
    assert isinstance(parsed, FileRecord)
    return parsed


def test_callers_inside_the_pr_are_not_listed() -> None:
    facts = pr_facts()
    runner = ChangedFile(filename="vllm/engine/runner.py", additions=1, deletions=1,
                         patch="@@ -1,1 +1,1 @@\n-x\n+y")
    facts = facts.model_copy(update={"files": (*facts.files, runner)})
    (caller,) = repo_context(tree_index(), facts).callers
    assert (caller.call_sites, caller.files) == (1, ("vllm/engine/worker.py",))


@pytest.mark.parametrize(("added", "siblings"), [
    # A new top-level function shaped like three untouched ones.
    ("+def _checked_pin(self, *args, **kwargs):\n+    return self",
     ("_checked_to", "_checked_cuda", "_checked_copy_")),
    # Same prefix, other parameters: a naming habit, not a look-alike.
    ("+def _checked_pin(tensor):\n+    return tensor", ()),
])
def test_an_added_function_has_look_alikes_of_the_same_shape(
    added: str, siblings: tuple[str, ...]
) -> None:
    patch = f"@@ -30,0 +31,3 @@ def enable_sync_checks(mode, strict):\n+\n{added}"
    facts = PullRequestFacts(files=(ChangedFile(
        filename="vllm/utils/gpu_sync_debug.py", additions=3, patch=patch),))
    found = repo_context(tree_index(), facts).siblings
    assert tuple(s for f in found for s in f.siblings) == siblings


def test_a_def_added_inside_a_function_is_not_a_new_function() -> None:
    patch = ("@@ -13,1 +13,3 @@ def _checked_to(self, *args, **kwargs):\n"
             "     if _active_check_mode() is not None:\n"
             "+        def _checked_inner(self, *args, **kwargs):\n+            return self")
    facts = PullRequestFacts(files=(ChangedFile(
        filename="vllm/utils/gpu_sync_debug.py", additions=2, patch=patch),))
    # The change is `_checked_to`'s own: its look-alikes, never the nested helper's.
    (found,) = repo_context(tree_index(), facts).siblings
    assert found.changed == "_checked_to"


def test_no_findings_for_files_the_index_does_not_know() -> None:
    facts = PullRequestFacts(files=(ChangedFile(
        filename="vllm/new_module.py", status="added", additions=2,
        patch="@@ -0,0 +1,2 @@\n+def _checked_new(x):\n+    return x",
    ),))
    assert repo_context(tree_index(), facts).empty


@pytest.mark.parametrize(("name", "prefix"), [
    ("_checked_to", "_checked_"), ("support_torch_compile", "support_"),
    ("_get_prompt_updates", None), ("test_prompt_updates", None), ("forward", None),
    ("__init__", None),
])
def test_name_prefixes(name: str, prefix: str | None) -> None:
    assert name_prefix(name) == prefix


def _digest(lang: Lang, context: RepoContext | None) -> tuple[str, dict[str, object]]:
    digest = build_digest(pr_facts(), load_rules(DEFAULT_RULES_DIR), lang, repo_context=context)
    markdown = render_digest(digest)
    return markdown, digest_json(digest, markdown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_golden_digest_with_the_code_around_the_change(lang: Lang) -> None:
    markdown, _ = _digest(lang, repo_context(tree_index(), pr_facts()))
    assert_golden(f"repo_context.{lang}.md", markdown)


def test_json_carries_the_findings_under_repo_context() -> None:
    _, data = _digest("en", EXPECTED)
    context = data["repo_context"]
    assert isinstance(context, dict)
    assert context["commit"] == "f" * 40
    assert context["overrides"][0]["overriders"][0] == [f"{MODELS}/llava.py",
                                                        "LlavaMultiModalProcessor"]


def test_without_an_index_the_digest_says_nothing_about_it() -> None:
    markdown, data = _digest("en", None)
    assert data["repo_context"] is None
    assert "Around the change" not in markdown
    empty, data = _digest("en", RepoContext(commit="f" * 40))
    assert data["repo_context"] is None
    assert empty == markdown


def test_names_from_the_repository_are_escaped() -> None:
    hostile = RepoContext(commit="f" * 40, siblings=(SiblingFinding(
        file="vllm/x.py", changed="a`@everyone", shape="prefix:<img src=x>",
        siblings=("[link](http://evil)",),
    ),))
    markdown, _ = _digest("en", hostile)
    line = next(x for x in markdown.splitlines() if "look-alikes" in x)
    # Inside code spans, with the mention and the tag broken by a word joiner.
    assert "<img" not in line
    assert "@everyone" not in line
    assert "``a`@\u2060everyone``" in line


def test_a_method_a_hunk_header_names_only_by_its_class_is_named_from_the_index() -> None:
    # git's hunk header names the class; the method's def line is above the hunk.
    patch = ("@@ -244,4 +244,4 @@ class QuantFP8(CustomOp):\n"
             "         absmax = x.abs().max()\n"
             "-        scales = absmax / FP8_MAX\n"
             "+        scales = (absmax / FP8_MAX).clamp(min=EPS)\n"
             "         return scales\n")
    path = "vllm/model_executor/layers/quantization/input_quant_fp8.py"
    facts = PullRequestFacts(
        number=60020, title="[Bugfix] Clamp FP8 scales", head_sha="a" * 40,
        files=(ChangedFile(filename=path, additions=1, deletions=1, patch=patch),),
        changed_files=1, additions=1, deletions=1)
    rules = load_rules(DEFAULT_RULES_DIR)
    plain = build_digest(facts, rules, "en")
    assert [s.name for s in plain.symbols] == ["QuantFP8"]
    context = RepoContext(commit="f" * 40, changed_functions=(
        (path, "QuantFP8._quantize_group_native"),))
    named = build_digest(facts, rules, "en", repo_context=context)
    assert [(s.name, s.change) for s in named.symbols] == [
        ("QuantFP8._quantize_group_native", "modified")]
    assert "`QuantFP8._quantize_group_native`" in render_digest(named)
