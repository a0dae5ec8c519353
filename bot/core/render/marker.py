"""The hidden first line of the sticky comment: how the bot recognizes its comment
and remembers what it last said (head SHA, rules version, verdict, risk level).

The marker sits in a comment anyone with write access can edit, so parsing trusts
nothing: every known field is validated, unknown fields are ignored (a newer bot
version may add some), and anything malformed yields None.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.core.vocabulary import Lang, Verdict

MARKER_PREFIX = "<!-- pr-digest"
MARKER_SUFFIX = "-->"
MARKER_VERSION = "v1"

RiskLevel = Literal["none", "low", "medium", "high"]
RISK_LEVELS: tuple[RiskLevel, ...] = ("none", "low", "medium", "high")

# Empty when unknown (an offline digest of a bare PR object). 40 hex for SHA-1
# repositories, 64 for SHA-256 ones.
SHA_PATTERN = r"^(?:[0-9a-f]{40}|[0-9a-f]{64})?$"
# A token that can never end or open an HTML comment nor split the marker.
RULES_PATTERN = r"^[0-9A-Za-z._+]{1,64}$"
_MAX_LINE = 1000
_FIELD = re.compile(r"^([a-z][a-z0-9_-]{0,31})=(\S*)$")
_FLAGS = {"1": True, "0": False, "true": True, "false": False}
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_SAFE_CHAR = re.compile(r"[A-Za-z0-9._/:+-]")
_PERCENT = re.compile(r"(%[0-9A-F]{2})")
# GitHub allows 15 requested reviewers; labels are capped far lower by our rules.
MAX_REMEMBERED = 20
_MAX_SEEN_DIGITS = 12


class Marker(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    head_sha: str = Field(pattern=SHA_PATTERN)
    rules_version: str = Field(pattern=RULES_PATTERN)
    lang: Lang
    verdict: Verdict
    risk_level: RiskLevel
    muted: bool = False
    explain: bool = False
    routed: tuple[str, ...] = Field(default=(), max_length=MAX_REMEMBERED)
    owned_labels: tuple[str, ...] = Field(default=(), max_length=MAX_REMEMBERED)
    # When GitHub last changed the PR this digest was built from (its `updated_at`, epoch
    # seconds; a push moves it): a digest is never replaced by one built from an older
    # read of the PR (bot/core/render/sticky.py). None in markers from before it.
    seen: int | None = Field(default=None, ge=0)

    @field_validator("routed")
    @classmethod
    def _logins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not all(_LOGIN.fullmatch(login) for login in value):
            raise ValueError("not a GitHub login")
        return value


def _encode_list(items: tuple[str, ...]) -> str:
    """Comma-separated, with anything but safe characters as %XX (labels have spaces)."""
    return ",".join(
        "".join(ch if _SAFE_CHAR.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode())
                for ch in item)
        for item in items
    )


def _decode_list(value: str) -> tuple[str, ...]:
    if not value:
        return ()
    items = []
    for item in value.split(","):
        raw = bytearray()
        for piece in _PERCENT.split(item):
            if _PERCENT.fullmatch(piece):
                raw.append(int(piece[1:], 16))
            else:
                raw.extend(piece.encode())
        items.append(raw.decode("utf-8", errors="replace"))
    return tuple(items)


def render_marker(m: Marker) -> str:
    """One line: `<!-- pr-digest v1 sha=… rules=… lang=en verdict=read risk=high -->`."""
    fields = [
        MARKER_PREFIX,
        MARKER_VERSION,
        f"sha={m.head_sha}",
        f"rules={m.rules_version}",
        f"lang={m.lang}",
        f"verdict={m.verdict}",
        f"risk={m.risk_level}",
    ]
    if m.muted:
        fields.append("muted=1")
    if m.explain:
        fields.append("explain=1")
    if m.routed:
        fields.append(f"routed={_encode_list(m.routed)}")
    if m.owned_labels:
        fields.append(f"labels={_encode_list(m.owned_labels)}")
    if m.seen is not None:
        fields.append(f"seen={m.seen}")
    fields.append(MARKER_SUFFIX)
    return " ".join(fields)


def is_marker_line(body: str) -> bool:
    """Whether the body's first line claims to be a digest marker (valid or not)."""
    return body.startswith(MARKER_PREFIX)


def parse_marker(body: str) -> Marker | None:
    """The marker on the first line of `body`, or None if absent or malformed."""
    line = body.split("\n", 1)[0].strip()
    if len(line) > _MAX_LINE or not line.startswith(MARKER_PREFIX + " "):
        return None
    if not line.endswith(" " + MARKER_SUFFIX) or line.count(MARKER_SUFFIX) != 1:
        return None
    tokens = line[len(MARKER_PREFIX) : -len(MARKER_SUFFIX)].split()
    if not tokens or not re.fullmatch(r"v[0-9]{1,3}", tokens[0]):
        return None
    seen: dict[str, str] = {}
    for token in tokens[1:]:
        match = _FIELD.match(token)
        if match is None:
            continue  # a bare word from a future version
        key, value = match.groups()
        if key in seen:
            return None  # ambiguous: someone edited it
        seen[key] = value
    return _marker_from_fields(seen)


def _seen_of(value: str) -> int | None:
    # Only an ordering: a mangled one is as if absent, not a lost marker.
    if value.isascii() and value.isdigit() and len(value) <= _MAX_SEEN_DIGITS:
        return int(value)
    return None


def _marker_from_fields(fields: dict[str, str]) -> Marker | None:
    flags: dict[str, bool] = {}
    for key in ("muted", "explain"):
        if key in fields:
            flag = _FLAGS.get(fields[key])
            if flag is None:
                return None
            flags[key] = flag
    try:
        return Marker.model_validate(
            {
                "head_sha": fields["sha"],
                "rules_version": fields["rules"],
                "lang": fields["lang"],
                "verdict": fields["verdict"],
                "risk_level": fields["risk"],
                "routed": _decode_list(fields.get("routed", "")),
                "owned_labels": _decode_list(fields.get("labels", "")),
                "seen": _seen_of(fields.get("seen", "")),
                **flags,
            }
        )
    except (KeyError, ValidationError):
        return None


def with_seen(body: str, seen: int | None) -> str:
    """`body` with its marker's `seen` set to `seen` (None: removed); a body without
    a valid marker is returned as it is."""
    first, newline, rest = body.partition("\n")
    marker = parse_marker(first)
    if marker is None or marker.seen == seen:
        return body
    return render_marker(marker.model_copy(update={"seen": seen})) + newline + rest


def risk_escalated(old: Marker | None, new: Marker) -> bool:
    """Whether the risk level went up since the last comment, which is worth a new
    notification (silent edits go unnoticed). No previous marker means no ping: the
    comment is being created, and creation notifies by itself. A muted PR never pings."""
    if old is None or new.muted:
        return False
    return RISK_LEVELS.index(new.risk_level) > RISK_LEVELS.index(old.risk_level)
