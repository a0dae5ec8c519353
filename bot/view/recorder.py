"""Turns a digest job's result into the label view's stored rows (both languages)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from bot.core.findings import Digest
from bot.core.judging.triage import triage
from bot.core.label_view import Triage, summarize
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json, worded_in
from bot.core.vocabulary import LANGS
from bot.core.writer.result import WriterResult
from bot.github.protocol import PullRequest
from bot.handlers.converged import Converged
from bot.view.links import pull_url
from bot.view.store import DigestStore, PullState, StoredDigest


class DigestRecorder:
    """The `on_converged` listener of the digest job."""

    def __init__(self, store: DigestStore) -> None:
        self._store = store

    async def __call__(self, converged: Converged) -> None:
        # Building the other language is the digest's whole CPU cost again: off the loop.
        digests = await asyncio.to_thread(_stored_digests, converged)
        pull = converged.pull
        routing = converged.digest.routing if converged.digest is not None else None
        if routing is not None:
            # The PR was read before routing ran: add whom this job asked.
            pull = pull.model_copy(update={
                "requested_users": (*pull.requested_users, *routing.requested_users),
                "requested_teams": (*pull.requested_teams, *routing.requested_teams)})
        await self._store.record(pull_state(pull), digests)


def _stored_digests(converged: Converged) -> tuple[StoredDigest, ...]:
    digests: list[StoredDigest] = []
    if converged.digest is not None:
        first = converged.digest
        payload = _payload(first, converged.markdown, converged.written.get(first.lang))
        pull = converged.pull
        # The same in every language: taken from the first digest's JSON.
        state = triage(payload, conversation=converged.conversation, author=pull.author,
                       body=pull.body, created_at=_epoch(pull.created_at),
                       routes_to=converged.routes_to)
        digests.append(_stored(payload, first, state))
        if converged.in_language is not None:
            for lang in LANGS:
                if lang != first.lang:
                    other = converged.in_language(lang)
                    digests.append(_stored(
                        _payload(other, None, converged.written.get(lang)), other, state))
    return tuple(digests)


def _payload(
    digest: Digest, markdown: str | None, written: WriterResult | None
) -> dict[str, Any]:
    # The comment as posted when there is one; a quiet PR's digest (or one in the other
    # language) is rendered for the view alone (nothing was posted for it).
    return digest_json(digest, markdown if markdown is not None
                       else render_digest(digest, written=written), written)


def _stored(payload: dict[str, Any], digest: Digest, state: Triage) -> StoredDigest:
    # The JSON's worded keys are English in every language; the summary a reader of
    # this language sees is worded in it.
    shown = worded_in(payload, digest, digest.lang)
    return StoredDigest(digest.lang, payload, summarize(shown, triage=state))


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


def _text(value: str) -> str:
    # GitHub's JSON may carry lone surrogates; SQLite stores only valid UTF-8.
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def requested_reviewers(pull: PullRequest) -> tuple[str, ...]:
    """Logins, and teams as `org/slug` (a PR's teams are its organisation's, and the
    owner filter compares CODEOWNERS' `org/team`), each once."""
    org = pull.repo.partition("/")[0]
    names: dict[str, str] = {}
    for name in (*pull.requested_users, *(f"{org}/{team}" for team in pull.requested_teams)):
        names.setdefault(name.casefold(), _text(name))
    return tuple(names.values())


def pull_state(pull: PullRequest, *, now: datetime | None = None) -> PullState:
    updated = _epoch(pull.updated_at) or (now or datetime.now().astimezone()).timestamp()
    closed = _epoch(pull.closed_at)
    if pull.state != "open" and closed is None:
        closed = updated
    return PullState(
        repo=pull.repo, number=pull.number, title=_text(pull.title), author=_text(pull.author),
        url=_text(pull.html_url) or pull_url(pull.repo, pull.number),
        labels=tuple(_text(label) for label in pull.labels),
        draft=pull.draft, state=pull.state, merged=pull.merged, private=pull.private,
        updated_at=updated, closed_at=closed,
        requested=requested_reviewers(pull),
    )
