"""After a digest job, a PR's record is stored; when it moved, only the open PRs whose
digest names (or named) it are queued for an edit: an author's own PRs sharing files
never name each other, so they cost no job (issue 42)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.core.neighbours.model import ChangedSymbol, OpenPr
from bot.github.protocol import PullRequest
from bot.handlers.neighbours import NEIGHBOUR, remember
from bot.queue.ledger import Ledger
from bot.queue.store import SqliteJobStore

REPO = "o/r"


def _record(number: int, author: str, head: str = "a") -> OpenPr:
    return OpenPr(number=number, author=author, head_sha=head * 40, files=("vllm/x.py",),
                  symbols=(ChangedSymbol(file="vllm/x.py", name="step"),))


def _pull(number: int, state: str = "open") -> PullRequest:
    return PullRequest(repo=REPO, number=number, title="t", body="", author="x", labels=(),
                       base_ref="main", head_sha="a" * 40, draft=False, state=state,
                       changed_files=1, additions=1, deletions=0,
                       created_at=datetime(2026, 1, 1, tzinfo=UTC))


async def test_only_the_prs_that_name_it_are_queued(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.db")
    jobs = SqliteJobStore(tmp_path / "j.db")
    try:
        assert await remember(ledger, jobs, _pull(1), _record(1, "alice"), None) == 0
        assert await remember(ledger, jobs, _pull(2), _record(2, "alice"), None) == 0
        # Another author's PR changing the same function: alice's two PRs name it.
        assert await remember(ledger, jobs, _pull(3), _record(3, "bob"), None) == 2
        # Stored again unchanged: nothing moved, nobody queued.
        assert await remember(ledger, jobs, _pull(3), _record(3, "bob"), None) == 0
        # Closed: those that named it are queued to drop it.
        assert await remember(ledger, jobs, _pull(3, "closed"), None, None) == 2
        queued = await jobs.list_jobs()
    finally:
        jobs.close()
        ledger.close()
    assert sorted(j.number for j in queued if j.number is not None) == [1, 2]
    assert all(j.payload.get("actions") == [NEIGHBOUR] for j in queued)
