"""The words of the findings: the stages before rendering return data (a risk's id,
parameters and clues, the verdict's grounds, a note's id and numbers, rule texts in
both languages); this module words them in one language. The Markdown, the JSON's
rendered keys and the label view all word a finding here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.core.findings import CiStepRef
from bot.core.neighbours.model import Dependency, LiveState, Neighbour
from bot.core.render.ci import step_title
from bot.core.render.escape import escape_code, escape_text
from bot.core.render.i18n import t
from bot.core.render.zh_text import full_width, space_mixed
from bot.core.vocabulary import (
    AreaMatch,
    Clue,
    Lang,
    Note,
    Risk,
    RuleText,
    TraceEntry,
    VerdictGrounds,
)

# A base that moved a few commits rarely changes what the PR's CI proved; vllm's main
# takes ~50 commits in a busy couple of days, enough that a green run may no longer hold.
BASE_MOVED_SHOWN = 50


def rule_text(text: RuleText, lang: Lang) -> str:
    """A rule's text in `lang`; Chinese falls back to English."""
    if lang == "zh" and text.zh:
        return space_mixed(full_width(text.zh))
    return text.en


def area_title(area: AreaMatch, lang: Lang) -> str:
    return rule_text(area.title, lang)


def area_titles(ids: Iterable[str], areas: Sequence[AreaMatch], lang: Lang) -> list[str]:
    """The titles of the areas `ids` names (an area the digest does not hold: its id)."""
    by_id = {area.id: area for area in areas}
    return [area_title(by_id[i], lang) if i in by_id else i for i in ids]


# --- risks ------------------------------------------------------------------------------


def risk_text(risk: Risk, areas: Sequence[AreaMatch], lang: Lang) -> str:
    """The risk's sentence; `areas` are the digest's (missing-gpu-eval names them)."""
    params = {key: value for key, value in risk.params}
    key = f"risk.{risk.id}"
    words: dict[str, object] = {}
    if risk.id == "missing-gpu-eval":
        names = area_titles(_strings(params.get("areas", ())), areas, lang)
        if params.get("kernels"):
            names.append(t(lang, "risk.kernels"))
        words["areas"] = ", ".join(dict.fromkeys(names))
    elif risk.id == "relevant-ci-not-run":
        key += ".one" if params.get("count") == 1 else ""
        words = {"count": params.get("count", 0),
                 "state": t(lang, f"render.ci.state.{params.get('state', '')}")}
    elif risk.id == "large-diff" and "listed" in params:
        key += ".truncated"
        words = dict(params)
    elif risk.id == "missing-tests":
        key += ".one" if params.get("count") == 1 else ""
        words = dict(params)
    else:
        words = {name: ", ".join(value) if isinstance(value, tuple) else value
                 for name, value in params.items()}
    return t(lang, key, **words)


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, tuple) else ()


def risk_evidence(risk: Risk, lang: Lang) -> tuple[str, ...]:
    """The risk's clues as the digest shows them (untrusted: escape them), each once."""
    return tuple(dict.fromkeys(
        shown for clue in risk.evidence if (shown := clue_text(risk.id, clue, lang))
    ))


def clue_text(risk_id: str, clue: Clue, lang: Lang) -> str:
    kind = clue.kind
    if kind == "absent":
        # Under the finding's own id, or (folded into another) under the one it came from.
        own = clue.text.split(".", 1)[0] == "missing-test-results"
        key = f"risk.{clue.text}" if own else f"risk.{risk_id}.{clue.text}"
        return t(lang, key, section=clue.detail) if clue.detail else t(lang, key)
    if kind == "platform":
        return t(lang, "risk.hardware-unverified.unnamed", platform=clue.text)
    if kind == "base":
        return f"base: {clue.text}"
    if kind == "diff":
        additions, deletions = clue.numbers
        return f"+{additions}/−{deletions}"
    if kind == "files":
        return f"{clue.numbers[0]} files"
    if kind == "ci-step":
        step = CiStepRef(label=clue.text, device=clue.device,
                         gpus=clue.numbers[0] if clue.numbers else 0)
        return (f"{step_title(step)}{t(lang, 'render.colon')}"
                f"{t(lang, f'render.ci.status.{clue.detail}')}")
    return clue.text  # quote, file, area


# --- the verdict ------------------------------------------------------------------------


def verdict_reason(grounds: VerdictGrounds, areas: Sequence[AreaMatch], lang: Lang) -> str:
    """The verdict's one-line reason; `areas` are the digest's."""
    size = _size(grounds, lang)
    risks = _risk_note(grounds, lang)
    if not grounds.lead:
        if grounds.areas:
            names = ", ".join(dict.fromkeys(area_titles(grounds.areas, areas, lang)))
            reason = t(lang, "verdict.reason.quiet", areas=names, size=size, risks=risks)
        else:
            reason = t(lang, "verdict.reason.no-areas", size=size, risks=risks)
        return reason + (t(lang, "verdict.context") if grounds.context else "")
    area = area_titles((grounds.lead,), areas, lang)[0]
    if grounds.more_areas:
        area += t(lang, "verdict.more-areas", count=grounds.more_areas)
    touches = t(lang, "render.comma").join(escape_code(name, 60) for name in grounds.touches)
    return t(
        lang,
        "verdict.reason.area",
        area=area,
        touches=t(lang, "verdict.touches", names=touches) if touches else "",
        size=size,
        kind=t(lang, f"verdict.kind.{grounds.kind}") if grounds.kind else "",
        risks=risks,
    )


