"""find_neighbours: who competes with or overlaps a PR, strongest first, and its live state."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.neighbours.find import HOT_FILE_PRS, MAX_SHOWN, find_neighbours, shown_and_more
from bot.core.neighbours.model import ChangedSymbol, DependencyRef, OpenPr


def _pr(number: int, author: str, files: tuple[str, ...] = (), symbols: tuple[str, ...] = (),
        **extra: object) -> OpenPr:
    return OpenPr.model_validate({
        "number": number, "author": author, "title": extra.pop("title", f"PR {number}"),
        "files": files,
        "symbols": [ChangedSymbol(file=s.split("::")[0], name=s.split("::")[1])
                    for s in symbols],
        **extra,
    })


SUBJECT = _pr(100, "alice", ("vllm/attention/rope.py", "tests/test_rope.py"),
              ("vllm/attention/rope.py::forward_rope",), fixes=(77,),
              title="[Bugfix] Fix rope scaling for long context")


def test_another_author_changing_the_same_function_is_named_with_the_function() -> None:
    other = _pr(200, "bob", ("vllm/attention/rope.py",),
                ("vllm/attention/rope.py::forward_rope",),
                created_at=datetime(2026, 11, 2, tzinfo=UTC), approved=True)
    found = find_neighbours(SUBJECT, [SUBJECT, other])
    assert [(n.number, n.relation, n.reason, n.shared) for n in found.neighbours] == [
        (200, "overlaps", "same-function",
         ("vllm/attention/rope.py::forward_rope",))]
    assert found.neighbours[0].approved
    assert found.neighbours[0].author == "bob"
    assert found.compared == 2


def test_same_file_other_function_is_weaker_than_the_same_function() -> None:
    same_file = _pr(150, "carol", ("vllm/attention/rope.py", "tests/test_rope.py"),
                    ("vllm/attention/rope.py::other_helper",))
    same_function = _pr(300, "bob", ("vllm/attention/rope.py",),
                        ("vllm/attention/rope.py::forward_rope",))
    found = find_neighbours(SUBJECT, [same_file, same_function])
    assert [(n.number, n.reason) for n in found.neighbours] == [
        (300, "same-function"), (150, "same-file")]
    assert found.neighbours[1].shared == ("vllm/attention/rope.py", "tests/test_rope.py")


def test_one_shared_file_alone_is_not_named() -> None:
    # Two unrelated edits of one big module (judged noise 6 of 8 times on the corpus).
    one_file = _pr(160, "carol", ("vllm/attention/rope.py",),
                   ("vllm/attention/rope.py::other_helper",))
    assert find_neighbours(SUBJECT, [one_file]).neighbours == ()


def test_a_pr_fixing_the_same_issue_competes() -> None:
    rival = _pr(400, "dave", ("vllm/model_executor/llama.py",), fixes=(77,))
    found = find_neighbours(SUBJECT, [rival])
    assert [(n.number, n.relation, n.reason, n.shared) for n in found.neighbours] == [
        (400, "competes", "same-issue", ("#77",))]


def test_near_identical_title_and_files_competes_and_ranks_above_overlap() -> None:
    twin = _pr(500, "erin", ("vllm/attention/rope.py", "tests/test_rope.py"),
               title="Fix rope scaling for long context")
    overlap = _pr(600, "bob", ("vllm/attention/rope.py",),
                  ("vllm/attention/rope.py::forward_rope",))
    found = find_neighbours(SUBJECT, [overlap, twin])
    assert [(n.number, n.reason) for n in found.neighbours] == [
        (500, "same-title"), (600, "same-function")]


def test_unrelated_pr_is_not_named() -> None:
    unrelated = _pr(700, "frank", ("vllm/lora/layers.py",), ("vllm/lora/layers.py::LoRA.apply",),
                    fixes=(12,), title="[Bugfix] Fix rope scaling for long context")
    assert find_neighbours(SUBJECT, [unrelated]).neighbours == ()


def test_the_authors_own_prs_are_not_competition() -> None:
    own = _pr(800, "Alice", ("vllm/attention/rope.py",),
              ("vllm/attention/rope.py::forward_rope",), fixes=(77,))
    assert find_neighbours(SUBJECT, [own]).neighbours == ()


def test_closed_prs_are_not_neighbours() -> None:
    closed = _pr(900, "bob", ("vllm/attention/rope.py",),
                 ("vllm/attention/rope.py::forward_rope",), state="closed")
    assert find_neighbours(SUBJECT, [closed]).neighbours == ()


def test_a_file_many_prs_touch_is_not_a_same_file_signal() -> None:
    crowd = [_pr(1000 + i, f"user{i}", ("vllm/attention/rope.py",))
             for i in range(HOT_FILE_PRS + 1)]
    found = find_neighbours(SUBJECT, crowd)
    assert found.neighbours == ()
    # A shared function in that file still is.
    same = _pr(2000, "bob", ("vllm/attention/rope.py",),
               ("vllm/attention/rope.py::forward_rope",))
    assert [n.number for n in find_neighbours(SUBJECT, [*crowd, same]).neighbours] == [2000]


def test_at_most_three_are_shown_and_the_rest_counted() -> None:
    others = [_pr(3000 + i, f"u{i}", ("vllm/attention/rope.py", "tests/test_rope.py"))
              for i in range(5)]
    shown, more = shown_and_more(find_neighbours(SUBJECT, others))
    assert len(shown) == MAX_SHOWN
    assert more == 2


def test_dependencies_carry_the_state_read_and_unknown_otherwise() -> None:
    found = find_neighbours(
        SUBJECT, [], dependencies=(DependencyRef(number=55, cue="depends-on"),
                                   DependencyRef(number=56, cue="after")),
        dependency_states={55: "open"})
    assert [(d.number, d.cue, d.state) for d in found.dependencies] == [
        (55, "depends-on", "open"), (56, "after", "unknown")]


def test_dirty_mergeable_state_means_conflicts() -> None:
    live = find_neighbours(SUBJECT.model_copy(update={"mergeable_state": "dirty"}), []).live
    assert live.conflicts
    assert not live.behind
    behind = find_neighbours(SUBJECT.model_copy(update={"mergeable_state": "behind"}), []).live
    assert behind.behind
    assert not behind.conflicts
    unknown = find_neighbours(SUBJECT, []).live
    assert not unknown.conflicts
    assert unknown.mergeable_state == ""


def test_two_thousand_open_prs_are_indexed_not_scanned_pairwise() -> None:
    many = [_pr(i, f"user{i}", (f"vllm/file_{i}.py",), (f"vllm/file_{i}.py::f",))
            for i in range(1, 2001)]
    subject = _pr(5000, "zed", ("vllm/file_7.py",), ("vllm/file_7.py::f",))
    found = find_neighbours(subject, many)
    assert [n.number for n in found.neighbours] == [7]
    assert found.compared == 2000


def test_a_shared_class_scope_is_a_shared_file_not_a_shared_function() -> None:
    subject = _pr(1, "a", ("vllm/sched.py", "tests/test_sched.py"),
                  ("vllm/sched.py::Scheduler",))
    other = _pr(2, "b", ("vllm/sched.py", "tests/test_sched.py"),
                ("vllm/sched.py::Scheduler",))
    assert [(n.number, n.reason) for n in find_neighbours(subject, [other]).neighbours] == [
        (2, "same-file")]
