"""The shared fake GitHub: its two front ends agree, and its JSON is what githubkit expects."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from githubkit_schemas.latest.models import (
    CombinedCommitStatus,
    ContentFile,
    DiffEntry,
    InstallationToken,
    Integration,
    IssueComment,
    Label,
    PullRequest,
    PullRequestReview,
    PullRequestReviewComment,
    PullRequestSimple,
    Reaction,
    RepositoryCollaboratorPermission,
)
from githubkit_schemas.latest.models import Issue as GitHubIssue
from pydantic import BaseModel

from bot.github.protocol import (
    GitHubAPI,
    GitHubError,
    NotFound,
    RateLimited,
    Unprocessable,
)
from bot.github.session import GitHubSessionFactory
from tests.fakes import responses
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"


def seeded_state() -> FakeGitHubState:
    state = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    state.add_repo(REPO, files={"rules/ci.yaml": "id: ci\n"})
    state.add_pull(REPO, 1, title="[CI] Speed up", body="Why: faster", author="dev",
                   labels=["v1", "ci/build"],
                   files=[FakeFile(".buildkite/test.yaml", "modified", 3, 1),
                          FakeFile("docs/new.md", "added", 10, 0, None),
                          FakeFile("vllm/x.py", "renamed", 0, 0, None, "vllm/old.py")])
    state.add_comment(REPO, 1, "dev", "please review")
    state.add_review(REPO, 1, "reviewer", "COMMENTED")
    state.set_permission(REPO, "maint", "write", "maintain")
    # A Buildkite build on the head: its own status and 130 jobs' (two pages of 100).
    head = state.pull(REPO, 1).head_sha
    state.set_status(REPO, head, "buildkite/ci/pr", "pending", "Build #7 is running")
    for job in range(130):
        state.set_status(REPO, head, f"buildkite/ci/pr/job-{job}",
                         "failure" if job == 3 else "success", None,
                         f"https://buildkite.com/vllm/ci/builds/7#{job}")
    return state


def snapshot(state: FakeGitHubState) -> dict[str, Any]:
    pull = state.pull(REPO, 1)
    return {
        "comments": [(c.author, c.body, c.reactions) for c in state.comments_on(REPO, 1)],
        "labels": list(pull.labels),
        "requested": (list(pull.requested_users), list(pull.requested_teams)),
    }


async def scenario(gh: GitHubAPI) -> list[Any]:
    out: list[Any] = []
    pull = await gh.get_pull(REPO, 1)
    out.append(pull.model_dump(exclude={"updated_at", "created_at"}))
    out.append([f.model_dump() for f in await gh.list_files(REPO, 1)])
    mine = await gh.create_comment(REPO, 1, "<!-- pr-digest sha=abc -->\ndigest v1")
    out.append((mine.author, mine.body))
    await gh.update_comment(REPO, mine.id, "<!-- pr-digest sha=def -->\ndigest v2")
    await gh.add_reaction(REPO, mine.id, "rocket")
    await gh.add_labels(REPO, 1, ["documentation"])
    await gh.remove_label(REPO, 1, "ci/build")
    await gh.request_reviewers(REPO, 1, ["alice"], ["ci-team"])
    out.append([(c.author, c.body) for c in await gh.list_comments(REPO, 1)])
    out.append(await gh.list_reviewers_who_reviewed(REPO, 1))
    out.append([await gh.get_permission(REPO, u) for u in ("maint", "nobody")])
    out.append([await gh.get_default_branch_file(REPO, p) for p in ("rules/ci.yaml", "no")])
    out.append([p.number for p in await gh.list_open_pulls(REPO)])
    combined = await gh.get_combined_status(REPO, pull.head_sha)
    out.append((combined.state, combined.total_count, combined.complete,
                sorted((s.context, s.state, s.description) for s in combined.statuses)))
    first_page = await gh.get_combined_status(REPO, pull.head_sha, max_pages=1)
    out.append((len(first_page.statuses), first_page.complete))
    out.append([p.number for p in await gh.list_pulls_for_commit(REPO, pull.head_sha)])
    for failing in (gh.get_pull(REPO, 404), gh.create_comment(REPO, 1, "x" * 65_537),
                    gh.request_reviewers(REPO, 1, ["dev"], [])):
        try:
            await failing
        except GitHubError as exc:
            out.append((type(exc).__name__, exc.status))
    return out


@pytest.fixture
def http_state() -> FakeGitHubState:
    return seeded_state()


@pytest.fixture
def http_url(http_state: FakeGitHubState) -> Iterator[str]:
    with FakeGitHubServer(http_state) as url:
        yield url


def factory_for(url: str) -> GitHubSessionFactory:
    return make_factory(url, write_interval_seconds=0.0)


async def test_memory_and_http_fakes_agree(http_state: FakeGitHubState, http_url: str) -> None:
    memory_state = seeded_state()
    memory_out = await scenario(MemoryGitHub(memory_state))
    async with factory_for(http_url).for_installation(1) as gh:
        http_out = await scenario(gh)

    assert memory_out == http_out
    assert snapshot(memory_state) == snapshot(http_state)
    assert snapshot(http_state)["comments"][-1] == (
        "pr-digest[bot]", "<!-- pr-digest sha=def -->\ndigest v2",
        [("pr-digest[bot]", "rocket")])
    assert memory_out[-3:] == [("NotFound", 404), ("Unprocessable", 422),
                               ("Unprocessable", 422)]
    state, total, complete, statuses = memory_out[8]
    assert (state, total, complete, len(statuses)) == ("failure", 131, True, 131)
    assert ("buildkite/ci/pr", "pending", "Build #7 is running") in statuses
    assert memory_out[9] == (100, False)  # one page of two: what was not read is said
    assert memory_out[10] == [1]
    # Two pages for the whole combined status, one for the first page only.
    route = "/repos/{owner}/{repo}/commits/{ref}/status"
    assert memory_state.count("GET", route) == http_state.count("GET", route) == 3


async def test_both_fakes_model_a_lost_response_the_same(http_state: FakeGitHubState,
                                                         http_url: str) -> None:
    memory_state = seeded_state()
    for state in (memory_state, http_state):
        state.fail_next("POST", COMMENTS, 502, applied=True)
        state.secondary_rate_limit_next("GET", "/repos/*/pulls/1", retry_after=3600)
    memory = MemoryGitHub(memory_state)
    async with factory_for(http_url).for_installation(1) as adapter:
        for gh in (memory, adapter):
            with pytest.raises(GitHubError) as failed:
                await gh.create_comment(REPO, 1, "digest")
            assert failed.value.status == 502
            with pytest.raises(RateLimited) as limited:
                await gh.get_pull(REPO, 1)
            assert limited.value.retry_after == 3600
    assert snapshot(memory_state) == snapshot(http_state)
    assert memory_state.bot_comments(REPO, 1) == ["digest"]
    assert memory_state.count("POST", COMMENTS) == http_state.count("POST", COMMENTS) == 1


async def test_http_fake_rejects_missing_or_bad_credentials(http_url: str) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=http_url) as client:
        assert (await client.get("/repos/vllm-project/vllm/pulls/1")).status_code == 401
        bad = {"Authorization": "token ghs_not_issued"}
        assert (await client.get("/repos/vllm-project/vllm/pulls/1",
                                 headers=bad)).status_code == 401
        assert (await client.get("/app", headers={"Authorization": "Bearer x.y.z"})
                ).status_code == 401


async def test_http_fake_pagination_and_rate_headers(http_state: FakeGitHubState,
                                                     http_url: str) -> None:
    import httpx

    http_state.add_pull(REPO, 2, files=[f"f{i}" for i in range(5)])
    token, _ = http_state.issue_token(1)
    async with httpx.AsyncClient(base_url=http_url,
                                 headers={"Authorization": f"token {token}"}) as client:
        first = await client.get(f"/repos/{REPO}/pulls/2/files", params={"per_page": 2})
        second = await client.get(f"/repos/{REPO}/pulls/2/files",
                                  params={"per_page": 2, "page": 3})
    assert [f["filename"] for f in first.json()] == ["f0", "f1"]
    assert 'page=2>; rel="next"' in first.headers["link"]
    assert 'page=3>; rel="last"' in first.headers["link"]
    assert [f["filename"] for f in second.json()] == ["f4"]
    assert "next" not in second.headers["link"]
    used = int(second.headers["x-ratelimit-used"])
    assert int(second.headers["x-ratelimit-remaining"]) == 5000 - used
    assert int(first.headers["x-ratelimit-remaining"]) == int(
        second.headers["x-ratelimit-remaining"]) + 1
    assert second.headers["x-ratelimit-resource"] == "core"


def test_response_builders_parse_with_githubkit_models() -> None:
    state = seeded_state()
    state.add_pull(REPO, 9, requested_users=["a"], requested_teams=["t"], labels=["x"])
    pull = state.pull(REPO, 9)
    repo = state.repos[REPO]
    comment = state.comments_on(REPO, 1)[0]
    now = datetime(2026, 1, 2, tzinfo=UTC)
    cases: list[tuple[type[BaseModel], dict[str, Any]]] = [
        (PullRequest, responses.pull_request(pull, repo)),
        (PullRequestSimple, responses.pull_request_simple(pull, repo)),
        (DiffEntry, responses.diff_entry(REPO, FakeFile("a.py"), pull.head_sha)),
        (IssueComment, responses.issue_comment(comment)),
        (Label, responses.label(REPO, "ci")),
        (Reaction, responses.reaction("pr-digest[bot]", "eyes", 1, now)),
        (PullRequestReview, responses.review(REPO, 9, state.add_review(REPO, 9, "r"))),
        (PullRequestReview, responses.review(REPO, 9, state.add_review(
            REPO, 9, "b[bot]", "COMMENTED", body="x", author_type="Bot"))),
        (PullRequestReviewComment, responses.review_comment(state.add_review_comment(
            REPO, 9, "r", "Please add a test.", in_reply_to=3))),
        (GitHubIssue, responses.issue(REPO, pull)),
        (GitHubIssue, responses.issue(REPO, state.add_issue(REPO, 77, "A bug", state="closed"))),
        (RepositoryCollaboratorPermission,
         responses.collaborator_permission("m", "write", "maintain")),
        (ContentFile, responses.content_file(REPO, "a/b.yml", "k: v\n", "main")),
        (Integration, responses.integration(4242, "pr-digest")),
        (InstallationToken, responses.installation_token("ghs_x", now)),
        (CombinedCommitStatus, responses.combined_status(
            repo, pull.head_sha, "pending",
            [state.set_status(REPO, pull.head_sha, "ci/x", "success"),
             state.set_status(REPO, pull.head_sha, "ci/y", "pending", "waiting", "https://ci")],
            2)),
    ]
    for model, data in cases:
        parsed = model.model_validate(data)
        assert isinstance(parsed, model)
    parsed_pull = PullRequest.model_validate(cases[0][1])
    teams = parsed_pull.requested_teams
    assert isinstance(teams, list)
    assert [t.slug for t in teams] == ["t"]


async def test_memory_fake_faults() -> None:
    state = seeded_state()
    gh = MemoryGitHub(state, timeout=0.05)
    state.slow_next("GET", "/repos/{owner}/{repo}/pulls/{number}", 1.0)
    with pytest.raises(GitHubError, match="timed out"):
        await gh.get_pull(REPO, 1)
    state.fail_next("PATCH", "*", 500)
    with pytest.raises(GitHubError) as info:
        await gh.update_comment(REPO, state.comments_on(REPO, 1)[0].id, "edited")
    assert info.value.status == 500
    assert state.comments_on(REPO, 1)[0].body == "please review"
    with pytest.raises(NotFound):
        await gh.update_comment(REPO, 1, "no such comment")
    with pytest.raises(Unprocessable):
        await gh.request_reviewers(REPO, 1, ["dev"], [])
    state.rate_limit_remaining = 0
    with pytest.raises(RateLimited) as limited:
        await gh.list_comments(REPO, 1)
    assert limited.value.status == 403


async def test_fail_every_nth_is_reproducible() -> None:
    outcomes: list[list[bool]] = []
    for _ in range(2):
        state = seeded_state()
        state.fail_every(3)
        state.fail_randomly(0.3, status=503, methods=["POST"])
        gh = MemoryGitHub(state)
        run: list[bool] = []
        for _ in range(6):
            try:
                await gh.get_pull(REPO, 1)
                run.append(True)
            except GitHubError:
                run.append(False)
        for _ in range(10):
            try:
                await gh.add_labels(REPO, 1, ["x"])
                run.append(True)
            except GitHubError:
                run.append(False)
        outcomes.append(run)
    assert outcomes[0][:6] == [True, True, False, True, True, False]
    assert outcomes[0] == outcomes[1]
    assert False in outcomes[0][6:]


def test_state_helpers() -> None:
    state = seeded_state()
    state.add_pull(REPO, 2, requested_users=["alice"])
    state.add_pull(REPO, 3, requested_users=["alice"], state="closed")
    assert state.open_review_requests("alice") == 1
    state.create_comment(REPO, 1, "pr-digest[bot]", "mine")
    assert state.bot_comments(REPO, 1) == ["mine"]
    assert [c.author for c in state.comments_on(REPO, 1)] == ["dev", "pr-digest[bot]"]
