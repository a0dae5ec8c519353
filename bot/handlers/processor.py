"""Runs one job: opens a GitHub session for its installation and calls the handler.

Also the reconcile sweep, which needs the same sessions. Built once by bot.service.wiring.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from bot.github.dry_run import DryRunGitHub
from bot.github.protocol import GitHubAPI, GitHubError, RepositoryArchive
from bot.github.session import GitHubSessionFactory
from bot.handlers.command import CommentCommandJob, from_outsider, handle_command_comment
from bot.handlers.context import HandlerContext
from bot.handlers.digest import Steer, SyncOutcome, sync_pull_request
from bot.handlers.neighbours import NEIGHBOUR, remember
from bot.handlers.reconcile import enqueue_stale, fingerprint
from bot.handlers.refill import queue_refill
from bot.handlers.writing import queue_writing
from bot.queue.jobs import OutsiderCommand
from bot.queue.ledger import LedgerStore
from bot.queue.store import Job, JobStore, NewJob, index_key, pr_key
from bot.repo_index.lookup import IndexLookup
from bot.repo_index.refresh import IndexRefresher, RefreshOutcome
from bot.settings.model import Settings

log = logging.getLogger(__name__)
# A commit is the head of one PR almost always; a fork's branch opened twice, of two.
MAX_PULLS_PER_COMMIT = 5


class JobProcessor:
    def __init__(
        self,
        settings: Settings,
        factory: GitHubSessionFactory,
        ctx: HandlerContext,
        store: JobStore,
        ledger: LedgerStore,
        refresher: IndexRefresher | None = None,
    ) -> None:
        self._settings = settings
        self._refresher = refresher
        self._factory = factory
        self._ctx = ctx
        self._store = store
        self._ledger = ledger

    async def __call__(self, job: Job) -> None:
        if job.kind == "index":
            await self._refresh_index(job)
            return
        if job.kind == "status":
            await self._ci_state_changed(job)
            return
        if job.number is None:
            log.warning("job without a PR number ignored", extra={"job": job.id})
            return
        async with self.session(job.installation_id) as gh:
            if job.kind == "writer":
                # The written section, as an edit of the digest posted before it.
                await sync_pull_request(gh, self._ctx, job.repo, job.number,
                                        Steer(may_write=True))
            elif job.kind == "pr":
                # Queued only because a PR it overlaps moved: edit, never post anew.
                actions = job.payload.get("actions")
                edit_only = isinstance(actions, list) and set(actions) == {NEIGHBOUR}
                outcome = await sync_pull_request(gh, self._ctx, job.repo, job.number,
                                                  Steer(edit_only=edit_only))
                await self._remember_open_pr(job, outcome)
                if outcome.wants_writing:
                    await queue_writing(self._store, job)
                if outcome.digest is not None:
                    await queue_refill(self._store, job, outcome.digest.unavailable,
                                       self._settings.refill_seconds)
                pull = outcome.pull
                if pull is not None:
                    await self._ledger.record_converged(
                        job.repo, job.number, job.installation_id,
                        fingerprint(pull, self._ctx.rules.bundled.version),
                        open_head=pull.head_sha if pull.state == "open" else None,
                    )
            elif job.kind == "command":
                payload = job.payload
                command = CommentCommandJob(
                    repo=job.repo,
                    number=job.number,
                    comment_id=int(payload["comment_id"]),
                    body=str(payload.get("body") or ""),
                    author=str(payload.get("author_login") or ""),
                    author_type=str(payload.get("author_type") or "User"),
                    previous_body=payload.get("previous_body"),
                )
                # Maintainers first: a command from anyone else waits behind all other
                # work (issue 38, item 6); sorting it costs one cached permission read.
                if not job.payload.get("outsider") and await from_outsider(
                        gh, self._ctx, command):
                    raise OutsiderCommand(job.id)
                ran = await handle_command_comment(gh, self._ctx, command)
                if ran is not None and ran.wants_writing:
                    await queue_writing(self._store, job)

    async def _remember_open_pr(self, job: Job, outcome: SyncOutcome) -> None:
        """Keep the PR's record among the open PRs (forgotten once closed) and queue the
        PRs it overlaps when it moved; one line with what the neighbours part cost."""
        store, pull = self._ctx.open_prs, outcome.pull
        if store is None or pull is None or (outcome.record is None and pull.state == "open"):
            return  # a draft or muted PR's job stopped before reading its files
        try:
            queued = await remember(store, self._store, pull, outcome.record,
                                    job.installation_id)
        except Exception as exc:  # the digest is posted; the record waits for the next job
            log.warning("open PR record not stored: %s", exc,
                        extra={"repo": job.repo, "pr": job.number})
            return
        log.info("neighbours", extra={
            "repo": job.repo, "pr": job.number, "github_calls": outcome.neighbour_calls,
            "requeued": queued, "state": pull.state})

    async def _ci_state_changed(self, job: Job) -> None:
        """A CI build on a commit changed state: queue a digest run for the open PRs
        whose head it is. The ledger knows the heads it converged; only a head it has
        not seen yet costs a call (GitHub's PRs of a commit)."""
        sha = job.payload.get("sha")
        if not isinstance(sha, str) or not sha:
            return
        numbers = await self._ledger.pulls_with_head(job.repo, sha)
        source = "ledger"
        if not numbers:
            source = "github"
            async with self.session(job.installation_id) as gh:
                pulls = await gh.list_pulls_for_commit(job.repo, sha)
            numbers = [p.number for p in pulls if p.state == "open" and p.head_sha == sha]
        for number in numbers[:MAX_PULLS_PER_COMMIT]:
            await self._store.enqueue(NewJob(
                kind="pr", key=pr_key(job.repo, number), installation_id=job.installation_id,
                repo=job.repo, number=number,
                payload={"actions": ["ci-status"], "ci_state": job.payload.get("state")},
            ))
        log.info("CI state %s on %s: %d PR(s) queued", job.payload.get("state"), sha[:7],
                 len(numbers[:MAX_PULLS_PER_COMMIT]),
                 extra={"repo": job.repo, "found_by": source})

    @property
    def index_lookup(self) -> IndexLookup | None:
        return self._ctx.index

    async def _refresh_index(self, job: Job) -> None:
        sha = job.payload.get("sha")
        outcome = await self._refresh(job.repo, job.installation_id,
                                      sha if isinstance(sha, str) else None)
        if outcome is not None and outcome.action in ("built", "current"):
            await self._ledger.record_indexed(job.repo, job.installation_id, outcome.commit)

    async def sync_indexes(self) -> int:
        """Several replicas: the symbol index is each one's own cache, and an index job
        runs on one of them; the others bring theirs to the commit it indexed, here
        (a periodic task), so every replica writes the same digest. Returns how many
        repositories this replica refreshed."""
        refresher = self._refresher
        if refresher is None:
            return 0
        refreshed = 0
        for wanted in await self._ledger.indexed_commits():
            here = await asyncio.to_thread(refresher.indexed_commit, wanted.repo)
            if here != wanted.commit:
                await self._refresh(wanted.repo, wanted.installation_id, wanted.commit)
                refreshed += 1
        return refreshed

    async def _refresh(self, repo: str, installation_id: int | None,
                       sha: str | None) -> RefreshOutcome | None:
        if self._refresher is None:
            return None
        async with self._open(installation_id) as gh:
            if not isinstance(gh, RepositoryArchive):
                log.warning("session cannot download archives; index not refreshed")
                return None
            outcome = await self._refresher.refresh(gh, repo, sha)
        log.info("index %s", outcome.action, extra={
            "repo": repo, "commit": outcome.commit[:12], "files": outcome.files,
            "skipped": dict(outcome.skipped), "reason": outcome.reason,
        })
        return outcome

    async def _queue_missing_index(self, installation_id: int, repo: str) -> None:
        refresher = self._refresher
        if refresher is None:
            return
        if await asyncio.to_thread(refresher.indexed_commit, repo) is None:
            await self._store.enqueue(NewJob(
                kind="index", key=index_key(repo), installation_id=installation_id,
                repo=repo, number=None, payload={},
            ))

    @asynccontextmanager
    async def session(self, installation_id: int | None) -> AsyncIterator[GitHubAPI]:
        """The GitHub session for a job: the App's installation, else the plain token,
        else anonymous reads; wrapped so nothing is written in dry-run."""
        async with self._open(installation_id) as gh:
            if self._settings.effective_dry_run:
                yield DryRunGitHub(gh, self._ledger.record_preview, self._ctx.bot_login)
            else:
                yield gh

    def _open(self, installation_id: int | None) -> AbstractAsyncContextManager[GitHubAPI]:
        settings = self._settings
        if settings.has_app_credentials and installation_id is not None:
            return self._factory.for_installation(installation_id)
        if settings.github_token is not None:
            return self._factory.for_token()
        return self._factory.for_anonymous()

    async def sweep(self) -> int:
        """Queue a digest run for every recently updated open PR we have not converged."""
        if not self._settings.has_app_credentials:
            return 0
        queued = 0
        try:
            repositories = await self._factory.installation_repositories()
        except GitHubError as exc:
            # GitHub's answer says all there is (a 401, a 5xx): one line, no traceback.
            log.warning("reconcile skipped: cannot list the App's repositories: %s", exc,
                        extra={"status": exc.status})
            return 0
        for installation_id, repo in repositories:
            try:
                await self._queue_missing_index(installation_id, repo)
                async with self._factory.for_installation(installation_id) as gh:
                    pulls = await gh.list_open_pulls(repo, limit=100)
                queued += await enqueue_stale(
                    self._store, installation_id, repo, pulls,
                    await self._ledger.fingerprints(repo), self._ctx.rules.bundled.version,
                    skip_drafts=self._ctx.skip_drafts,
                )
            # One repository's failure must not stop the sweep of the others.
            except GitHubError as exc:
                log.warning("reconcile skipped %s: %s", repo, exc,
                            extra={"repo": repo, "status": exc.status})
            except Exception:
                log.exception("reconcile failed", extra={"repo": repo})
        return queued
