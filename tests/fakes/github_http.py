"""A fake GitHub REST server over `FakeGitHubState`, for running the real adapter.

`build_fake_github_app(state)` serves the endpoints the adapter calls with JSON
built from GitHub's own examples (tests/fakes/responses.py), Link-header
pagination, rate-limit headers, App auth (RS256 JWT for /app routes, issued
installation tokens elsewhere) and the state's injected faults.
`FakeGitHubServer(state)` runs it with uvicorn on 127.0.0.1 in a thread:

    with FakeGitHubServer(state) as url:
        settings = Settings(github_api_url=url, ...)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import jwt
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes import responses
from tests.fakes.github_state import FakeGitHubState, FakeHTTPError, FakeRepo, Fault


@dataclass
class Call:
    """What a handler sees: path params, query, JSON body and who is calling."""

    state: FakeGitHubState
    params: dict[str, Any]
    query: dict[str, str]
    body: Any
    actor: str
    url: str  # the request URL without query, for Link headers
    installation_id: int | None = None  # whose installation token authenticated the call

    @property
    def repo(self) -> str:
        return f"{self.params['owner']}/{self.params['repo']}"


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Reply]


def _paginate(call: Call, items: list[Any],
              shape: Callable[[Any], Any] | None = None) -> Reply:
    """One page of `items`, each passed through `shape` (only the page's: a thread of
    thousands of comments costs one page of JSON per request)."""
    per_page = max(1, min(100, int(call.query.get("per_page", "30"))))
    page = max(1, int(call.query.get("page", "1")))
    last = max(1, -(-len(items) // per_page))
    chunk = items[(page - 1) * per_page: page * per_page]
    if shape is not None:
        chunk = [shape(item) for item in chunk]
    links = []
    keep = {k: v for k, v in call.query.items() if k not in ("page", "per_page")}

    def link(n: int, rel: str) -> str:
        query = "&".join([*(f"{k}={v}" for k, v in keep.items()),
                          f"per_page={per_page}", f"page={n}"])
        return f'<{call.url}?{query}>; rel="{rel}"'

    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(page - 1, "prev")]
    return Reply(200, chunk, {"Link": ", ".join(links)} if links else {})


# --- handlers --------------------------------------------------------------


def get_app(call: Call) -> Reply:
    return Reply(200, responses.integration(call.state.app_id, call.state.app_slug))


def create_token(call: Call) -> Reply:
    token, expires_at = call.state.issue_token(int(call.params["installation_id"]))
    return Reply(201, responses.installation_token(token, expires_at))


def list_pulls(call: Call) -> Reply:
    pulls = call.state.open_pulls(call.repo)
    repo = call.state.repos.get(call.repo)
    return _paginate(call, [responses.pull_request_simple(p, repo) for p in pulls])


def get_pull(call: Call) -> Reply:
    pull = call.state.pull(call.repo, int(call.params["number"]))
    return Reply(200, responses.pull_request(pull, call.state.repos.get(call.repo)))


def list_files(call: Call) -> Reply:
    number = int(call.params["number"])
    head = call.state.pull(call.repo, number).head_sha
    files = call.state.list_files(call.repo, number)
    return _paginate(call, [responses.diff_entry(call.repo, f, head) for f in files])


def list_reviews(call: Call) -> Reply:
    number = int(call.params["number"])
    reviews = call.state.pull(call.repo, number).reviews
    return _paginate(call, reviews, lambda r: responses.review(call.repo, number, r))


def list_review_comments(call: Call) -> Reply:
    comments = call.state.list_review_comments(call.repo, int(call.params["number"]))
    return _paginate(call, comments, responses.review_comment)


def get_issue(call: Call) -> Reply:
    found = call.state.issue(call.repo, int(call.params["number"]))
    return Reply(200, responses.issue(call.repo, found))


def request_reviewers(call: Call) -> Reply:
    body = call.body if isinstance(call.body, dict) else {}
    pull = call.state.request_reviewers(call.repo, int(call.params["number"]),
                                        body.get("reviewers", []), body.get("team_reviewers", []))
    return Reply(201, responses.pull_request_simple(pull, call.state.repos.get(call.repo)))


def list_comments(call: Call) -> Reply:
    comments = call.state.list_comments(call.repo, int(call.params["number"]))
    return _paginate(call, comments, responses.issue_comment)


def _body_text(call: Call) -> str:
    if not isinstance(call.body, dict) or not isinstance(call.body.get("body"), str):
        raise FakeHTTPError(422, "Invalid request: body is required")
    return str(call.body["body"])


def create_comment(call: Call) -> Reply:
    comment = call.state.create_comment(call.repo, int(call.params["number"]), call.actor,
                                        _body_text(call))
    return Reply(201, responses.issue_comment(comment))


def update_comment(call: Call) -> Reply:
    comment = call.state.update_comment(call.repo, int(call.params["comment_id"]),
                                        _body_text(call))
    return Reply(200, responses.issue_comment(comment))


def delete_comment(call: Call) -> Reply:
    call.state.delete_comment(call.repo, int(call.params["comment_id"]))
    return Reply(204)


def add_reaction(call: Call) -> Reply:
    content = str((call.body or {}).get("content", ""))
    comment_id = int(call.params["comment_id"])
    call.state.add_reaction(call.repo, comment_id, call.actor, content)
    return Reply(201, responses.reaction(call.actor, content, comment_id * 10,
                                         call.state.now()))


def list_check_runs(call: Call) -> Reply:
    runs = call.state.check_runs_for(call.repo, call.params["ref"], call.query.get("check_name"))
    reply = _paginate(call, runs, lambda r: responses.check_run(r, call.state.app_id))
    reply.body = responses.check_runs(reply.body, len(runs))
    return reply


def create_check_run(call: Call) -> Reply:
    body = call.body if isinstance(call.body, dict) else {}
    run = call.state.create_check_run(call.repo, call.state.app_slug, body)
    return Reply(201, responses.check_run(run, call.state.app_id))


def update_check_run(call: Call) -> Reply:
    body = call.body if isinstance(call.body, dict) else {}
    run = call.state.update_check_run(call.repo, int(call.params["check_run_id"]),
                                      call.state.app_slug, body)
    return Reply(200, responses.check_run(run, call.state.app_id))


def add_labels(call: Call) -> Reply:
    body = call.body
    names = body.get("labels", []) if isinstance(body, dict) else body or []
    labels = call.state.add_labels(call.repo, int(call.params["number"]), names)
    return Reply(200, [responses.label(call.repo, name) for name in labels])


def remove_label(call: Call) -> Reply:
    labels = call.state.remove_label(call.repo, int(call.params["number"]), call.params["name"])
    return Reply(200, [responses.label(call.repo, name) for name in labels])


def get_permission(call: Call) -> Reply:
    login = call.params["username"]
    permission, role = call.state.permission(call.repo, login)
    return Reply(200, responses.collaborator_permission(login, permission, role))


def get_content(call: Call) -> Reply:
    repo = call.state.repos.get(call.repo)
    branch = repo.default_branch if repo else "main"
    if call.query.get("ref", branch) != branch:
        raise FakeHTTPError(404, "No commit found for the ref")  # only the default branch
    text = call.state.default_branch_file(call.repo, call.params["path"])
    return Reply(200, responses.content_file(call.repo, call.params["path"], text, branch))


def get_tree(call: Call) -> Reply:
    sha = call.params["sha"]
    entries = call.state.tree(call.repo, sha)
    found = call.state.repos[call.repo]
    return Reply(200, responses.git_tree(call.repo, found.commits.get(sha, sha), entries))


def get_blob(call: Call) -> Reply:
    sha = call.params["sha"]
    return Reply(200, responses.git_blob(call.repo, sha, call.state.blob(call.repo, sha)))


def get_repo(call: Call) -> Reply:
    repo = call.state.repos.get(call.repo)
    if repo is None:
        raise FakeHTTPError(404, "Not Found")
    return Reply(200, responses.full_repository(repo))


def _repo_ref(call: Call) -> tuple[FakeRepo, str]:
    repo = call.state.repos.get(call.repo)
    if repo is None:
        raise FakeHTTPError(404, "Not Found")
    ref = call.params["ref"]
    if ref not in (repo.default_branch, repo.head_sha):
        raise FakeHTTPError(404, "No commit found for the ref")  # only the default branch
    return repo, ref


def compare(call: Call) -> Reply:
    base, sep, head = call.params["basehead"].partition("...")
    if not sep:
        raise FakeHTTPError(404, "Not Found")
    repo, ahead = call.state.compare(call.repo, base, head)
    return Reply(200, responses.commit_comparison(repo, base, head, ahead))


def get_combined_status(call: Call) -> Reply:
    repo = call.state.repos.get(call.repo)
    if repo is None:
        raise FakeHTTPError(404, "Not Found")
    sha = call.params["ref"]
    state, found = call.state.combined_status(call.repo, sha)
    # Paged like a list (Link header), but the page sits inside an object.
    reply = _paginate(call, found)
    reply.body = responses.combined_status(repo, sha, state, reply.body, len(found))
    return reply


def list_commit_pulls(call: Call) -> Reply:
    pulls = call.state.pulls_for_commit(call.repo, call.params["commit_sha"])
    repo = call.state.repos.get(call.repo)
    return _paginate(call, [responses.pull_request_simple(p, repo) for p in pulls])


def get_commit_sha(call: Call) -> Reply:
    # GitHub answers `Accept: application/vnd.github.sha` with the bare SHA as text.
    repo, _ = _repo_ref(call)
    return Reply(200, repo.head_sha, {"content-type": "application/vnd.github.sha"})


def get_tarball(call: Call) -> Reply:
    # Like GitHub: a redirect to the archive host (here the same server, another path).
    repo, ref = _repo_ref(call)
    if repo.tarball is None:
        raise FakeHTTPError(404, "Not Found")
    return Reply(302, None, {"location": f"/_codeload/{call.repo}/legacy.tar.gz/{ref}"})


async def codeload(request: Request) -> Response:
    state: FakeGitHubState = request.app.state.github
    name = f"{request.path_params['owner']}/{request.path_params['repo']}"
    repo = state.repos.get(name)
    state.record("GET", "/_codeload/{owner}/{repo}/legacy.tar.gz/{ref}", request.url.path,
                 200 if repo and repo.tarball is not None else 404)
    if repo is None or repo.tarball is None:
        return Response(status_code=404)
    data = repo.tarball

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(data), 64 * 1024):
            yield data[start:start + 64 * 1024]

    return StreamingResponse(chunks(), media_type="application/x-gzip")


def list_installations(call: Call) -> Reply:
    state = call.state
    return _paginate(call, [responses.installation(iid, account, state.app_id, state.app_slug)
                            for iid, account in sorted(state.installations.items())])


def get_repo_installation(call: Call) -> Reply:
    state = call.state
    owner = call.params["owner"]
    for iid, account in sorted(state.installations.items()):
        if account == owner and call.repo in state.repos:
            return Reply(200, responses.installation(iid, account, state.app_id, state.app_slug))
    raise FakeHTTPError(404, "Not Found")


def list_installation_repos(call: Call) -> Reply:
    # An installation token sees its own account's repos only (archived ones included).
    account = call.state.installations.get(call.installation_id or 0)
    repos = [responses.installation_repository(r) for name, r in call.state.repos.items()
             if account is not None and name.split("/", 1)[0] == account]
    reply = _paginate(call, repos)
    reply.body = responses.installation_repositories(reply.body, len(repos))
    return reply


R = "/repos/{owner}/{repo}"
ROUTES: tuple[tuple[str, str, Handler, str], ...] = (
    ("GET", "/app", get_app, "jwt"),
    ("POST", "/app/installations/{installation_id:int}/access_tokens", create_token, "jwt"),
    ("GET", "/app/installations", list_installations, "jwt"),
    ("GET", "/installation/repositories", list_installation_repos, "token"),
    ("GET", f"{R}/installation", get_repo_installation, "jwt"),
    ("GET", f"{R}/pulls", list_pulls, "token"),
    ("GET", f"{R}/pulls/{{number:int}}", get_pull, "token"),
    ("GET", f"{R}/pulls/{{number:int}}/files", list_files, "token"),
    ("GET", f"{R}/pulls/{{number:int}}/reviews", list_reviews, "token"),
    ("GET", f"{R}/pulls/{{number:int}}/comments", list_review_comments, "token"),
    ("GET", f"{R}/issues/{{number:int}}", get_issue, "token"),
    ("POST", f"{R}/pulls/{{number:int}}/requested_reviewers", request_reviewers, "token"),
    ("GET", f"{R}/issues/{{number:int}}/comments", list_comments, "token"),
    ("POST", f"{R}/issues/{{number:int}}/comments", create_comment, "token"),
    ("PATCH", f"{R}/issues/comments/{{comment_id:int}}", update_comment, "token"),
    ("DELETE", f"{R}/issues/comments/{{comment_id:int}}", delete_comment, "token"),
    ("POST", f"{R}/issues/comments/{{comment_id:int}}/reactions", add_reaction, "token"),
    ("POST", f"{R}/issues/{{number:int}}/labels", add_labels, "token"),
    ("DELETE", f"{R}/issues/{{number:int}}/labels/{{name:path}}", remove_label, "token"),
    ("GET", f"{R}/collaborators/{{username}}/permission", get_permission, "token"),
    ("GET", f"{R}/contents/{{path:path}}", get_content, "token"),
    ("GET", f"{R}/git/trees/{{sha}}", get_tree, "token"),
    ("GET", f"{R}/git/blobs/{{sha}}", get_blob, "token"),
    ("GET", R, get_repo, "token"),
    ("GET", f"{R}/commits/{{ref}}/status", get_combined_status, "token"),
    ("GET", f"{R}/compare/{{basehead:path}}", compare, "token"),
    ("GET", f"{R}/commits/{{commit_sha}}/pulls", list_commit_pulls, "token"),
    ("GET", f"{R}/commits/{{ref}}/check-runs", list_check_runs, "token"),
    ("POST", f"{R}/check-runs", create_check_run, "token"),
    ("PATCH", f"{R}/check-runs/{{check_run_id:int}}", update_check_run, "token"),
    ("GET", f"{R}/commits/{{ref}}", get_commit_sha, "token"),
    ("GET", f"{R}/tarball/{{ref}}", get_tarball, "token"),
)


# --- plumbing --------------------------------------------------------------


def _json(reply: Reply, headers: dict[str, str]) -> Response:
    merged = {**headers, **reply.headers}
    if reply.status == 204 or reply.body is None:
        return Response(status_code=reply.status, headers=merged)
    if isinstance(reply.body, str):
        return Response(reply.body, status_code=reply.status, headers=merged)
    return JSONResponse(reply.body, status_code=reply.status, headers=merged)


def _conditional(state: FakeGitHubState, reply: Reply, headers: dict[str, str],
                 if_none_match: str | None) -> Reply:
    """GitHub's ETags: every GET answer carries one; a request naming the current one
    gets 304 with no body, and an authorized 304 is not charged to the rate limit."""
    seen = json.dumps([reply.body, reply.headers.get("Link", "")], sort_keys=True)
    etag = '"' + hashlib.sha1(seen.encode(), usedforsecurity=False).hexdigest() + '"'
    if if_none_match is not None and etag in {t.strip() for t in if_none_match.split(",")}:
        state.rate_limit_remaining = min(state.rate_limit, state.rate_limit_remaining + 1)
        headers["X-RateLimit-Remaining"] = str(state.rate_limit_remaining)
        headers["X-RateLimit-Used"] = str(state.rate_limit - state.rate_limit_remaining)
        return Reply(304, None, {"ETag": etag})
    return Reply(reply.status, reply.body, {**reply.headers, "ETag": etag})


def _fault_reply(fault: Fault) -> Reply:
    body = fault.body or responses.error(f"injected {fault.status}", fault.status)
    return Reply(fault.status, body, dict(fault.headers))


def _authenticate(state: FakeGitHubState, kind: str, header: str) -> str | None:
    """The caller's login, or None (401)."""
    scheme, _, credential = header.partition(" ")
    if kind == "jwt":
        if scheme.lower() != "bearer" or state.app_public_key_pem is None:
            return None
        try:
            claims = jwt.decode(credential, state.app_public_key_pem, algorithms=["RS256"],
                                options={"require": ["iss", "iat", "exp"]})
        except jwt.PyJWTError:
            return None
        return f"{state.app_slug}[bot]" if str(claims["iss"]) == str(state.app_id) else None
    if scheme.lower() in ("token", "bearer") and state.token_is_valid(credential):
        return f"{state.app_slug}[bot]"
    return None


