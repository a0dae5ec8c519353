"""The digest's JSON contract (`digest --format json`, the label view's store, the API):
the digest's data, with the Markdown and a few older keys worded in one fixed language."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from bot.core.findings import CiPlan, CiStepRef, Digest
from bot.core.render.words import note_text, risk_evidence, risk_text, rule_text, verdict_reason
from bot.core.vocabulary import Lang
from bot.core.writer.result import WriterResult

# The language of the contract's worded keys: one for every digest, so the JSON does not
# depend on the language the comment is written in.
WORDED_IN: Lang = "en"


def digest_json(
    digest: Digest, markdown: str, writer: WriterResult | None = None
) -> dict[str, Any]:
    """The `--format json` contract (docs/architecture.md): stable keys, extended not renamed.

    The same for every language but `lang` and `markdown`: the findings are data, and the
    older keys that held sentences (`verdict_reason`, `areas[].title`, `areas[].focus`,
    `risks[].text`, `risks[].evidence`, `notes`) are worded in English, always."""
    areas = digest.areas
    return {
        "repo": digest.repo,
        "number": digest.number,
        "head_sha": digest.head_sha,
        "lang": digest.lang,
        "rules_version": digest.rules_version,
        "verdict": digest.verdict,
        "reading_minutes": digest.reading_minutes,
        "verdict_reason": (verdict_reason(digest.verdict_grounds, areas, WORDED_IN)
                           if digest.verdict_grounds else ""),
        # What the verdict weighed (docs/architecture.md), or None.
        "verdict_grounds": (digest.verdict_grounds.model_dump()
                            if digest.verdict_grounds else None),
        "areas": [
            {
                "id": area.id,
                "title": rule_text(area.title, WORDED_IN),
                "files": list(area.files),
                "reasons": [reason.model_dump() for reason in area.reasons],
                "ci_areas": list(area.ci_areas),
                "focus": [rule_text(focus, WORDED_IN) for focus in area.focus],
                # The rule's own texts, in both languages ({en, zh}; zh null when the
                # rule gives none), and what else the rule says of the area.
                "texts": {
                    "title": area.title.model_dump(),
                    "audience": area.audience.model_dump(),
                    "focus": [focus.model_dump() for focus in area.focus],
                    "focus_triggered": [focus.model_dump() for focus in area.focus_triggered],
                },
                "checklist": [item.model_dump() for item in area.checklist],
                "criticality": area.criticality,
                "numerics": area.numerics,
                "quiet": area.quiet,
                "labels": list(area.labels),
            }
            for area in areas
        ],
        "risks": [
            {
                "id": risk.id,
                "severity": risk.severity,
                "text": risk_text(risk, areas, WORDED_IN),
                "evidence": list(risk_evidence(risk, WORDED_IN)),
                # The data the sentences above are worded from (docs/architecture.md).
                "params": {name: list(value) if isinstance(value, tuple) else value
                           for name, value in risk.params},
                "clues": [clue.model_dump() for clue in risk.evidence],
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
        "notes": [note_text(note, WORDED_IN) for note in digest.notes],
        # The same notes as data: {id, numbers, text}.
        "note_facts": [note.model_dump() for note in digest.notes],
        # The parts whose read failed this time (`Part` ids); the job re-runs to fill them.
        "unavailable": list(digest.unavailable),
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
        # The PR among the other open PRs (issue 42): {neighbours[{number, relation
        # (competes | overlaps), reason, shared, shared_count, title, author, created_at,
        # draft, approved, ci}], dependencies[{number, cue, state}], live{mergeable_state,
        # conflicts, behind, ci_failed, base_behind_by}, compared}, or None when no open
        # PRs were read.
        "neighbours": (digest.neighbours.model_dump(mode="json")
                       if digest.neighbours is not None else None),
        "files_total": digest.files_total,
        "additions": digest.additions,
        "deletions": digest.deletions,
        # The language-model writer (issue 41): {status, model, prompt_version,
        # packet_sha256, lang, reason, kept, dropped[{section, text, reason, detail}],
        # tokens{prompt, completion}}; status "off" when no writer was asked.
        "writer": (writer or WriterResult(status="off")).to_json(),
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
            # of those, the added tests a step's pytest reaches but leaves out, and how
            "tests_selected_out": [{"path": path, "selected_by": list(how)}
                                   for path, how in ci.tests_selected_out],
        },
        # Intel's pipeline (.buildkite/ci_config_intel.yaml): the steps it runs through a
        # narrow entry and how many others; empty where the base has none.
        "intel": {"steps": [step(s) for s in ci.intel_steps],
                  "broad_count": ci.intel_broad_count,
                  "run_all": ci.intel_run_all},
        "source": ci.source,
        # The build on the head commit: its state, or None when statuses were not read.
        "state": ci.run.state if ci.run else None,
        "run": ci.run.model_dump() if ci.run else None,
    }


def worded_in(payload: dict[str, Any], digest: Digest, lang: Lang) -> dict[str, Any]:
    """`payload` (this digest's JSON) with its worded keys in `lang` instead of English:
    what the label view shows a reader of that language (bot/view/recorder.py)."""
    areas = digest.areas
    return {
        **payload,
        "verdict_reason": (verdict_reason(digest.verdict_grounds, areas, lang)
                           if digest.verdict_grounds else ""),
        "areas": [
            {**entry, "title": rule_text(area.title, lang),
             "focus": [rule_text(focus, lang) for focus in area.focus]}
            for entry, area in zip(payload["areas"], areas, strict=True)
        ],
        "risks": [
            {**entry, "text": risk_text(risk, areas, lang),
             "evidence": list(risk_evidence(risk, lang))}
            for entry, risk in zip(payload["risks"], digest.risks, strict=True)
        ],
        "notes": [note_text(note, lang) for note in digest.notes],
    }
