"""Creates per-job GitHub clients: App auth, token caching, retries, pacing, metrics.

One `GitHubSessionFactory` lives for the process (built from `Settings` and
`Metrics`). Each job does::

    async with factory.for_installation(installation_id) as gh:
        pull = await gh.get_pull("vllm-project/vllm", 123)

githubkit reuses one HTTP connection only inside `async with client:` (the entered
client lives in a ContextVar), so every job enters its own client here.
Every HTTP request (each retry, each redirect hop) is counted in
`digest_github_calls_total` by templated endpoint and status, `error` when no answer
came (refused, timed out, DNS); it is logged at DEBUG only, and added to the running
job's tally (`bot.observe.metrics.count_github_calls`) for its one summary line.
githubkit mints installation tokens per client without a lock, so N concurrent
jobs would mint N tokens: we mint through the App (JWT) client ourselves, under
one lock per installation, and cache the token until shortly before it expires.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from githubkit import (
    AppAuthStrategy,
    BaseAuthStrategy,
    GitHub,
    TokenAuthStrategy,
    UnauthAuthStrategy,
)
from githubkit.cache import MemCacheStrategy
from githubkit.exception import RequestError
from githubkit.response import Response
from githubkit.throttling import BaseThrottler, LocalThrottler
from githubkit_schemas.latest.models import (
    Installation,
    InstallationRepositoriesGetResponse200,
    InstallationRepositoriesGetResponse200PropRepositoriesItems,
)

from bot.github.adapter import PER_PAGE, GitHubKitAdapter, split_repo, translated
from bot.github.conditional import ConditionalCache
from bot.github.fence import check_before_send
from bot.github.pacing import WritePacer
from bot.github.protocol import BadCredentials, GitHubError
from bot.github.retry import RetryPolicy, template_path
from bot.net.tls import client_context
from bot.observe.metrics import CALL_ERROR, Metrics, note_github_call
from bot.settings.model import Settings

# Refresh this long before `expires_at` so a token never expires mid-job.
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
WRITES_PER_MINUTE = 80
# githubkit's own default: at most this many requests in flight per client.
MAX_CONCURRENT_REQUESTS = 100
# Our marks on a request's httpx extensions (httpcore reads only the keys it knows). A
# followed redirect's request shares the first one's extensions: its hop is labelled
# after the endpoint we called (codeload's path is not GitHub's API), e.g.
# `GET /repos/{owner}/{repo}/tarball/{ref} (redirect)`.
_STARTED = "pr_digest_started"
_ORIGIN = "pr_digest_origin"
_ENDPOINT = "pr_digest_endpoint"
REDIRECT_SUFFIX = " (redirect)"
_READ_METHODS = frozenset({"GET", "HEAD"})

log = logging.getLogger(__name__)


class _FailureCountingThrottler(BaseThrottler):
    """githubkit's default throttler, which also reports each request that got no
    answer: the response hooks never see those (refused, timed out, DNS)."""

    def __init__(self, on_failure: Callable[[httpx.Request, httpx.RequestError, float], None]
                 ) -> None:
        self._inner = LocalThrottler(MAX_CONCURRENT_REQUESTS)
        self._on_failure = on_failure

    @contextmanager
    def acquire(self, request: httpx.Request) -> Generator[None, Any, Any]:
        with self._inner.acquire(request):
            yield

    @asynccontextmanager
    async def async_acquire(self, request: httpx.Request) -> AsyncGenerator[None, Any]:
        async with self._inner.async_acquire(request):
            started = time.perf_counter()
            try:
                yield
            except RequestError as exc:
                # githubkit wraps what `send` raised; a transport failure is an httpx one
                # (anything else, e.g. an App key that cannot sign, sent nothing).
                if isinstance(exc.exc, httpx.RequestError):
                    self._on_failure(request, exc.exc, time.perf_counter() - started)
                raise


class GitHubSessionFactory:
    """Builds GitHubAPI adapters; shares token cache, pacers and metrics across jobs."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        *,
        retry_policy: RetryPolicy | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._settings = settings
        self._metrics = metrics
        self._retry = retry_policy or RetryPolicy(max_wait=settings.max_retry_wait_seconds)
        self._now = now
        # Per factory, so a JWT signed with one key is never reused for another app.
        self._cache = MemCacheStrategy()
        self._tokens: dict[int, tuple[str, datetime]] = {}
        self._token_locks: dict[int, asyncio.Lock] = {}
        self._pacers: dict[str, WritePacer] = {}
        # ETags and pages of the conversation lists, shared by this factory's jobs.
        self.kept_pages = ConditionalCache()
        self._bot_login: str | None = settings.bot_login
        # The GET /app in flight, if any: the credential check (the server's loop) and
        # the worker (its own loop, another thread) both ask at start; one request serves
        # both. Guarded by a thread lock because the two callers are on different loops.
        self._bot_login_pending: concurrent.futures.Future[str] | None = None
        self._bot_login_lock = threading.Lock()
        self._base_path = httpx.URL(settings.github_api_url).path or "/"
        self._tls = client_context()  # loaded here, at start-up, not in a job (bot/net/tls.py)

    # --- clients -----------------------------------------------------------

    def _client(self, auth: BaseAuthStrategy, metrics_key: str) -> GitHub[Any]:
        async def on_request(request: httpx.Request) -> None:
            # The last moment before a write (or its retry) leaves: a job that lost its
            # lease, or was paused past it since the store last said it held it, stops
            # here (bot/github/fence.py). The App's own token requests write nothing.
            if request.method not in _READ_METHODS and metrics_key != "app":
                check_before_send()
            self._mark(request)

        async def on_response(response: httpx.Response) -> None:
            self._record(response, metrics_key)

        return GitHub(
            auth,
            base_url=self._settings.github_api_url,
            user_agent="pr-digest",
            timeout=self._settings.http_timeout_seconds,
            http_cache=False,
            cache_strategy=self._cache,
            auto_retry=self._retry,
            async_event_hooks={"request": [on_request], "response": [on_response]},
            throttler=_FailureCountingThrottler(self._record_failure),
            ssl_verify=self._tls,
        )

    def _endpoint(self, request: httpx.Request) -> str:
        """`METHOD /templated/route`: the metric label and the per-call log field."""
        return f"{request.method} {template_path(request.url.path, self._base_path)}"

    def _mark(self, request: httpx.Request) -> None:
        """Before each hop is sent: its start time and its endpoint label."""
        marks = request.extensions
        origin = marks.get(_ORIGIN)
        if origin is None:
            marks[_ORIGIN] = marks[_ENDPOINT] = self._endpoint(request)
        else:
            marks[_ENDPOINT] = f"{origin}{REDIRECT_SUFFIX}"
        marks[_STARTED] = time.perf_counter()

    def _labelled(self, request: httpx.Request) -> tuple[str, float]:
        marks = request.extensions
        endpoint = marks.get(_ENDPOINT)
        started = marks.get(_STARTED)
        seconds = time.perf_counter() - started if isinstance(started, float) else 0.0
        return (endpoint if isinstance(endpoint, str) else self._endpoint(request)), seconds

    def _record(self, response: httpx.Response, metrics_key: str) -> None:
        request = response.request
        endpoint, seconds = self._labelled(request)
        status = response.status_code
        self._metrics.github_calls.labels(endpoint=endpoint, status=str(status)).inc()
        header = response.headers.get("x-ratelimit-remaining")
        remaining = int(header) if header is not None and header.isdigit() else None
        if remaining is not None:
            self._metrics.rate_limit_remaining.labels(installation=metrics_key).set(remaining)
        note_github_call(request.method, status, seconds, remaining)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("github call %s %d", endpoint, status, extra={
                "endpoint": endpoint, "status": status,
                "duration_ms": round(seconds * 1000, 1), "rate_limit_remaining": remaining})

    def _record_failure(self, sent: httpx.Request, exc: httpx.RequestError,
                        seconds: float) -> None:
        """A request that got no answer: counted with status `error`."""
        try:
            request = exc.request  # the hop that failed (a redirect's, maybe)
        except RuntimeError:  # httpx raises when no request was attached
            request = sent
        endpoint, hop_seconds = self._labelled(request)
        if _STARTED in request.extensions:
            seconds = hop_seconds
        self._metrics.github_calls.labels(endpoint=endpoint, status=CALL_ERROR).inc()
        note_github_call(request.method, None, seconds)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("github call %s failed: %s", endpoint, type(exc).__name__, extra={
                "endpoint": endpoint, "status": CALL_ERROR,
                "duration_ms": round(seconds * 1000, 1)})

    def _adapter(self, client: GitHub[Any], key: str) -> GitHubKitAdapter:
        # Kept pages are per credentials: a page is served only after GitHub's 304 to the
        # same request from the same installation (or token).
        return GitHubKitAdapter(client, self._pacer(key), pages=self.kept_pages, identity=key)

    def _pacer(self, key: str) -> WritePacer:
        if key not in self._pacers:
            self._pacers[key] = WritePacer(
                self._settings.write_interval_seconds, WRITES_PER_MINUTE
            )
        return self._pacers[key]

    def _app_auth(self) -> AppAuthStrategy:
        key = self._settings.private_key_text()
        if self._settings.app_id is None or key is None:
            raise GitHubError("GitHub App credentials are not configured")
        return AppAuthStrategy(self._settings.app_id, key)

    # --- tokens ------------------------------------------------------------

    async def installation_token(self, installation_id: int) -> str:
        """A cached installation token; minted at most once at a time per installation."""
        lock = self._token_locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._tokens.get(installation_id)
            if cached is not None and self._now() < cached[1] - TOKEN_REFRESH_MARGIN:
                return cached[0]
            async with self._client(self._app_auth(), "app") as app, translated():
                response = await app.rest.apps.async_create_installation_access_token(
                    installation_id
                )
                minted = response.parsed_data
            token = str(minted.token)
            # The schema types `expires_at` as a string ("2016-07-11T22:14:10Z").
            expires_at = datetime.fromisoformat(str(minted.expires_at))
            self._tokens[installation_id] = (token, expires_at)
            return token

    # --- sessions ----------------------------------------------------------

    @asynccontextmanager
    async def for_installation(self, installation_id: int) -> AsyncIterator[GitHubKitAdapter]:
        was_cached = installation_id in self._tokens
        token = await self.installation_token(installation_id)
        key = str(installation_id)
        try:
            async with self._client(TokenAuthStrategy(token), key) as client:
                yield self._adapter(client, key)
        except BadCredentials as exc:
            # Revoked or expired early: the next attempt mints a fresh token, so a cached
            # token's 401 is worth one retry; a token minted just now is not.
            self._forget_token(installation_id, token)
            if was_cached:
                raise GitHubError(f"{exc} (cached installation token; a retry mints a new one)",
                                  status=401) from exc
            raise

    def _forget_token(self, installation_id: int, token: str) -> None:
        cached = self._tokens.get(installation_id)
        if cached is not None and cached[0] == token:
            del self._tokens[installation_id]

    @asynccontextmanager
    async def for_token(self) -> AsyncIterator[GitHubKitAdapter]:
        """An adapter authenticated with DIGEST_GITHUB_TOKEN (the CLI's online mode)."""
        if self._settings.github_token is None:
            raise GitHubError("DIGEST_GITHUB_TOKEN is not set")
        auth = TokenAuthStrategy(self._settings.github_token.get_secret_value())
        async with self._client(auth, "token") as client:
            yield self._adapter(client, "token")

    @asynccontextmanager
    async def for_anonymous(self) -> AsyncIterator[GitHubKitAdapter]:
        """Unauthenticated reads (public repositories, 60 requests an hour): the
        zero-config dry-run, where there is nothing to authenticate with."""
        async with self._client(UnauthAuthStrategy(), "anonymous") as client:
            yield self._adapter(client, "anonymous")

    async def installation_for_repo(self, repo: str) -> int:
        """The App's installation id on `repo` (GET /repos/{owner}/{repo}/installation)."""
        owner, name = split_repo(repo)
        async with self.for_app() as app, translated():
            response = await app.rest.apps.async_get_repo_installation(owner, name)
            return int(response.parsed_data.id)

    @asynccontextmanager
    async def for_app(self) -> AsyncIterator[GitHub[Any]]:
        """The App (JWT) client, for app-level endpoints such as `GET /app`."""
        async with self._client(self._app_auth(), "app") as client:
            yield client

    async def installation_repositories(self, limit: int = 500) -> list[tuple[int, str]]:
        """`(installation_id, "owner/name")` for every unarchived repository the App
        is installed on, at most `limit` pairs, installations in GitHub's order.

        For the reconcile sweep: GitHub never redelivers a failed webhook delivery,
        so the sweep walks these repositories' open PRs to repair what was missed.
        """
        pairs: list[tuple[int, str]] = []
        if limit <= 0:
            return pairs
        per_page = min(PER_PAGE, limit)
        installation_ids: list[int] = []
        found: Installation
        async with self.for_app() as app, translated():
            async for found in app.rest.paginate(
                app.rest.apps.async_list_installations, per_page=per_page
            ):
                # A suspended installation cannot mint a token (403), so it has no repos.
                if found.suspended_at is None:
                    installation_ids.append(found.id)
        for installation_id in installation_ids:
            await self._collect_repositories(installation_id, per_page, limit, pairs)
            if len(pairs) >= limit:
                break
        return pairs

    async def _collect_repositories(
        self, installation_id: int, per_page: int, limit: int, pairs: list[tuple[int, str]]
    ) -> None:
        token = await self.installation_token(installation_id)
        key = str(installation_id)
        repo: InstallationRepositoriesGetResponse200PropRepositoriesItems
        try:
            async with self._client(TokenAuthStrategy(token), key) as client, translated():
                async for repo in client.rest.paginate(
                    client.rest.apps.async_list_repos_accessible_to_installation,
                    map_func=_repositories_of, per_page=per_page,
                ):
                    # Archived repositories are read-only: nothing to reconcile there.
                    if not repo.archived:
                        pairs.append((installation_id, repo.full_name))
                        if len(pairs) >= limit:
                            return
        except GitHubError as exc:
            if exc.status == 401:
                self._forget_token(installation_id, token)
            raise

    async def bot_login(self) -> str:
        """`"{slug}[bot]"` from `GET /app`, fetched once (or Settings.bot_login). Callers
        on any loop while the request is in flight share its answer, or its error."""
        if self._bot_login is not None:
            return self._bot_login
        with self._bot_login_lock:
            pending = self._bot_login_pending
            fetching = pending is None
            if pending is None:
                pending = self._bot_login_pending = concurrent.futures.Future()
        if not fetching:
            # Shielded: a waiter that gives up must not cancel the fetch for the others.
            return await asyncio.shield(asyncio.wrap_future(pending))
        try:
            login = await self._fetch_bot_login()
        except GitHubError as exc:
            pending.set_exception(exc)
            raise
        except BaseException:
            # Cancelled, or a bug: the waiters hear of it as a failed request.
            pending.set_exception(GitHubError("GET /app was interrupted"))
            raise
        else:
            self._bot_login = login
            pending.set_result(login)
            return login
        finally:
            with self._bot_login_lock:
                self._bot_login_pending = None

    async def _fetch_bot_login(self) -> str:
        async with self.for_app() as app, translated():
            response = await app.rest.apps.async_get_authenticated()
            integration = response.parsed_data
        if integration is None or not integration.slug:
            raise GitHubError("GET /app returned no app slug")
        return f"{integration.slug}[bot]"


def _repositories_of(
    response: Response[InstallationRepositoriesGetResponse200],
) -> list[InstallationRepositoriesGetResponse200PropRepositoriesItems]:
    # This endpoint pages a list wrapped in {"total_count", "repositories"}.
    return response.parsed_data.repositories
