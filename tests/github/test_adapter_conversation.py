"""The conversation reads of the real adapter against the fake GitHub server: reviews,
review comments and issue comments (paged; asked again with their ETags, so an
unchanged page costs a 304 that the rate limit does not count) and linked issues."""

from __future__ import annotations

import pytest

from bot.github.protocol import NotFound
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
REVIEWS = "/repos/{owner}/{repo}/pulls/{number}/reviews"
REVIEW_COMMENTS = "/repos/{owner}/{repo}/pulls/{number}/comments"
ISSUE = "/repos/{owner}/{repo}/issues/{number}"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.add_repo(REPO)
    s.add_pull(REPO, 1, title="[Core] Fix", author="author", files=["vllm/core.py"])
    server.use(s)
    return s


@pytest.fixture
def url(server: FakeGitHubServer, state: FakeGitHubState) -> str:
    return server.url


def _statuses(state: FakeGitHubState, route: str) -> list[int]:
    return [c.status for c in state.calls if c.method == "GET" and c.route == route]


async def test_reviews_and_review_comments_keep_what_the_digest_reads(
    state: FakeGitHubState, url: str
) -> None:
    review = state.add_review(REPO, 1, "reviewer", "CHANGES_REQUESTED",
                              body="Can you add a test?", commit_id="a" * 40)
    state.add_review(REPO, 1, "ci-bot[bot]", "COMMENTED", body="lint ok", author_type="Bot")
    root = state.add_review_comment(REPO, 1, "reviewer", "Please add a test here.",
                                    path="vllm/core.py", line=7)
    state.add_review_comment(REPO, 1, "author", "Done.", path="vllm/core.py", line=7,
                             in_reply_to=root.id)
    async with make_factory(url).for_installation(1) as gh:
        reviews = await gh.list_reviews(REPO, 1)
        comments = await gh.list_review_comments(REPO, 1)

    assert [(r.id, r.author, r.state, r.body, r.commit_id, r.author_is_bot) for r in reviews] == [
        (review.id, "reviewer", "CHANGES_REQUESTED", "Can you add a test?", "a" * 40, False),
        (reviews[1].id, "ci-bot[bot]", "COMMENTED", "lint ok", state.pull(REPO, 1).head_sha,
         True),
    ]
    assert reviews[0].submitted_at is not None
    assert [(c.author, c.body, c.path, c.in_reply_to_id) for c in comments] == [
        ("reviewer", "Please add a test here.", "vllm/core.py", None),
        ("author", "Done.", "vllm/core.py", root.id),
    ]


async def test_unchanged_pages_are_answered_304_and_not_charged(
    state: FakeGitHubState, url: str
) -> None:
    for i in range(150):  # two pages of 100
        state.add_comment(REPO, 1, f"user{i % 7}", f"comment {i}")
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        first = await gh.list_comments(REPO, 1)
    remaining = state.rate_limit_remaining
    async with factory.for_installation(1) as gh:
        again = await gh.list_comments(REPO, 1)
        reviews = await gh.list_reviews(REPO, 1)
        reviews_again = await gh.list_reviews(REPO, 1)

    assert [c.body for c in again] == [c.body for c in first] == [f"comment {i}"
                                                                  for i in range(150)]
    assert reviews == reviews_again == []
    assert _statuses(state, COMMENTS) == [200, 200, 304, 304]
    assert _statuses(state, REVIEWS) == [200, 304]
    # Only the first reviews read was charged: every 304 is free.
    assert state.rate_limit_remaining == remaining - 1
    assert factory.kept_pages.hits == 3


async def test_a_changed_page_is_read_again(state: FakeGitHubState, url: str) -> None:
    state.add_comment(REPO, 1, "reviewer", "first")
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        assert [c.body for c in await gh.list_comments(REPO, 1)] == ["first"]
        state.add_comment(REPO, 1, "author", "second")
        assert [c.body for c in await gh.list_comments(REPO, 1)] == ["first", "second"]
    assert _statuses(state, COMMENTS) == [200, 200]


