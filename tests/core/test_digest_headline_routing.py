"""The headline reason (the label view's line) names what the lead area's change touches;
slight quiet areas with no one to name get no routing line (issue 40 §3-4)."""

from __future__ import annotations

from pathlib import Path

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.words import verdict_reason
from bot.core.repo_config.codeowners import parse_codeowners
from bot.core.repo_config.config import RepoConfig
from bot.rulebook.files import load_rules

RULES = load_rules(Path(__file__).resolve().parents[2] / "rules")
BODY = "## Purpose\nFix.\n\n## Test Plan\npytest tests/lora\n\n## Test Result\npassed\n"
LORA_PATCH = (
    "@@ -10,6 +10,8 @@ class LogitsProcessorWithLoRA(BaseLayerWithLoRA):\n"
    "     def _get_logits(self, hidden_states):\n"
    "-        logits = self.base_layer(hidden_states)\n"
    "+        logits = self.base_layer(hidden_states).float()\n"
    "+        logits = logits.to(self.head_dtype)\n"
    "         return logits\n"
)


def _facts(*files: ChangedFile, author: str = "someone") -> PullRequestFacts:
    return PullRequestFacts(
        number=61001, title="Fix the LoRA head dtype", body=BODY, author=author,
        files=files, changed_files=len(files),
        additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files))


def test_the_headline_names_the_changed_symbols_of_the_lead_areas_main_file() -> None:
    lora = ChangedFile(filename="vllm/lora/layers/logits_processor.py", additions=2,
                       deletions=1, patch=LORA_PATCH)
    digest = build_digest(_facts(lora), RULES, "en")
    assert digest.verdict_grounds is not None
    assert digest.verdict_grounds.lead == "lora"
    assert "_get_logits" in digest.verdict_grounds.touches
    # The label view's line (the JSON's verdict_reason) names them; the comment's heading
    # keeps the size, and its sections below name the area and the functions.
    reason = verdict_reason(digest.verdict_grounds, digest.areas, "en")
    assert reason.startswith("LoRA adapters change in `")
    assert "_get_logits" in reason
    zh = build_digest(_facts(lora), RULES, "zh")
    assert zh.verdict_grounds is not None
    assert "（涉及 `" in verdict_reason(zh.verdict_grounds, zh.areas, "zh")
    comment = render_digest(digest).split("\n")
    assert comment[1].startswith("### ")
    assert comment[1].endswith(" · +2/−1 in 1 file")
    assert "LoRA adapters change" not in "\n".join(comment)


def test_a_new_file_is_named_as_the_file() -> None:
    new = ChangedFile(filename="vllm/lora/punica_wrapper/new_wrapper.py", status="added",
                      additions=40, patch="@@ -0,0 +1,1 @@\n+def shrink(x):\n")
    digest = build_digest(_facts(new), RULES, "en")
    assert digest.verdict_grounds is not None
    assert digest.verdict_grounds.touches == ("new_wrapper.py",)


def test_a_one_line_docs_edit_beside_a_loud_area_gets_no_line_unless_someone_owns_it() -> None:
    lora = ChangedFile(filename="vllm/lora/layers/logits_processor.py", additions=2,
                       deletions=1, patch=LORA_PATCH)
    row = ChangedFile(filename="docs/models/supported_models.md", additions=1,
                      patch="@@ -1,1 +1,2 @@\n x\n+| Foo | foo |\n")
    no_owner = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(
        "/vllm/lora/ @lora-owner\n"))
    ids = [a.id for a in build_digest(_facts(lora, row), RULES, "en",
                                      repo_config=no_owner).areas]
    assert ids == ["lora"]
    owned = RepoConfig(source="base 1a2b3c4", codeowners=parse_codeowners(
        "/vllm/lora/ @lora-owner\n/docs/ @docs-owner\n"))
    ids = [a.id for a in build_digest(_facts(lora, row), RULES, "en", repo_config=owned).areas]
    assert ids == ["lora", "docs"]
    # Alone, the docs edit keeps its area: it is all there is to route.
    alone = build_digest(_facts(row), RULES, "en", repo_config=no_owner)
    assert [a.id for a in alone.areas] == ["docs"]


def test_a_label_mergify_adds_only_for_test_files_routes_no_reviewers() -> None:
    from bot.core.repo_config.mergify import parse_mergify

    mergify = parse_mergify(
        "pull_request_rules:\n"
        "  - name: label-rocm\n"
        "    conditions:\n"
        "      - files~=^(.*/)?[^/]*rocm[^/]*\n"
        "    actions:\n"
        "      label:\n"
        "        add: [rocm]\n")
    config = RepoConfig(source="base 1a2b3c4", mergify=mergify)
    fix = ChangedFile(filename="vllm/lora/layers/logits_processor.py", additions=2,
                      deletions=1, patch=LORA_PATCH)
    rocm_test = ChangedFile(filename="tests/kernels/test_rocm_linear.py", additions=1,
                            deletions=1, patch="@@ -1 +1 @@\n-x(a=1)\n+x(b=1)\n")
    digest = build_digest(_facts(fix, rocm_test), RULES, "en", repo_config=config)
    assert [(x.label, x.tests_only) for x in digest.repo_labels] == [("rocm", True)]
    assert not {"gshtras", "tjtanaa"} & set(digest.reviewers.users)
    rocm_code = ChangedFile(filename="vllm/platforms/rocm.py", additions=1,
                            patch="@@ -1 +1,2 @@\n x\n+y = 1\n")
    digest = build_digest(_facts(fix, rocm_test, rocm_code), RULES, "en", repo_config=config)
    assert [(x.label, x.tests_only) for x in digest.repo_labels] == [("rocm", False)]
    assert {"gshtras", "tjtanaa"} & set(digest.reviewers.users)
