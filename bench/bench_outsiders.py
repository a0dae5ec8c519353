"""Maintainers first (issue 38, item 6): how long a maintainer's `/digest` waits for its
first write (the 👀) after a flood of outsiders' `/digest mute` comments.

    python -m bench.bench_outsiders [--prs 60] [--per-pr 3] [--interval 1.0] [--after 10]

Live service (`python -m bot serve`) against the fake GitHub on loopback, at the
issue's scale by default: `--per-pr` comments from different outsiders on each of
`--prs` PRs, GitHub's pacing (`--interval` seconds between writes, 80 a minute), then,
once `--after` of the flood's comments have been answered, one maintainer's `/digest` on the
last PR. Prints the maintainer's wait, the bot's writes during the flood, and how many
of the flood's comments got a reaction or a reply by then.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeFile, FakeGitHubState
from tests.service_harness import (
    REPO,
    WRITE_METHODS,
    ServiceProcess,
    comment_event,
    e2e_state,
    wait_until,
)

FILE = FakeFile("vllm/entrypoints/openai/serving_chat.py", additions=12, deletions=2,
                patch="@@ -1,2 +1,3 @@ def create_chat_completion():\n+    x = 1\n")
BODY = "## Purpose\nTidy the chat path.\n\n## Test Plan\nCI\n\n## Test Result\nCI green\n"
MAINTAINER = "maint"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=60)
    parser.add_argument("--per-pr", type=int, default=3)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=400.0)
    parser.add_argument("--after", type=int, default=10,
                        help="flood comments answered before the maintainer comments")
    args = parser.parse_args(argv)
    state = e2e_state()
    state.set_permission(REPO, MAINTAINER, "maintain")
    numbers = list(range(1000, 1000 + args.prs))
    for number in numbers:
        state.add_pull(REPO, number, author="Codertocat", title="[Frontend] Tidy chat",
                       body=BODY, files=[FILE])
    with tempfile.TemporaryDirectory() as tmp, FakeGitHubServer(state) as url, \
            ServiceProcess(url, Path(tmp), write_interval_seconds=args.interval) as svc:
        wait_until(lambda: state.count("GET", "/app") >= 1, 10, message="GET /app")
        writes_before = _writes(state)
        flood: list[int] = []
        for round_ in range(args.per_pr):
            for number in numbers:
                login = f"stranger{round_}"
                comment = state.add_comment(REPO, number, login, "/digest mute")
                svc.send("issue_comment", comment_event(number, comment.id, "/digest mute",
                                                        author=login))
                flood.append(comment.id)
        wait_until(lambda: _answered(state, flood) >= args.after, args.timeout,
                   message="the flood's first answers")
        number = numbers[-1]
        comment = state.add_comment(REPO, number, MAINTAINER, "/digest")
        started = time.monotonic()
        svc.send("issue_comment", comment_event(number, comment.id, "/digest",
                                                author=MAINTAINER, association="MEMBER"))
        wait_until(lambda: bool(state.comments[comment.id].reactions), args.timeout,
                   interval=0.05, message="the maintainer's 👀")
        waited = time.monotonic() - started
        result = {
            "prs": args.prs, "flood": len(flood), "interval_s": args.interval,
            "maintainer_wait_s": round(waited, 2),
            "flood_answered_by_then": _answered(state, flood),
            "bot_writes_by_then": _writes(state) - writes_before,
        }
    print(json.dumps(result))
    return 0


def _answered(state: FakeGitHubState, flood: list[int]) -> int:
    return sum(1 for c in flood if state.comments[c].reactions)


def _writes(state: FakeGitHubState) -> int:
    calls = list(state.calls)
    return sum(1 for c in calls if c.method in WRITE_METHODS and "access_tokens" not in c.route)


if __name__ == "__main__":
    sys.exit(main())
