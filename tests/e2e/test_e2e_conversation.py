"""The conversation through the real service process and the fake GitHub over HTTP
(issue 28): comment and review deliveries re-run the digest through the PR's coalesced
job; evidence posted later settles a risk with one edit; a reviewer's ask is shown once,
open, then answered; a superseded PR's title, state and objection appear; an outsider's
words never go out live."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from bot.core.render.conversation import _OWN_COMMENT
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.handler_env import COMPILE_FILES, UNTESTED_BODY
from tests.markdown_safety import live_markup
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    comment_event,
    count_by_route,
    e2e_state,
    pr_event,
    review_comment_event,
    review_event,
    service_for,
    writes_for,
)

pytestmark = pytest.mark.slow

AUTHOR = "Codertocat"  # the author of every fixture PR payload
COMMENTS = "/repos/{owner}/{repo}/issues/{number}/comments"
EDIT = ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
CREATE = ("POST", COMMENTS)
LM_EVAL = (
    "gsm8k with compilation on, H100:\n\n"
    "|Tasks|Version|Filter|n-shot|Metric|Value|Stderr|\n"
    "|-----|------:|------|-----:|------|----:|-----:|\n"
    "|gsm8k|3|strict-match|5|exact_match|0.7801|± 0.0114|\n"
)
CHAT_FILE = FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                     patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n")
DOCUMENTED_BODY = (
    "## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
)


@pytest.fixture(scope="module")
def state() -> FakeGitHubState:
    fake = e2e_state()
    fake.set_permission(REPO, "maint", "maintain")
    fake.set_permission(REPO, "reviewer", "write")
    return fake


@pytest.fixture(scope="module")
def svc(state: FakeGitHubState,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    with FakeGitHubServer(state) as url, \
            service_for(state, url, tmp_path_factory.mktemp("e2e-conversation")) as service:
        yield service


def _digest(state: FakeGitHubState, number: int) -> str:
    bodies = state.bot_comments(REPO, number, BOT)
    assert len(bodies) == 1, bodies
    return bodies[0]


def _writes(state: FakeGitHubState) -> dict[tuple[str, str], int]:
    """The comment writes the service made (PR routes and comment-id routes alike)."""
    return dict(count_by_route(c for c in list(state.calls)
                               if (c.method, c.route) in (CREATE, EDIT)))


def _open(state: FakeGitHubState, svc: ServiceProcess, number: int, **pull: object) -> None:
    state.add_pull(REPO, number, author=AUTHOR, **pull)  # type: ignore[arg-type]
    assert svc.send("pull_request", pr_event("opened", number)).status_code == 202
    svc.wait_for_job(number)


def test_lm_eval_numbers_in_a_comment_clear_missing_gpu_eval_with_one_edit(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 301
    before = _writes(state)
    _open(state, svc, number, title="[torch.compile] Fix graph break", body=UNTESTED_BODY,
          files=list(COMPILE_FILES))
    assert "**missing-gpu-eval**" in _digest(state, number)

    comment = state.add_comment(REPO, number, AUTHOR, LM_EVAL)
    reply = svc.send("issue_comment", comment_event(number, comment.id, LM_EVAL, author=AUTHOR))
    assert reply.status_code == 202
    assert reply.json()["ok"]
    svc.wait_for_job(number, count=2)
    # The same delivery again, and the same comment in a fresh delivery: nothing changes.
    svc.send("issue_comment", comment_event(number, comment.id, LM_EVAL, author=AUTHOR))
    svc.wait_for_job(number, count=3)

    body = _digest(state, number)
    assert "**missing-gpu-eval**" not in body.split("**Since the description**")[0]
    assert "✅ **missing-gpu-eval** cleared by @\u2060Codertocat" in body
    assert f"#issuecomment-{comment.id})" in body
    after = _writes(state)
    assert {k: after.get(k, 0) - before.get(k, 0) for k in (CREATE, EDIT)} == {CREATE: 1, EDIT: 1}


def test_a_review_asking_for_tests_is_an_open_ask_until_the_author_answers(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 302
    _open(state, svc, number, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
          files=[CHAT_FILE])
    assert "**missing-tests**" in _digest(state, number)

    ask = "Looks reasonable. Can you add a unit test for the new branch?"
    review = state.add_review(REPO, number, "reviewer", "CHANGES_REQUESTED", body=ask)
    sent = svc.send("pull_request_review",
                    review_event(number, review.id, ask, author="reviewer",
                                 state="changes_requested"))
    assert sent.status_code == 202
    assert sent.json()["ok"]
    svc.wait_for_job(number, count=2)
    body = _digest(state, number)
    assert "**missing-tests**" not in body
    assert "**tests** — asked by @\u2060reviewer — open" in body
    assert f"#pullrequestreview-{review.id})" in body

    answer = "Added a unit test in tests/entrypoints/openai/test_chat.py."
    comment = state.add_comment(REPO, number, AUTHOR, answer)
    svc.send("issue_comment", comment_event(number, comment.id, answer, author=AUTHOR))
    svc.wait_for_job(number, count=3)
    body = _digest(state, number)
    assert "**tests** — asked by @\u2060reviewer — answered ([reply](" in body
    assert f"#issuecomment-{comment.id}))" in body


def test_a_superseded_prs_title_state_and_objection_appear(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    state.add_pull(REPO, 300, title="Wrap the sync check at the processor layer",
                   author=AUTHOR, state="closed")
    state.add_review(REPO, 300, "maint", "CHANGES_REQUESTED",
                     body="We should not wrap at the processor layer. Dynamo traces it.")
    state.add_comment(REPO, 300, "bystander", "Is this still needed?")
    number = 303
    _open(state, svc, number, title="[torch.compile] Fix graph break",
          body="Supersedes #300.\n\n" + UNTESTED_BODY, files=list(COMPILE_FILES))
    assert ("- supersedes \\#\u2060300 (Wrap the sync check at the processor layer) — "
            "closed unmerged · @\u2060maint: “We should not wrap at the processor layer.”"
            ) in _digest(state, number)


def test_nothing_from_an_outsiders_comment_goes_out_live(
    state: FakeGitHubState, svc: ServiceProcess
) -> None:
    number = 304
    _open(state, svc, number, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
          files=[CHAT_FILE])
    hostile = ("@vllm-project/maintainers can you add tests <img src=x onerror=alert(1)> "
               "[click](https://evil.example) ![x](https://evil.example/a.png) #1 "
               "https://evil.example <!-- --> <details>")
    comment = state.add_review_comment(REPO, number, "stranger", hostile)
    svc.send("pull_request_review_comment",
             review_comment_event(number, comment.id, hostile, author="stranger"))
    svc.wait_for_job(number, count=2)
    body = _digest(state, number)
    section = body[body.index("**Since the description**"):]
    section = section[:section.index("\n\n")]
    assert "asked by @\u2060stranger" in section
    own = re.compile(r"\[(?:comment|review|review comment|reply)\]\(" + _OWN_COMMENT.pattern
                     + r"\)")
    assert len(own.findall(section)) == 1
    assert live_markup(own.sub("", section)) == []


def test_bot_comments_run_nothing(state: FakeGitHubState, svc: ServiceProcess) -> None:
    number = 305
    _open(state, svc, number, title="[Frontend] Tidy chat", body=DOCUMENTED_BODY,
          files=[CHAT_FILE])
    writes = writes_for(state, number)
    text = "Please add tests and rebase."
    comment = state.add_comment(REPO, number, "ci-helper[bot]", text, author_type="Bot")
    reply = svc.send("issue_comment", comment_event(number, comment.id, text,
                                                    author="ci-helper[bot]", author_type="Bot"))
    assert reply.json() == {"ignored": "comment by a bot"}
    time.sleep(svc.settle_seconds + 0.7)
    assert len(svc.job_records(pr=number)) == 1
    assert writes_for(state, number) == writes
