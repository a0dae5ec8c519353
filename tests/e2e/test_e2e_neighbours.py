"""Neighbours through the real service process and the fake GitHub over HTTP (issue 42):
a second PR changing the same function is named in its digest, and the first PR's digest
is edited (never posted again) when the second opens; a PR fixing the same issue is
named as competing, an unrelated one is not; an open dependency is named as open; GitHub's
`mergeable_state: dirty` says there are conflicts, and a base branch that moved far since
the PR's merge base is said. The calls the part adds are counted in the job's `neighbours`
line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.core.render.escape import WORD_JOINER
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import UNTESTED_BODY
from tests.markdown_safety import live_markup
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    count_by_route,
    e2e_state,
    pr_event,
    service_for,
    wait_until,
    writes_for,
)

pytestmark = pytest.mark.slow

COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
CREATE = ("POST", COMMENTS)
SHARED_FUNCTION = FakeFile(
    "vllm/compilation/decorators.py", additions=12, deletions=2,
    patch="@@ -10,3 +10,4 @@ def support_torch_compile(cls):\n     x = 1\n+    y = 2\n")
OTHER_FILE = FakeFile("vllm/utils/gpu_sync_debug.py", additions=40, deletions=3,
                      patch="@@ -1,2 +1,3 @@ def _active_check_mode():\n+    z = 3\n")
# Another PR's title reaches this PR's digest: it must not ping, link or open HTML there.
HOSTILE_TITLE = "Speed up compile @maintainers #1 [x](https://e.vil) <img src=x>"
UNRELATED = FakeFile("vllm/lora/layers.py", additions=30, deletions=2,
                     patch="@@ -5,2 +5,3 @@ def apply_lora():\n+    w = 4\n")


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    return e2e_state()


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with FakeGitHubServer(state) as url, \
            service_for(state, url, tmp_path_factory.mktemp("e2e-neighbours")) as service:
        yield service


def _digest(state: FakeGitHubState, number: int) -> str:
    bodies = state.bot_comments(REPO, number, BOT)
    assert len(bodies) == 1, bodies
    # As a reader sees it: without the joiners and escapes that keep `#N` from linking.
    return bodies[0].replace(WORD_JOINER, "").replace("\\#", "#")


def _creates(state: FakeGitHubState, number: int) -> int:
    return count_by_route(writes_for(state, number))[CREATE]


def test_the_pr_changing_the_same_function_is_named_and_the_first_digest_edited(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    state.add_pull(REPO, 70, author="Codertocat", title="Groundwork", files=[UNRELATED])
    first = state.add_pull(
        REPO, 71, author="Codertocat", title="Fix a graph break",
        body="Depends on #70.\n\nFixes #900\n\n" + UNTESTED_BODY,
        files=[SHARED_FUNCTION, OTHER_FILE])
    first.mergeable_state = "dirty"
    first.base_sha = "e" * 40
    state.repos[REPO].base_moved[first.base_sha] = 321
    svc.send("pull_request", pr_event("opened", 71, author="Codertocat"))
    wait_until(lambda: len(state.bot_comments(REPO, 71, BOT)) == 1, 15, message="digest 71")
    svc.wait_for_job(pr=71, timeout=15)
    text = _digest(state, 71)
    assert "Conflicts with its base branch" in text
    assert "#70 (depends on): still open" in text
    assert "has moved 321 commits since this PR's merge base" in text
    assert "support_torch_compile" not in text.split("**Other open PRs**")[-1]

    state.add_pull(REPO, 72, author="other-dev", title=HOSTILE_TITLE,
                   body=UNTESTED_BODY, files=[SHARED_FUNCTION])
    svc.send("pull_request", pr_event("opened", 72, author="other-dev"))
    wait_until(lambda: len(state.bot_comments(REPO, 72, BOT)) == 1, 15, message="digest 72")
    second = _digest(state, 72)
    assert "#71" in second
    assert "merge base" not in second  # its base is the branch's head
    assert "`support_torch_compile`" in second
    # 72 opening moved 71's neighbours: 71's digest is edited to name 72, not re-posted.
    wait_until(lambda: "#72" in _digest(state, 71), 15, message="71 edited to name 72")
    assert "`support_torch_compile`" in _digest(state, 71)
    assert _creates(state, 71) == 1
    section = state.bot_comments(REPO, 71, BOT)[0].split("**Other open PRs**")[1].split("\n\n")[0]
    assert "Speed up compile" in section
    assert live_markup(section) == []
    compares = "/repos/{owner}/{repo}/compare/{basehead}"

    def ours() -> list[dict[str, object]]:
        return [r for r in svc.log_records()
                if r.get("msg") == "neighbours" and r.get("pr") in (71, 72)]

    # 71 opened, 72 opened, 71 edited: each job's line is written after its calls.
    wait_until(lambda: len(ours()) == state.count("GET", compares) >= 3, 15,
               message="a neighbours line per compare")
    # No call per neighbour: they come from the store. #70's state was read once, by the
    # linked work's cached read, which the dependency reuses; the one call is the compare.
    assert [r["github_calls"] for r in ours()] == [1] * len(ours())
    assert sum(1 for c in list(state.calls) if c.path.endswith("/issues/70")) == 1


def test_the_same_issue_competes_and_an_unrelated_pr_is_not_named(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    state.add_pull(REPO, 80, author="third-dev", title="Unrelated LoRA work",
                   body=UNTESTED_BODY, files=[UNRELATED])
    svc.send("pull_request", pr_event("opened", 80, author="third-dev"))
    svc.wait_for_job(pr=80, timeout=15)
    state.add_pull(REPO, 81, author="fourth-dev", title="Another fix",
                   body="Fixes #900\n\n" + UNTESTED_BODY, files=[UNRELATED])
    svc.send("pull_request", pr_event("opened", 81, author="fourth-dev"))
    wait_until(lambda: len(state.bot_comments(REPO, 81, BOT)) == 1, 15, message="digest 81")
    text = _digest(state, 81)
    assert "#71" in text
    assert "says it fixes the same issue #900: competing" in text
    assert "#80" in text  # another author's PR changing `apply_lora` too
    assert "#72" not in text  # shares no file, function or issue with 81