def verdict_size(grounds: VerdictGrounds, lang: Lang) -> str:
    """The change's size, kind and shown risks, for the comment's heading: what the
    reading time rests on. The area and the functions are not repeated there: the reading
    sections below name them (blind judges called a line of them a repeat)."""
    kind = t(lang, f"verdict.kind.{grounds.kind}") if grounds.kind else ""
    return f"{_size(grounds, lang)}{kind}{_risk_note(grounds, lang)}"


def _size(grounds: VerdictGrounds, lang: Lang) -> str:
    files = grounds.files
    if grounds.additions + grounds.deletions == 0:
        plural = "none" if files == 0 else "one" if files == 1 else "many"
        return t(lang, f"verdict.size-unknown.{plural}", files=files)
    return t(
        lang,
        "verdict.size.one" if files == 1 else "verdict.size.many",
        additions=grounds.additions,
        deletions=grounds.deletions,
        files=files,
    )


def _risk_note(grounds: VerdictGrounds, lang: Lang) -> str:
    if grounds.high_risk:
        return t(lang, "verdict.risks.high")
    # Low risks live in the collapsed checklist: the headline counts what is shown.
    if grounds.open_risks == 1:
        return t(lang, "verdict.risks.open.one")
    if grounds.open_risks:
        return t(lang, "verdict.risks.open", count=grounds.open_risks)
    return ""


# --- notes and the trace ----------------------------------------------------------------


def note_text(note: Note, lang: Lang) -> str:
    if note.id == "files-truncated":
        listed, total = note.numbers
        return t(lang, "note.files_truncated", listed=listed, total=total)
    if note.id == "repo-config-invalid":
        return t(lang, "note.repo_config_invalid", problem=escape_text(note.text, limit=300))
    return t(lang, "note." + note.id.replace("-", "_"))


def trace_note(entry: TraceEntry, lang: Lang) -> str:
    """A fired rule: how many files it matched; one that did not: why (the rule engine's
    own words, English)."""
    if entry.fired and entry.files:
        return t(lang, "trace.files.one") if entry.files == 1 else t(
            lang, "trace.files", count=entry.files)
    return entry.note


# --- neighbours: the PR among the other open PRs ----------------------------------------


def neighbour_text(neighbour: Neighbour, lang: Lang) -> str:
    """One neighbour: who, what it shares, how far along it is. Titles and logins are
    other people's text: escaped, and a PR is named, never linked."""
    shared = _shared_words(neighbour, lang)
    facts = [t(lang, "neighbours.opened", date=neighbour.created_at.date().isoformat())
             ] if neighbour.created_at is not None else []
    if neighbour.draft:
        facts.append(t(lang, "neighbours.draft"))
    if neighbour.approved:
        facts.append(t(lang, "neighbours.approved"))
    if neighbour.ci in ("passed", "failed", "error", "running"):
        facts.append(t(lang, f"neighbours.ci.{neighbour.ci}"))
    title = f" “{escape_text(neighbour.title, 80)}”" if neighbour.title else ""
    return t(
        lang, f"neighbours.{neighbour.reason}", ref=pr_ref(neighbour.number) + title,
        author=escape_text(f"@{neighbour.author}", 60) if neighbour.author else "?",
        shared=shared,
        facts=t(lang, "neighbours.facts", facts=t(lang, "neighbours.facts_sep").join(facts))
        if facts else "",
    )


def _shared_words(neighbour: Neighbour, lang: Lang) -> str:
    if neighbour.reason == "same-issue":
        return ", ".join(escape_text(s, 20) for s in neighbour.shared[:2])
    if neighbour.reason == "same-function":
        shown = [escape_code(s.rpartition("::")[2], 80) for s in neighbour.shared[:2]]
    else:
        shown = [escape_code(s, 100) for s in neighbour.shared[:2]]
    more = neighbour.shared_count - len(shown)
    return ", ".join(shown) + (t(lang, "neighbours.more_shared", count=more) if more > 0 else "")


def dependency_text(dependency: Dependency, lang: Lang) -> str:
    return t(lang, "neighbours.dependency", ref=pr_ref(dependency.number),
             cue=t(lang, f"neighbours.cue.{dependency.cue}"),
             state=t(lang, f"neighbours.state.{dependency.state}"))


def live_texts(live: LiveState, lang: Lang, *, ci_shown: bool) -> list[str]:
    """The PR's own state; a failed build only when the CI section does not say it."""
    texts = []
    if live.conflicts:
        texts.append(t(lang, "neighbours.conflicts"))
    elif live.behind:
        texts.append(t(lang, "neighbours.behind"))
    if live.base_behind_by is not None and live.base_behind_by >= BASE_MOVED_SHOWN:
        texts.append(t(lang, "neighbours.base_moved", count=live.base_behind_by))
    if live.ci_failed and not ci_shown:
        texts.append(t(lang, "neighbours.ci_failed"))
    return texts


def pr_ref(number: int) -> str:
    """`#N` that GitHub does not turn into a link (so no backlink on the other thread)."""
    return escape_text(f"#{number}", 20)
