"""`digest-bot digest --event PR.json --conversation FILE`: a PR's conversation, offline.

FILE is one JSON object in GitHub's REST shapes, so a thread saved from the API replays
as the service would read it:

    {"issue_comments": [...],   # GET /repos/{o}/{r}/issues/{n}/comments
     "reviews": [...],          # GET /repos/{o}/{r}/pulls/{n}/reviews
     "review_comments": [...],  # GET /repos/{o}/{r}/pulls/{n}/comments
     "linked": {"123": ISSUE, "owner/repo#45": ISSUE},  # GET .../issues/{n} (or a PR)
     "maintainers": ["login", ...]}                      # optional

Every key is optional. A linked value is the issue (or PR) object, or
`{"issue": ISSUE, "issue_comments": [...], "reviews": [...]}` to give a superseded PR's
thread too. Without the collaborator-permission endpoint, a maintainer is a login in
`maintainers` or an author whose `author_association` is OWNER, MEMBER or COLLABORATOR
(GitHub says CONTRIBUTOR for private org members: list those in `maintainers`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.core.facts import Conversation, LinkedItem, Remark
from bot.core.judging.conversation import is_bot
from bot.core.reading.remarks import first_sentence

_INSIDERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
_REF = re.compile(r"^(?:(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})?#)?(?P<number>\d{1,9})$")
MAX_ITEMS = 5_000  # per list: a saved thread longer than this is refused, not truncated


class BadConversation(ValueError):
    """The file is not a conversation in GitHub's REST shapes (one line says where)."""


class _User(BaseModel):
    model_config = ConfigDict(extra="ignore")
    login: str
    type: str = "User"


class _Comment(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: int
    user: _User | None = None
    body: str | None = None
    created_at: datetime | None = None
    author_association: str = ""


class _Review(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: int
    user: _User | None = None
    body: str | None = None
    state: str = "COMMENTED"
    submitted_at: datetime | None = None
    commit_id: str | None = None
    author_association: str = ""


class _ReviewComment(_Comment):
    path: str = ""
    commit_id: str | None = None
    in_reply_to_id: int | None = None


class _PullMark(BaseModel):
    model_config = ConfigDict(extra="ignore")
    merged_at: str | None = None


class _Issue(BaseModel):
    model_config = ConfigDict(extra="ignore")
    number: int
    title: str = ""
    state: str = "open"
    user: _User | None = None
    pull_request: _PullMark | None = None
    merged: bool | None = None  # a PR object (GET .../pulls/{n}) says it directly
    merged_at: str | None = None
    head: dict[str, Any] | None = None  # present on PR objects: it is a PR


class _Thread(BaseModel):
    model_config = ConfigDict(extra="ignore")
    issue: _Issue
    issue_comments: list[_Comment] = Field(default_factory=list, max_length=MAX_ITEMS)
    reviews: list[_Review] = Field(default_factory=list, max_length=MAX_ITEMS)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    issue_comments: list[_Comment] = Field(default_factory=list, max_length=MAX_ITEMS)
    reviews: list[_Review] = Field(default_factory=list, max_length=MAX_ITEMS)
    review_comments: list[_ReviewComment] = Field(default_factory=list, max_length=MAX_ITEMS)
    linked: dict[str, _Thread | _Issue] = Field(default_factory=dict, max_length=50)
    maintainers: list[str] = Field(default_factory=list, max_length=MAX_ITEMS)


def read_conversation_file(data: Any, *, repo: str, number: int, html_url: str) -> Conversation:
    """The conversation a file describes, for PR `repo#number` (links point at `html_url`)."""
    if not isinstance(data, Mapping):
        raise BadConversation("expected a JSON object with issue_comments, reviews, "
                              "review_comments and linked")
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        raise BadConversation(f"{where}: {first['msg']}") from None
    base = html_url or f"https://github.com/{repo}/pull/{number}"
    insiders = {login.casefold() for login in parsed.maintainers}
    remarks = [
        *(_comment(c, base, insiders) for c in parsed.issue_comments),
        *(_review(r, base, insiders) for r in parsed.reviews if r.state != "PENDING"),
        *(_review_comment(c, base, insiders) for c in parsed.review_comments),
    ]
    linked = tuple(_linked(key, value, repo, insiders) for key, value in parsed.linked.items())
    return Conversation(remarks=tuple(remarks), linked=linked)


def _login(user: _User | None) -> tuple[str, bool]:
    if user is None:
        return "ghost", False
    return user.login, user.type == "Bot"


def _insider(login: str, association: str, insiders: set[str]) -> bool:
    return login.casefold() in insiders or association.upper() in _INSIDERS


def _comment(c: _Comment, base: str, insiders: set[str]) -> Remark:
    login, bot = _login(c.user)
    return Remark(kind="comment", id=c.id, author=login, author_is_bot=bot, body=c.body or "",
                  created_at=c.created_at, url=f"{base}#issuecomment-{c.id}",
                  maintainer=_insider(login, c.author_association, insiders))


def _review(r: _Review, base: str, insiders: set[str]) -> Remark:
    login, bot = _login(r.user)
    return Remark(kind="review", id=r.id, author=login, author_is_bot=bot, body=r.body or "",
                  created_at=r.submitted_at, commit_id=r.commit_id or "",
                  review_state=r.state.upper(), url=f"{base}#pullrequestreview-{r.id}",
                  maintainer=_insider(login, r.author_association, insiders))


def _review_comment(c: _ReviewComment, base: str, insiders: set[str]) -> Remark:
    login, bot = _login(c.user)
    return Remark(kind="review_comment", id=c.id, author=login, author_is_bot=bot,
                  body=c.body or "", created_at=c.created_at, commit_id=c.commit_id or "",
                  in_reply_to=c.in_reply_to_id, path=c.path,
                  url=f"{base}#discussion_r{c.id}",
                  maintainer=_insider(login, c.author_association, insiders))


def _linked(key: str, value: _Thread | _Issue, repo: str, insiders: set[str]) -> LinkedItem:
    found = _REF.match(key.strip())
    if found is None:
        raise BadConversation(f"linked.{key}: not a reference (123, #123 or owner/repo#123)")
    target = found["repo"] or ""
    if target.casefold() == repo.casefold():
        target = ""
    issue = value.issue if isinstance(value, _Thread) else value
    is_pull = issue.pull_request is not None or issue.head is not None
    merged = bool(issue.merged or issue.merged_at
                  or (issue.pull_request is not None and issue.pull_request.merged_at))
    state = "open" if issue.state == "open" else ("merged" if merged else "closed")
    objection, by = ("", "")
    if isinstance(value, _Thread) and is_pull and state == "closed":
        objection, by = _last_maintainer_word(value, insiders)
    return LinkedItem(repo=target, number=int(found["number"]), title=issue.title,
                      state=state, is_pull=is_pull, objection=objection, objection_by=by)


def _last_maintainer_word(thread: _Thread, insiders: set[str]) -> tuple[str, str]:
    author = thread.issue.user.login.casefold() if thread.issue.user else ""
    said: Sequence[Remark] = [
        *(_comment(c, "", insiders) for c in thread.issue_comments),
        *(_review(r, "", insiders) for r in thread.reviews),
    ]
    for remark in sorted(said, key=lambda r: (r.created_at is not None, r.created_at, r.id),
                         reverse=True):
        if (remark.maintainer and not is_bot(remark) and remark.author.casefold() != author
                and (sentence := first_sentence(remark.body))):
            return sentence, remark.author
    return "", ""
