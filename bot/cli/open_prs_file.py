"""`digest-bot digest --event PR.json --open-prs FILE`: the other open PRs, offline.

FILE is a JSON list of PR objects as `GET /repos/{o}/{r}/pulls/{n}` returns them, each
with a `files` key holding its files as `GET /repos/{o}/{r}/pulls/{n}/files` returns
them. A PR object's own `mergeable_state`, `created_at` and `updated_at` are read; a
closed or merged one is not a neighbour, but says what a dependency on it became.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.core.neighbours.model import DependencyState, OpenPr
from bot.core.neighbours.record import record_from_facts
from bot.core.pr_object import (
    NotAPullRequest,
    changed_files,
    facts_from_pull_request,
    pull_request_object,
)

MAX_OPEN_PRS = 5_000  # a longer list is refused, not truncated


class BadOpenPrs(ValueError):
    """The file is not a list of PR objects with their files (one line says where)."""


class LiveFields(BaseModel):
    """The fields of a PR object the neighbours part reads beyond the digest's own."""

    model_config = ConfigDict(extra="ignore")

    merged: bool = False
    mergeable_state: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


def live_fields(raw: Mapping[str, Any]) -> LiveFields:
    pull = raw.get("pull_request", raw)
    try:
        return LiveFields.model_validate(pull if isinstance(pull, Mapping) else {})
    except ValidationError as exc:
        raise BadOpenPrs(_where(exc)) from None


def read_open_prs(data: Any, repo: str) -> tuple[list[OpenPr], dict[int, DependencyState]]:
    """The open PRs of the file as records, and the state of every PR it lists (for the
    dependencies: a listed PR that is closed or merged says so)."""
    if not isinstance(data, list):
        raise BadOpenPrs("expected a JSON list of PR objects, each with its `files`")
    if len(data) > MAX_OPEN_PRS:
        raise BadOpenPrs(f"{len(data):,} PRs: at most {MAX_OPEN_PRS:,} are read")
    records: list[OpenPr] = []
    states: dict[int, DependencyState] = {}
    for position, item in enumerate(data):
        record, state = _read_one(item, position, repo)
        states[record.number] = state
        if state == "open":
            records.append(record)
    return records, states


def _read_one(item: Any, position: int, repo: str) -> tuple[OpenPr, DependencyState]:
    where = f"[{position}]"
    if not isinstance(item, Mapping):
        raise BadOpenPrs(f"{where}: expected a PR object")
    files = item.get("files", [])
    if not isinstance(files, Sequence) or isinstance(files, str) or not all(
            isinstance(f, Mapping) for f in files):
        raise BadOpenPrs(f"{where}.files: expected a list of PR-file objects")
    try:
        pr = pull_request_object(item)
        facts = facts_from_pull_request(pr, changed_files(files), repo=repo)
    except NotAPullRequest as exc:
        raise BadOpenPrs(f"{where}: {exc}") from None
    live = live_fields(item)
    state: DependencyState = "merged" if live.merged else (
        "open" if pr.state == "open" else "closed")
    record = record_from_facts(facts).model_copy(update={
        "created_at": live.created_at, "updated_at": live.updated_at,
        "mergeable_state": live.mergeable_state or ""})
    return record, state


def _where(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]) + f": {first['msg']}"
