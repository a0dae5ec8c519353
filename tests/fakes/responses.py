"""Realistic GitHub JSON for the fake server, built from GitHub's own examples.

Each builder starts from the OpenAPI example in tests/fixtures/github/ and
overrides what the fake knows, then adds the fields githubkit's 2026-03-10
schema requires that the examples lack (labels' archived_at/archived_by, a
repository's has_discussions, users' *_url set, ...). `tests/github/test_fake_github.py`
parses every builder with githubkit's models, so a missing field fails a test,
not a later adapter run.
"""

from __future__ import annotations

import base64
import copy
import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from tests.fakes.github_state import (
    FakeCheckRun,
    FakeComment,
    FakeFile,
    FakeIssue,
    FakePull,
    FakeRepo,
    FakeReview,
    FakeReviewComment,
    FakeStatus,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "github" / "openapi_examples.json"
API = "https://api.github.com"
WEB = "https://github.com"

JSON = dict[str, Any]


@cache
def _examples() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text())
    return loaded


def example(name: str) -> Any:
    return copy.deepcopy(_examples()[name])


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def user(login: str, *, user_type: str = "User", user_id: int = 1) -> JSON:
    u = f"{API}/users/{login}"
    return {
        "login": login, "id": user_id, "node_id": f"U_{user_id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4",
        "gravatar_id": "", "url": u, "html_url": f"{WEB}/{login}",
        "followers_url": f"{u}/followers", "following_url": f"{u}/following{{/other_user}}",
        "gists_url": f"{u}/gists{{/gist_id}}", "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{u}/subscriptions", "organizations_url": f"{u}/orgs",
        "repos_url": f"{u}/repos", "events_url": f"{u}/events{{/privacy}}",
        "received_events_url": f"{u}/received_events", "type": user_type,
        "user_view_type": "public", "site_admin": False,
    }


def _user_id(login: str) -> int:
    return 10_000 + sum(ord(ch) * (i + 1) for i, ch in enumerate(login))


def label(repo: str, name: str) -> JSON:
    base = example("label-items")[0]
    base.update(id=_user_id(name), name=name, url=f"{API}/repos/{repo}/labels/{name}",
                default=False, description=None, archived_at=None, archived_by=None)
    return base  # type: ignore[no-any-return]


def team(slug: str) -> JSON:
    base = example("pull-request")["requested_teams"][0]
    base.update(slug=slug, name=slug, id=_user_id(slug), parent=None, type="organization",
                html_url=f"{WEB}/orgs/org/teams/{slug}")
    return base  # type: ignore[no-any-return]


def _repository(repo: FakeRepo | None, full_name: str, template: JSON) -> JSON:
    owner, name = full_name.split("/", 1)
    template.update(
        id=repo.id if repo else 1, name=name, full_name=full_name,
        owner=user(owner, user_type="Organization", user_id=_user_id(owner)),
        default_branch=repo.default_branch if repo else "main",
        html_url=f"{WEB}/{full_name}", url=f"{API}/repos/{full_name}",
        has_discussions=False, private=repo.private if repo else False,
    )
    return template


def _branch(pull: FakePull, repo: FakeRepo | None, part: str, template: JSON) -> JSON:
    owner = pull.repo.split("/", 1)[0]
    ref = pull.base if part == "base" else f"{pull.author}-branch"
    sha = pull.head_sha if part == "head" else pull.base_sha
    template.update(ref=ref, sha=sha, label=f"{owner}:{ref}",
                    user=user(owner, user_type="Organization", user_id=_user_id(owner)),
                    repo=_repository(repo, pull.repo, template["repo"]))
    return template


def _pull_common(pull: FakePull, repo: FakeRepo | None, data: JSON) -> JSON:
    url = f"{API}/repos/{pull.repo}/pulls/{pull.number}"
    data.update(
        id=pull.number + 1_000_000, number=pull.number, title=pull.title, body=pull.body,
        state=pull.state, draft=pull.draft, locked=False,
        url=url, html_url=f"{WEB}/{pull.repo}/pull/{pull.number}",
        issue_url=f"{API}/repos/{pull.repo}/issues/{pull.number}",
        user=user(pull.author, user_type=pull.author_type, user_id=_user_id(pull.author)),
        labels=[label(pull.repo, name) for name in pull.labels],
        requested_reviewers=[user(login, user_id=_user_id(login))
                             for login in pull.requested_users],
        requested_teams=[team(slug) for slug in pull.requested_teams],
        created_at=iso(pull.created_at), updated_at=iso(pull.updated_at),
        closed_at=None, merged_at=None, assignee=None, assignees=[], milestone=None,
        head=_branch(pull, repo, "head", data["head"]),
        base=_branch(pull, repo, "base", data["base"]),
    )
    return data