def _installation_of(state: FakeGitHubState, header: str) -> int | None:
    issued = state.tokens.get(header.partition(" ")[2])
    return issued[0] if issued is not None else None


def _endpoint(method: str, template: str, handler: Handler,
              auth: str) -> Callable[[Request], Any]:
    route = re.sub(r":\w+\}", "}", template)

    async def endpoint(request: Request) -> Response:
        state: FakeGitHubState = request.app.state.github
        if state.latency:
            await asyncio.sleep(state.latency)
        path = request.url.path
        authorization = request.headers.get("authorization", "")
        actor = _authenticate(state, auth, authorization)
        if actor is None:
            state.record(method, route, path, 401)
            return _json(Reply(401, responses.error("Bad credentials", 401)), {})
        raw = await request.body()
        call = Call(state, dict(request.path_params), dict(request.query_params),
                    json.loads(raw) if raw else None, actor,
                    str(request.url.replace(query="")),
                    _installation_of(state, authorization))
        headers: dict[str, str] = {}
        try:
            headers = state.consume_rate_limit()
            fault = state.take_fault(method, route, path)
            if fault is not None and fault.delay:
                await asyncio.sleep(fault.delay)
                fault = None
            if fault is not None and not fault.applied:
                reply = _fault_reply(fault)
            else:
                reply = handler(call)
                if fault is not None:
                    reply = _fault_reply(fault)
                elif method == "GET" and reply.status == 200:
                    reply = _conditional(state, reply, headers,
                                         request.headers.get("if-none-match"))
        except FakeHTTPError as exc:
            headers = {**headers, **exc.headers}
            reply = Reply(exc.status, responses.error(exc.message, exc.status))
        state.record(method, route, path, reply.status, request.url.query)
        return _json(reply, headers)

    return endpoint


