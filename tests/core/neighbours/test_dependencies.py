"""find_dependencies: what a PR says it waits for."""

from __future__ import annotations

from bot.core.neighbours.dependencies import MAX_DEPENDENCIES, find_dependencies


def _read(body: str, comments: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    return [(d.number, d.cue) for d in find_dependencies(body, comments, own=1)]


def test_each_cue_is_read() -> None:
    body = ("Depends on #10.\nStacked on top of #11\nBlocked by: PR #12\n"
            "Merge after #13 lands.")
    assert _read(body) == [(10, "depends-on"), (11, "stacked-on"), (12, "blocked-by"),
                           (13, "after")]


def test_after_in_plain_prose_is_not_a_dependency() -> None:
    assert _read("After #123 the test started failing on H100.") == []


def test_the_authors_comments_count_and_code_fences_do_not() -> None:
    body = "```\ndepends on #44\n```"
    assert _read(body, ("FYI this depends on #45",)) == [(45, "depends-on")]


def test_the_pr_itself_is_not_its_own_dependency_and_the_list_is_bounded() -> None:
    assert _read("depends on #1") == []
    many = "\n".join(f"depends on #{n}" for n in range(100, 120))
    assert len(_read(many)) == MAX_DEPENDENCIES
