"""What the conversation changes in the digest: evidence posted later settles the risks it
answers, and reviewers' asks stand in for the digest's own matching items.

- **Evidence posted later** counts when the PR's author or a maintainer posted it (a
  comment, a review or a review comment): it is read with the description's own
  recognisers and added to the description's reading, and the risk checks run again;
  a risk that no longer fires was cleared by that remark, one that fires lower was
  lowered. Evidence never adds a risk. A bot's words never count.
- **Asks** come from anyone but the author and bots: one per kind (an open one first),
  "answered" when the author replied (in the same review thread, or later on the PR
  naming what was asked, the asker or quoting the ask), when evidence posted after it
  cleared the matching risk, or, for tests, docs and a rebase, when a commit was pushed
  after the review that asked. The digest's own matching item is not shown beside it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.core.facts import Conversation, PullRequestFacts, Remark
from bot.core.findings import CiPlan
from bot.core.judging.risks import SEVERITY_RANK, assess_risks
from bot.core.reading.asks import FoundAsk, mentions_kind, read_asks
from bot.core.reading.body import PullRequestBody, parse_body
from bot.core.reading.remarks import only_promises, pasted_test_summaries
from bot.core.rules.risk_settings import RiskSettings
from bot.core.vocabulary import (
    ASK_KINDS,
    Answer,
    AreaMatch,
    Ask,
    AskAccess,
    AskKind,
    AskStatus,
    LaterEvidence,
    Risk,
)

# The digest item each kind of ask stands for.
ASK_RISK: Mapping[AskKind, str] = {
    "tests": "missing-tests",
    "test-results": "missing-test-results",
    "gpu-eval": "missing-gpu-eval",
    "numbers": "perf-claim-without-numbers",
    "hardware-run": "hardware-unverified",
    "split": "large-diff",
}
# Kinds a pushed commit can answer by itself.
_COMMIT_ANSWERS: frozenset[AskKind] = frozenset({"tests", "docs", "rebase"})
# Remarks read for evidence (the latest ones), and for asks: bounded work per PR.
MAX_EVIDENCE_REMARKS = 30
MAX_SETTLING_REMARKS = 6
MAX_ASK_REMARKS = 300
# Sentences read for asks across one PR's thread, newest remarks first: a hostile thread
# of 300 long comments costs a bounded scan (~0.3 s), not one per comment.
MAX_ASK_SENTENCES = 1_500
MAX_REMARK_CHARS = 65_536
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DOCS_FILE = re.compile(r"^docs/|\.(?:md|rst)$")


@dataclass(frozen=True)
class ConversationReading:
    risks: tuple[Risk, ...]  # open after later evidence: the verdict weighs these
    shown: tuple[Risk, ...]  # without those an ask stands for: the checklist shows these
    admitted: bool  # the description's admitted gap still stands
    asks: tuple[Ask, ...]
    later: tuple[LaterEvidence, ...]


@dataclass(frozen=True)
class _Said:
    """A remark in time order, with its place in the conversation."""

    at: int
    remark: Remark

    @property
    def thread(self) -> int:
        return self.remark.in_reply_to or self.remark.id


def read_conversation(
    facts: PullRequestFacts,
    body: PullRequestBody,
    areas: Sequence[AreaMatch],
    risks: Sequence[Risk],
    settings: RiskSettings,
    conversation: Conversation,
    *,
    bot_login: str = "",
    ci: CiPlan | None = None,
) -> ConversationReading:
    """`ci`: what the base's pipeline runs for the PR, as the risks were assessed with."""
    said = _voices(conversation.remarks, bot_login, facts.author)
    settled, merged, later = _settle(facts, body, areas, risks, settings, said, ci)
    asks = _asks(facts, said, settled, later)
    asked = {ask.risk for ask in asks if ask.risk}
    return ConversationReading(
        risks=settled,
        shown=tuple(risk for risk in settled if risk.id not in asked),
        admitted=bool(merged.not_run),
        asks=asks,
        later=tuple(evidence for _, evidence in later),
    )


def is_bot(remark: Remark, bot_login: str = "") -> bool:
    login = remark.author.casefold()
    return (remark.author_is_bot or login.endswith("[bot]")
            or (bool(bot_login) and login == bot_login.casefold()))


