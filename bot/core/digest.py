"""Compose the digest: facts + rules + language -> Digest, and its JSON contract."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from bot.core.facts import (
    ChangedFile,
    Conversation,
    HeadStatuses,
    LinkedItem,
    PullRequestFacts,
)
from bot.core.findings import CiPlan, CiStepRef, Digest, Owners, RepoLabel
from bot.core.judging.conversation import read_conversation
from bot.core.judging.risks import assess_risks, weigh_areas
from bot.core.judging.verdict import judge_verdict, rank_areas
from bot.core.reading.body import parse_body
from bot.core.reading.decisions import harvest_decisions
from bot.core.reading.links import find_links
from bot.core.reading.mentions import find_mentions
from bot.core.reading.specifics import Link
from bot.core.reading.structure.read import read_structure
from bot.core.reading.symbols import extract_symbols, removed_files
from bot.core.reading.template import strip_against
from bot.core.reading.value_tables import find_value_changes
from bot.core.render.escape import escape_text
from bot.core.render.i18n import t
from bot.core.repo_index.findings import RepoContext
from bot.core.routing.reviewers import suggested_reviewers
from bot.core.rules import AreaMatchResult, RuleSet, match_areas
from bot.core.vocabulary import (
    AreaMatch,
    Ask,
    Lang,
    LaterEvidence,
    Reviewers,
    RoutingOutcome,
)

if TYPE_CHECKING:
    # Only its type: a digest without the repository's config imports no YAML or
    # pathspec (tests/core/test_digest_imports.py).
    from bot.core.repo_config.config import RepoConfig

MAX_START_FILES = 3
# Where a reader would not start: tests, docs, CI and packaging.
_NOT_A_START = ("tests/", "docs/", ".buildkite/", ".github/", "benchmarks/", "examples/")


def build_digest(
    facts: PullRequestFacts,
    rules: RuleSet,
    lang: Lang,
    *,
    explain: bool = False,
    routing: RoutingOutcome | None = None,
    extra_notes: tuple[str, ...] = (),
    repo_context: RepoContext | None = None,
    repo_config: RepoConfig | None = None,
    head_statuses: HeadStatuses | None = None,
    conversation: Conversation | None = None,
) -> Digest:
    """The whole reading guide for one PR. Pure: same inputs, same digest.

    `head_statuses` are the head commit's statuses, read for the base's CI pipeline.
    `conversation`: the PR's comments, reviews and review comments (evidence posted
    later, reviewers' asks) and what its linked work (`linked_work`) is now, when the
    caller read them."""
    # Mergify reads the body as written; everything else reads the author's own words.
    owners, ci, repo_labels = _from_repo_config(facts, repo_config, head_statuses)
    facts, ticked = _without_template(facts, repo_config)
    body = parse_body(facts.body)
    symbols = extract_symbols(facts.files)
    mentions = find_mentions(facts.body, facts.files, symbols)
    # Labels Mergify will add are label signals for the areas, as real ones are.
    labelled = _with_labels(facts, repo_labels)
    matched = match_areas(labelled, rules, lang)
    # Reading order: the lead area (most changed code lines) first.
    areas = rank_areas(facts, weigh_areas(facts, matched.areas, rules.risks))
    risks = assess_risks(facts, body, areas, rules.risks, lang, ci=ci)
    admitted, shown = bool(body.not_run), risks
    asks: tuple[Ask, ...] = ()
    later: tuple[LaterEvidence, ...] = ()
    if conversation is not None and conversation.remarks:
        reading = read_conversation(facts, body, areas, risks, rules.risks, lang, conversation,
                                    ci=ci)
        risks, shown, admitted = reading.risks, reading.shown, reading.admitted
        asks, later = reading.asks, reading.later
    found_around = repo_context is not None and not repo_context.empty
    call = judge_verdict(facts, areas, risks, lang, admitted=admitted, ranked=True,
                         repo_findings=found_around)
    area_labels = _ordered_union(label for area in areas for label in area.labels)
    routed_by = _ordered_union((*labelled.labels, *area_labels))
    return Digest(
        repo=facts.repo,
        number=facts.number,
        head_sha=facts.head_sha,
        lang=lang,
        rules_version=rules.version,
        verdict=call.verdict,
        reading_minutes=call.reading_minutes,
        verdict_reason=call.reason,
        areas=areas,
        risks=shown,
        asks=asks,
        later_evidence=later,
        symbols=symbols,
        removed_files=removed_files(facts.files),
        mentions=mentions,
        decisions=harvest_decisions(facts.body, mentions),
        structure=read_structure(facts.files),
        links=_linked(linked_work(facts), conversation.linked if conversation else ()),
        value_changes=find_value_changes(facts.body),
        start_files=() if symbols or mentions else _start_files(facts.files),
        ci_areas=_ci_areas(ci, areas),
        ci=ci,
        repo_labels=repo_labels,
        reviewers=_without_author(suggested_reviewers(routed_by, rules.routing), facts.author),
        labels=area_labels,
        routing=routing,
        trace=matched.trace,
        repo_context=repo_context if found_around else None,
        owners=owners,
        ticked=ticked,
        repo_config_source=repo_config.source if repo_config else "",
        repo_config_problems=repo_config.problems if repo_config else (),
        notes=(*_notes(facts, lang), *_scan_notes(matched, lang), *extra_notes),
        files_total=facts.total_changed_files,
        additions=facts.total_additions,
        deletions=facts.total_deletions,
        explain=explain,
    )


def _from_repo_config(
    facts: PullRequestFacts, config: RepoConfig | None, head: HeadStatuses | None
) -> tuple[Owners | None, CiPlan | None, tuple[RepoLabel, ...]]:
    """What the base's CODEOWNERS, pipeline and Mergify rules say about this PR."""
    if config is None:
        return None, None, ()
    from bot.core.repo_config import for_digest  # YAML and pathspec: only when asked

    owners = for_digest.code_owners(config.codeowners, facts) if config.codeowners else None
    ci = (
        for_digest.ci_plan(config.pipeline, facts, config.source, head)
        if config.pipeline and config.pipeline.steps else None
    )
    labels = for_digest.repo_labels(config.mergify, facts) if config.mergify else ()
    return owners, ci, labels


