"""The real `digest-bot serve` process: a signed default-branch `push` makes the worker
download the tarball from the fake GitHub (hostile members included), and the next
digest shows the code around the change. Nothing in the archive reaches the disk."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.repo_index_tarballs import TOP, members_tarball
from tests.repo_index_tree import PR_EVENT, PR_FILES, TREE
from tests.service_harness import (
    BOT,
    INSTALLATION_ID,
    REPO,
    REPO_ROOT,
    ServiceProcess,
    e2e_state,
    pr_event,
    wait_until,
)

pytestmark = pytest.mark.slow

HEAD = "e2e" + "0" * 37
ESCAPE = f"escape_{uuid.uuid4().hex}.py"


def _push(ref: str = "refs/heads/main") -> dict[str, Any]:
    return {
        "ref": ref, "before": "0" * 40, "after": HEAD.replace("e", "f"), "created": False,
        "deleted": False, "commits": [],
        "repository": {"full_name": REPO, "default_branch": "main"},
        "installation": {"id": INSTALLATION_ID}, "sender": {"login": "merger", "type": "User"},
    }


def _hostile_tree_tarball() -> bytes:
    members: list[Any] = [
        (f"{TOP}/{p.relative_to(TREE).as_posix()}", p.read_bytes())
        for p in sorted(TREE.rglob("*.py"))
    ]
    members += [(f"{TOP}/../../{ESCAPE}", b"def evil(): pass\n"), (f"/tmp/{ESCAPE}", b"x = 1\n")]
    return members_tarball(members)


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[FakeGitHubState, str]]:
    state = e2e_state()
    repo = state.repos[REPO]
    repo.head_sha = HEAD.replace("e", "f")
    repo.tarball = _hostile_tree_tarball()
    pr = json.loads(PR_EVENT.read_text())
    state.add_pull(REPO, pr["number"], title=pr["title"], body=pr["body"],
                   labels=[label["name"] for label in pr["labels"]],
                   files=[FakeFile(**f) for f in json.loads(PR_FILES.read_text())])
    with FakeGitHubServer(state) as url:
        yield state, url


def test_a_push_refreshes_the_index_and_the_digest_uses_it(
    world: tuple[FakeGitHubState, str], tmp_path: Path
) -> None:
    state, url = world
    with ServiceProcess(url, tmp_path,
                        extra_env={"DIGEST_INDEX_SETTLE_SECONDS": "0.3"}) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        assert svc.send("push", _push("refs/heads/feature")).json()["ignored"]
        accepted = svc.send("push", _push())
        assert accepted.status_code == 202
        wait_until(lambda: svc.job_records(kind="index", outcome="ok"), 60, interval=0.1,
                   message="index job ok")
        (built,) = [r for r in svc.log_records() if r.get("msg") == "index built"]
        assert built["files"] == 17
        assert built["skipped"] == {"syntax-error": 1, "unsafe-path": 2}

        assert svc.send("pull_request", pr_event("opened", 60123)).status_code == 202
        wait_until(lambda: state.bot_comments(REPO, 60123, BOT), 20, interval=0.1,
                   message="digest posted")
    (body,) = state.bot_comments(REPO, 60123, BOT)
    assert "**Around the change**" in body
    assert "3 subclasses override `BaseMultiModalProcessor._get_prompt_updates`" in body
    # The archive's `../` and absolute members were never written anywhere.
    for where in (REPO_ROOT.parent, REPO_ROOT, Path("/tmp"), tmp_path):
        assert not (where / ESCAPE).exists()
