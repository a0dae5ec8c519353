"""When to retry a GitHub call, and what a final failure means to the job system.

githubkit's default policy sleeps until a primary rate limit resets (up to an
hour) and retries 5xx on POST, which duplicates comments. This policy:
- retries idempotent reads on 5xx, timeouts and transport errors, with capped
  exponential backoff, at most `max_tries` attempts;
- never retries a write on 5xx/timeout: GitHub may have applied it before the
  response was lost, so the caller re-plans (re-lists comments) first;
- waits out a rate limit only when GitHub's wait is short; otherwise it gives up
  and `translate_error` turns it into `RateLimited` so the job is rescheduled.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import httpx
from githubkit.exception import (
    GitHubException,
    RateLimitExceeded,
    RequestError,
    RequestFailed,
    RequestTimeout,
)
from githubkit.retry import RetryOption

from bot.github.protocol import BadCredentials, GitHubError, NotFound, RateLimited, Unprocessable

log = logging.getLogger(__name__)

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# Route templates for the endpoints we call: they name failures in errors and logs
# and label metrics, so label cardinality stays bounded (no numbers, no logins).
ROUTE_TEMPLATES: tuple[str, ...] = (
    "/app",
    "/app/installations",
    "/app/installations/{installation_id}/access_tokens",
    "/installation/repositories",
    "/repos/{owner}/{repo}",
    "/repos/{owner}/{repo}/installation",
    # Before `/commits/{ref}`: a ref may hold "/", so that one would take these too.
    "/repos/{owner}/{repo}/commits/{ref}/status",
    "/repos/{owner}/{repo}/commits/{ref}/check-runs",
    "/repos/{owner}/{repo}/commits/{commit_sha}/pulls",
    "/repos/{owner}/{repo}/commits/{ref}",
    "/repos/{owner}/{repo}/tarball/{ref}",
    "/repos/{owner}/{repo}/compare/{basehead}",
    "/repos/{owner}/{repo}/pulls",
    "/repos/{owner}/{repo}/pulls/{number}",
    "/repos/{owner}/{repo}/pulls/{number}/files",
    "/repos/{owner}/{repo}/pulls/{number}/reviews",
    "/repos/{owner}/{repo}/pulls/{number}/comments",
    "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
    "/repos/{owner}/{repo}/issues/{number}",
    "/repos/{owner}/{repo}/issues/{number}/comments",
    "/repos/{owner}/{repo}/issues/comments/{comment_id}",
    "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
    "/repos/{owner}/{repo}/issues/{number}/labels",
    "/repos/{owner}/{repo}/issues/{number}/labels/{name}",
    "/repos/{owner}/{repo}/collaborators/{username}/permission",
    "/repos/{owner}/{repo}/contents/{path}",
    "/repos/{owner}/{repo}/git/trees/{sha}",
    "/repos/{owner}/{repo}/git/blobs/{sha}",
    "/repos/{owner}/{repo}/check-runs",
    "/repos/{owner}/{repo}/check-runs/{check_run_id}",
)


def _compile(template: str) -> re.Pattern[str]:
    # Label names may hold "/" (vLLM's "ci/build"), paths always can, and so can a
    # branch name ("release/v0.9": the path httpx reports has its %2F decoded), and so
    # can a compare's `base...branch`.
    pattern = re.sub(r"\{(?:path|name|ref|basehead)\}", ".+", template)
    pattern = re.sub(r"\{(?:number|comment_id|installation_id|check_run_id)\}", r"\\d+",
                     pattern)
    return re.compile(re.sub(r"\{\w+\}", "[^/]+", pattern))


_ROUTES = tuple((_compile(t), t) for t in ROUTE_TEMPLATES)


def template_path(path: str, base_path: str = "/") -> str:
    """`/repos/a/b/pulls/7/files` -> `/repos/{owner}/{repo}/pulls/{number}/files`."""
    if base_path != "/" and path.startswith(base_path.rstrip("/")):
        path = path[len(base_path.rstrip("/")):] or "/"
    path = path.rstrip("/") or "/"
    for pattern, template in _ROUTES:
        if pattern.fullmatch(path):
            return template
    return "other"


def _request_of(exc: GitHubException) -> httpx.Request | None:
    if isinstance(exc, RequestFailed):
        return exc.request
    if isinstance(exc, RequestError) and isinstance(exc.exc, httpx.RequestError):
        try:
            return exc.exc.request
        except RuntimeError:  # httpx raises when the request was never attached
            return None
    return None


def describe_request(exc: GitHubException) -> str:
    """`METHOD /templated/path`, for retry warnings: bounded, never query or headers."""
    request = _request_of(exc)
    if request is None:
        return "GitHub request"
    return f"{request.method} {template_path(request.url.path)}"


def describe_target(exc: GitHubException) -> str:
    """`METHOD https://host/path` of a failed request, for the error an operator reads:
    the real target, never the query string or headers (tokens live there)."""
    request = _request_of(exc)
    if request is None:
        return "GitHub request"
    url = request.url
    return f"{request.method} {url.scheme}://{url.netloc.decode('ascii', 'replace')}{url.path}"


def _cause(exc: BaseException) -> str:
    """The innermost reason of a transport failure, e.g. `Name or service not known`."""
    seen: set[int] = set()
    inner: BaseException = exc
    while id(inner) not in seen:
        seen.add(id(inner))
        nested = inner.__cause__ or inner.__context__
        if nested is None or not str(nested):
            break
        inner = nested
    text = str(inner) or type(inner).__name__
    # "[Errno -2] Name or service not known" -> "Name or service not known"
    return re.sub(r"^\[Errno -?\d+\]\s*", "", text)[:200]


def _transport_failure(exc: BaseException) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return "timed out connecting"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({_cause(exc)})"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"connection dropped ({_cause(exc)})"
    if isinstance(exc, httpx.TransportError):
        return f"network error ({_cause(exc)})"
    return f"{type(exc).__name__}: {_cause(exc)}"


class RetryPolicy:
    """A githubkit `auto_retry` callable: `(exc, retry_count) -> RetryOption`."""

    def __init__(
        self,
        *,
        max_wait: float,
        max_tries: int = 3,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
    ) -> None:
        self.max_wait = max_wait
        self.max_tries = max_tries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if retry_count + 1 >= self.max_tries:
            return RetryOption(False)
        if isinstance(exc, RateLimitExceeded):
            # GitHub rejected the request outright, so retrying a write is safe.
            wait = exc.retry_after.total_seconds()
            if wait > self.max_wait:
                return RetryOption(False)
            log.warning("rate limited on %s; retrying in %.1fs", describe_request(exc), wait)
            return RetryOption(True, timedelta(seconds=wait))
        request = _request_of(exc)
        if request is None or request.method not in IDEMPOTENT_METHODS:
            return RetryOption(False)
        if isinstance(exc, RequestFailed):
            transient = exc.response.status_code >= 500
        else:  # timeouts and transport errors (connection reset, refused)
            transient = isinstance(exc, RequestError)
        if not transient:
            return RetryOption(False)
        wait = min(self.backoff_cap, self.backoff_base * 2**retry_count)
        log.warning("transient failure on %s; retry %d in %.2fs",
                    describe_request(exc), retry_count + 1, wait)
        return RetryOption(True, timedelta(seconds=wait))


def _github_message(exc: RequestFailed) -> str:
    try:
        body = exc.response.raw_response.json()
    except ValueError:
        return ""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])[:200]
    return ""


def translate_error(exc: GitHubException) -> GitHubError:
    """Map a githubkit failure to the protocol's exceptions, without secrets."""
    where = describe_target(exc)
    if isinstance(exc, RateLimitExceeded):
        wait = exc.retry_after.total_seconds()
        return RateLimited(
            f"{where}: rate limited, retry after {wait:.0f}s",
            status=exc.response.status_code,
            retry_after=wait,
        )
    if isinstance(exc, RequestFailed):
        status = exc.response.status_code
        text = f"{where}: HTTP {status}"
        message = _github_message(exc)
        if message:
            text += f" ({message})"
        # githubkit only recognises a limit by Retry-After or Remaining: 0; a bare 429
        # or a secondary-limit 403 is still a limit, and GitHub asks for >= 60 s then.
        if status == 429 or (status == 403 and "rate limit" in message.lower()):
            return RateLimited(text, status=status, retry_after=60.0)
        if status == 401:
            return BadCredentials(text, status=status)
        if status == 404:
            return NotFound(text, status=status)
        if status == 422:
            return Unprocessable(text, status=status)
        return GitHubError(text, status=status)
    if isinstance(exc, RequestTimeout):
        return GitHubError(f"{where}: {_transport_failure(exc.exc)}")
    if isinstance(exc, RequestError):
        return GitHubError(f"{where}: {_transport_failure(exc.exc)}")
    return GitHubError(f"{where}: {type(exc).__name__}: {_cause(exc)}")
