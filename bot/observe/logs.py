"""Structured logs on stderr (JSON lines, or a console format for people), with secrets
masked before anything is written.

Every `extra=` field a caller passes is kept (no whitelist that silently drops fields),
and the fields bound with `bind_log_context` (job and delivery ids, per job) are added to
every line logged inside it, handlers included.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import threading
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

LogFormat = Literal["json", "console"]
# The attributes every LogRecord has; anything else on a record came from `extra=` or
# from the bound context, and is written out. uvicorn adds `color_message`, its message
# again with terminal colour codes for its own formatter: escape bytes in a log line.
_RECORD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime", "taskName", "_pr_digest_redacted", "color_message"}
# Fields most lines carry, in this order first (the rest follow as given).
CONTEXT_FIELDS = (
    "delivery", "event", "action", "outcome", "repo", "pr", "installation", "job", "kind",
    "attempt", "duration_ms", "error", "reason", "status",
)
MASK = "[REDACTED]"
_context: ContextVar[dict[str, object] | None] = ContextVar("pr_digest_log_context",
                                                            default=None)


class _BoundLogContext:
    # A class, not @contextmanager: the webhook ack binds a delivery id several times
    # per delivery, and a generator-based manager costs several times this. One object
    # may be entered again once it has been exited (the ack's callbacks each enter theirs).
    __slots__ = ("_fields", "_token")

    def __init__(self, fields: dict[str, object]) -> None:
        self._fields = {k: v for k, v in fields.items() if v is not None}
        self._token: Token[dict[str, object] | None] | None = None

    def __enter__(self) -> None:
        current = _context.get()
        # Nobody mutates a bound dict: with nothing bound around it, ours is used as is.
        self._token = _context.set({**current, **self._fields} if current else self._fields)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _context.reset(self._token)
            self._token = None


def bind_log_context(**fields: object) -> AbstractContextManager[None]:
    """Add these fields to every line logged inside the block (this task and its calls)."""
    return _BoundLogContext(fields)


def extra_fields(record: logging.LogRecord) -> dict[str, object]:
    """The record's own fields (from `extra=` and the bound context), known ones first."""
    return _known_first(
        {k: v for k, v in record.__dict__.items() if k not in _RECORD_ATTRIBUTES})


# The hot path logs the same few key sets over and over: their order is worked out once.
_key_orders: dict[tuple[str, ...], tuple[str, ...]] = {}
_KEY_ORDERS_KEPT = 256


def _key_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """`keys` as `_known_first` orders them."""
    order = _key_orders.get(keys)
    if order is None:
        order = tuple(_known_first(dict.fromkeys(keys)))
        if len(_key_orders) < _KEY_ORDERS_KEPT:
            _key_orders[keys] = order
    return order


def _known_first(fields: dict[str, object]) -> dict[str, object]:
    """`fields` (consumed) with CONTEXT_FIELDS first, in their order, then the rest."""
    ordered = {name: fields.pop(name) for name in CONTEXT_FIELDS if name in fields}
    ordered.update(fields)
    return ordered

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


def _may_match_patterns(text: str) -> bool:
    # Every match of _PATTERNS contains one of these literals (case-sensitive, like the
    # patterns): text holding none of them skips the regexes. Most log values (delivery
    # ids, event names, repo names) hold none, and intake logs a line per delivery.
    return ("gh" in text or "eyJ" in text or "sha256=" in text or "-----BEGIN " in text
            or "github_pat_" in text)


def redact(text: str) -> str:
    if _may_match_patterns(text):
        for pattern in _PATTERNS:
            text = pattern.sub(MASK, text)
    for secret in _secrets_longest_first:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _nothing_to_redact(values: Iterable[object]) -> bool:
    """True when these values are plain scalars and no text among them could hold a
    pattern or a registered secret: a substring of one value is a substring of their
    join, so one check of the join stands for one per value."""
    values = tuple(values)
    if not _PLAIN_TYPES.issuperset(map(type, values)):
        return False
    joined = "\x00".join([value for value in values if type(value) is str])
    return not _may_match_patterns(joined) and not any(
        secret in joined for secret in _secrets_longest_first)


# Exactly these (no subclasses: a str subclass may format itself differently).
_PLAIN_TYPES = frozenset({str, int, float, bool, type(None)})


def _redact_value(value: object, depth: int = 0) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, int | float | bool) or value is None:
        return value
    # Lists of logins or labels stay lists in JSON; anything deeper or odd becomes text.
    if depth < 3 and isinstance(value, list | tuple | set | frozenset):
        return [_redact_value(item, depth + 1) for item in value]
    if depth < 3 and isinstance(value, dict):
        return {str(k): _redact_value(v, depth + 1) for k, v in value.items()}
    return redact(repr(value))


