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
