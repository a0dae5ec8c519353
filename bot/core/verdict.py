"""How closely to read a PR: the verdict, a reading-time estimate and a one-line reason."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from bot.core.facts import PullRequestFacts
from bot.core.findings import AreaMatch, Criticality, Lang, Risk, Verdict
from bot.core.i18n import t

CRITICALITY_RANK: dict[Criticality, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}
# At or below this many changed lines a change in a low/medium area is a skim.
TINY_LINES = 10
# A high-severity risk makes a change this big worth a deep read in any area.
DEEP_READ_LINES = 400
# Reading effort per criticality: a compile or attention diff reads slower than a docs one.
_PACE: dict[Criticality, float] = {"low": 0.8, "medium": 1.0, "high": 1.3, "critical": 1.6}
_QUIET_PACE = 0.6
_MAX_MINUTES = 180


class VerdictCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reading_minutes: int = Field(ge=1)
    reason: str  # localized, one line


def judge_verdict(
    facts: PullRequestFacts,
    areas: Sequence[AreaMatch],
    risks: Sequence[Risk],
    lang: Lang,
) -> VerdictCall:
    """Area criticality x size x kind of change x open risks -> verdict and reading time."""
    loud = [a for a in areas if not a.quiet]
    high_risk = any(r.severity == "high" for r in risks)
    lines = facts.total_additions + facts.total_deletions
    # Unknown sizes (offline runs, partial data) count as non-trivial, never as tiny.
    tiny = 0 < lines <= TINY_LINES
    top = max(loud, key=lambda a: CRITICALITY_RANK[a.criticality], default=None)
    rank = CRITICALITY_RANK[top.criticality] if top else 0

    verdict: Verdict
    if top is None and not high_risk:
        verdict = "quiet"
    elif (rank >= 2 and (not tiny or high_risk)) or (high_risk and lines >= DEEP_READ_LINES):
        verdict = "deep-read"
    elif tiny and rank <= 1 and not high_risk:
        verdict = "skim"
    else:
        verdict = "read"
    return VerdictCall(
        verdict=verdict,
        reading_minutes=_reading_minutes(facts, top, high_risk),
        reason=_reason(facts, areas, loud, top, risks, lang),
    )


def _reading_minutes(facts: PullRequestFacts, top: AreaMatch | None, high_risk: bool) -> int:
    lines = facts.total_additions + facts.total_deletions
    files = facts.total_changed_files
    # Square roots: review time grows with size, but a 2,000-line diff is read
    # selectively, not ten times slower than a 200-line one.
    base = 1 + 0.4 * math.sqrt(lines) + 0.3 * math.sqrt(files)
    pace = _PACE[top.criticality] if top else _QUIET_PACE
    if high_risk:
        pace *= 1.15  # open high risks send the reader to check tests and evidence too
    return max(1, min(_MAX_MINUTES, round(base * pace)))


def _reason(
    facts: PullRequestFacts,
    areas: Sequence[AreaMatch],
    loud: Sequence[AreaMatch],
    top: AreaMatch | None,
    risks: Sequence[Risk],
    lang: Lang,
) -> str:
    size = _size(facts, lang)
    risk_note = _risk_note(risks, lang)
    if top is None:
        if areas:
            names = ", ".join(dict.fromkeys(a.title for a in areas))
            return t(lang, "verdict.reason.quiet", areas=names, size=size, risks=risk_note)
        return t(lang, "verdict.reason.no-areas", size=size, risks=risk_note)
    area = top.title
    if len(loud) > 1:
        area += t(lang, "verdict.more-areas", count=len(loud) - 1)
    return t(
        lang,
        "verdict.reason.area",
        criticality=t(lang, f"verdict.criticality.{top.criticality}"),
        area=area,
        size=size,
        kind=_kind(facts, lang),
        risks=risk_note,
    )


def _size(facts: PullRequestFacts, lang: Lang) -> str:
    files = facts.total_changed_files
    if facts.total_additions + facts.total_deletions == 0:
        plural = "none" if files == 0 else "one" if files == 1 else "many"
        return t(lang, f"verdict.size-unknown.{plural}", files=files)
    return t(
        lang,
        "verdict.size.one" if files == 1 else "verdict.size.many",
        additions=facts.total_additions,
        deletions=facts.total_deletions,
        files=files,
    )


def _kind(facts: PullRequestFacts, lang: Lang) -> str:
    files = facts.files
    if files and all(f.filename.startswith("tests/") for f in files):
        return t(lang, "verdict.kind.tests")
    if files and all(f.status == "added" for f in files):
        return t(lang, "verdict.kind.new")
    if facts.total_deletions > 2 * facts.total_additions and facts.total_deletions > TINY_LINES:
        return t(lang, "verdict.kind.removal")
    return ""


def _risk_note(risks: Sequence[Risk], lang: Lang) -> str:
    if any(r.severity == "high" for r in risks):
        return t(lang, "verdict.risks.high")
    if risks:
        return t(lang, "verdict.risks.open", count=len(risks))
    return ""