def pull_request(pull: FakePull, repo: FakeRepo | None) -> JSON:
    data = _pull_common(pull, repo, example("pull-request"))
    data.update(merged=pull.merged, merged_by=None, changed_files=len(pull.files),
                additions=pull.additions, deletions=pull.deletions, commits=1,
                comments=0, review_comments=0,
                mergeable=(pull.mergeable_state != "dirty") if pull.mergeable_state else None,
                rebaseable=None, mergeable_state=pull.mergeable_state or "unknown")
    return data


def pull_request_simple(pull: FakePull, repo: FakeRepo | None) -> JSON:
    return _pull_common(pull, repo, example("pull-request-simple"))


def diff_entry(repo: str, f: FakeFile, head_sha: str) -> JSON:
    data: JSON = example("diff-entry-items")[0]
    data.update(
        sha=f"{_user_id(f.filename):040x}", filename=f.filename, status=f.status,
        additions=f.additions, deletions=f.deletions, changes=f.additions + f.deletions,
        blob_url=f"{WEB}/{repo}/blob/{head_sha}/{f.filename}",
        raw_url=f"{WEB}/{repo}/raw/{head_sha}/{f.filename}",
        contents_url=f"{API}/repos/{repo}/contents/{f.filename}?ref={head_sha}",
    )
    if f.patch is None:
        data.pop("patch", None)
    else:
        data["patch"] = f.patch
    if f.previous_filename:
        data["previous_filename"] = f.previous_filename
    return data


def issue_comment(c: FakeComment) -> JSON:
    data: JSON = example("issue-comment")
    data.update(
        id=c.id, node_id=f"IC_{c.id}", body=c.body,
        url=f"{API}/repos/{c.repo}/issues/comments/{c.id}",
        html_url=f"{WEB}/{c.repo}/pull/{c.number}#issuecomment-{c.id}",
        issue_url=f"{API}/repos/{c.repo}/issues/{c.number}",
        user=user(c.author, user_type=c.author_type, user_id=_user_id(c.author)),
        created_at=iso(c.created_at), updated_at=iso(c.updated_at),
        author_association="NONE" if c.author_type == "Bot" else "CONTRIBUTOR",
    )
    return data


def check_run(run: FakeCheckRun, app_id: int) -> JSON:
    data: JSON = example("check-run")
    data.update(
        id=run.id, node_id=f"CR_{run.id}", name=run.name, head_sha=run.head_sha,
        external_id="", details_url=None,
        url=f"{API}/repos/{run.repo}/check-runs/{run.id}",
        html_url=f"{WEB}/{run.repo}/runs/{run.id}",
        status=run.status, conclusion=run.conclusion,
        started_at=iso(run.started_at),
        completed_at=iso(run.completed_at) if run.completed_at else None,
        output={"title": run.title or None, "summary": run.summary or None, "text": None,
                "annotations_count": 0,
                "annotations_url": f"{API}/repos/{run.repo}/check-runs/{run.id}/annotations"},
        check_suite={"id": run.id * 10}, pull_requests=[],
    )
    data["app"].update(id=app_id, slug=run.app_slug, name=run.app_slug)
    return data


def check_runs(runs: list[JSON], total_count: int) -> JSON:
    data: JSON = example("check-run-paginated")
    data.update(total_count=total_count, check_runs=runs)
    return data


def reaction(login: str, content: str, reaction_id: int, at: datetime) -> JSON:
    data: JSON = example("reaction")
    data.update(id=reaction_id, content=content, created_at=iso(at),
                user=user(login, user_type="Bot" if login.endswith("[bot]") else "User",
                          user_id=_user_id(login)))
    return data