def _without_template(
    facts: PullRequestFacts, config: RepoConfig | None
) -> tuple[PullRequestFacts, tuple[str, ...]]:
    """The body without the base's PR-template boilerplate, and the template's checklist
    boxes the author ticked. Without a template the body's readers fall back to the
    phrases of vLLM's known templates (bot/core/reading/body_vocabulary.py)."""
    if config is None or config.template is None or not facts.body:
        return facts, ()
    text, ticked = strip_against(facts.body, config.template)
    return facts.model_copy(update={"body": text}), ticked


def _with_labels(facts: PullRequestFacts, labels: tuple[RepoLabel, ...]) -> PullRequestFacts:
    if not labels:
        return facts
    return facts.model_copy(
        update={"labels": _ordered_union((*facts.labels, *(x.label for x in labels)))}
    )


def _ci_areas(ci: CiPlan | None, areas: Sequence[AreaMatch]) -> tuple[str, ...]:
    """The pipeline's own selection when the base's was read, else the rules' lists."""
    if ci is not None:
        from bot.core.repo_config.for_digest import ci_area_names

        return ci_area_names(ci)
    return _ordered_union(ci for area in areas for ci in area.ci_areas)


def linked_work(facts: PullRequestFacts) -> tuple[Link, ...]:
    """The PRs and issues the title and description link to, most telling first."""
    return find_links(facts.title, facts.body, facts.repo, facts.number)


def _linked(links: Sequence[Link], items: Sequence[LinkedItem]) -> tuple[Link, ...]:
    """The links with what the handler read of them: title, state, objection."""
    known = {(item.repo.casefold(), item.number): item for item in items}
    out: list[Link] = []
    for link in links:
        item = known.get((link.repo.casefold(), link.number))
        if item is None:
            out.append(link)
            continue
        out.append(replace(
            link, title=item.title or link.title,
            state="" if item.state == "unknown" else item.state, is_pull=item.is_pull,
            objection=item.objection, objection_by=item.objection_by,
        ))
    return tuple(out)


def _start_files(files: Sequence[ChangedFile]) -> tuple[str, ...]:
    """Without symbols or mentions: the biggest source files, where the change lives."""
    sources = [
        f
        for f in files
        if f.status != "removed"
        and not f.filename.startswith(_NOT_A_START)
        and f.filename.endswith((".py", ".cu", ".cuh", ".cpp", ".h", ".hpp", ".c"))
    ]
    ranked = sorted(sources, key=lambda f: -f.changes)
    return tuple(f.filename for f in ranked[:MAX_START_FILES])


def repo_config_note(problem: str, lang: Lang) -> str:
    return t(lang, "note.repo_config_invalid", problem=escape_text(problem, limit=300))


