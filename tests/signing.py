"""The one helper that signs webhook bodies the way GitHub does (X-Hub-Signature-256)."""

from __future__ import annotations

import hashlib
import hmac
import uuid


def sign(body: bytes, secret: str) -> str:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(
    event: str, body: bytes, secret: str, delivery: str | None = None
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(body, secret),
        "User-Agent": "GitHub-Hookshot/test",
    }