def review(repo: str, number: int, found: FakeReview) -> JSON:
    data: JSON = example("pull-request-review-items")[0]
    review_id = found.id
    html = f"{WEB}/{repo}/pull/{number}#pullrequestreview-{review_id}"
    data.update(id=review_id, node_id=f"PRR_{review_id}", state=found.state, body=found.body,
                user=user(found.login, user_type=found.author_type,
                          user_id=_user_id(found.login)),
                commit_id=found.commit_id,
                submitted_at=iso(found.submitted_at) if found.submitted_at else None,
                pull_request_url=f"{API}/repos/{repo}/pulls/{number}", html_url=html,
                _links={"html": {"href": html},
                        "pull_request": {"href": f"{API}/repos/{repo}/pulls/{number}"}},
                author_association="NONE" if found.author_type == "Bot" else "CONTRIBUTOR")
    return data


def review_comment(c: FakeReviewComment) -> JSON:
    """GET /repos/{owner}/{repo}/pulls/{number}/comments: the OpenAPI description has no
    example of it, so this follows its schema (pull-request-review-comment)."""
    url = f"{API}/repos/{c.repo}/pulls/comments/{c.id}"
    html = f"{WEB}/{c.repo}/pull/{c.number}#discussion_r{c.id}"
    pull_url = f"{API}/repos/{c.repo}/pulls/{c.number}"
    data: JSON = {
        "url": url, "pull_request_review_id": c.review_id or None, "id": c.id,
        "node_id": f"PRRC_{c.id}", "diff_hunk": "@@ -1,3 +1,4 @@\n+changed",
        "path": c.path, "position": c.line, "original_position": c.line,
        "commit_id": c.commit_id, "original_commit_id": c.commit_id,
        "user": user(c.author, user_type=c.author_type, user_id=_user_id(c.author)),
        "body": c.body, "created_at": iso(c.created_at), "updated_at": iso(c.created_at),
        "html_url": html, "pull_request_url": pull_url,
        "author_association": "NONE" if c.author_type == "Bot" else "CONTRIBUTOR",
        "_links": {"self": {"href": url}, "html": {"href": html},
                   "pull_request": {"href": pull_url}},
        "start_line": None, "original_start_line": None, "start_side": None,
        "line": c.line, "original_line": c.line, "side": "RIGHT", "subject_type": "line",
    }
    if c.in_reply_to is not None:
        data["in_reply_to_id"] = c.in_reply_to
    return data


def issue(repo: str, found: FakePull | FakeIssue) -> JSON:
    """GET /repos/{owner}/{repo}/issues/{number}: a PR answers with `pull_request` set
    (its `merged_at` says whether it merged), a plain issue without it."""
    data: JSON = example("issue")
    number = found.number
    is_pull = isinstance(found, FakePull)
    kind = "pull" if is_pull else "issues"
    data.update(
        id=number + 2_000_000, node_id=f"I_{number}", number=number, title=found.title,
        state=found.state, url=f"{API}/repos/{repo}/issues/{number}",
        repository_url=f"{API}/repos/{repo}", html_url=f"{WEB}/{repo}/{kind}/{number}",
        labels_url=f"{API}/repos/{repo}/issues/{number}/labels{{/name}}",
        comments_url=f"{API}/repos/{repo}/issues/{number}/comments",
        events_url=f"{API}/repos/{repo}/issues/{number}/events",
        user=user(found.author, user_id=_user_id(found.author)), labels=[], assignee=None,
        assignees=[], milestone=None, closed_by=None,
        state_reason=None if found.state == "open" else "completed",
        closed_at=None if found.state == "open" else "2026-01-01T00:00:00Z",
    )
    data.pop("pinned_comment", None)
    if is_pull:
        assert isinstance(found, FakePull)
        data["pull_request"] = {
            "url": f"{API}/repos/{repo}/pulls/{number}",
            "html_url": f"{WEB}/{repo}/pull/{number}",
            "diff_url": f"{WEB}/{repo}/pull/{number}.diff",
            "patch_url": f"{WEB}/{repo}/pull/{number}.patch",
            "merged_at": "2026-01-01T00:00:00Z" if found.merged else None,
        }
    else:
        data.pop("pull_request", None)
    return data


