"""The few fields of a delivery that routing reads, decoded without building the rest.

A `pull_request` delivery is tens of KB, almost all of it (the PR's and repository's
many URLs and nested users) unused at the ack; `json.loads` of the whole body was the
largest single cost of the ack path. msgspec decodes into these pruned shapes, skipping
everything else without building Python objects for it, and the result is the same
plain dict `json.loads` would give with unused keys left out: `route_event` validates
it exactly as before.

Every leaf is `Any` on purpose: the value is passed to the pydantic models untouched, so
validation (and its error messages) stays theirs. Anything this cannot decode (bad
JSON, lone surrogates, an object where a value was expected here, a float out of range)
returns None and the caller takes the stdlib path, which decides as it always did.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

_UNSET: Any = msgspec.UNSET


class _Account(msgspec.Struct):
    login: Any = _UNSET
    type: Any = _UNSET


class _Installation(msgspec.Struct):
    id: Any = _UNSET


class _Repository(msgspec.Struct):
    full_name: Any = _UNSET
    default_branch: Any = _UNSET


class _Label(msgspec.Struct):
    name: Any = _UNSET


class _PullRequest(msgspec.Struct):
    number: Any = _UNSET


class _App(msgspec.Struct):
    id: Any = _UNSET


class _Comment(msgspec.Struct):
    id: Any = _UNSET
    body: Any = _UNSET
    user: _Account | None = _UNSET
    author_association: Any = _UNSET
    performed_via_github_app: _App | None = _UNSET


class _Review(msgspec.Struct):
    user: _Account | None = _UNSET


class _Issue(msgspec.Struct):
    number: Any = _UNSET
    pull_request: Any = _UNSET


class _Envelope(msgspec.Struct):
    action: Any = _UNSET
    number: Any = _UNSET
    pull_request: _PullRequest | None = _UNSET
    repository: _Repository | None = _UNSET
    sender: _Account | None = _UNSET
    installation: _Installation | None = _UNSET
    label: _Label | None = _UNSET
    changes: Any = _UNSET
    issue: _Issue | None = _UNSET
    comment: _Comment | None = _UNSET
    review: _Review | None = _UNSET
    zen: Any = _UNSET
    # push: which branch moved, to what, and whether it was deleted (the index refresh)
    ref: Any = _UNSET
    after: Any = _UNSET
    deleted: Any = _UNSET
    # status: which commit, which context (a CI build or one of its steps), what state
    sha: Any = _UNSET
    context: Any = _UNSET
    state: Any = _UNSET
    description: Any = _UNSET


_DECODER = msgspec.json.Decoder(_Envelope)


def routing_fields(body: bytes | bytearray) -> dict[str, Any] | None:
    """The routed fields as `json.loads` would give them, or None: use `json.loads`."""
    try:
        envelope = _DECODER.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
    fields: dict[str, Any] = msgspec.to_builtins(envelope)
    return fields


# A typed decoding of a `pull_request` delivery, for the common case: when the body has
# exactly the shapes routing validates (bot/intake/webhooks.py, `PullRequestEvent`),
# msgspec checks them while it scans and the pydantic pass is skipped. Anything it
# refuses (a string where a number is expected, a float, a repository name pydantic
# would refuse) returns None and takes the usual path, where pydantic decides and
# words the error. It must never accept what `PullRequestEvent` refuses:
# tests/intake/test_hostile_intake.py holds the two equal on generated payloads.
_StoredInt = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
# As REPO_NAME, but `\Z`: Python's `$` also matches before a final newline, the
# pattern pydantic runs (Rust's regex) does not.
_RepoName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+\Z")]


class PullRequestAccount(msgspec.Struct, frozen=True):
    login: str
    type: str = "User"


class PullRequestInstallation(msgspec.Struct, frozen=True):
    id: _StoredInt


class PullRequestRepository(msgspec.Struct, frozen=True):
    full_name: _RepoName


class PullRequestLabel(msgspec.Struct, frozen=True):
    name: str


class PullRequestNumber(msgspec.Struct, frozen=True):
    number: int


class PullRequestDelivery(msgspec.Struct, frozen=True):
    action: str
    number: _StoredInt
    pull_request: PullRequestNumber
    repository: PullRequestRepository
    sender: PullRequestAccount
    installation: PullRequestInstallation | None = None
    label: PullRequestLabel | None = None
    changes: dict[str, Any] | None = None


_PULL_REQUEST_DECODER = msgspec.json.Decoder(PullRequestDelivery)


def pull_request_delivery(body: bytes | bytearray) -> PullRequestDelivery | None:
    """The delivery, validated as routing needs it, or None: take the general path."""
    try:
        return _PULL_REQUEST_DECODER.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
