"""Read a PR's conversation for its digest: the comments the job listed already (for
its sticky comment), the reviews and the review comments; who among the people who
spoke may write to the repository; and what the linked PRs and issues are now.

Bounded per job: two list reads (paged, conditional where the adapter keeps ETags), at
most MAX_PERMISSION_READS permission reads of the people who spoke (cached with routing's
and commands'; who may write decides whose evidence counts, whose reviews move the label
view's queue and whose asks are marked as from someone without write access), at
most MAX_LINK_READS linked issues (cached), and for one closed-unmerged PR this one
supersedes, its comments and reviews and at most MAX_OBJECTION_PERMISSIONS permission
reads. A read GitHub will not answer never fails the job: a linked item is left as a
number, and a failed list leaves the conversation out; either part is then marked
unavailable and the job re-runs later (bot/handlers/refill.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.digest import linked_work
from bot.core.facts import Conversation, LinkedItem, PullRequestFacts, Remark
from bot.core.judging.conversation import MAX_EVIDENCE_REMARKS, carries_evidence, is_bot
from bot.core.reading.remarks import first_sentence
from bot.github.protocol import (
    GitHubAPI,
    GitHubError,
    IssueComment,
    IssueSummary,
    NotFound,
    PullRequest,
    Review,
    ReviewComment,
)
from bot.handlers.context import HandlerContext, cached_permission, permission_of

log = logging.getLogger(__name__)
MAX_LINK_READS = 3  # linked issues and PRs read per job (the rest are cached or numbers)
# People whose permission is read per job (beyond the cache): see `_access`.
MAX_PERMISSION_READS = 8
MAX_OBJECTION_PERMISSIONS = 3
_MAY_WRITE = frozenset({"admin", "maintain", "write"})
_DECISIVE = frozenset({"APPROVED", "CHANGES_REQUESTED"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ConversationRead:
    conversation: Conversation
    # Who reviewed: routing needs it and need not list again; None when not read.
    reviewed: tuple[str, ...] | None
    # The parts whose read failed ("conversation", "linked"): marked unavailable.
    unavailable: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkedRead:
    items: tuple[LinkedItem, ...]
    failed: bool  # GitHub did not answer for one of them: the part is re-read later


async def read_conversation(
    gh: GitHubAPI,
    ctx: HandlerContext,
    pr: PullRequest,
    comments: Sequence[IssueComment],
    facts: PullRequestFacts,
) -> ConversationRead:
    """The conversation, or none of it when one of its reads fails: half a thread could
    show an ask as open whose answer is in the list that failed (issue 38, item 2)."""
    linked = await linked_items(gh, ctx, facts, objections=True)
    unavailable = ("linked",) if linked.failed else ()
    reviewed: tuple[str, ...] | None = None
    try:
        reviews = await gh.list_reviews(pr.repo, pr.number)
        reviewed = tuple(dict.fromkeys(r.author for r in reviews))
        review_comments = await gh.list_review_comments(pr.repo, pr.number)
        base = pr.html_url or f"https://github.com/{pr.repo}/pull/{pr.number}"
        remarks = [
            *(_from_comment(c, base, ctx.bot_login) for c in comments),
            *(_from_review(r, base) for r in reviews if r.state != "PENDING"),
            *(_from_review_comment(c, base) for c in review_comments),
        ]
        access = await _access(gh, ctx, pr, remarks)
    except GitHubError as exc:
        log.info("conversation unavailable: %s", exc, extra={
            "repo": pr.repo, "pr": pr.number, "status": exc.status})
        return ConversationRead(Conversation(linked=linked.items), reviewed,
                                ("conversation", *unavailable))
    remarks = [r.model_copy(update={"maintainer": access[who], "outsider": not access[who]})
               if (who := r.author.casefold()) in access else r
               for r in remarks]
    return ConversationRead(Conversation(remarks=tuple(remarks), linked=linked.items),
                            reviewed, unavailable)


def _from_comment(comment: IssueComment, base: str, bot_login: str) -> Remark:
    return Remark(
        kind="comment", id=comment.id, author=comment.author, body=comment.body,
        author_is_bot=comment.author_is_bot or comment.author.casefold() == bot_login.casefold(),
        created_at=comment.created_at, url=f"{base}#issuecomment-{comment.id}",
    )


def _from_review(review: Review, base: str) -> Remark:
    return Remark(
        kind="review", id=review.id, author=review.author, author_is_bot=review.author_is_bot,
        body=review.body, created_at=review.submitted_at, commit_id=review.commit_id,
        review_state=review.state, url=f"{base}#pullrequestreview-{review.id}",
    )


def _from_review_comment(comment: ReviewComment, base: str) -> Remark:
    return Remark(
        kind="review_comment", id=comment.id, author=comment.author,
        author_is_bot=comment.author_is_bot, body=comment.body, created_at=comment.created_at,
        commit_id=comment.commit_id, in_reply_to=comment.in_reply_to_id, path=comment.path,
        url=f"{base}#discussion_r{comment.id}",
    )


def _when(remark: Remark) -> datetime:
    return remark.created_at or _EPOCH


async def _access(
    gh: GitHubAPI, ctx: HandlerContext, pr: PullRequest, remarks: Sequence[Remark]
) -> dict[str, bool]:
    """Who, of the people other than the author who spoke, may write (casefolded login ->
    True), and who may not (False): a maintainer's evidence counts like the author's,
    only maintainers move the label view's queue, and an outsider's ask is marked.

    Cached logins are free; at most MAX_PERMISSION_READS are read per job, in the order
    that matters most: authors of decisive reviews, of evidence, then the rest newest
    first. Someone over the budget, or whose read failed, is left unknown (moves nothing,
    not marked); the PR's next job reads on from the cache."""
    people = sorted((r for r in remarks if not is_bot(r, ctx.bot_login)
                     and r.author.casefold() != pr.author.casefold()),
                    key=_when, reverse=True)
    recent = people[:MAX_EVIDENCE_REMARKS]
    # Reading a long pasted log takes a while: off the worker's loop, like the digest.
    showing = await asyncio.to_thread(
        lambda: [r.author for r in recent if carries_evidence(r.body)])
    decisive = [r.author for r in people if r.review_state in _DECISIVE]
    logins = dict.fromkeys(
        login.casefold() for login in (*decisive, *showing, *(r.author for r in people)))
    access: dict[str, bool] = {}
    reads = 0
    for login in logins:
        permission = cached_permission(ctx, pr.repo, login)
        if permission is None:
            if reads >= MAX_PERMISSION_READS:
                continue
            reads += 1
            try:
                permission = await permission_of(gh, ctx, pr.repo, login)
            except GitHubError as exc:
                log.info("permission of %s unavailable: %s", login, exc,
                         extra={"repo": pr.repo, "pr": pr.number})
                break
        access[login] = permission in _MAY_WRITE
    return access


