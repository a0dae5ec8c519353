"""Issue 32, item 2, against the real `digest-bot serve` process: a repository override's
costly pattern runs under the same scan budget as the bundled rules.

`a.{0,400}b.{0,400}c` passes the RE2 check, but on long lines that keep it guessing its
DFA cache thrashes and RE2 falls back to its NFA: microseconds a byte. Before the fix
(304b613) the scan charged every byte alike, so ~6 MB of such added lines held the
worker's loop for ~29 s per language (the job built two): the digest came after about a
minute and every other PR waited behind it. Now each byte is charged the pattern's
`cost_weight` (its RE2 program size), the digest is built off the worker's loop, and the
hostile PR's digest comes within seconds with the partial-scan note.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.render.i18n import t
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    BOT,
    REPO,
    ServiceProcess,
    e2e_state,
    pr_event,
    service_for,
    wait_until,
)

pytestmark = pytest.mark.slow

# Under a bundled area's paths, so the digest is not quiet and is posted.
TABLES = "vllm/model_executor/layers/fused_moe/configs"
HOSTILE_PR = 3301
NORMAL_PR = 3302
DIGEST_BOUND_SECONDS = 25.0  # the bound for the hostile PR's digest
# The normal PR's settle window is 0.3 s and its job takes ~0.1 s; before the fix it
# waited behind the hostile job's ~29 s build.
NORMAL_BOUND_SECONDS = 5.0

OVERRIDE = """\
areas:
  - id: counted-repeats
    title: Counted repeats
    audience: whoever reads them
    criticality: low
    match:
      any:
        - added: 'a.{0,400}b.{0,400}c'
"""


def _hostile_files() -> list[FakeFile]:
    """Six new files of 100 lines of 10,000 random `a`/`b`/`x`: no `c`, so no match,
    and every `a` opens 400 positions the DFA must track (6 MB in all)."""
    rng = random.Random(32)
    files = []
    for n in range(6):
        lines = ["".join(rng.choices("abx", k=10_000)) for _ in range(100)]
        patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines)
        files.append(FakeFile(f"{TABLES}/table_{n}.py", status="added",
                              additions=len(lines), patch=patch))
    return files


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[FakeGitHubState, ServiceProcess]]:
    state = e2e_state()
    state.add_repo(REPO, files={".github/pr-digest.yml": OVERRIDE})
    with FakeGitHubServer(state) as url, service_for(state, url, tmp_path) as svc:
        yield state, svc


def test_a_costly_override_pattern_is_bounded_and_other_prs_do_not_wait(
    world: tuple[FakeGitHubState, ServiceProcess]
) -> None:
    state, svc = world
    files = _hostile_files()
    assert 5_500_000 < sum(len(f.patch or "") for f in files) < 6_500_000
    state.add_pull(REPO, HOSTILE_PR, title="Add generated tables", body="Tables.",
                   files=files)
    state.add_pull(REPO, NORMAL_PR, title="[Doc] Fix a link", body="A link.",
                   files=["docs/usage/faq.md"])

    sent = time.monotonic()
    assert svc.send("pull_request", pr_event("opened", HOSTILE_PR)).status_code == 202
    files_route = f"/repos/{REPO}/pulls/{HOSTILE_PR}/files"
    wait_until(lambda: any(c.path == files_route for c in list(state.calls)), 10,
               message="the hostile PR's files fetched")
    # The normal PR arrives while the hostile one is being scanned.
    normal_sent = time.monotonic()
    assert svc.send("pull_request", pr_event("opened", NORMAL_PR)).status_code == 202
    wait_until(lambda: svc.job_records(pr=NORMAL_PR), NORMAL_BOUND_SECONDS,
               message="the normal PR's job, while the hostile one runs")
    normal_latency = time.monotonic() - normal_sent

    wait_until(lambda: len(state.bot_comments(REPO, HOSTILE_PR, BOT)) == 1,
               DIGEST_BOUND_SECONDS, message="the hostile PR's digest posted")
    hostile_latency = time.monotonic() - sent
    print(f"hostile digest after {hostile_latency:.1f} s; normal job after "
          f"{normal_latency:.1f} s")
    body = state.bot_comments(REPO, HOSTILE_PR, BOT)[0]
    assert t("en", "note.added_scan_partial") in body
    assert svc.job_records(pr=NORMAL_PR, outcome="ok")
    svc.wait_for_job(HOSTILE_PR, timeout=DIGEST_BOUND_SECONDS)
    assert svc.get("/healthz").status_code == 200
