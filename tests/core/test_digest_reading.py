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
