"""Issue 31 (observability): every GitHub call the adapter makes is counted under its
templated route, never `other`, and a call that got no answer (refused, DNS, timed
out) is counted too, with status `error`. Real adapter, fake GitHub over HTTP; the
assertions read the /metrics text."""

from __future__ import annotations

import inspect
import socket
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bot.github.adapter import GitHubKitAdapter
from bot.github.protocol import GitHubAPI, GitHubError, RepositoryArchive
from bot.github.retry import ROUTE_TEMPLATES, template_path
from bot.observe.metrics import Metrics
from tests.fakes.github_http import ROUTES, FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

REPO = "vllm-project/vllm"
PULL = "/repos/{owner}/{repo}/pulls/{number}"
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
TARBALL = "/repos/{owner}/{repo}/tarball/{ref}"
BASE = "e" * 40
# git's own SHA of the blob "* @alice\n"
OWNERS_BLOB = "5bb02230eb23687fb3fc24b75d2c4183e6c86f71"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM)
    s.installations = {1: "vllm-project"}
    repo = s.add_repo(REPO, files={".github/pr-digest.yaml": "rules: {}\n"})
    repo.tarball = b"\x1f\x8b" + b"\0" * 300
    s.add_commit(REPO, {".github/CODEOWNERS": "* @alice\n"}, sha=BASE)
    s.add_pull(REPO, 1, title="[Core] Fix", files=["vllm/core.py"], labels=["v1"])
    s.add_review(REPO, 1, "alice")
    s.set_permission(REPO, "alice", "write")
    server.use(s)
    return s


def github_calls(metrics: Metrics) -> Counter[tuple[str, str]]:
    """`(endpoint, status) -> count` as the /metrics text states it."""
    text = generate_latest(metrics.registry).decode()
    found: Counter[tuple[str, str]] = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "digest_github_calls_total":
                found[(sample.labels["endpoint"], sample.labels["status"])] += int(sample.value)
    return found


def _public_methods(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, callable) if not name.startswith("_")}


async def _read_tarball(gh: GitHubKitAdapter, comment_id: int) -> None:
    head = await gh.default_branch_head(REPO)
    async with gh.tarball(REPO, head.sha) as chunks:
        async for _ in chunks:
            pass


# One call of every method the adapter has (the protocols' and anything else public),
# given a comment of the bot's to work on.
async def _update_check_run(gh: GitHubKitAdapter, _: int) -> None:
    run = await gh.create_check_run(REPO, f"{2:040x}", "pr-digest", "title", "summary")
    await gh.update_check_run(REPO, run.id, "title", "edited")


CALLS: dict[str, Callable[[GitHubKitAdapter, int], Awaitable[Any]]] = {
    "get_pull": lambda gh, _: gh.get_pull(REPO, 1),
    "list_files": lambda gh, _: gh.list_files(REPO, 1),
    "list_comments": lambda gh, _: gh.list_comments(REPO, 1),
    "create_comment": lambda gh, _: gh.create_comment(REPO, 1, "hello"),
    "update_comment": lambda gh, cid: gh.update_comment(REPO, cid, "edited"),
    "add_reaction": lambda gh, cid: gh.add_reaction(REPO, cid, "eyes"),
    "delete_comment": lambda gh, cid: gh.delete_comment(REPO, cid),
    "add_labels": lambda gh, _: gh.add_labels(REPO, 1, ["ci/build"]),
    "remove_label": lambda gh, _: gh.remove_label(REPO, 1, "ci/build"),
    "request_reviewers": lambda gh, _: gh.request_reviewers(REPO, 1, ["alice"], []),
    "list_reviewers_who_reviewed": lambda gh, _: gh.list_reviewers_who_reviewed(REPO, 1),
    "list_reviews": lambda gh, _: gh.list_reviews(REPO, 1),
    "list_review_comments": lambda gh, _: gh.list_review_comments(REPO, 1),
    "get_issue": lambda gh, _: gh.get_issue(REPO, 1),
    "get_permission": lambda gh, _: gh.get_permission(REPO, "alice"),
    "get_default_branch_file": lambda gh, _: gh.get_default_branch_file(
        REPO, ".github/pr-digest.yaml"),
    "list_open_pulls": lambda gh, _: gh.list_open_pulls(REPO),
    "commits_ahead": lambda gh, _: gh.commits_ahead(REPO, BASE, "main"),
    "get_tree": lambda gh, _: gh.get_tree(REPO, BASE),
    "get_blob": lambda gh, _: gh.get_blob(REPO, OWNERS_BLOB),
    "get_combined_status": lambda gh, _: gh.get_combined_status(REPO, f"{1:040x}"),
    "list_pulls_for_commit": lambda gh, _: gh.list_pulls_for_commit(REPO, f"{1:040x}"),
    "default_branch_head": lambda gh, _: gh.default_branch_head(REPO),
    "tarball": _read_tarball,
    "list_check_runs": lambda gh, _: gh.list_check_runs(REPO, f"{1:040x}", "pr-digest"),
    "create_check_run": lambda gh, _: gh.create_check_run(
        REPO, f"{1:040x}", "pr-digest", "title", "summary"),
    "update_check_run": _update_check_run,
}