async def test_kept_pages_belong_to_their_credentials(state: FakeGitHubState, url: str) -> None:
    state.installations[2] = "vllm-project"
    state.add_comment(REPO, 1, "reviewer", "hello")
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        await gh.list_comments(REPO, 1)
    async with factory.for_installation(2) as gh:
        await gh.list_comments(REPO, 1)
    # Another installation's first read is a full one, never served from the first's.
    assert _statuses(state, COMMENTS) == [200, 200]


async def test_issue_reads_tell_open_merged_and_closed_unmerged(
    state: FakeGitHubState, url: str
) -> None:
    merged = state.add_pull(REPO, 5, title="Merged one", state="closed")
    merged.merged = True
    state.add_pull(REPO, 6, title="Abandoned attempt", state="closed", author="someone")
    state.add_issue(REPO, 7, "A bug report", state="closed")
    async with make_factory(url).for_installation(1) as gh:
        five, six, seven, one = [await gh.get_issue(REPO, n) for n in (5, 6, 7, 1)]
        with pytest.raises(NotFound):
            await gh.get_issue(REPO, 999)

    assert (five.title, five.state, five.is_pull, five.merged) == ("Merged one", "closed", True,
                                                                  True)
    assert (six.state, six.is_pull, six.merged, six.author) == ("closed", True, False, "someone")
    assert (seven.title, seven.is_pull, seven.merged) == ("A bug report", False, False)
    assert (one.state, one.is_pull) == ("open", True)
    assert state.count("GET", ISSUE) == 5


def _pages_read(state: FakeGitHubState, route: str) -> list[int]:
    """The `page` of each GET of `route`, in the order the adapter asked."""
    return [int(dict(p.split("=", 1) for p in c.query.split("&"))["page"])
            for c in state.calls if c.method == "GET" and c.route == route]


async def test_a_long_thread_is_read_first_page_then_newest_pages_back(
    state: FakeGitHubState, url: str
) -> None:
    for i in range(5_100):  # 51 pages of 100; the adapter reads 50
        state.add_comment(REPO, 1, "outsider", f"comment {i}")
    async with make_factory(url).for_installation(1) as gh:
        read = await gh.list_comments(REPO, 1)

    # The first page (the thread's start), then from the last page back: page 2 is the
    # one left out, never the newest.
    assert _pages_read(state, COMMENTS) == [1, *range(51, 2, -1)]
    bodies = [c.body for c in read]
    assert bodies == [f"comment {i}" for i in (*range(100), *range(200, 5_100))]


async def test_a_thread_that_grew_is_read_up_to_its_new_last_page(
    state: FakeGitHubState, url: str
) -> None:
    for i in range(1_050):  # 11 pages of review comments; the adapter reads 10
        state.add_review_comment(REPO, 1, "outsider", f"nit {i}")
    factory = make_factory(url)
    async with factory.for_installation(1) as gh:
        await gh.list_review_comments(REPO, 1)
    ask = state.add_review_comment(REPO, 1, "maint", "Can you add a unit test for this?")
    for i in range(100):
        state.add_review_comment(REPO, 1, "outsider", f"later {i}")
    state.calls.clear()
    async with factory.for_installation(1) as gh:
        read = await gh.list_review_comments(REPO, 1)

    # Page 1 is unchanged but its Link header is not: asked again, it shows 12 pages.
    assert _pages_read(state, REVIEW_COMMENTS) == [1, *range(12, 3, -1)]
    assert ask.id in {c.id for c in read}
    assert read[-1].body == "later 99"
    assert len(read) == 100 + 8 * 100 + 51  # page 1, pages 4-11, and the last page


async def test_a_short_thread_is_read_in_full_and_in_order(
    state: FakeGitHubState, url: str
) -> None:
    for i in range(250):
        state.add_comment(REPO, 1, "someone", f"comment {i}")
    async with make_factory(url).for_installation(1) as gh:
        read = await gh.list_comments(REPO, 1)
    assert _pages_read(state, COMMENTS) == [1, 3, 2]
    assert [c.body for c in read] == [f"comment {i}" for i in range(250)]
