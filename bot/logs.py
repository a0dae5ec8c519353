"""Structured JSON logs on stderr, with secrets masked before anything is written."""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from datetime import UTC, datetime
from typing import Any

# Context fields callers pass with `extra=`; everything else on the record is noise.
CONTEXT_FIELDS = (
    "delivery", "event", "action", "outcome", "repo", "pr", "installation", "job", "kind",
    "attempt", "duration_ms", "error", "reason", "status",
)
MASK = "[REDACTED]"

_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(?:-----END [A-Z0-9 ]+-----|$)", re.DOTALL),
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    re.compile(r"sha256=[0-9a-fA-F]{8,}"),
)
# Short values would mask ordinary words; real secrets are longer than this.
_MIN_SECRET_LENGTH = 4
_secrets: set[str] = set()
# Longest first, so a secret that contains another is masked whole. Rebuilt on register,
# not sorted per call.
_secrets_longest_first: tuple[str, ...] = ()
_secrets_lock = threading.Lock()


def register_secret(value: str | bytes | None) -> None:
    """Mask this exact value wherever it appears in a log line from now on."""
    if value is None:
        return
    text = value.decode(errors="replace") if isinstance(value, bytes) else value
    if len(text) >= _MIN_SECRET_LENGTH:
        global _secrets_longest_first
        with _secrets_lock:
            _secrets.add(text)
            _secrets_longest_first = tuple(sorted(_secrets, key=len, reverse=True))


def redact(text: str) -> str:
    # Every match of _PATTERNS contains one of these literals (case-sensitive, like the
    # patterns): text holding none of them skips the regexes. Most log values (delivery
    # ids, event names, repo names) hold none, and intake logs a line per delivery.
    if ("gh" in text or "eyJ" in text or "sha256=" in text or "-----BEGIN " in text
            or "github_pat_" in text):
        for pattern in _PATTERNS:
            text = pattern.sub(MASK, text)
    for secret in _secrets_longest_first:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _redact_value(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, int | float | bool) or value is None:
        return value
    return redact(repr(value))


class RedactingFilter(logging.Filter):
    """Rewrites the record in place, so every handler after it sees masked text only."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        for name in CONTEXT_FIELDS:
            if name in record.__dict__:
                record.__dict__[name] = _redact_value(record.__dict__[name])
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "msg": record.getMessage(),
            "logger": record.name,
        }
        for name in CONTEXT_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                line[name] = value
        if record.exc_text:
            line["exc"] = record.exc_text
        elif record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        # Redact again on the final text: a formatter can be used without the filter.
        return redact(json.dumps(line, default=str, ensure_ascii=False))


def configure_logging(level: str | int = "INFO") -> logging.Handler:
    """Route the root logger to stderr as JSON lines. Idempotent: replaces our handler."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_pr_digest", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactingFilter())
    handler._pr_digest = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
