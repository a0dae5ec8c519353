"""Structured JSON logs on stderr, with secrets masked before anything is written."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Mapping
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


# One encoder for every line: json.dumps(default=...) would build a new one per call.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


def _json_line(created: float, level: str, msg: str, logger: str,
               fields: Mapping[str, object], exc: str | None) -> str:
    line: dict[str, Any] = {
        "ts": datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds"),
        "level": level.lower(),
        "msg": msg,
        "logger": logger,
    }
    for name in CONTEXT_FIELDS:
        value = fields.get(name)
        if value is not None:
            line[name] = value
    if exc:
        line["exc"] = exc
    # Redact again on the final text: a formatter can be used without the filter.
    return redact(_ENCODER.encode(line))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_text
        if not exc and record.exc_info:
            exc = self.formatException(record.exc_info)
        return _json_line(record.created, record.levelname, record.getMessage(), record.name,
                          record.__dict__, exc)


class BoundLine:
    """One pre-bound structured call for a hot path (intake logs a line per delivery).

    Writes exactly the line `logger.log(level, message, extra=fields)` would, masked the
    same way, straight to our JSON handler: no LogRecord, caller lookup or filter pass.
    Whenever anything else could want the record (another handler, e.g. pytest's
    caplog; a handler or filter on the logger itself), it goes through `logging`."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def __call__(self, level: int, message: str, fields: Mapping[str, object]) -> None:
        logger = self._logger
        if not logger.isEnabledFor(level):
            return
        handler = _only_our_handler(logger, level)
        if handler is None:
            logger.log(level, "%s", message, extra=dict(fields))
            return
        masked = {name: _redact_value(fields[name]) for name in CONTEXT_FIELDS
                  if fields.get(name) is not None}
        text = _json_line(time.time(), logging.getLevelName(level), redact(message),
                          logger.name, masked, None)
        with handler.lock or contextlib.nullcontext():
            handler.stream.write(text + handler.terminator)
            handler.flush()


def _only_our_handler(logger: logging.Logger, level: int) -> logging.StreamHandler[Any] | None:
    handler = _our_handler
    if handler is None or level < handler.level or logger.filters:
        return None
    node: logging.Logger | None = logger
    while node is not None:
        if node.handlers and node is not logging.root:
            return None
        if not node.propagate:
            return None
        node = node.parent
    if logging.root.handlers != [handler]:
        return None
    return handler


_our_handler: logging.StreamHandler[Any] | None = None


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
    global _our_handler
    _our_handler = handler
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
