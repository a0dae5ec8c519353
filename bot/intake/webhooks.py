"""Sans-I/O webhook intake: verify the signature, parse the few fields we use, map an
event to at most one job. No network, no database: the app wires these to the store.

Event and action names stay plain strings (as gidgethub does): GitHub adds new ones
all the time and an unknown one must be ignored, not crash a parse.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.intake.envelope import PullRequestAccount, PullRequestDelivery
from bot.queue.store import NewJob, command_key, index_key, pr_key, status_key

SIGNATURE_PREFIX = "sha256="
_SHA256_HEX_CHARS = 64

# As bot/core/repo_config/ci_status.py reads a build's description.
_BLOCKED = re.compile(r"\bblocked\b", re.IGNORECASE)
# A cheap, line-anchored pre-filter; bot/core parses the command properly (quotes, code).
_DIGEST_LINE = re.compile(r"^[ \t]*/digest(?![\w-])[^\n]*", re.IGNORECASE | re.MULTILINE)

PR_ACTIONS = frozenset({
    "opened", "reopened", "synchronize", "edited", "ready_for_review", "labeled",
    "unlabeled", "converted_to_draft", "closed",
})
# An `edited` that only touched e.g. the milestone cannot change the digest.
_EDITS_THAT_MATTER = ("title", "body", "base")
# What people say on a PR re-runs its digest (asks, evidence posted later), through the
# same coalesced job; the digest is written only when it changes.
COMMENT_ACTIONS = frozenset({"created", "edited", "deleted"})
REVIEW_ACTIONS = frozenset({"submitted", "edited", "dismissed"})
ACKNOWLEDGED_EVENTS = frozenset({"installation", "installation_repositories"})


def parse_signature(header: str | None) -> bytes | None:
    """The hex digest of a `sha256=<64 hex>` header, or None when it cannot be one."""
    if not header or not header.startswith(SIGNATURE_PREFIX):
        return None
    given = header[len(SIGNATURE_PREFIX):].strip()
    if len(given) != _SHA256_HEX_CHARS or not given.isascii():
        return None
    return given.encode("ascii")


def signature_matches(macs: Sequence[hmac.HMAC], given: bytes) -> bool:
    """True when any running HMAC (one per secret, for rotation) equals `given`.
    Every one is compared, so timing does not reveal which secret is in use."""
    matched = False
    for mac in macs:
        matched |= hmac.compare_digest(mac.hexdigest().encode(), given)
    return matched


def verify_signature(body: bytes, header: str | None, secrets: Sequence[bytes]) -> bool:
    """True when `header` is `sha256=<hex HMAC of body>` under any of `secrets` (rotation)."""
    given = parse_signature(header)
    if given is None:
        return False
    return signature_matches([hmac.new(s, body, hashlib.sha256) for s in secrets], given)


# Numbers the store keeps in INTEGER columns: SQLite holds signed 64-bit only, and a
# bigger one would fail the insert (a 5xx) instead of being refused as a bad payload.
StoredInt = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
# GitHub owner and repository names use only these characters; the name becomes part
# of the job key, so anything else (e.g. a lone surrogate) is a bad payload.
REPO_NAME = r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


_M = TypeVar("_M", bound=_Model)


class Account(_Model):
    login: str
    type: str = "User"


class Installation(_Model):
    id: StoredInt


class Repository(_Model):
    full_name: str = Field(pattern=REPO_NAME)


class Label(_Model):
    name: str


class PullRequestRef(_Model):
    number: int


class PullRequestEvent(_Model):
    action: str
    number: StoredInt
    pull_request: PullRequestRef
    repository: Repository
    sender: Account
    installation: Installation | None = None
    label: Label | None = None
    changes: dict[str, Any] | None = None


class GitHubApp(_Model):
    id: int


class Comment(_Model):
    id: int
    body: str | None = None
    user: Account
    author_association: str | None = None
    performed_via_github_app: GitHubApp | None = None


class Issue(_Model):
    number: StoredInt
    pull_request: dict[str, Any] | None = None


class Review(_Model):
    user: Account | None = None


class PullRequestReviewEvent(_Model):
    action: str
    review: Review
    pull_request: PullRequestRef
    repository: Repository
    sender: Account
    installation: Installation | None = None


class ReviewCommentEvent(_Model):
    action: str
    comment: Comment
    pull_request: PullRequestRef
    repository: Repository
    sender: Account
    installation: Installation | None = None


class IssueCommentEvent(_Model):
    action: str
    issue: Issue
    comment: Comment
    repository: Repository
    sender: Account
    installation: Installation | None = None
    changes: dict[str, Any] | None = None


class PushRepository(_Model):
    full_name: str = Field(pattern=REPO_NAME)
    default_branch: str


class PushEvent(_Model):
    ref: str
    after: str = Field(pattern=r"^[0-9a-f]{40}$")
    deleted: bool = False
    repository: PushRepository
    installation: Installation | None = None


class StatusEvent(_Model):
    sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    context: str = Field(max_length=255)
    state: Literal["error", "failure", "pending", "success"]
    description: str | None = None
    repository: Repository
    installation: Installation | None = None


@dataclass(frozen=True)
class Ignored:
    reason: str
    # False: answered at once, nothing stored (vLLM's CI sends ~100 step statuses a
    # build; recording each would put a database write on the ack path for nothing).
    record: bool = True


class PayloadError(ValueError):
    """The event is one we handle but the payload lacks what we need (answered 400)."""


@dataclass(frozen=True)
class BotIdentity:
    """Who "we" are, so events the bot caused are dropped (no loops)."""

    login: str | None = None
    app_id: int | None = None

    def is_self(self, account: Account | PullRequestAccount) -> bool:
        return self.login is not None and account.login.lower() == self.login.lower()


def route_event(
    event: str, payload: dict[str, Any], identity: BotIdentity, *, ci_context: str = ""
) -> NewJob | Ignored:
    """The job this delivery asks for, or why it asks for none. Raises PayloadError.
    `ci_context` is the CI pipeline build's own status context (`status` events)."""
    action = payload.get("action")
    if event == "pull_request":
        return _route_pull_request(payload, identity)
    if event == "issue_comment":
        return _route_issue_comment(payload, identity)
    if event == "pull_request_review":
        return _route_review(payload, identity)
    if event == "pull_request_review_comment":
        return _route_review_comment(payload, identity)
    if event == "push":
        return _route_push(payload)
    if event == "status":
        return _route_status(payload, ci_context)
    if event in ACKNOWLEDGED_EVENTS:
        return Ignored(f"{event}.{action}: acknowledged")
    return Ignored(f"event {event} not handled")


