"""A database URL as it may be shown: the password is never printed or logged."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")


def is_postgres_url(url: str) -> bool:
    return urlsplit(url).scheme in SCHEMES


def redact_url(url: str) -> str:
    """`postgresql://user:***@host:5432/db?...`: the password (in the userinfo or a
    `password=` query parameter) replaced, everything else kept for the operator."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{host}"
        query = "&".join(
            ("password=***" if item.lower().startswith("password=") else item)
            for item in parts.query.split("&")) if parts.query else ""
        return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return "(unparsable URL, not shown)"


def secrets_in_url(url: str) -> list[str]:
    """The password(s) the URL carries, so a driver's message can be scrubbed of them."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password] if parts.password else []
    for item in parts.query.split("&"):
        name, _, value = item.partition("=")
        if name.lower() == "password" and value:
            found.append(value)
    return found