def _voices(remarks: Sequence[Remark], bot_login: str, author: str) -> list[_Said]:
    """People's remarks with something to read, oldest first (GitHub lists each kind in
    order; the three kinds are interleaved by time). GitHub's times are whole seconds:
    within one, the others' remarks go before the author's (an answer follows an ask)."""
    order = {"comment": 0, "review": 1, "review_comment": 2}
    people = [r for r in remarks if r.body.strip() and not is_bot(r, bot_login)
              and r.review_state.upper() != "DISMISSED"]
    people.sort(key=lambda r: (r.created_at or _EPOCH, r.author.casefold() == author.casefold(),
                               order[r.kind], r.id))
    return [_Said(at, remark) for at, remark in enumerate(people)]


def _is_author(facts: PullRequestFacts, remark: Remark) -> bool:
    return remark.author.casefold() == facts.author.casefold()


# --- evidence posted later ----------------------------------------------------------


def _settle(
    facts: PullRequestFacts,
    body: PullRequestBody,
    areas: Sequence[AreaMatch],
    risks: Sequence[Risk],
    settings: RiskSettings,
    said: Sequence[_Said],
    ci: CiPlan | None,
) -> tuple[tuple[Risk, ...], PullRequestBody, list[tuple[int, LaterEvidence]]]:
    current = list(risks)
    merged = body
    found: dict[str, tuple[int, LaterEvidence]] = {}
    credible = [s for s in said if _is_author(facts, s.remark) or s.remark.maintainer]
    evidence = [
        (s, read, summaries)
        for s in credible[-MAX_EVIDENCE_REMARKS:]
        if _carries(read := parse_body(s.remark.body[:MAX_REMARK_CHARS]),
                    summaries := pasted_test_summaries(s.remark.body))
    ]
    for s, read, summaries in evidence[-MAX_SETTLING_REMARKS:]:
        if not current:
            break
        merged = _merge(merged, read, summaries)
        after = {risk.id: risk
                 for risk in assess_risks(facts, merged, areas, settings, ci=ci)}
        line = _evidence_line(read, summaries)
        kept: list[Risk] = []
        for risk in current:
            now = after.get(risk.id)
            if now is None:
                found[risk.id] = (s.at, _later(risk.id, "cleared", s.remark, line))
            elif SEVERITY_RANK[now.severity] > SEVERITY_RANK[risk.severity]:
                found[risk.id] = (s.at, _later(risk.id, "lowered", s.remark, line))
                kept.append(now)
            else:
                kept.append(risk)
        current = kept
    return tuple(current), merged, sorted(found.values(), key=lambda item: item[0])


def _later(
    risk: str, outcome: Literal["cleared", "lowered"], remark: Remark, line: str
) -> LaterEvidence:
    return LaterEvidence(risk=risk, outcome=outcome, by=remark.author, url=remark.url,
                         evidence=line)


def carries_evidence(text: str) -> bool:
    """Whether a remark shows a run, a result or numbers: only then does it matter who
    posted it (the handler asks GitHub whether its author may write)."""
    return _carries(parse_body(text[:MAX_REMARK_CHARS]), pasted_test_summaries(text))


def _carries(read: PullRequestBody, summaries: tuple[str, ...]) -> bool:
    return bool(read.accuracy_evidence or read.run_evidence or read.perf_numbers or summaries)


def _merge(
    body: PullRequestBody, read: PullRequestBody, summaries: tuple[str, ...]
) -> PullRequestBody:
    """The description's reading with one remark's evidence added. A link to a CI build
    is left out: in a comment it is as often a failed run as a passed one."""
    update: dict[str, object] = {
        "text": f"{body.text}\n\n{read.text}",
        "eval_evidence": (*body.eval_evidence, *read.eval_evidence),
        "parity": (*body.parity, *read.parity),
        "verified": (*body.verified, *read.verified),
        "tested_on": (*body.tested_on, *read.tested_on),
        "command_output": (*body.command_output, *read.command_output),
        "perf_numbers": (*body.perf_numbers, *read.perf_numbers),
    }
    # A run shown later answers the description's "not yet run"; a remark that itself
    # admits a gap answers nothing.
    if not read.not_run and (read.accuracy_evidence or read.tested_on or read.verified):
        update["not_run"] = ()
    results = summaries or read.run_evidence
    if results:
        update["test_result_empty"] = False
        update["sections"] = {**body.sections, "test_result": results[0]}
    return body.model_copy(update=update)