def _parse(model: type[_M], payload: dict[str, Any]) -> _M:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "payload"
        raise PayloadError(f"{where}: {first['msg']}") from None


def _route_pull_request(payload: dict[str, Any], identity: BotIdentity) -> NewJob | Ignored:
    action = payload.get("action")
    # Not a string (a list, say) cannot be looked up in a frozenset: unhashable.
    if not isinstance(action, str) or action not in PR_ACTIONS:
        return Ignored(f"pull_request.{action} not handled")
    return route_pull_request(_parse(PullRequestEvent, payload), identity)


def route_pull_request(ev: PullRequestEvent | PullRequestDelivery,
                       identity: BotIdentity) -> NewJob | Ignored:
    """The job a validated `pull_request` delivery asks for, or why it asks for none:
    validated by `PullRequestEvent`, or by the intake's typed decoding of the same
    fields (bot/intake/envelope.py)."""
    action = ev.action
    if action not in PR_ACTIONS:
        return Ignored(f"pull_request.{action} not handled")
    if identity.is_self(ev.sender):
        return Ignored("sent by this bot")
    if action == "edited" and not any(k in (ev.changes or {}) for k in _EDITS_THAT_MATTER):
        return Ignored("edited without a title, body or base change")
    job_payload: dict[str, Any] = {"actions": [action], "labels": []}
    if action == "labeled" and ev.label is not None:
        job_payload["labels"] = [ev.label.name]
    return NewJob(
        kind="pr", key=pr_key(ev.repository.full_name, ev.number),
        installation_id=ev.installation.id if ev.installation else None,
        repo=ev.repository.full_name, number=ev.number, payload=job_payload,
    )


def _route_push(payload: dict[str, Any]) -> NewJob | Ignored:
    """A push to the default branch asks for a symbol-index refresh of that commit; the
    store folds a burst of merges into one pending refresh (see `index_key`)."""
    ev = _parse(PushEvent, payload)
    if ev.ref != f"refs/heads/{ev.repository.default_branch}":
        return Ignored("push to a branch other than the default")
    if ev.deleted:
        return Ignored("branch deleted")
    repo = ev.repository.full_name
    return NewJob(
        kind="index", key=index_key(repo),
        installation_id=ev.installation.id if ev.installation else None,
        repo=repo, number=None, payload={"sha": ev.after},
    )


def ci_state(state: str, description: str | None) -> str:
    """What a build's own status says for the digest: its state, or `blocked` for a
    pending build that waits on a block step ("Build #N passed and blocked")."""
    if state == "pending" and _BLOCKED.search((description or "")[:200]):
        return "blocked"
    return state