def collaborator_permission(login: str, permission: str, role_name: str) -> JSON:
    data: JSON = example("repository-collaborator-permission")
    u = user(login, user_id=_user_id(login))
    u["role_name"] = role_name
    data.update(permission=permission, role_name=role_name, user=u)
    return data


def content_file(repo: str, path: str, text: str, branch: str) -> JSON:
    encoded = base64.b64encode(text.encode()).decode()
    # GitHub wraps base64 content at 60 characters per line.
    wrapped = "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)) + "\n"
    sha = f"{_user_id(path + text):040x}"
    url = f"{API}/repos/{repo}/contents/{path}?ref={branch}"
    git_url = f"{API}/repos/{repo}/git/blobs/{sha}"
    html_url = f"{WEB}/{repo}/blob/{branch}/{path}"
    return {
        "type": "file", "encoding": "base64", "size": len(text.encode()),
        "name": path.rsplit("/", 1)[-1], "path": path, "content": wrapped, "sha": sha,
        "url": url, "git_url": git_url, "html_url": html_url,
        "download_url": f"https://raw.githubusercontent.com/{repo}/{branch}/{path}",
        "_links": {"self": url, "git": git_url, "html": html_url},
    }


def git_tree(repo: str, sha: str, entries: list[tuple[str, str, str, int | None]]) -> JSON:
    """GET /repos/{owner}/{repo}/git/trees/{tree_sha}, as GitHub's REST docs show it."""
    items: list[JSON] = []
    for name, kind, entry_sha, size in entries:
        item: JSON = {"path": name, "mode": "040000" if kind == "tree" else "100644",
                      "type": kind, "sha": entry_sha,
                      "url": f"{API}/repos/{repo}/git/{kind}s/{entry_sha}"}
        if size is not None:
            item["size"] = size
        items.append(item)
    return {"sha": sha, "url": f"{API}/repos/{repo}/git/trees/{sha}", "tree": items,
            "truncated": False}


def git_blob(repo: str, sha: str, data: bytes) -> JSON:
    encoded = base64.b64encode(data).decode()
    wrapped = "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)) + "\n"
    return {"content": wrapped, "encoding": "base64", "url": f"{API}/repos/{repo}/git/blobs/{sha}",
            "sha": sha, "size": len(data), "node_id": "B_" + sha[:12]}


def integration(app_id: int, slug: str) -> JSON:
    data: JSON = example("integration")
    data.update(id=app_id, slug=slug, name=slug, html_url=f"{WEB}/apps/{slug}",
                owner=user("vllm-project", user_type="Organization", user_id=1))
    return data


def installation_token(token: str, expires_at: datetime) -> JSON:
    data: JSON = example("installation-token")
    data.update(token=token, expires_at=iso(expires_at))
    return data


# `full-repository` fields the `repository` objects of GET /installation/repositories lack.
_FULL_ONLY = ("organization", "parent", "source", "template_repository", "network_count",
              "subscribers_count")


def installation(installation_id: int, account: str, app_id: int, app_slug: str) -> JSON:
    data: JSON = example("installation")
    account_id = _user_id(account)
    data.update(
        id=installation_id, app_id=app_id, app_slug=app_slug, target_id=account_id,
        target_type="Organization", repository_selection="all",
        account=user(account, user_type="Organization", user_id=account_id),
        access_tokens_url=f"{API}/app/installations/{installation_id}/access_tokens",
        repositories_url=f"{API}/installation/repositories",
        html_url=f"{WEB}/organizations/{account}/settings/installations/{installation_id}",
        permissions={"contents": "read", "issues": "write", "metadata": "read",
                     "pull_requests": "write"},
        events=["issue_comment", "pull_request"],
        single_file_name=None, suspended_at=None, suspended_by=None,
    )
    return data


def installation_repository(repo: FakeRepo) -> JSON:
    template: JSON = example("full-repository")
    for key in _FULL_ONLY:
        template.pop(key, None)
    # The example's URLs all name octocat/Hello-World; point them at this repo.
    for key, value in template.items():
        if isinstance(value, str):
            template[key] = value.replace("octocat/Hello-World", repo.full_name)
    data = _repository(repo, repo.full_name, template)
    data.update(node_id=f"R_{repo.id}", archived=repo.archived, private=repo.private,
                visibility="public", permissions={"admin": False, "maintain": False,
                                                  "push": False, "triage": False,
                                                  "pull": True})
    return data


