"""The service's HTTP endpoints, documented once: docs/deploy/README.md's table is generated from
this (`digest-bot endpoints`), and a test holds it equal to the routes the app serves."""

from __future__ import annotations

from dataclasses import dataclass

_VIEW_ACCESS = "public repositories: anyone; private ones: `DIGEST_VIEW_TOKEN`"


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    what: str
    access: str


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("POST", "/webhook",
             "GitHub deliveries: verify the signature, persist, `202`", "GitHub (signed)"),
    Endpoint("GET", "/healthz",
             "the process is alive (answers as soon as the port is open)", "anyone"),
    Endpoint("GET", "/readyz",
             "the worker has started (`starting` until then: deliveries are stored "
             "meanwhile), the database is reachable, the service not draining and (live) "
             "the App credentials work; 503 with the reason otherwise", "anyone"),
    Endpoint("GET", "/metrics", "Prometheus metrics", "anyone"),
    Endpoint("GET", "/view/{owner}/{repo}",
             "the label view: open PRs as a triage queue, 50 a page; `?label=`, "
             "`?verdict=`, `?q=`, `?owner=`, `?sort=`, `?lang=`, `?page=`", _VIEW_ACCESS),
    Endpoint("GET", "/view/{owner}/{repo}/{number}", "one PR's digest as a page; `?lang=`",
             _VIEW_ACCESS),
    Endpoint("GET", "/view/{owner}/{repo}/feed.atom",
             "Atom feed of the repository, or of one label with `?label=`", _VIEW_ACCESS),
    Endpoint("GET", "/api/digests/{owner}/{repo}",
             "the digests as JSON (the `--format json` keys plus the PR's state); "
             "`?label=`, `?since=`, `?page=`, `?per_page=`, `?lang=`", _VIEW_ACCESS),
    Endpoint("GET", "/static/view.css", "the label view's stylesheet", "anyone"),
)


def render_endpoint_table(endpoints: tuple[Endpoint, ...] = ENDPOINTS) -> str:
    rows = ["| Method | Path | What it serves | Who may call it |", "| --- | --- | --- | --- |"]
    rows += [f"| `{e.method}` | `{e.path}` | {e.what} | {e.access} |" for e in endpoints]
    return "\n".join(rows)