def _evidence_line(read: PullRequestBody, summaries: tuple[str, ...]) -> str:
    """The line that shows it: a result with a number (not a table's header) first."""
    lines = [line.strip() for group in (read.accuracy_evidence, summaries, read.run_evidence,
                                        read.perf_numbers) for line in group if line.strip()]
    return next((line for line in lines if any(ch.isdigit() for ch in line)),
                lines[0] if lines else "")


# --- asks -----------------------------------------------------------------------------


def _asks(
    facts: PullRequestFacts,
    said: Sequence[_Said],
    risks: Sequence[Risk],
    later: Sequence[tuple[int, LaterEvidence]],
) -> tuple[Ask, ...]:
    open_risks = {risk.id: risk for risk in risks}
    by_kind: dict[AskKind, Ask] = {}
    budget = MAX_ASK_SENTENCES
    found_in: list[tuple[_Said, tuple[FoundAsk, ...]]] = []
    for s in reversed(said[-MAX_ASK_REMARKS:]):
        if budget <= 0:
            break
        if not _is_author(facts, s.remark):
            asks, read = read_asks(s.remark.body, budget)
            budget -= read
            found_in.append((s, asks))
    for s, asks in reversed(found_in):
        remark = s.remark
        for found in asks:
            status, how, where = _answer(facts, found.kind, s, said, open_risks, later)
            risk = open_risks.get(ASK_RISK.get(found.kind, ""))
            ask = Ask(
                kind=found.kind, by=remark.author, quote=found.sentence, url=remark.url,
                status=status, answered_by=how, answer_url=where,
                risk=risk.id if risk else "", severity=risk.severity if risk else None,
                access=_access(remark),
            )
            # One line per kind: an ask still open wins over an answered one.
            shown = by_kind.get(found.kind)
            if shown is None or (shown.status == "answered" and status == "open"):
                by_kind[found.kind] = ask
    ordered = sorted(by_kind.values(),
                     key=lambda a: (a.status != "open", ASK_KINDS.index(a.kind)))
    return tuple(ordered)


def _access(remark: Remark) -> AskAccess:
    return "write" if remark.maintainer else ("none" if remark.outsider else "")


def _answer(
    facts: PullRequestFacts,
    kind: AskKind,
    ask: _Said,
    said: Sequence[_Said],
    open_risks: Mapping[str, Risk],
    later: Sequence[tuple[int, LaterEvidence]],
) -> tuple[AskStatus, Answer, str]:
    risk_id = ASK_RISK.get(kind, "")
    for at, evidence in later:
        if at > ask.at and evidence.risk == risk_id and evidence.outcome == "cleared":
            return "answered", "evidence", evidence.url
    for reply in said[ask.at + 1:]:
        if _is_author(facts, reply.remark) and _replies(reply, ask, kind):
            return "answered", "reply", reply.remark.url
    commit = ask.remark.commit_id
    if (kind in _COMMIT_ANSWERS and commit and facts.head_sha
            and commit.lower() != facts.head_sha.lower() and _commit_shows(facts, kind,
                                                                           open_risks)):
        return "answered", "commit", ""
    return "open", "", ""


def _replies(reply: _Said, ask: _Said, kind: AskKind) -> bool:
    """The author's remark answers the ask: in its review thread, or on the PR naming what
    was asked, the asker, or quoting the ask. A promise ("will add later") answers nothing."""
    text = reply.remark.body
    if only_promises(text):
        return False
    if reply.remark.kind == "review_comment":
        return ask.remark.kind == "review_comment" and reply.thread == ask.thread
    asker = ask.remark.author.casefold()
    return (mentions_kind(text, kind) or f"@{asker}" in text.casefold()
            or any(line.lstrip().startswith(">") for line in text.split("\n", 200)[:200]))


def _commit_shows(facts: PullRequestFacts, kind: AskKind, open_risks: Mapping[str, Risk]) -> bool:
    if kind == "tests":
        return "missing-tests" not in open_risks
    if kind == "docs":
        return any(_DOCS_FILE.search(f.filename) for f in facts.files)
    return True  # a rebase: any later commit
