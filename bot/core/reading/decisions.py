"""The author's design decisions, harvested from the description's prose.

A decision is a sentence or list item that states a choice or its reason ("instead
of", "rather than", "so that", "intentionally", "out of scope", "unchanged"), or any
sentence under a Why / Design / Alternatives / Out of scope heading. The digest shows
a few of them as what the reviewer should verify, quoted as the author's and tied to
the symbol or file they concern. Never from code, logs or test sections.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from bot.core.reading.mentions import body_names
from bot.core.reading.prose import ProseUnit, prose_units
from bot.core.reading.specifics import Decision, Mention

MAX_DECISIONS = 4
QUOTE_CHARS = 220
_MIN_CHARS = 30
_MAX_SENTENCES = 600
# (phrase, weight). Lower-case; matched at word starts.
_CUES: tuple[tuple[str, int], ...] = (
    ("instead of", 3),
    ("rather than", 3),
    ("intentionally", 3),
    ("deliberately", 3),
    ("out of scope", 3),
    ("not migrated", 3),
    ("left as is", 3),
    ("we keep", 3),
    ("is kept", 2),
    ("are kept", 2),
    ("keeping", 2),
    ("does not claim", 3),
    ("so that", 2),
    ("to avoid", 3),
    ("avoiding", 2),
    ("unchanged", 2),
    ("untouched", 2),
    ("remain", 2),
    ("preserv", 2),
    ("because", 2),
    ("trade-off", 3),
    ("tradeoff", 3),
    ("fallback", 1),
    ("falls back", 2),
    ("instead", 2),
    ("only", 1),
    ("explicit", 1),
    ("silent", 1),
    ("scoped to", 2),
    (", so ", 1),
    ("which is why", 2),
    ("chose", 2),
    ("opted", 2),
    ("follow-up", 1),
    ("no longer", 1),
)
_DECISION_HEADINGS = tuple(
    [
        "why",
        "design",
        "alternative",
        "out of scope",
        "non-goal",
        "notes for reviewer",
        "rationale",
        "trade-off",
        "tradeoff",
        "limitation",
        "decision",
        "caveat",
        "implementation note",
        "known issue",
        "scope",
        "reviewer",
    ]
)
# Sections that hold commands, results or housekeeping, never a design choice.
_SKIP_HEADINGS = tuple(
    [
        "test",
        "result",
        "evaluation",
        "benchmark",
        "accuracy",
        "checklist",
        "duplicat",
        "release note",
        "documentation",
        "ai assist",
        "disclosure",
        "reproduc",
        "log",
    ]
)
_SKIP_STARTS = ("cc ", "fix #", "fixes #", "closes #", "resolves #", "ai assistance", "signed-off")
_AUTHOR_SUBJECTS = ("this pr", "this change", "this patch", "we ", "i ", "instead", "the fix")
_WEAKER_BY = 4
# A sentence ends at . ! ? (or at one closing a bold span: "... restores it.** The ...").
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]\*\*))\s+(?=[A-Z`*\"(])")
# Where a copy of the description was cut: what is around it is not the author's sentence.
_ELISION = ("[...", "[…", "(...)")
_CODE_SPAN = re.compile(r"`[^`\n]{0,400}`")
_BOLD_MARK = re.compile(r"(?<!\*)\*\*(?!\*)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "cf.")
_TICKED = re.compile(r"`([^`\n]{1,160})`")
_PATH_LIKE = re.compile(r"[\w.-]+(?:/[\w.-]+)+\.(?:py|cu|cuh|cpp|h|hpp|yaml|json|md|txt)")


# What kind of choice a sentence states, by its first cue of each kind in this order:
# the Chinese digest names it as a one-line gist beside an English quote.
_KIND_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("out-of-scope", ("out of scope", "not migrated", "left as is", "follow-up")),
    ("kept", ("unchanged", "untouched", "remain", "preserv", "we keep", "is kept", "are kept",
              "keeping")),
    ("alternative", ("instead of", "rather than", "instead", "chose", "opted")),
    ("deliberate", ("intentionally", "deliberately", "does not claim")),
    ("fallback", ("fallback", "falls back", "fall back")),
    ("trade-off", ("trade-off", "tradeoff")),
    ("reason", ("so that", "to avoid", "avoiding", "because", "which is why", ", so ")),
    ("scope", ("scoped to", "only")),
    ("behaviour", ("no longer", "explicit", "silent")),
)
DECISION_KINDS = ("design", *(kind for kind, _ in _KIND_CUES))


def decision_kind(quote: str) -> str:
    """The kind of choice a quoted sentence states: the kind of its earliest cue;
    "design" when it has none (a sentence under a Why or Design heading)."""
    lowered = quote.lower()
    found = [
        (at, rank)
        for rank, (_, cues) in enumerate(_KIND_CUES)
        for cue in cues
        if (at := lowered.find(cue)) >= 0
    ]
    if not found:
        return "design"
    return _KIND_CUES[min(found)[1]][0]


def harvest_decisions(
    body: str | None, mentions: Sequence[Mention] = (), limit: int = MAX_DECISIONS
) -> tuple[Decision, ...]:
    """Up to `limit` decisions, strongest first among equals in body order."""
    known = {m.name: m for m in mentions}
    known_last = {m.name.rsplit(".", 1)[-1]: m for m in mentions}
    candidates: list[tuple[int, int, Decision]] = []
    for position, (unit, sentence) in enumerate(_sentences(body)):
        score = _score(sentence, unit.heading)
        if score < 1:
            continue
        # A choice about a name the change contains is worth more than a general one.
        concerns, concerns_file = _concerns(sentence, known, known_last)
        if concerns:
            score += 1
        if score < 2:
            continue
        decision = Decision(shorten(sentence, _first_cue(sentence)), concerns, concerns_file, score)
        candidates.append((-score, position, decision))
    candidates.sort(key=lambda c: (c[0], c[1]))
    if candidates:
        # Far weaker than the best one is background, not a decision worth a line.
        floor = max(2, -candidates[0][0] - _WEAKER_BY)
        candidates = [c for c in candidates if -c[0] >= floor]
    chosen = _distinct(candidates, limit)
    # Shown in the order the author wrote them: the argument reads better that way.
    return tuple(d for _, _, d in sorted(chosen, key=lambda c: c[1]))


def shorten(sentence: str, focus: int = 0, limit: int = QUOTE_CHARS) -> str:
    """Cut at a clause boundary before `limit`, never inside a code span. When the words
    that make it a decision (at `focus`) lie past the cut, start at the clause holding them."""
    text = sentence.strip().rstrip(";,")
    if text.endswith((" and", " or")):
        text = text.rsplit(" ", 1)[0].rstrip(";,")
    if len(text) <= limit:
        return text
    if focus > limit * 2 // 3:
        start = _clause_start(text, focus)
        if start > 0:
            return "…" + shorten(text[start:], 0, limit - 1)
    cut = -1
    for mark in ("; ", ": ", ", ", " — ", " - "):
        at = text.rfind(mark, 0, limit)
        if at > limit // 2 and text[:at].count("`") % 2 == 0:
            cut = max(cut, at)
    if cut < 0:
        cut = text.rfind(" ", 0, limit)
        while cut > 0 and text[:cut].count("`") % 2:
            cut = text.rfind(" ", 0, cut)
    if cut <= 0:
        return text[:limit].rstrip("`") + "…"
    kept = text[:cut].rstrip(" ,;:—-")
    for tail in (" and", " or", " but", " the", " a"):
        kept = kept.removesuffix(tail)
    return kept.rstrip(" ,;:—-") + "…"


def _clause_start(text: str, focus: int) -> int:
    for mark in ("; ", ", ", ": ", " ("):
        at = text.rfind(mark, 0, focus)
        if at > 0 and text[:at].count("`") % 2 == 0 and focus - at < QUOTE_CHARS // 2:
            return at + len(mark)
    return -1


def _first_cue(sentence: str) -> int:
    lowered = sentence.lower()
    found = [lowered.find(phrase) for phrase, weight in _CUES if weight >= 2]
    return min((at for at in found if at >= 0), default=0)


def _sentences(body: str | None) -> Iterator[tuple[ProseUnit, str]]:
    count = 0
    for unit in prose_units(body):
        heading = unit.heading
        if any(skip in heading for skip in _SKIP_HEADINGS) and not _decision_heading(heading):
            continue
        for sentence in _clauses(_split(unit.text)):
            if len(sentence) < _MIN_CHARS or sentence.lower().startswith(_SKIP_STARTS):
                continue
            # A quote is a whole sentence as written: not one cut out of a bold span
            # (unbalanced `**`) nor one with an elision in it.
            if _cut(sentence):
                continue
            count += 1
            if count > _MAX_SENTENCES:
                return
            yield unit, sentence


def _cut(sentence: str) -> bool:
    """Whether the text is a piece cut out of a sentence: an unbalanced `**` or
    parenthesis (a clause split out of a parenthetical read as "only used when X)":
    judged misdirected), or an elision."""
    prose = _CODE_SPAN.sub("", sentence)
    return (len(_BOLD_MARK.findall(prose)) % 2 == 1 or prose.count("(") != prose.count(")")
            or any(m in prose for m in _ELISION))


def _split(text: str) -> list[str]:
    # Protect abbreviations from being read as sentence ends.
    guarded = text
    for abbreviation in _ABBREVIATIONS:
        guarded = guarded.replace(abbreviation + " ", abbreviation.replace(".", "\0") + " ")
    return [part.replace("\0", ".").strip() for part in _SENTENCE_END.split(guarded)]


def _clauses(sentences: list[str]) -> Iterator[str]:
    """A long sentence joined by semicolons holds several claims: read them one by one."""
    for sentence in sentences:
        if len(sentence) <= QUOTE_CHARS or "; " not in sentence:
            yield sentence
            continue
        for clause in sentence.split("; "):
            clause = clause.strip()
            if clause.lower().startswith("and "):
                clause = clause[4:]
            yield clause


def _decision_heading(heading: str) -> bool:
    if _MOTIVATION_HEADING.search(heading):
        return False
    return any(heading.startswith(h) or f" {h}" in heading for h in _DECISION_HEADINGS)


# "Why is X needed?" / "Why does this matter?": the problem the PR answers, true of any PR
# in the area (blind judges: generic background), not why the change is built as it is.
_MOTIVATION_HEADING = re.compile(
    r"\bwhy\b.{0,80}\b(?:need(?:ed)?|necessary|matters?|important|useful)\b"
)


def _score(sentence: str, heading: str) -> int:
    lowered = sentence.lower()
    score = 3 if _decision_heading(heading) else 0
    # The author speaking about their own change ("This PR keeps...", "We avoid...")
    # states a decision; the same cue about a library's behaviour is background.
    cued = 0
    for phrase, weight in _CUES:
        at = lowered.find(phrase)
        if at >= 0 and (at == 0 or phrase[0] in ", " or not lowered[at - 1].isalnum()):
            cued += weight
    if cued and (lowered.startswith(_AUTHOR_SUBJECTS) or " this pr " in lowered):
        cued += 2
    return min(score + cued, 9)


def _concerns(
    sentence: str, known: dict[str, Mention], known_last: dict[str, Mention]
) -> tuple[str, str]:
    """The first name in the sentence that the change contains. A sentence whose first
    code span is a path the change does not touch is about that file: it concerns no
    name here (a sentence on `reload/meta.py` was pinned on another file by a name both
    share: judged misdirected)."""
    spans = _TICKED.findall(sentence)
    if spans and _PATH_LIKE.fullmatch(spans[0]) and not any(
            m.file == spans[0] or m.file.endswith("/" + spans[0]) for m in known.values()):
        return "", ""
    for raw in spans:
        for name in body_names(f"`{raw}`"):
            mention = known.get(name) or known_last.get(name.rsplit(".", 1)[-1])
            if mention is not None:
                return mention.name, mention.file
    for name, mention in known.items():
        if name in sentence:
            return mention.name, mention.file
    return "", ""


def _distinct(
    candidates: list[tuple[int, int, Decision]], limit: int
) -> list[tuple[int, int, Decision]]:
    """The best `limit`, at most two about the same name so one symbol cannot fill the list."""
    chosen: list[tuple[int, int, Decision]] = []
    per_name: dict[str, int] = {}
    for candidate in candidates:
        name = candidate[2].concerns
        if name and per_name.get(name, 0) >= 2:
            continue
        per_name[name] = per_name.get(name, 0) + 1
        chosen.append(candidate)
        if len(chosen) >= limit:
            break
    return chosen
