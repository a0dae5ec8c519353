"""How closely to read a PR: the verdict, a reading-time estimate and its grounds (which
rendering words as the one-line reason).

The verdict comes from what a reader must actually read: the changed lines outside
tests, the lead area (the one holding most of them), the open high-severity risks and
whether the author admits a gap. The highest criticality merely *touched* does not
decide it: a one-line allow-list entry in an attention backend is not a deep read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.core.facts import ChangedFile, PullRequestFacts, is_prose_page, is_test_path
from bot.core.reading.prose_lines import prose_only
from bot.core.vocabulary import AreaMatch, Criticality, Risk, Verdict, VerdictGrounds

CRITICALITY_RANK: dict[Criticality, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}
# At or below this many changed code lines a change in a low/medium area is a skim.
TINY_LINES = 10
# At or below this many changed lines (tests included) a change is never a deep read,
# unless its author admits a gap.
SMALL_LINES = 20
# Changed code lines from which a lead area of this criticality is a deep read by size.
DEEP_LINES_BY_CRITICALITY: dict[Criticality, int] = {"critical": 60, "high": 150}
# A high-severity risk makes a change this big worth a deep read in any area.
DEEP_READ_LINES = 400
# Reading effort per criticality: a compile or attention diff reads slower than a docs one.
_PACE: dict[Criticality, float] = {"low": 0.8, "medium": 1.0, "high": 1.3, "critical": 1.6}
_QUIET_PACE = 0.6
_MAX_MINUTES = 180
# Test code is read faster than the code it tests.
_TEST_WEIGHT = 0.3


class VerdictCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reading_minutes: int = Field(ge=1)
    grounds: VerdictGrounds  # what it weighed; rendering words the one-line reason


def _only_prose(facts: PullRequestFacts) -> bool:
    """Whether the PR's code files change only comments and docstrings (prose_lines),
    its other files being tests or docs pages. Unknown patches count as code."""
    code = [f for f in facts.files
            if not is_test_path(f.filename) and not is_prose_page(f.filename)]
    return bool(code) and not facts.files_truncated and prose_only(code)


def _code_lines(facts: PullRequestFacts) -> tuple[int, int]:
    """(changed lines outside tests, changed lines in tests) as far as the files say."""
    code = tests = 0
    for changed in facts.files:
        if is_test_path(changed.filename):
            tests += changed.changes
        else:
            code += changed.changes
    total = facts.total_additions + facts.total_deletions
    if code + tests < total:  # a truncated or count-less file list: the rest is code
        code += total - code - tests
    return code, tests


def rank_areas(facts: PullRequestFacts, areas: Sequence[AreaMatch]) -> tuple[AreaMatch, ...]:
    """Areas in reading order: loud before quiet, then most changed code lines (files
    when sizes are unknown), then criticality. The first loud one is the lead area."""
    sizes: dict[str, ChangedFile] = {f.filename: f for f in facts.files}

    def weight(area: AreaMatch) -> tuple[int, int, int, int]:
        code = [f for f in area.files if not is_test_path(f)]
        lines = sum(sizes[f].changes for f in code if f in sizes)
        return (
            int(area.quiet),
            -lines,
            -len(code) - len(area.files),
            -CRITICALITY_RANK[area.criticality],
        )

    return tuple(sorted(areas, key=weight))


def judge_verdict(
    facts: PullRequestFacts,
    areas: Sequence[AreaMatch],
    risks: Sequence[Risk],
    *,
    admitted: bool = False,
    ranked: bool = False,
    repo_findings: bool = False,
) -> VerdictCall:
    """Code lines x lead area x open high risks x admissions -> verdict and reading time.

    `ranked`: `areas` are already in `rank_areas` order (ranking them again, a sort
    by the same key, keeps that order). `repo_findings`: the symbol index found code
    around the change to look at; a change that would be quiet is then a skim, so the
    findings are posted (a quiet verdict posts no digest); so is an open medium risk."""
    ranked_areas = tuple(areas) if ranked else rank_areas(facts, areas)
    loud = [a for a in ranked_areas if not a.quiet]
    lead = loud[0] if loud else None
    high_risk = any(r.severity == "high" for r in risks)
    lines = facts.total_additions + facts.total_deletions
    code, tests = _code_lines(facts)
    known = lines > 0  # unknown sizes (offline runs, partial data) say less, not more
    small = known and lines <= SMALL_LINES
    rank = CRITICALITY_RANK[lead.criticality] if lead else 0
    deep_by_size = DEEP_LINES_BY_CRITICALITY.get(lead.criticality) if lead else None

    # `quiet` says there is nothing to say: an open medium risk or a repository finding
    # is something, so such a PR is at least a skim.
    something = repo_findings or any(r.severity != "low" for r in risks)
    verdict: Verdict
    if lead is None and not high_risk:
        verdict = "skim" if something else "quiet"
    elif small and not (admitted and high_risk):
        tiny = code <= TINY_LINES
        verdict = "skim" if tiny and rank <= 1 and not high_risk else "read"
    elif not known:
        verdict = "deep-read" if high_risk and rank >= 2 else "read"
    elif (
        (deep_by_size is not None and code >= deep_by_size)
        or (high_risk and rank >= 2 and code > SMALL_LINES)
        or (high_risk and code >= DEEP_READ_LINES)
        or (admitted and high_risk and rank >= 2)
    ):
        verdict = "deep-read"
    else:
        verdict = "read"
    if verdict != "quiet" and not high_risk and _only_prose(facts):
        # Docstrings and comments (beside docs pages): nothing runs differently, so
        # checking the words is a skim (judged: a read overrated a docstring-only PR).
        verdict = "skim"
    return VerdictCall(
        verdict=verdict,
        reading_minutes=_reading_minutes(facts, code, tests, lead, high_risk),
        grounds=_grounds(facts, areas, loud, lead, risks, repo_findings),
    )


def _reading_minutes(
    facts: PullRequestFacts, code: int, tests: int, lead: AreaMatch | None, high_risk: bool
) -> int:
    files = facts.total_changed_files
    # Square roots: review time grows with size, but a 2,000-line diff is read
    # selectively, not ten times slower than a 200-line one.
    base = 1 + 0.4 * math.sqrt(code + _TEST_WEIGHT * tests) + 0.3 * math.sqrt(files)
    pace = _PACE[lead.criticality] if lead else _QUIET_PACE
    if high_risk:
        pace *= 1.15  # open high risks send the reader to check tests and evidence too
    return max(1, min(_MAX_MINUTES, round(base * pace)))


def _grounds(
    facts: PullRequestFacts,
    areas: Sequence[AreaMatch],
    loud: Sequence[AreaMatch],
    lead: AreaMatch | None,
    risks: Sequence[Risk],
    context: bool,
) -> VerdictGrounds:
    high_risk = any(r.severity == "high" for r in risks)
    said = _said_lead(lead, areas)
    return VerdictGrounds(
        lead=said.id if said else "",
        criticality=said.criticality if said else "low",
        more_areas=max(0, len(loud) - 1 if said is lead else len(loud)),
        areas=() if lead else tuple(a.id for a in areas),
        files=facts.total_changed_files,
        additions=facts.total_additions,
        deletions=facts.total_deletions,
        kind=_kind(facts) if lead else "",
        high_risk=high_risk,
        # Low risks live in the collapsed checklist: the headline counts what is shown.
        open_risks=sum(1 for r in risks if r.severity != "low"),
        context=context and lead is None and not high_risk,
    )


def _said_lead(lead: AreaMatch | None, areas: Sequence[AreaMatch]) -> AreaMatch | None:
    """The area the headline names: a lead whose files a quiet area (docs, CI) also claims
    changed docs or CI there, not the lead's code (a platform's install page, its
    Dockerfile): blind judges called the lead's title and criticality misdirected. The
    verdict and reading time still follow the lead."""
    if lead is None:
        return None
    for area in areas:
        if area.quiet and lead.files and set(lead.files) <= set(area.files):
            return area
    return lead


def _kind(facts: PullRequestFacts) -> Literal["", "tests", "new", "removal"]:
    files = facts.files
    if files and all(f.filename.startswith("tests/") for f in files):
        return "tests"
    if files and all(f.status == "added" for f in files):
        return "new"
    if facts.total_deletions > 2 * facts.total_additions and facts.total_deletions > TINY_LINES:
        return "removal"
    return ""
