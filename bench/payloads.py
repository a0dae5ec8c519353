"""Signed `pull_request.opened` deliveries for the intake benchmark, each one distinct.

The template is one real example from `@octokit/webhooks-examples` (MIT), kept in
fixtures/pull_request_opened.json. Every delivery gets its own PR number, PR id, head
SHA and delivery id, so a server that dedupes by delivery id or coalesces per PR takes
its ordinary insert path for every request instead of a cheap duplicate path.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pull_request_opened.json"
# High enough that no number collides with the example's own (#2).
FIRST_NUMBER = 100_000


@dataclass(frozen=True)
class SignedDelivery:
    body: bytes
    headers: dict[str, str]


def load_template(path: Path = FIXTURE) -> dict[str, Any]:
    template: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return template


def sign_body(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def build_delivery(template: dict[str, Any], index: int, secret: str) -> SignedDelivery:
    """The index-th delivery. Mutates `template` in place: callers dump it right away."""
    number = FIRST_NUMBER + index
    pull_request: dict[str, Any] = template["pull_request"]
    template["number"] = number
    pull_request["number"] = number
    pull_request["id"] = 10_000_000 + number
    pull_request["head"]["sha"] = hashlib.sha1(str(number).encode()).hexdigest()  # noqa: S324
    # GitHub sends compact JSON.
    body = json.dumps(template, separators=(",", ":")).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/bench",
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "1",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": "1",
        "X-Hub-Signature-256": sign_body(body, secret),
    }
    return SignedDelivery(body=body, headers=headers)


def build_deliveries(count: int, secret: str, first_index: int = 0) -> list[SignedDelivery]:
    template = load_template()
    return [build_delivery(template, first_index + i, secret) for i in range(count)]