def build_fake_github_app(state: FakeGitHubState) -> Starlette:
    """The fake serves `app.state.github`; swap it to reuse one server across tests."""
    app = Starlette(routes=[
        *(Route(template, _endpoint(method, template, handler, auth), methods=[method])
          for method, template, handler, auth in ROUTES),
        Route("/_codeload/{owner}/{repo}/legacy.tar.gz/{ref}", codeload, methods=["GET"]),
    ])
    app.state.github = state
    return app


class FakeGitHubServer:
    """Runs the fake on 127.0.0.1 (a free port) in a thread; yields its base URL."""

    def __init__(self, state: FakeGitHubState) -> None:
        self._app = build_fake_github_app(state)
        config = uvicorn.Config(self._app, log_level="warning",
                                lifespan="off", ws="none", access_log=False,
                                timeout_graceful_shutdown=2)
        self._server = uvicorn.Server(config)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def state(self) -> FakeGitHubState:
        state: FakeGitHubState = self._app.state.github
        return state

    def use(self, state: FakeGitHubState) -> None:
        """Serve another state from now on (a module-scoped server, fresh state per test)."""
        self._app.state.github = state

    def __enter__(self) -> str:
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit this; without it every keep-alive request after
        # the first waits ~40 ms (Nagle against delayed ACK).
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", 0))
        port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True,
            name="fake-github")
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake GitHub server did not start")
            time.sleep(0.005)
        return self.url

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._socket.close()