def test_the_list_names_every_method_of_the_protocols_and_the_adapter() -> None:
    protocol = _public_methods(GitHubAPI) | _public_methods(RepositoryArchive)
    assert _public_methods(GitHubKitAdapter) == protocol
    assert set(CALLS) == protocol


async def test_every_adapter_call_is_labelled_by_its_route_never_other(
    state: FakeGitHubState, server: FakeGitHubServer
) -> None:
    metrics = Metrics()
    factory = make_factory(server.url, metrics)
    async with factory.for_installation(1) as gh:
        comment_id = (await gh.create_comment(REPO, 1, "first")).id
        for call in CALLS.values():
            await call(gh, comment_id)
    # And the App-level calls the session makes itself.
    assert await factory.installation_for_repo(REPO) == 1
    assert await factory.installation_repositories() == [(1, REPO)]
    assert await factory.bot_login() == "pr-digest[bot]"

    calls = github_calls(metrics)
    endpoints = {endpoint for endpoint, _ in calls}
    assert [e for e in endpoints if "other" in e] == []
    assert {
        "GET /repos/{owner}/{repo}",
        "GET /repos/{owner}/{repo}/commits/{ref}",
        "GET /repos/{owner}/{repo}/commits/{ref}/status",
        "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls",
        f"GET {TARBALL}",
        f"GET {TARBALL} (redirect)",  # the archive host's answer, named by what we called
        f"GET {PULL}",
        "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}",
        "DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}",
        "GET /app",
        "GET /app/installations",
        "GET /installation/repositories",
        "GET /repos/{owner}/{repo}/installation",
    } <= endpoints
    assert calls[(f"GET {TARBALL}", "302")] == 1
    assert calls[(f"GET {TARBALL} (redirect)", "200")] == 1
    # Every request the fake answered is counted exactly once.
    assert sum(calls.values()) == len(state.calls)


def _concrete(route: str) -> str:
    values = {"owner": "vllm-project", "repo": "vllm", "number": "7", "comment_id": "99",
              "installation_id": "3", "name": "ci/build", "path": "docs/a b.md",
              "username": "alice", "ref": "release/v0.9", "check_run_id": "42"}
    for key, value in values.items():
        route = route.replace(f"{{{key}:int}}", value).replace(f"{{{key}:path}}", value)
        route = route.replace(f"{{{key}}}", value)
    return route


@pytest.mark.parametrize(("method", "route"), [(m, r) for m, r, _, _ in ROUTES])
def test_every_route_the_fake_serves_has_its_own_template(method: str, route: str) -> None:
    # The fake serves exactly GitHub's routes the adapter and the session call.
    template = route.replace(":int}", "}").replace(":path}", "}")
    assert template in ROUTE_TEMPLATES
    assert template_path(_concrete(route)) == template
    assert template_path("/api/v3" + _concrete(route), "/api/v3") == template


# --- calls that got no answer ------------------------------------------------------


@pytest.fixture
def refused_url() -> Iterator[str]:
    """A loopback port that is bound but not listening: every connect is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("target", ["refused", "dns"])
async def test_a_call_with_no_answer_is_counted_as_error(target: str, refused_url: str
                                                         ) -> None:
    url = refused_url if target == "refused" else "http://no-such-host.invalid"
    metrics = Metrics()
    factory = make_factory(url, metrics, github_token="ghp_" + "t" * 36)
    async with factory.for_token() as gh:
        with pytest.raises(GitHubError):
            await gh.get_pull(REPO, 1)  # a read: tried 3 times
        with pytest.raises(GitHubError):
            await gh.create_comment(REPO, 1, "x")  # a write: never retried
    assert github_calls(metrics) == {(f"GET {PULL}", "error"): 3,
                                     (f"POST {COMMENTS}", "error"): 1}


async def test_a_timed_out_call_is_counted_as_error_and_its_retry_by_status(
    state: FakeGitHubState, server: FakeGitHubServer
) -> None:
    metrics = Metrics()
    async with make_factory(server.url, metrics, http_timeout_seconds=0.2
                            ).for_installation(1) as gh:
        state.slow_next("GET", PULL, 1.0)
        assert (await gh.get_pull(REPO, 1)).number == 1
    calls = github_calls(metrics)
    assert calls[(f"GET {PULL}", "error")] == 1
    assert calls[(f"GET {PULL}", "200")] == 1
