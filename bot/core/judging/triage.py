"""What a reviewer triaging a queue wants per PR, derived from what the digest job
already holds: the digest's JSON, the PR's conversation, its description and the pools
its labels route to. No GitHub call of its own.

Pure: plain data in, a `Triage` out; the label view stores it with the PR's summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.facts import Conversation
from bot.core.label_view import Triage
from bot.core.reading.body import is_placeholder, parse_body

# Signals: the ids the view shows as badges and the API lists in `signals`.
SIGNALS = ("template-unfilled", "ai-assisted", "core-unexplained", "large-multi-area")
# A "very large change touching many areas": rules/risks.yaml's large-diff line count,
# over this many of the digest's areas.
LARGE_LINES = 1000
MANY_AREAS = 3
# Words a description needs outside its test sections to count as explaining why.
RATIONALE_WORDS = 25
_TEST_SECTIONS = frozenset({"test_plan", "test_result", "evaluation"})
_MAX_OWNERS = 200
_DECISIVE = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})


@dataclass(frozen=True)
class Activity:
    last_author_at: float | None = None
    last_reviewer_at: float | None = None
    reviewed: bool = False
    changes_requested: bool = False


def activity(conversation: Conversation | None, author: str,
             created_at: float | None) -> Activity:
    """Who spoke last. A reviewer is a person other than the author with write access
    (the permission endpoint: `Remark.maintainer`): anyone else's comment, review or
    review comment, a "nit" or a CHANGES_REQUESTED, moves nothing in the queue. Bots
    never count. Pushes are not seen (commit times are not read)."""
    last_author, last_reviewer = created_at, None
    reviewed = False
    decisive: dict[str, tuple[float, str]] = {}
    me = author.casefold()
    for remark in conversation.remarks if conversation is not None else ():
        if remark.author_is_bot:
            continue
        at = remark.created_at.timestamp() if remark.created_at is not None else None
        if remark.author.casefold() == me:
            if at is not None:
                last_author = at if last_author is None else max(last_author, at)
            continue
        if not remark.maintainer:  # only people with write access move the queue
            continue
        reviewed = True
        if at is not None:
            last_reviewer = at if last_reviewer is None else max(last_reviewer, at)
        if remark.review_state in _DECISIVE:
            who = remark.author.casefold()
            when = at if at is not None else 0.0
            if who not in decisive or decisive[who][0] <= when:
                decisive[who] = (when, remark.review_state)
    return Activity(
        last_author_at=last_author, last_reviewer_at=last_reviewer, reviewed=reviewed,
        changes_requested=any(state == "CHANGES_REQUESTED" for _, state in decisive.values()),
    )


def signals(digest: Mapping[str, Any], body: str) -> tuple[str, ...]:
    """Triage signals from the digest's JSON and the PR's description."""
    parsed = parse_body(body)
    found: list[str] = []
    prose = [text for kind, text in parsed.sections.items() if kind not in _TEST_SECTIONS]
    if not parsed.text.strip() or (
        parsed.sections and all(is_placeholder(text) for text in parsed.sections.values())
    ):
        found.append("template-unfilled")
    if digest.get("ai_assisted"):
        found.append("ai-assisted")
    areas = {str(a.get("id", "")) for a in digest.get("areas", ()) if isinstance(a, dict)}
    if "core" in areas and not _explains(parsed.sections.get("purpose"), prose, parsed.text):
        found.append("core-unexplained")
    lines = int(digest.get("additions", 0)) + int(digest.get("deletions", 0))
    if lines >= LARGE_LINES and len(areas) >= MANY_AREAS:
        found.append("large-multi-area")
    return tuple(found)


def _explains(purpose: str | None, prose: list[str], text: str) -> bool:
    if purpose is not None and not is_placeholder(purpose):
        return len(purpose.split()) >= RATIONALE_WORDS // 2
    # No purpose section: the description's words outside its test sections.
    words = sum(len(p.split()) for p in prose) if prose else len(text.split())
    return words >= RATIONALE_WORDS


def owners(digest: Mapping[str, Any], routes_to: Iterable[str]) -> tuple[str, ...]:
    """Everyone the PR belongs to: its files' CODEOWNERS (users and org/team), the
    reviewers the digest suggests, the ones routing asked, and the members of the pools
    its labels route to."""
    names: dict[str, str] = {}

    def add(values: Iterable[Any]) -> None:
        for value in values:
            name = str(value).lstrip("@")
            if name and len(names) < _MAX_OWNERS:
                names.setdefault(name.casefold(), name)

    found = digest.get("owners") or {}
    add(found.get("users", ()))
    add(found.get("teams", ()))
    reviewers = digest.get("reviewers") or {}
    add(reviewers.get("users", ()))
    add(reviewers.get("teams", ()))
    routing = digest.get("routing") or {}
    add(routing.get("requested_users", ()))
    add(routes_to)
    return tuple(names.values())


def triage(
    digest: Mapping[str, Any], *, conversation: Conversation | None, author: str,
    body: str, created_at: float | None, routes_to: Iterable[str] = (),
) -> Triage:
    """The PR's triage state from the digest's JSON (`digest_json`) and what the job read."""
    done = activity(conversation, author, created_at)
    ci = digest.get("ci") or {}
    steps: dict[str, int] = {}
    for step in ci.get("steps", ()):
        if isinstance(step, dict) and step.get("status"):
            steps[str(step["status"])] = steps.get(str(step["status"]), 0) + 1
    return Triage(
        created_at=created_at,
        last_author_at=done.last_author_at,
        last_reviewer_at=done.last_reviewer_at,
        reviewed=done.reviewed,
        changes_requested=done.changes_requested,
        additions=int(digest.get("additions", 0)),
        deletions=int(digest.get("deletions", 0)),
        files=int(digest.get("files_total", 0)),
        ci_state=str(ci.get("state") or ""),
        ci_steps=tuple(steps.items()),
        risks=tuple(
            (str(risk.get("id", "")), str(risk.get("severity", "")))
            for risk in digest.get("risks", ()) if isinstance(risk, dict)
        ),
        signals=signals(digest, body),
        owners=owners(digest, routes_to),
    )