def digest_json(digest: Digest, markdown: str) -> dict[str, Any]:
    """The `--format json` contract (docs/architecture.md): stable keys, extended not renamed."""
    return {
        "repo": digest.repo,
        "number": digest.number,
        "head_sha": digest.head_sha,
        "lang": digest.lang,
        "rules_version": digest.rules_version,
        "verdict": digest.verdict,
        "reading_minutes": digest.reading_minutes,
        "verdict_reason": digest.verdict_reason,
        "areas": [
            {
                "id": area.id,
                "title": area.title,
                "files": list(area.files),
                "reasons": [reason.model_dump() for reason in area.reasons],
                "ci_areas": list(area.ci_areas),
                "focus": list(area.focus),
            }
            for area in digest.areas
        ],
        "risks": [
            {
                "id": risk.id,
                "severity": risk.severity,
                "text": risk.text,
                "evidence": list(risk.evidence),
            }
            for risk in digest.risks
        ],
        # Reviewers' asks from the conversation, each shown once: {kind, by, quote, url,
        # status (open | answered), answered_by (reply | commit | evidence | ""),
        # answer_url, risk (the digest item it stands in for, left out of `risks`)}.
        "asks": [ask.model_dump(exclude={"severity"}) for ask in digest.asks],
        # Evidence posted after the description: {risk, outcome (cleared | lowered), by,
        # url, evidence}.
        "later_evidence": [later.model_dump() for later in digest.later_evidence],
        "symbols": [symbol.model_dump() for symbol in digest.symbols],
        "mentions": [asdict(m) for m in digest.mentions],
        "decisions": [asdict(d) for d in digest.decisions],
        "structure": [asdict(s) for s in digest.structure],
        "links": [asdict(link) for link in digest.links],
        "value_changes": [asdict(v) for v in digest.value_changes],
        "ci_areas": list(digest.ci_areas),
        "reviewers": {"users": list(digest.reviewers.users), "teams": list(digest.reviewers.teams)},
        "labels": list(digest.labels),
        "routing": digest.routing.model_dump(mode="json") if digest.routing else None,
        "notes": list(digest.notes),
        # The default branch's symbol index: {commit, siblings, overrides, callers} or None.
        "repo_context": (
            digest.repo_context.model_dump(mode="json") if digest.repo_context else None
        ),
        # The base's CODEOWNERS on the changed files: {users, teams, by_file,
        # unmatched_files} or None; unmatched_files counts the paths left unmatched when
        # the matching budget ran out (their owners are unknown).
        "owners": (
            {"users": list(digest.owners.users), "teams": list(digest.owners.teams),
             "by_file": {path: list(owners) for path, owners in digest.owners.by_file},
             "unmatched_files": len(digest.owners.unmatched)}
            if digest.owners else None
        ),
        # The base's CI pipeline on this PR's paths, or None when it was not read.
        "ci": _ci_json(digest.ci) if digest.ci else None,
        # Labels the base's Mergify rules will add: [{label, rule}].
        "repo_labels": [label.model_dump() for label in digest.repo_labels],
        # The base's PR-template checklist boxes the author ticked, in its wording, and
        # whether one of them says an AI assistant helped.
        "checklist_ticked": list(digest.ticked),
        "ai_assisted": digest.ai_assisted,
        # Where the repository's own config was read, and what in it was refused.
        "repo_config": (
            {"source": digest.repo_config_source, "problems": list(digest.repo_config_problems)}
            if digest.repo_config_source else None
        ),
        "files_total": digest.files_total,
        "additions": digest.additions,
        "deletions": digest.deletions,
        "markdown": markdown,
    }


def _ci_json(ci: CiPlan) -> dict[str, Any]:
    def step(ref: CiStepRef) -> dict[str, Any]:
        return {"label": ref.label, "key": ref.key, "file": ref.file, "device": ref.device,
                "gpus": ref.gpus, "nightly": ref.nightly, "optional": ref.optional,
                "matched": list(ref.matched), "status": ref.status}

    return {
        "steps": [step(s) for s in ci.steps],
        "broad_count": ci.broad_count,
        "broad_through": list(ci.broad_through),
        "run_all": ci.run_all,
        "docs_only": ci.docs_only,
        "not_run": {
            "nightly": [step(s) for s in ci.nightly],
            "optional": [step(s) for s in ci.optional],
            "tests_without_step": list(ci.tests_without_step),
        },
        "source": ci.source,
        # The build on the head commit: its state, or None when statuses were not read.
        "state": ci.run.state if ci.run else None,
        "run": ci.run.model_dump() if ci.run else None,
    }


def _notes(facts: PullRequestFacts, lang: Lang) -> tuple[str, ...]:
    if facts.files_truncated:
        listed, total = len(facts.files), facts.changed_files
        return (t(lang, "note.files_truncated", listed=listed, total=total),)
    if not facts.files:
        return (t(lang, "note.no_files"),)
    return ()


def _scan_notes(matched: AreaMatchResult, lang: Lang) -> tuple[str, ...]:
    return (
        *(() if matched.added_complete else (t(lang, "note.added_scan_partial"),)),
        *(() if matched.texts_complete else (t(lang, "note.text_scan_partial"),)),
    )


def _without_author(reviewers: Reviewers, author: str) -> Reviewers:
    # GitHub refuses a review request to the PR's own author.
    return Reviewers(
        users=tuple(u for u in reviewers.users if u.lower() != author.lower()),
        teams=reviewers.teams,
    )


def _ordered_union(items: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
