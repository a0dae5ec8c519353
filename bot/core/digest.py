"""Compose the digest: facts + rules -> Digest, as data (rendering words it: the Markdown
and the JSON contract are bot/core/render/)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bot.core.facts import (
    ChangedFile,
    Conversation,
    HeadStatuses,
    LinkedItem,
    PullRequestFacts,
    is_test_path,
)
from bot.core.findings import CiPlan, Digest, Owners, RepoLabel
from bot.core.judging.conversation import read_conversation
from bot.core.judging.risks import assess_risks, weigh_areas
from bot.core.judging.verdict import judge_verdict, rank_areas
from bot.core.neighbours.record import Neighbourhood, neighbours_of, record_of
from bot.core.reading.body import parse_body
from bot.core.reading.decisions import harvest_decisions
from bot.core.reading.links import find_links, opens_with_a_link
from bot.core.reading.mentions import find_mentions
from bot.core.reading.prose_lines import prose_only
from bot.core.reading.specifics import Link
from bot.core.reading.structure.read import not_moved, read_structure, unanswered
from bot.core.reading.symbols import extract_symbols, moved_files, removed_files, same_content
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
    VerdictGrounds,
)

if TYPE_CHECKING:
    # Only its type: a digest without the repository's config imports no YAML or
    # pathspec (tests/core/test_digest_imports.py).
    from bot.core.repo_config.config import RepoConfig

MAX_START_FILES = 3
MAX_SYMBOLS_SHOWN = 40  # `extract_symbols`' default: the digest's symbols
MAX_SYMBOLS_READ = 400
# A quiet area (docs, CI) touched by at most this many changed lines, beside a loud one
# and with no code owner of its files to name, gets no routing line: one row of a
# supported-models table needs no docs maintainer (judged noise where shown, issue 40).
SLIGHT_LINES = 2
# Where a reader would not start: tests, docs, CI and packaging.
_NOT_A_START = ("tests/", "docs/", ".buildkite/", ".github/", "benchmarks/", "examples/")


def _new_symbols(symbols: tuple[Symbol, ...]) -> frozenset[tuple[str, str]]:
    """(file, name) of what the patch adds, unless the same name is also changed there
    (two classes' `__init__`, one new and one edited)."""
    changed = {(s.file, s.name) for s in symbols if s.change != "added"}
    return frozenset((s.file, s.name) for s in symbols
                     if s.change == "added" and (s.file, s.name) not in changed)


def _removed_symbols(symbols: tuple[Symbol, ...]) -> frozenset[tuple[str, str]]:
    """(file, name) of what the patch removes whole from a file."""
    return frozenset((s.file, s.name) for s in symbols if s.change == "removed")


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
    owners = _owners_without_author(owners, facts.author)
    facts, ticked = _without_template(facts, repo_config)
    body = parse_body(facts.body)
    # A file moved (removed and added again with its lines) changes no symbol.
    moves = moved_files(facts.files)
    moved_away = {old for old, _ in moves}
    unchanged = moved_away | same_content(facts.files, moves)
    # Read past the 40 shown: "is this function new?" is asked of every structure note.
    touched = extract_symbols(
        [f for f in facts.files if f.filename not in unchanged] if unchanged else facts.files,
        limit=MAX_SYMBOLS_READ,
    )
    symbols = touched[:MAX_SYMBOLS_SHOWN]
    mentions = find_mentions(facts.body, facts.files, symbols)
    # Labels Mergify will add are label signals for the areas, as real ones are.
    labelled = _with_labels(facts, repo_labels)
    matched = match_areas(labelled, rules)
    # Reading order: the lead area (most changed code lines) first.
    areas = rank_areas(facts, _without_slight_quiet_areas(
        facts, weigh_areas(facts, matched.areas, rules.risks), owners))
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
    named = _with_index_names(symbols, repo_context)
    grounds = _with_touches(call.grounds, facts, areas, named)
    area_labels = _ordered_union(label for area in areas for label in area.labels)
    # A label Mergify adds only for test files names no code owner's area (RepoLabel).
    tests_only = {x.label for x in repo_labels if x.tests_only}
    routed_by = _ordered_union((*(x for x in labelled.labels if x not in tests_only),
                                *area_labels))
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
        verdict_grounds=grounds,
        areas=areas,
        risks=shown,
        asks=asks,
        later_evidence=later,
        symbols=named,
        removed_files=tuple(f for f in removed_files(facts.files) if f not in moved_away),
        moved_files=moves,
        mentions=mentions,
        # A quote that opens by naming linked work repeats the Linked work line.
        decisions=tuple(d for d in harvest_decisions(facts.body, mentions)
                        if not (links and opens_with_a_link(d.quote))),
        structure=not_moved(unanswered(
            read_structure(facts.files, new_symbols=_new_symbols(touched),
                           removed_symbols=_removed_symbols(touched)), facts.title),
            facts.files),
        links=links,
        value_changes=find_value_changes(facts.body),
        start_files=() if symbols or mentions else _start_files(facts.files),
        ci_areas=_ci_areas(ci, areas),
        ci=ci,
        repo_labels=repo_labels,
        reviewers=_with_unpooled_area_owners(_with_specialist_owners(
            _without_author(suggested_reviewers(routed_by, rules.routing), facts.author),
            owners, facts.files), areas, owners, facts.files, rules.routing.pools),
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
        for_digest.ci_plan(config.pipeline, facts, config.source, head, config.intel_pipeline)
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


# A CODEOWNERS entry naming this many people or fewer is a specialist's (the XPU
# platform file's, the LoRA kernels'), not a broad group's (config/, every model).
MAX_SPECIALIST_OWNERS = 3
MAX_SPECIALISTS_ADDED = 3


def _with_specialist_owners(
    reviewers: Reviewers, owners: Owners | None, files: Sequence[ChangedFile]
) -> Reviewers:
    """Suggested reviewers also get the specialist owners (at most three people) of each
    changed source file none of whose owners the label pools name, the most changed file
    first, at most MAX_SPECIALISTS_ADDED people in all. Blind judges called the label
    pools alone misdirected on an XPU-only, a LoRA-kernel and a KV-offloading change whose
    owners went unnamed, and on a model change routed to the kernel pool, which named an
    owner of the MoE runner it touched but not the model file's owner.
    No pool means no line to correct: the area line names the owners already.
    `owners` comes without the PR's author."""
    if owners is None or not (reviewers.users or reviewers.teams):
        return reviewers
    users = {user.casefold(): user for user in reviewers.users}
    owned = dict(owners.by_file)
    added = 0
    for f in sorted(files, key=lambda f: -(f.additions + f.deletions)):
        who = [o.lstrip("@") for o in owned.get(f.filename, ()) if "/" not in o]
        if (is_test_path(f.filename) or not who or len(who) > MAX_SPECIALIST_OWNERS
                or any(o.casefold() in users for o in who)
                or added + len(who) > MAX_SPECIALISTS_ADDED):
            continue
        users |= {o.casefold(): o for o in who}
        added += len(who)
    if not added:
        return reviewers
    return reviewers.model_copy(update={"users": tuple(users[k] for k in sorted(users))})


# People added for an open area that no label pool represents: the first code owners of
# its most changed file (CODEOWNERS lists a path's owners lead first).
MAX_AREA_OWNERS_ADDED = 2


def _with_unpooled_area_owners(
    reviewers: Reviewers, areas: Sequence[AreaMatch], owners: Owners | None,
    files: Sequence[ChangedFile], pools: Mapping[str, object],
) -> Reviewers:
    """Each open area that is not quiet, whose labels have no pool and whose files' code
    owners the suggested reviewers name no one of, adds the first code owners of its
    most changed source file. Blind judges called the line misdirected on a KV-connector
    change that only a docs table's pool routed (to the docs owner alone): the
    distributed area has no label pool and its files' owners were too many to count as
    specialists. Tests and files that change only comments and docstrings do not
    count. No suggested reviewer means no line to correct: the area line names
    the owners already. `owners` comes without the PR's author."""
    if owners is None or not (reviewers.users or reviewers.teams):
        return reviewers
    pooled = {label.casefold() for label in pools}
    users = {user.casefold(): user for user in reviewers.users}
    owned = dict(owners.by_file)
    changed = {f.filename: f for f in files}
    added = False
    for area in areas:
        if area.quiet or any(label.casefold() in pooled for label in area.labels):
            continue
        # Files whose code runs differently: a docstring-only edit asks no owner to review.
        code = sorted((f for f in area.files if not is_test_path(f) and f in changed
                       and not prose_only((changed[f],))),
                      key=lambda f: -changed[f].changes)
        people = [[o.lstrip("@") for o in owned.get(f, ()) if "/" not in o] for f in code]
        if any(o.casefold() in users for who in people for o in who):
            continue
        first = next((who for who in people if who), [])
        users |= {o.casefold(): o for o in first[:MAX_AREA_OWNERS_ADDED]}
        added = added or bool(first)
    if not added:
        return reviewers
    return reviewers.model_copy(update={"users": tuple(users[k] for k in sorted(users))})


def _owners_without_author(owners: Owners | None, author: str) -> Owners | None:
    """The code owners who should read the PR: its author owning a file is no reader of
    it (nor can GitHub request their review)."""
    if owners is None or not author:
        return owners
    me = author.lower()

    def other(who: str) -> bool:
        return who.removeprefix("@").lower() != me

    by_file = tuple((path, kept) for path, who in owners.by_file
                    if (kept := tuple(filter(other, who))))
    return owners.model_copy(update={
        "users": tuple(filter(other, owners.users)),
        "by_file": by_file,
    })


def _with_index_names(
    symbols: tuple[Symbol, ...], context: RepoContext | None
) -> tuple[Symbol, ...]:
    """The patch's symbols, with a class a hunk header named in place of the changed
    method the index places the hunk in (`QuantFP8` -> `QuantFP8._quantize_group_native`):
    git's hunk header names the nearest unindented line, so a method's change read as
    its class, which blind judges called generic ("names only the file and class")."""
    if context is None or not context.changed_functions:
        return symbols
    methods: dict[tuple[str, str], list[str]] = {}
    for path, qualname in context.changed_functions:
        owner = qualname.rpartition(".")[0]
        if owner:
            methods.setdefault((path, owner), []).append(qualname)
    seen = {(s.file, s.name) for s in symbols}
    named: list[Symbol] = []
    for symbol in symbols:
        inside = methods.get((symbol.file, symbol.name)) if symbol.change == "modified" else None
        # a method whose def line the patch shows is named already
        inside = [q for q in inside or () if (symbol.file, q.rpartition(".")[2]) not in seen]
        if inside:
            named += [symbol.model_copy(update={"name": q}) for q in inside]
        else:
            named.append(symbol)
    unique = {(s.file, s.name): s for s in named}
    return tuple(unique.values())


MAX_TOUCHES = 2


def _with_touches(
    grounds: VerdictGrounds | None, facts: PullRequestFacts, areas: Sequence[AreaMatch],
    symbols: Sequence[Symbol],
) -> VerdictGrounds | None:
    """The headline says what the change touches, not only its area and size (judged
    generic without it): the lead area's most changed code file's changed functions and
    classes (edited ones first), or the file itself when the PR adds it."""
    if grounds is None or not grounds.lead:
        return grounds
    lead = next((a for a in areas if a.id == grounds.lead), None)
    changed = {f.filename: f for f in facts.files}
    code = [changed[f] for f in lead.files if f in changed and not is_test_path(f)] if lead else []
    if not code:
        return grounds
    top = max(code, key=lambda f: f.changes)
    if top.status == "added":
        return grounds.model_copy(update={"touches": (top.filename.rsplit("/", 1)[-1],)})
    mine = [s for s in symbols if s.file == top.filename and not s.name.startswith("__")]
    ordered = [s.name for s in mine if s.change == "modified"] + [
        s.name for s in mine if s.change != "modified"]
    return grounds.model_copy(
        update={"touches": tuple(dict.fromkeys(ordered))[:MAX_TOUCHES]})


def _without_slight_quiet_areas(
    facts: PullRequestFacts, areas: Sequence[AreaMatch], owners: Owners | None
) -> tuple[AreaMatch, ...]:
    if owners is None or owners.unmatched or all(area.quiet for area in areas):
        return tuple(areas)
    sizes = {f.filename: f.changes for f in facts.files}
    owned = {path for path, who in owners.by_file if who}

    def slight(area: AreaMatch) -> bool:
        known = [sizes[f] for f in area.files if f in sizes]
        return (bool(area.files) and len(known) == len(area.files)
                and sum(known) <= SLIGHT_LINES and not owned.intersection(area.files))

    return tuple(area for area in areas if not (area.quiet and slight(area)))


def _ordered_union(items: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