def _route_status(payload: dict[str, Any], ci_context: str) -> NewJob | Ignored:
    """Only the pipeline build's own status re-runs a digest (when the build settles or
    starts): its steps' statuses (`<context>/<step>`, ~100 a build) and other CIs'
    are dropped before anything is validated or stored."""
    if not ci_context or payload.get("context") != ci_context:
        return Ignored("status of another context", record=False)
    ev = _parse(StatusEvent, payload)
    repo = ev.repository.full_name
    return NewJob(
        kind="status", key=status_key(repo, ev.sha),
        installation_id=ev.installation.id if ev.installation else None,
        repo=repo, number=None,
        payload={"sha": ev.sha, "state": ci_state(ev.state, ev.description)},
    )


def digest_lines(body: str | None) -> list[str]:
    return [m.group(0).strip().lower() for m in _DIGEST_LINE.finditer(body or "")]


def _is_bot(account: Account) -> bool:
    return account.type == "Bot" or account.login.lower().endswith("[bot]")


def _conversation_job(
    repo: Repository, number: int, installation: Installation | None, what: str
) -> NewJob:
    """A digest run for a PR whose conversation changed: the same job (and key) as a
    `pull_request` event's, so a burst of review comments runs the digest once."""
    return NewJob(
        kind="pr", key=pr_key(repo.full_name, number),
        installation_id=installation.id if installation else None,
        repo=repo.full_name, number=number, payload={"actions": [what], "labels": []},
    )


def _route_review(payload: dict[str, Any], identity: BotIdentity) -> NewJob | Ignored:
    action = payload.get("action")
    if not isinstance(action, str) or action not in REVIEW_ACTIONS:
        return Ignored(f"pull_request_review.{action} not handled")
    ev = _parse(PullRequestReviewEvent, payload)
    people = [ev.sender, *([ev.review.user] if ev.review.user else [])]
    if any(identity.is_self(a) for a in people):
        return Ignored("sent by this bot")
    if any(_is_bot(a) for a in people):
        return Ignored("review by a bot")
    return _conversation_job(ev.repository, ev.pull_request.number, ev.installation,
                             f"review.{action}")


def _route_review_comment(payload: dict[str, Any], identity: BotIdentity) -> NewJob | Ignored:
    action = payload.get("action")
    if not isinstance(action, str) or action not in COMMENT_ACTIONS:
        return Ignored(f"pull_request_review_comment.{action} not handled")
    ev = _parse(ReviewCommentEvent, payload)
    if identity.is_self(ev.sender) or identity.is_self(ev.comment.user):
        return Ignored("sent by this bot")
    if _is_bot(ev.sender) or _is_bot(ev.comment.user):
        return Ignored("review comment by a bot")
    return _conversation_job(ev.repository, ev.pull_request.number, ev.installation,
                             f"review_comment.{action}")


def _route_issue_comment(payload: dict[str, Any], identity: BotIdentity) -> NewJob | Ignored:
    action = payload.get("action")
    if not isinstance(action, str) or action not in COMMENT_ACTIONS:
        return Ignored(f"issue_comment.{action} not handled")
    ev = _parse(IssueCommentEvent, payload)
    if ev.issue.pull_request is None:
        return Ignored("comment on an issue, not a pull request")
    author = ev.comment.user
    if identity.is_self(ev.sender) or identity.is_self(author) or (
        identity.app_id is not None
        and ev.comment.performed_via_github_app is not None
        and ev.comment.performed_via_github_app.id == identity.app_id
    ):
        return Ignored("sent by this bot")
    if any(_is_bot(a) for a in (ev.sender, author)):
        return Ignored("comment by a bot")
    # Anything but a comment that asks for /digest changes only the conversation.
    conversation = _conversation_job(ev.repository, ev.issue.number, ev.installation,
                                     f"comment.{action}")
    if action == "deleted":
        return conversation
    lines = digest_lines(ev.comment.body)
    if not lines:
        return conversation
    old: str | None = None
    if action == "edited":
        before = (ev.changes or {}).get("body")
        old = before.get("from") if isinstance(before, dict) else None
        if not isinstance(old, str):
            return Ignored("edit did not change the /digest command")
        if digest_lines(old) == lines:
            # The commands stay as they were; the words around them may not.
            return conversation if old != ev.comment.body else Ignored("edit changed nothing")
    body = ev.comment.body or ""
    # surrogatepass: JSON may carry lone surrogates, which strict UTF-8 refuses.
    raw = body.encode(errors="surrogatepass")
    body_sha1 = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    repo = ev.repository.full_name
    return NewJob(
        kind="command", key=command_key(repo, ev.comment.id, body_sha1),
        installation_id=ev.installation.id if ev.installation else None,
        repo=repo, number=ev.issue.number,
        payload={
            "comment_id": ev.comment.id, "body": body, "author_login": author.login,
            "author_type": author.type, "author_association": ev.comment.author_association,
            "action": action,
            # On an edit only the commands the edit added run (bot.handlers.command).
            "previous_body": old,
        },
    )
