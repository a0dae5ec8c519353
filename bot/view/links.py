"""Where the label view lives, for anything that wants to link to it (CLI, feeds, pages)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

GITHUB_WEB = "https://github.com"

# The view's routes: path and the LabelViewRoutes handler serving it (GET and HEAD).
# Kept here, apart from the view's heavy imports, so the service can register them
# before its port opens and build the view on first use (bot/view/lazy.py).
VIEW_ROUTES: tuple[tuple[str, str], ...] = (
    ("/static/view.css", "stylesheet"),
    ("/view/{owner}/{repo}", "label_view"),
    ("/view/{owner}/{repo}/feed.atom", "feed"),
    # A plain segment, parsed by the handler: an absurdly long number must be a 404,
    # not an int() failure.
    ("/view/{owner}/{repo}/{number}", "digest_page"),
    ("/api/digests/{owner}/{repo}", "api"),
)


def view_path(repo: str, number: int | None = None, **query: str | None) -> str:
    """`/view/OWNER/REPO[/N][?k=v]`: the repository's label view, or one PR's digest."""
    owner, _, name = repo.partition("/")
    path = f"/view/{quote(owner, safe='')}/{quote(name, safe='')}"
    if number is not None:
        path += f"/{int(number)}"
    kept = {key: value for key, value in query.items() if value is not None}
    return f"{path}?{urlencode(kept)}" if kept else path


def view_url(base_url: str | None, repo: str, number: int | None = None) -> str:
    """The absolute link when the service's public URL is known, else the path."""
    path = view_path(repo, number)
    return f"{base_url.rstrip('/')}{path}" if base_url else path


def api_path(repo: str) -> str:
    owner, _, name = repo.partition("/")
    return f"/api/digests/{quote(owner, safe='')}/{quote(name, safe='')}"


def pull_url(repo: str, number: int) -> str:
    """A PR's page on github.com (when the API did not give its html_url)."""
    return f"{GITHUB_WEB}/{repo}/pull/{int(number)}"


def feed_path(repo: str, label: str | None = None) -> str:
    """The repository's Atom feed, or one label's."""
    path = f"{view_path(repo)}/feed.atom"
    return f"{path}?{urlencode({'label': label})}" if label is not None else path
