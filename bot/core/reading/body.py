"""Read a PR description the way a vLLM reviewer does: sections, gaps and evidence.

Every scan here is linear in the body size: bodies are untrusted and can be
megabytes of pasted logs, so headings are found with string operations, regexes
use bounded repetition only, and over-long lines are truncated before scanning.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from bot.core.reading.body_vocabulary import (
    BENCH_OUTPUT,
    BOX_UNCHECKED,
    CI_LINK,
    COMMAND_STARTS,
    EVAL_WORD,
    HW_NAME,
    LM_EVAL_HEADER,
    NEGATION,
    OUTCOME,
    PARITY,
    PERF_CLAIM,
    PERF_NUMBER,
    PERF_TABLE_ROW,
    PLACEHOLDER,
    RUN_VERB,
    SCORE,
    SCORED_RESULT,
    SECTION_KINDS,
    STRONG_NOT_RUN,
    TEMPLATE_CHECKLISTS,
    TEMPLATE_FOOTER,
    TEMPLATE_PREAMBLE,
    VERIFIED_BOX,
    WEAK_NOT_RUN,
)
from bot.core.reading.template import strip_html_comments


def looks_like_command(line: str) -> bool:
    """A shell command mentions gsm8k and numbers too, but it is a plan, not a result.
    A sentence quoting a command in backticks ("verified with `vllm serve … --tp 4` on
    B300: 95% on gsm8k") is a report: its code spans are not read for flags."""
    stripped = line.strip()
    if not stripped.startswith("`"):
        stripped = _CODE_SPAN.sub("", stripped)
    stripped = stripped.lstrip("`")
    return stripped.startswith(COMMAND_STARTS) or " --" in stripped or stripped.endswith("\\")


_CODE_SPAN = re.compile(r"`[^`\n]{0,2000}`")
# A ticked checklist line naming an accuracy evaluation: "- [x] LM-eval GSM8K (limit 256)
# remains in the baseline range" reports a run (the template's own boxes are stripped).
_EVAL_BOX = re.compile(r"^[ \t]{0,8}[-*+][ \t]{1,4}\[[xX]\][^\n]{0,2000}", re.MULTILINE)


# Headings are short; a longer line is prose or a pasted log, never a section title.
_MAX_HEADING_CHARS = 120
# Scanning budget per line: long lines are logs or minified data, not sentences.
_MAX_SCAN_CHARS = 2000
_MAX_ITEMS = 12
_MAX_CANDIDATE_LINES = 4000
_MAX_ITEM_CHARS = 160
_TEST_KINDS = frozenset({"test_plan", "test_result", "evaluation"})
_KNOWN_KINDS = frozenset(SECTION_KINDS.values())
# Lines that may open/close a fence or start a section; everything else is plain text.
_STRUCTURE_LINE = re.compile(
    r"^(?:[ ]{0,8}(?:```|~~~)|[ ]{0,3}#|[ \t]{0,3}(?:\*\*|__)|[ \t]{0,3}(?:\d{1,2}[.)]?[ \t]{0,3})?"
    r"(?:"
    + "|".join(sorted({k.split()[0] for k in SECTION_KINDS}, key=len, reverse=True))
    + r")\b)[^\n]*",
    re.MULTILINE,
)
_BOX_LINE = re.compile(r"^[ \t]{0,8}[-*+][ \t]{1,4}\[ \][^\n]{0,150}", re.MULTILINE)
# Every result line has a digit or is the lm_eval table header.
# One match per line (the tail swallows the rest of it), so a scan costs O(lines).
_EVIDENCE_HINT = re.compile(r"(?:\d|\|[ \t]{0,3}tasks)[^\n]*")
_FENCE_LINE = re.compile(r"^[ ]{0,8}(?:```|~~~)[^\n]*", re.MULTILINE)
_MAX_FENCES = 400
_MAX_FENCE_LINES = 60
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_/.")
_NON_WORD = re.compile(r"[^0-9a-z]+")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class PullRequestBody(BaseModel):
    """What the description says (and fails to say) about testing and evaluation."""

    model_config = ConfigDict(frozen=True)

    text: str = ""  # without HTML comments and the template checklist, LF line ends
    sections: dict[str, str] = Field(default_factory=dict)  # kind -> content
    # kind -> the first heading of that kind as the author wrote it ("Validation"),
    # so a gap is named in the template's own words.
    titles: dict[str, str] = Field(default_factory=dict)
    test_plan_empty: bool = True
    test_result_empty: bool = True
    not_run: tuple[str, ...] = ()  # admissions, verbatim: "Not yet run", "TBD", ...
    eval_evidence: tuple[str, ...] = ()  # result lines: lm_eval tables, bench output
    perf_claims: tuple[str, ...] = ()  # "2x faster", "reduces latency", ...
    perf_numbers: tuple[str, ...] = ()  # "12.3 ms", "1450 tok/s", "+8%", ...
    # The first line with a digit of each section the author titled for performance
    # ("## Performance", "## Benchmark results"): where the numbers of a speed change go.
    perf_sections: tuple[str, ...] = ()
    # Evidence in other shapes than a result table, verbatim (one line each):
    verified: tuple[str, ...] = ()  # ticked "- [x] Verified ... on ..." checklist lines
    tested_on: tuple[str, ...] = ()  # a run reported with the device: "tested on MI300X"
    parity: tuple[str, ...] = ()  # compared with a reference: "encoder parity", "matches HF"
    ci_links: tuple[str, ...] = ()  # links to CI builds (Buildkite, hardware pipelines)
    command_output: tuple[str, ...] = ()  # fenced output pasted after a command

    @property
    def evidence(self) -> tuple[str, ...]:
        """Everything that shows the change was run: results, runs, parity, CI builds."""
        result = self.sections.get("test_result", "")
        outcome = () if self.test_result_empty else (result.strip().split("\n", 1)[0][:160],)
        return (
            *self.eval_evidence,
            *self.verified,
            *self.tested_on,
            *self.parity,
            *self.ci_links,
            *self.command_output,
            *outcome,
        )

    @property
    def accuracy_evidence(self) -> tuple[str, ...]:
        """Evidence that the outputs were checked: eval/benchmark results, parity."""
        return (*self.eval_evidence, *self.parity)

    @property
    def run_evidence(self) -> tuple[str, ...]:
        """Evidence unless the author also admits a gap (an admission wins)."""
        return () if self.not_run else self.evidence


@dataclass
class _Block:
    """One section as read: its kind, its text, and its text outside code fences."""

    kind: str
    level: int
    start: int  # offset in the body where the section's own lines begin
    head: str = ""  # content on the heading line itself ("Test plan: pytest ...")
    title: str = ""  # the heading as written
    content: str = ""
    prose: list[str] = field(default_factory=list)


def parse_body(body: str | None) -> PullRequestBody:
    """Parse a PR description. Pure, total, linear time; None and "" give an empty body."""
    if not body:
        return PullRequestBody()
    text = strip_template(strip_html_comments(body.replace("\r\n", "\n").replace("\r", "\n")))
    lowered = _lower(text)
    blocks = _split_sections(text, lowered)
    parts: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for block in blocks:
        if block.title:
            titles.setdefault(block.kind, block.title)
        content = block.content if block.content.strip() else ""
        if block.kind == "preamble" and not content:
            continue
        # An empty "## Test Result" is kept (as ""): it differs from no heading at all.
        kept = parts.setdefault(block.kind, [])
        if content:
            kept.append(content)
    # Joined once: appending to a growing string per repeated heading is quadratic.
    sections = {kind: "\n\n".join(texts) for kind, texts in parts.items()}
    test_plan_empty = is_placeholder(sections.get("test_plan", ""))
    if "test_result" in sections:
        test_result_empty = is_placeholder(sections["test_result"])
    else:
        # "## Testing" / "## Tests" usually hold both the commands and their outcome.
        test_result_empty = test_plan_empty or not _has_outcome(sections.get("test_plan", ""))
    prose = "\n".join("\n".join(b.prose) for b in blocks)
    test_prose = "\n".join("\n".join(b.prose) for b in blocks if b.kind in _TEST_KINDS)
    perf_claims = _scan(PERF_CLAIM, prose)
    # Benchmark output is usually pasted in a fence: numbers count there too. The "2x"
    # of a bare "2x faster" is the claim itself, not a measurement.
    claimed = [claim.lower() for claim in perf_claims]
    perf_numbers = _dedupe(
        number
        for number in _scan(PERF_NUMBER, text, lowered) + _scan(PERF_TABLE_ROW, text, lowered)
        if not any(number.lower() in claim for claim in claimed)
    )
    return PullRequestBody(
        text=text,
        sections=sections,
        titles=titles,
        test_plan_empty=test_plan_empty,
        test_result_empty=test_result_empty,
        # Prose pieces are joined with newlines the author never wrote: an admission
        # spanning such a joint is not their words.
        not_run=tuple(p for p in _find_not_run(prose, test_prose) if p.lower() in lowered),
        eval_evidence=_dedupe((*_find_eval_evidence(blocks), *_eval_boxes(text, lowered))),
        perf_claims=perf_claims,
        perf_numbers=perf_numbers,
        perf_sections=_perf_sections(blocks),
        verified=_scan_lines(VERIFIED_BOX, text, lowered),
        tested_on=_dedupe(
            line.strip()[:_MAX_ITEM_CHARS]
            for line in _lines_matching(HW_NAME, text, lowered, _MAX_ITEMS * 4)
            if RUN_VERB.search(line[:_MAX_SCAN_CHARS].lower())
            and not looks_like_command(line)
            and not BOX_UNCHECKED.match(line)  # an unticked box is a plan
            and not STRONG_NOT_RUN.search(line[:_MAX_SCAN_CHARS].lower())
        ),
        parity=_dedupe(
            line.strip()[:_MAX_ITEM_CHARS]
            for line in _lines_matching(PARITY, text, lowered, _MAX_ITEMS * 4)
            if not NEGATION.search(line[:_MAX_SCAN_CHARS].lower())
        ),
        ci_links=_dedupe(
            m.group(0) for _, m in zip(range(_MAX_ITEMS), CI_LINK.finditer(lowered), strict=False)
        ),
        command_output=_find_command_output(text, lowered),
    )


def strip_template(text: str) -> str:
    """Drop the template's boilerplate: its first-line instruction, the `<details>`
    checklist (and the `---` rule above it), and the footer line with everything after
    it (GitHub Actions deletes that part; it is never the author's words)."""
    lower = text.lower()
    footer = lower.find(TEMPLATE_FOOTER)
    if footer >= 0:
        cut = text.rfind("\n", 0, footer) + 1
        text = text[:cut].rstrip()
        text = text[:-3].rstrip() if text.endswith("---") else text
        lower = text.lower()
    preamble = lower.find(TEMPLATE_PREAMBLE)
    if preamble >= 0:
        start = text.rfind("\n", 0, preamble) + 1
        end = text.find("\n", preamble)
        text = text[:start] + ("" if end < 0 else text[end + 1 :])
        lower = text.lower()
    out: list[str] = []
    pos = 0
    while True:
        start = lower.find("<details", pos)
        if start < 0:
            out.append(text[pos:])
            break
        close = lower.find("</details>", start)
        end = len(text) if close < 0 else close + len("</details>")
        if any(summary in lower[start:end] for summary in TEMPLATE_CHECKLISTS):
            kept = text[pos:start].rstrip()
            if kept.endswith("---"):
                kept = kept[:-3]
            out.append(kept)
        else:
            out.append(text[pos:end])
        pos = end
    return "".join(out)


_PERF_TITLE = re.compile(r"\b(?:perf|performance|benchmarks?|benchmarking|speed-?up)\b")


def _perf_sections(blocks: Sequence[_Block]) -> tuple[str, ...]:
    """A section titled for performance whose text carries a number: an A/B table, a
    GPU and a harness. A body cut short (GitHub's editor, a capture) may show only its
    setup, and a reviewer reads the section as the claim's numbers all the same."""
    found = []
    for block in blocks[:_MAX_ITEMS * 8]:
        if block.kind != "evaluation" or not _PERF_TITLE.search(block.title.lower()):
            continue
        if is_placeholder(block.content):
            continue
        line = next((x.strip() for x in block.content[:_MAX_SCAN_CHARS].split("\n")
                     if any(ch.isdigit() for ch in x)), "")
        if line:
            found.append(line[:_MAX_ITEM_CHARS])
    return _dedupe(found)


def is_placeholder(section: str) -> bool:
    """True when a section says nothing: blank, unchecked boxes, "TBD", "N/A", "will add"..."""
    if not section.strip():
        return True
    if len(section) > 4000:  # long enough to say something real
        return False
    meaningful = [
        line.strip()
        for line in section.split("\n")
        if line.strip() and not BOX_UNCHECKED.match(line) and line.strip() not in {"---", "***"}
    ]
    if not meaningful:
        return True
    joined = " ".join(meaningful).lower()
    if len(joined) > 80:
        return False
    if PLACEHOLDER.fullmatch(joined.strip(" .:;!-*_`")):
        return True
    # "Not run; documentation-only change." admits there is nothing to show.
    first = STRONG_NOT_RUN.match(joined.lstrip(" *_`")) or WEAK_NOT_RUN.match(joined.lstrip(" *_`"))
    return first is not None


def is_eval_evidence(line: str) -> bool:
    """An accuracy or benchmark *result* line (not the command that would produce one)."""
    line = line[:_MAX_SCAN_CHARS].lower()
    if LM_EVAL_HEADER.search(line) or BENCH_OUTPUT.search(line):
        return True
    if looks_like_command(line) and not _reports_a_score(line):
        return False
    if EVAL_WORD.search(line) and SCORE.search(line):
        return True
    return bool(HW_NAME.search(line) and PERF_NUMBER.search(line))


def _reports_a_score(line: str) -> bool:
    """`lm_eval gsm8k: 0.874 before, 0.874 after` starts like the command but is its
    result: no flags, no continuation, a score after a colon or next to before/after."""
    if " --" in line or line.rstrip().endswith("\\"):
        return False
    return bool(EVAL_WORD.search(line) and SCORED_RESULT.search(line))


def _has_outcome(section: str) -> bool:
    lowered = _lower(section)
    return bool(_scan(OUTCOME, section, lowered, cap=1)) or any(
        is_eval_evidence(line) for line in _lines_matching(_EVIDENCE_HINT, section, lowered)
    )


def _split_sections(text: str, lowered: str) -> list[_Block]:
    """Sections in order; headings inside code fences are content.

    Only lines that could be a heading or a fence are looked at in Python (one regex
    scan finds them), so a body of half a million plain lines costs one C-level pass.
    """
    blocks = [_Block("preamble", 0, 0)]
    fence = ""
    prose_from = 0
    for match in _STRUCTURE_LINE.finditer(lowered):
        start = match.start()
        line = text[start : match.end()]
        block = blocks[-1]
        if fence:
            if _closes_fence(line, fence):
                fence, prose_from = "", match.end()
            continue
        fence = opens_fence(line)
        if fence:
            block.prose.append(text[prose_from:start])
            continue
        heading = _heading(line)
        if heading is None:
            continue
        kind, level, rest, title = heading
        # A known heading always starts a section; an unknown one only at the same or a
        # higher level ("### Unit tests" stays inside "## Test Plan").
        nested = kind == block.kind and level > block.level  # "### Unit tests" in a plan
        if not nested and (
            kind in _KNOWN_KINDS or level <= block.level or block.kind == "preamble"
        ):
            block.prose.append(text[prose_from:start])
            block.content = text[block.start : start]
            blocks.append(_Block(kind, level, match.end(), rest, title, prose=[rest]))
            prose_from = match.end()
    last = blocks[-1]
    last.content = text[last.start :]
    if not fence:
        last.prose.append(text[prose_from:])
    for block in blocks:
        block.content = f"{block.head}\n{block.content}" if block.head else block.content
        block.content = block.content.strip("\n")
    return blocks


def opens_fence(line: str) -> str:
    """The fence a line opens (its backtick or tilde run), or "" when it opens none."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 8:  # fences inside list items are indented
        return ""
    for char in "`~":
        if stripped.startswith(char * 3):
            run = len(stripped) - len(stripped.lstrip(char))
            # CommonMark: a backtick fence's info string may not contain backticks.
            if char == "`" and "`" in stripped[run:]:
                return ""
            return char * run
    return ""


def _closes_fence(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def _heading(line: str) -> tuple[str, int, str, str] | None:
    """(kind, level, same-line content, title as written) when `line` starts a section."""
    stripped = line.strip()
    if not stripped:
        return None
    if len(line) > _MAX_HEADING_CHARS:
        # "Test plan: pytest tests/..." may be long; only its label must be short.
        label, sep, rest = stripped[:_MAX_HEADING_CHARS].partition(":")
        kind = _known_kind(label, exact=True) if sep and stripped[0].isalnum() else None
        return (kind, 6, stripped[len(label) + 1 :].strip(), label.strip()) if kind else None
    if stripped[0] == "#" and len(line) - len(line.lstrip(" ")) <= 3:
        hashes = len(stripped) - len(stripped.lstrip("#"))
        title = stripped[hashes:]
        if 1 <= hashes <= 6 and (not title or title[0] in " \t"):
            title = title.strip().rstrip("#").strip()
            named = title.strip(" :*_")
            return (_known_kind(title) or named.lower() or "untitled", hashes, "", named[:60])
        return None
    for mark in ("**", "__"):
        if stripped.startswith(mark) and mark in stripped[2:]:
            inner, _, rest = stripped[2:].partition(mark)
            kind = _known_kind(inner)
            return (kind, 6, rest.strip().lstrip(":").strip(), inner.strip(" :")) if kind else None
    if not stripped[0].isalnum():  # "- Tests: added" is a list item, not a heading
        return None
    label, sep, rest = stripped.partition(":")
    # Without heading markup only an exact name counts: "Tests pass locally" is prose.
    kind = _known_kind(label, exact=True) if len(label) <= 40 else None
    if kind and (sep or label == stripped):
        return (kind, 6, rest.strip(), label.strip())
    return None


@lru_cache(maxsize=4096)
def _known_kind(title: str, exact: bool = False) -> str | None:
    if len(title) > 60:
        return None
    words = _NON_WORD.sub(" ", title.lower()).split()
    while words and words[0].isdigit():  # "1. Purpose"
        words = words[1:]
    if exact:
        return SECTION_KINDS.get(" ".join(words))
    # Longest prefix first: "test result summary" is a result, "test plan" a plan.
    for n in range(min(len(words), 4), 0, -1):
        kind = SECTION_KINDS.get(" ".join(words[:n]))
        if kind:
            return kind
    return None


def _find_not_run(prose: str, test_prose: str) -> tuple[str, ...]:
    # "pending", "N/A", "not run" are only admissions inside a test section;
    # elsewhere they describe the code ("pending requests").
    test_lowered = _lower(test_prose)
    found = [
        *_scan(STRONG_NOT_RUN, prose),
        *_scan(WEAK_NOT_RUN, test_prose, test_lowered),
        *_scan(_BOX_LINE, test_prose, test_lowered),
    ]
    # "have not been tested" also contains the weak "not been tested": keep the longer.
    lowered = [f.lower() for f in found]
    return _dedupe(
        [
            item
            for item, low in zip(found, lowered, strict=True)
            if not any(low != other and low in other for other in lowered)
        ]
    )


def _find_eval_evidence(blocks: list[_Block]) -> tuple[str, ...]:
    found: list[str] = []
    # Lines with digits are checked one by one in Python: cap them across the body.
    budget = _MAX_CANDIDATE_LINES
    for block in blocks:
        if budget <= 0:
            break
        content = block.content
        candidates = _lines_matching(_EVIDENCE_HINT, content, _lower(content), budget)
        budget -= len(candidates)
        for line in candidates:
            # Under an Evaluation/Benchmark heading a bare "1234 tok/s" row is a result.
            in_eval = block.kind == "evaluation" and not looks_like_command(line)
            if is_eval_evidence(line) or (in_eval and _scan(PERF_NUMBER, line[:_MAX_SCAN_CHARS])):
                found.append(line.strip()[:_MAX_ITEM_CHARS])
                if len(found) >= _MAX_ITEMS:
                    return _dedupe(found)
    return _dedupe(found)


def _eval_boxes(text: str, lowered: str) -> tuple[str, ...]:
    return tuple(line for line in _scan_lines(_EVAL_BOX, text, lowered)
                 if EVAL_WORD.search(line.lower()))


def _scan_lines(pattern: re.Pattern[str], text: str, lowered: str) -> tuple[str, ...]:
    """The lines holding a match, verbatim and trimmed."""
    lines = _lines_matching(pattern, text, lowered, _MAX_ITEMS * 4)
    return _dedupe(line.strip()[:_MAX_ITEM_CHARS] for line in lines)


def _find_command_output(text: str, lowered: str) -> tuple[str, ...]:
    """The last output line of each fenced block that follows a command: the command on
    the fence's first line or on the line just above it, output on lines after it."""
    found: list[str] = []
    fences = [
        m.start() for _, m in zip(range(_MAX_FENCES), _FENCE_LINE.finditer(lowered), strict=False)
    ]
    for opening, closing in zip(fences[::2], fences[1::2], strict=False):
        before_end = max(0, opening - 1)
        before = text[text.rfind("\n", 0, before_end) + 1 : before_end].strip()
        inner_start = text.find("\n", opening) + 1
        lines = text[inner_start:closing].split("\n", _MAX_FENCE_LINES)[:_MAX_FENCE_LINES]
        commanded = bool(before) and looks_like_command(before.strip("`: "))
        output = ""
        for line in lines:
            if not line.strip():
                continue
            if looks_like_command(line):
                commanded = True
            elif commanded:
                output = line
        if commanded and output:
            found.append(output.strip()[:_MAX_ITEM_CHARS])
            if len(found) >= _MAX_ITEMS:
                break
    return _dedupe(found)


def _lines_matching(
    pattern: re.Pattern[str], text: str, lowered: str, limit: int = _MAX_CANDIDATE_LINES
) -> list[str]:
    """The distinct lines holding a match, found by one scan of the whole text."""
    lines: list[str] = []
    line_end = -1
    for match in pattern.finditer(lowered):
        if match.start() < line_end:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line_end = len(text) if line_end < 0 else line_end
        lines.append(text[start:line_end])
        if len(lines) >= limit:
            break
    return lines


def _lower(text: str) -> str:
    lowered = text.lower()
    # A few characters change length when lower-cased ("İ"); offsets must line up.
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _scan(
    pattern: re.Pattern[str], text: str, lowered: str | None = None, cap: int = _MAX_ITEMS * 4
) -> tuple[str, ...]:
    """Verbatim matches of a lower-case pattern that start at a word boundary."""
    lowered = _lower(text) if lowered is None else lowered
    found: list[str] = []
    for match in pattern.finditer(lowered):
        start = match.start()
        if start and lowered[start - 1] in _WORD_CHARS:
            continue
        found.append(text[start : match.end()].strip()[:_MAX_ITEM_CHARS])
        if len(found) >= cap:
            break
    return _dedupe(found)


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.lower()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out[:_MAX_ITEMS])