def full_repository(repo: FakeRepo) -> JSON:
    """GET /repos/{owner}/{repo}: GitHub's example, renamed to this repository."""
    template: JSON = example("full-repository")
    for key, value in template.items():
        if isinstance(value, str):
            template[key] = value.replace("octocat/Hello-World", repo.full_name)
    return _repository(repo, repo.full_name, template)


def commit_status(repo: str, status: FakeStatus) -> JSON:
    """One entry of a combined status (GitHub's `simple-commit-status`)."""
    return {
        "url": f"{API}/repos/{repo}/statuses/{status.id}", "id": status.id,
        "node_id": f"SC_{status.id}", "state": status.state,
        "description": status.description, "target_url": status.target_url,
        "context": status.context, "required": False,
        "avatar_url": "https://avatars.githubusercontent.com/oa/4?v=4",
        "created_at": iso(status.created_at), "updated_at": iso(status.updated_at),
    }


def combined_status(repo: FakeRepo, sha: str, state: str, page: list[FakeStatus],
                    total_count: int) -> JSON:
    """GET /repos/{owner}/{repo}/commits/{ref}/status: one page of the newest status
    per context; `total_count` counts every context, whichever page this is."""
    name = repo.full_name
    return {
        "state": state, "sha": sha, "total_count": total_count,
        "statuses": [commit_status(name, s) for s in page],
        "repository": installation_repository(repo),
        "commit_url": f"{API}/repos/{name}/commits/{sha}",
        "url": f"{API}/repos/{name}/commits/{sha}/status",
    }


def installation_repositories(page: list[JSON], total_count: int) -> JSON:
    """One page of GET /installation/repositories: the list sits inside an object."""
    return {"total_count": total_count, "repository_selection": "all", "repositories": page}


def error(message: str, status: int) -> JSON:
    return {"message": message,
            "documentation_url": "https://docs.github.com/rest", "status": str(status)}


def _commit(repo: str, sha: str, parent: str | None) -> JSON:
    """A commit as GitHub's compare names its base and merge base (`commit` schema)."""
    url = f"{API}/repos/{repo}/commits/{sha}"
    who = {"name": "Octocat", "email": "octocat@github.com", "date": "2026-01-01T00:00:00Z"}
    return {
        "sha": sha, "node_id": f"C_{sha[:12]}", "url": url,
        "html_url": f"{WEB}/{repo}/commit/{sha}", "comments_url": f"{url}/comments",
        "commit": {
            "url": f"{API}/repos/{repo}/git/commits/{sha}", "author": who, "committer": who,
            "message": "A commit", "comment_count": 0,
            "tree": {"sha": "d" * 40, "url": f"{API}/repos/{repo}/git/trees/{'d' * 40}"},
            "verification": {"verified": False, "reason": "unsigned", "signature": None,
                             "payload": None, "verified_at": None},
        },
        "author": user("octocat"), "committer": user("octocat"),
        "parents": [] if parent is None else [
            {"sha": parent, "url": f"{API}/repos/{repo}/commits/{parent}",
             "html_url": f"{WEB}/{repo}/commit/{parent}"}],
    }


def commit_comparison(repo: FakeRepo, base: str, head: str, ahead: int) -> JSON:
    """`GET /repos/{o}/{r}/compare/{base}...{head}` (GitHub's `commit-comparison`): the
    base is an ancestor of the branch here, so behind_by is 0 and the merge base is it."""
    name = repo.full_name
    url = f"{API}/repos/{name}/compare/{base}...{head}"
    web = f"{WEB}/{name}/compare/{base}...{head}"
    return {
        "url": url, "html_url": web, "permalink_url": web, "diff_url": f"{web}.diff",
        "patch_url": f"{web}.patch",
        "base_commit": _commit(name, base, None), "merge_base_commit": _commit(name, base, None),
        "status": "ahead" if ahead else "identical", "ahead_by": ahead, "behind_by": 0,
        "total_commits": ahead,
        # GitHub pages the commits (per_page, at most 250 a page): the first one here.
        "commits": [_commit(name, repo.head_sha, base)] if ahead else [],
        "files": [],
    }
