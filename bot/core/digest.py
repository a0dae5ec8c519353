"""Compose the digest: facts + rules -> Digest, as data (rendering words it: the Markdown
and the JSON contract are bot/core/render/)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.core.facts import (
    ChangedFile,
    Conversation,
    HeadStatuses,
    LinkedItem,
    PullRequestFacts,
)
from bot.core.findings import CiPlan, Digest, Owners, RepoLabel
from bot.core.judging.conversation import read_conversation
from bot.core.judging.risks import assess_risks, weigh_areas
from bot.core.judging.verdict import judge_verdict, rank_areas
from bot.core.neighbours.record import Neighbourhood, neighbours_of, record_of
from bot.core.reading.body import parse_body
from bot.core.reading.decisions import harvest_decisions
from bot.core.reading.links import find_links
from bot.core.reading.mentions import find_mentions
from bot.core.reading.specifics import Link
from bot.core.reading.structure.read import read_structure
from bot.core.reading.symbols import extract_symbols, removed_files
from bot.core.reading.template import strip_against
from bot.core.reading.value_tables import find_value_changes
from bot.core.repo_index.findings import RepoContext
from bot.core.routing.reviewers import suggested_reviewers
from bot.core.rules import AreaMatchResult, RuleSet, match_areas
from bot.core.vocabulary import (
    PARTS,
    AreaMatch,
    Ask,
    Lang,
    LaterEvidence,
    Note,
    Reviewers,
    RoutingOutcome,
    Symbol,
)

if TYPE_CHECKING:
    # Only its type: a digest without the repository's config imports no YAML or
    # pathspec (tests/core/test_digest_imports.py).
    from bot.core.repo_config.config import RepoConfig

MAX_START_FILES = 3
# Where a reader would not start: tests, docs, CI and packaging.
_NOT_A_START = ("tests/", "docs/", ".buildkite/", ".github/", "benchmarks/", "examples/")


def _new_symbols(symbols: tuple[Symbol, ...]) -> frozenset[tuple[str, str]]:
    """(file, name) of what the patch adds, unless the same name is also changed there
    (two classes' `__init__`, one new and one edited)."""
    changed = {(s.file, s.name) for s in symbols if s.change != "added"}
    return frozenset((s.file, s.name) for s in symbols
                     if s.change == "added" and (s.file, s.name) not in changed)


def build_digest(
    facts: PullRequestFacts,
    rules: RuleSet,
    lang: Lang,
    *,
    explain: bool = False,
    routing: RoutingOutcome | None = None,
    extra_notes: tuple[Note, ...] = (),
    repo_context: RepoContext | None = None,
    repo_config: RepoConfig | None = None,
    head_statuses: HeadStatuses | None = None,
    conversation: Conversation | None = None,
    neighbourhood: Neighbourhood | None = None,
) -> Digest:
    """The whole reading guide for one PR. Pure: same inputs, same digest.

    `head_statuses` are the head commit's statuses, read for the base's CI pipeline.
    `conversation`: the PR's comments, reviews and review comments (evidence posted
    later, reviewers' asks) and what its linked work (`linked_work`) is now, when the
    caller read them. `neighbourhood`: the other open PRs and the PR's live state, when
    the caller read them (issue 42)."""
    # Mergify reads the body as written; everything else reads the author's own words.
    owners, ci, repo_labels = _from_repo_config(facts, repo_config, head_statuses)
    facts, ticked = _without_template(facts, repo_config)
    body = parse_body(facts.body)
    symbols = extract_symbols(facts.files)
    mentions = find_mentions(facts.body, facts.files, symbols)
    # Labels Mergify will add are label signals for the areas, as real ones are.
    labelled = _with_labels(facts, repo_labels)
    matched = match_areas(labelled, rules)
    # Reading order: the lead area (most changed code lines) first.
    areas = rank_areas(facts, weigh_areas(facts, matched.areas, rules.risks))
    risks = assess_risks(facts, body, areas, rules.risks, ci=ci)
    admitted, shown = bool(body.not_run), risks
    asks: tuple[Ask, ...] = ()
    later: tuple[LaterEvidence, ...] = ()
    if conversation is not None and conversation.remarks:
        reading = read_conversation(facts, body, areas, risks, rules.risks, conversation,
                                    ci=ci)
        risks, shown, admitted = reading.risks, reading.shown, reading.admitted
        asks, later = reading.asks, reading.later
    found_around = repo_context is not None and not repo_context.empty
    call = judge_verdict(facts, areas, risks, admitted=admitted, ranked=True,
                         repo_findings=found_around)
    area_labels = _ordered_union(label for area in areas for label in area.labels)
    routed_by = _ordered_union((*labelled.labels, *area_labels))
    links = _linked(linked_work(facts), conversation.linked if conversation else ())
    neighbours = None
    if neighbourhood is not None:
        subject = record_of(facts, symbols, links, ci=_ci_state(ci), hood=neighbourhood)
        neighbours = neighbours_of(subject, facts, neighbourhood, conversation)
    return Digest(
        repo=facts.repo,
        number=facts.number,
        head_sha=facts.head_sha,
        lang=lang,
        rules_version=rules.version,
        verdict=call.verdict,
        reading_minutes=call.reading_minutes,
        verdict_grounds=call.grounds,
        areas=areas,
        risks=shown,
        asks=asks,
        later_evidence=later,
        symbols=symbols,
        removed_files=removed_files(facts.files),
        mentions=mentions,
        decisions=harvest_decisions(facts.body, mentions),
        structure=read_structure(facts.files, new_symbols=_new_symbols(symbols)),
        links=links,
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
        neighbours=neighbours,
        unavailable=tuple(p for p in PARTS if p in facts.unavailable),
        notes=(*_notes(facts), *_scan_notes(matched), *extra_notes),
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


def _ci_state(ci: CiPlan | None) -> str:
    return ci.run.state if ci is not None and ci.run is not None else ""


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


def repo_config_note(problem: str) -> Note:
    """The repository's own config was refused: the bundled rules were used."""
    return Note(id="repo-config-invalid", text=problem)


def _notes(facts: PullRequestFacts) -> tuple[Note, ...]:
    if facts.files_truncated:
        return (Note(id="files-truncated", numbers=(len(facts.files), facts.changed_files)),)
    if not facts.files:
        return (Note(id="no-files"),)
    return ()


def _scan_notes(matched: AreaMatchResult) -> tuple[Note, ...]:
    return (
        *(() if matched.added_complete else (Note(id="added-scan-partial"),)),
        *(() if matched.texts_complete else (Note(id="text-scan-partial"),)),
    )


def _without_author(reviewers: Reviewers, author: str) -> Reviewers:
    # GitHub refuses a review request to the PR's own author.
    return Reviewers(
        users=tuple(u for u in reviewers.users if u.lower() != author.lower()),
        teams=reviewers.teams,
    )


def _ordered_union(items: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