class RedactingFilter(logging.Filter):
    """Rewrites the record in place, so every handler after it sees masked text only.
    Also adds the bound context's fields the call did not pass itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.__dict__.get("_pr_digest_redacted"):
            return True
        for name, value in (_context.get() or {}).items():
            record.__dict__.setdefault(name, value)
        record.msg = redact(record.getMessage())
        record.args = None
        for name in extra_fields(record):
            record.__dict__[name] = _redact_value(record.__dict__[name])
        record.__dict__["_pr_digest_redacted"] = True
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = _line_head(record.created, record.levelname, record.getMessage(), record.name)
        for name, value in extra_fields(record).items():
            if value is not None and name not in line:
                line[name] = value
        if record.exc_text:
            line["exc"] = record.exc_text
        elif record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return _json_text(line)


def _line_head(created: float, level_name: str, message: str, logger: str) -> dict[str, Any]:
    return {"ts": log_timestamp(created), "level": level_name.lower(), "msg": message,
            "logger": logger}


_last_second: list[Any] = [None, ""]


def log_timestamp(created: float) -> str:
    """`datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")`, with
    the part up to the second made once per second (a few lines a millisecond under load)."""
    # As datetime rounds: the fraction on its own, half to even, to microseconds.
    fraction, whole = math.modf(created)
    seconds, micros = int(whole), round(fraction * 1_000_000)
    if micros >= 1_000_000:
        seconds, micros = seconds + 1, micros - 1_000_000
    cached_second, prefix = _last_second
    if seconds != cached_second:
        prefix = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second[:] = [seconds, prefix]
    return f"{prefix}.{micros // 1000:03d}+00:00"


_ENCODER = msgspec.json.Encoder(enc_hook=str)


def _json_text(line: dict[str, Any], *, redact_text: bool = True) -> str:
    try:
        text = _ENCODER.encode(line).decode()
    except (UnicodeEncodeError, TypeError, ValueError, OverflowError):
        # Lone surrogates (from payload text) are not UTF-8; the stdlib escapes them.
        text = json.dumps(line, default=str, ensure_ascii=False, separators=(",", ":"))
    # Redact again on the final text: a formatter can be used without the filter.
    return redact(text) if redact_text else text


class HotPathLog:
    """One line per event on a hot path (the webhook ack logs one per delivery): the
    same JSON line the logging module would write, without a LogRecord, a caller
    lookup or a filter pass, which cost several times the work being logged.

    Taken only when the line would reach exactly our JSON handler and nothing else (the
    service's own configuration); with any other handler, filter or format in the way
    (tests' capture handlers, the console format, an embedding app's logging), the
    call goes through `logging` as usual, so nothing that listens misses a line."""

    def __init__(self, name: str) -> None:
        self._logger = logging.getLogger(name)

    def log(self, level: int, message: str, fields: dict[str, object]) -> None:
        logger = self._logger
        if not logger.isEnabledFor(level):
            return
        handler = _only_json_handler(logger, level)
        if handler is None:
            logger.log(level, "%s", message, extra=fields)
            return
        context = _context.get()
        if context and not context.keys() <= fields.keys():
            # An explicit field wins over the bound context, as the logging path has it.
            fields = fields | {k: v for k, v in context.items() if k not in fields}
        line = _line_head(time.time(), logging.getLevelName(level), redact(message),
                          logger.name)
        plain = _nothing_to_redact(fields.values())
        for name in _key_order(tuple(fields)):
            value = fields[name]
            if value is not None and name not in line:
                line[name] = value if plain else _redact_value(value)
        # The message and every value are redacted already; the keys are ours.
        text = _json_text(line, redact_text=False) + handler.terminator
        with handler.lock:  # type: ignore[union-attr]  # created by Handler.__init__
            try:
                handler.stream.write(text)
                handler.stream.flush()
            except Exception:  # as StreamHandler.emit: never raise from logging
                handler.handleError(logging.makeLogRecord({"msg": message}))


def _only_json_handler(logger: logging.Logger, level: int) -> logging.StreamHandler[Any] | None:
    """Our JSON handler when it is the one and only thing this line reaches."""
    found: logging.StreamHandler[Any] | None = None
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if (found is not None or not getattr(handler, "_pr_digest", False)
                    or not isinstance(handler, logging.StreamHandler)
                    or type(handler.formatter) is not JsonFormatter
                    or len(handler.filters) != 1 or level < handler.level):
                return None
            found = handler
        current = current.parent if current.propagate else None
    return found


class ConsoleFormatter(logging.Formatter):
    """`12:00:01 INFO  bot.queue.jobs: job ok  job=3 repo=a/b pr=7` for a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        text = f"{when} {record.levelname:<7} {record.name}: {record.getMessage()}"
        fields = " ".join(f"{k}={_console_value(v)}" for k, v in extra_fields(record).items()
                          if v is not None)
        if fields:
            text += f"  {fields}"
        if record.exc_text:
            text += "\n" + record.exc_text
        elif record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return redact(text)


def _console_value(value: object) -> str:
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if (" " in text or not text) else text


def default_log_format() -> LogFormat:
    """Console for a person at a terminal, JSON lines for everything else."""
    return "console" if sys.stderr.isatty() else "json"


# Loggers that write a line per HTTP request at INFO: httpx's "HTTP Request: GET … 200
# OK" for every GitHub call. Their lines become DEBUG; each job's line sums its calls.
PER_CALL_LOGGERS = ("httpx",)


class DemoteToDebug(logging.Filter):
    """On a logger: its INFO records become DEBUG ones, dropped unless DEBUG is on
    (the logger's own level check passed them as INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def demote_per_call_loggers() -> None:
    """Install `DemoteToDebug` on `PER_CALL_LOGGERS` (once each)."""
    for name in PER_CALL_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, DemoteToDebug) for f in logger.filters):
            logger.addFilter(DemoteToDebug())


def configure_logging(level: str | int = "INFO", fmt: LogFormat = "json") -> logging.Handler:
    """Route the root logger to stderr (JSON lines or console). Idempotent: replaces our
    handler. Per-request lines (httpx's) are DEBUG, see `PER_CALL_LOGGERS`."""
    demote_per_call_loggers()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_pr_digest", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ConsoleFormatter() if fmt == "console" else JsonFormatter())
    handler.addFilter(RedactingFilter())
    handler._pr_digest = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    return handler