async def linked_items(
    gh: GitHubAPI, ctx: HandlerContext, facts: PullRequestFacts, *, objections: bool
) -> LinkedRead:
    """What the description's linked PRs and issues are now: at most MAX_LINK_READS reads
    per job, cached per linking repository (a private repository's titles never serve
    another's digest)."""
    items: list[LinkedItem] = []
    reads = 0
    failed = False
    for link in linked_work(facts):
        if not link.repo and link.number == facts.number:
            continue
        target = link.repo or facts.repo
        key = f"{facts.repo}|{target}#{link.number}".casefold()
        cached = ctx.linked.get(key)
        if isinstance(cached, LinkedItem):
            items.append(cached)
            continue
        if reads >= MAX_LINK_READS:
            continue
        reads += 1
        try:
            issue = await gh.get_issue(target, link.number)
        except NotFound:
            item = LinkedItem(repo=link.repo, number=link.number)  # gone, or not readable
        except GitHubError as exc:
            log.info("linked %s#%d unavailable: %s", target, link.number, exc,
                     extra={"repo": facts.repo, "pr": facts.number})
            failed = True
            continue
        else:
            item = await _linked(gh, ctx, link.repo, link.kind, issue, objections)
        ctx.linked[key] = item
        items.append(item)
    return LinkedRead(tuple(items), failed)


async def _linked(
    gh: GitHubAPI, ctx: HandlerContext, repo: str, kind: str, issue: IssueSummary,
    objections: bool,
) -> LinkedItem:
    state = "open" if issue.state == "open" else ("merged" if issue.merged else "closed")
    objection, by = "", ""
    # The attempt this PR replaces, closed without merging: what its maintainers said.
    if objections and kind == "supersedes" and issue.is_pull and state == "closed" and not repo:
        try:
            objection, by = await _last_maintainer_word(gh, ctx, issue)
        except GitHubError as exc:
            log.info("objection on %s#%d unavailable: %s", issue.repo, issue.number, exc)
    return LinkedItem(repo=repo, number=issue.number, title=issue.title, state=state,
                      is_pull=issue.is_pull, objection=objection, objection_by=by)


async def _last_maintainer_word(
    gh: GitHubAPI, ctx: HandlerContext, issue: IssueSummary
) -> tuple[str, str]:
    comments = await gh.list_comments(issue.repo, issue.number)
    reviews = await gh.list_reviews(issue.repo, issue.number)
    said = [
        *(_from_comment(c, "", ctx.bot_login) for c in comments),
        *(_from_review(r, "") for r in reviews if r.state != "PENDING"),
    ]
    people = [r for r in said if r.body.strip() and not is_bot(r, ctx.bot_login)
              and r.author.casefold() != issue.author.casefold()]
    people.sort(key=lambda r: (_when(r), r.id), reverse=True)
    asked: list[str] = []
    for remark in people:
        if remark.author not in asked:
            if len(asked) >= MAX_OBJECTION_PERMISSIONS:
                break
            asked.append(remark.author)
        if await permission_of(gh, ctx, issue.repo, remark.author) in _MAY_WRITE:
            sentence = first_sentence(remark.body)
            if sentence:
                return sentence, remark.author
    return "", ""
