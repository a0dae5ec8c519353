"""What a reviewer asks for in a comment or review: tests, test results, a GPU
evaluation, numbers, a hardware run, docs, a rebase or a split.

A sentence asks when it holds a request cue ("can you", "please", "let's", "you should",
"have you run") and an object of one kind, the object not before the cue (so "thanks for
adding tests, could you update the docs?" asks for docs only); a sentence that waives
it ("no need to add tests") asks nothing. Precision first: "LGTM", a question about the
code and thanks for the tests ask for nothing. A bare "can we get some evidence?" takes
its kind from the sentence before it.

Line by line and bounded: quotes ("> ..."), code fences and HTML comments are someone
else's words or code and are skipped; every pattern runs on one sentence of at most
_MAX_SENTENCE characters, with bounded repetition only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.core.reading.body import opens_fence
from bot.core.reading.template import strip_html_comments
from bot.core.vocabulary import AskKind

MAX_TEXT_CHARS = 20_000
MAX_LINES = 400
MAX_SENTENCES = 80
_MAX_SENTENCE = 300
_MAX_QUOTE = 200

_VERBS_DONE = (
    r"(?:run|ran|try|tried|test|tested|compare|compared|measure|measured|benchmark|benchmarked"
    r"|verify|verified|check|checked|evaluate|evaluated|profile|profiled)"
)
_CUE = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|we|u)\b"
    r"|\b(?:you|we)\s+(?:could|can|might|may)\s+(?:also\s+)?"
    r"(?:add|include|update|rebase|split|run|share|post|extend|document)\b"
    r"|\bplease\b|\bpls\b|\bplz\b"
    r"|\blet'?s\b|\blet\s+us\b"
    r"|\b(?:you|we)\s+(?:should|must|have\s+to|need\s+to|will\s+need\s+to|'ll\s+need\s+to"
    r"|may\s+want\s+to|might\s+want\s+to)\b"
    r"|\b(?:should|must)\s+(?:also\s+)?(?:add|have|include|update|rebase|split|be\s+"
    r"(?:tested|covered|documented|rebased|split|benchmarked|evaluated))\b"
    r"|\bneeds?\b"
    r"|\b(?:i'?d|i\s+would)\s+(?:like|prefer|love)\s+to\s+see\b"
    r"|\bmind\s+(?:adding|sharing|posting|running|updating|rebasing|splitting|including"
    r"|attaching)\b"
    r"|\b(?:have|did)\s+you\s+(?:already\s+|also\s+)?" + _VERBS_DONE + r"\b"
    r"|\b(?:is|are)\s+there\s+(?:a|an|any)\b"
    r"|\bany\s+(?:chance|numbers|results|benchmarks?|evals?|tests?)\b"
    r"|\b(?:would|it'?d)\s+be\s+(?:good|nice|great|better|helpful)\s+to\b"
    r"|\bmake\s+sure\b"
    r"|\bi\s+(?:recommend|suggest)\b"
    r"|^(?:also\s+|and\s+|nit:?\s+)?(?:add|update|rebase|split|include|share|post|run"
    r"|document|resolve|fix\s+the\s+(?:merge\s+)?conflicts?)\b"
)
_WAIVED = re.compile(
    r"\bno\s+need\b|\bnot\s+(?:necessary|needed|required|a\s+blocker)\b"
    r"|\b(?:don'?t|doesn'?t|do\s+not|does\s+not)\s+(?:need|have\s+to|require)\b"
    r"|\bunnecessary\b|\boptional(?:ly)?\b"
)
_EVAL = (
    r"\b(?:lm[_ -]?eval|gsm8k|mmlu\w{0,10}|humaneval|gpqa|accuracy|evals?|evaluations?"
    r"|perplexity|ppl|scores?|correctness)\b"
)
# Words of a performance question; they name what a bare "can we get some evidence?"
# in the next sentence asks for.
_PERF = (
    r"\b(?:benchmarks?|benchmarking|perf|performance|throughput|latency|speed-?ups?"
    r"|tok(?:ens)?/s|ttft|tpot|itl|faster|slower|performs?\s+well|regress(?:ion|ions|es)?)\b"
)
# What asks for numbers by itself: "faster" alone is a claim to explain, not an ask.
_NUMBERS = (
    r"\b(?:benchmarks?|benchmarking|perf(?:ormance)?\s+(?:numbers|results|data|comparisons?"
    r"|measurements?|runs?)|speed-?up\s+numbers|performs?\s+well)\b"
    r"|\b(?:measure|measured|profile|profiled)\b[^.?!]{0,30}?"
    r"\b(?:latency|throughput|ttft|tpot|itl|speed|performance)\b"
)
_DEVICE = (
    r"(?:amd|rocm|mi\d{3}x?|h100|h200|h20|b200|b300|gb200|a100|l40s?|tpus?|xpus?|gaudi\d?"
    r"|hpus?|cpus?|gpus?|nvidia|cuda|blackwell|hopper|intel|arm|neuron|trainium)"
)
# Order matters only for reading: every kind that matches is kept, then pruned below.
_KINDS: tuple[tuple[AskKind, re.Pattern[str]], ...] = (
    ("gpu-eval", re.compile(_EVAL)),
    ("numbers", re.compile(_NUMBERS + r"|\bnumbers\b")),
    ("hardware-run", re.compile(
        r"\b" + _VERBS_DONE + r"\b[^.?!]{0,60}?\b(?:on|with|using)\s+(?:an?\s+|the\s+)?"
        + _DEVICE + r"\b"
    )),
    ("test-results", re.compile(
        r"\btest\s+(?:results?|outputs?|logs?)\b"
        r"|\b(?:share|post|paste|include|attach|show|provide|add)\b[^.?!]{0,40}?"
        r"\b(?:results?|outputs?|logs?)\b"
        r"|\b(?:do|does|did)\s+(?:the\s+)?(?:tests?|ci)\s+pass\b"
    )),
    ("tests", re.compile(
        r"\b(?:add|adding|extend|extending|write|writing|include|including|cover|covering"
        r"|modify|modifying|update|updating)\b(?:\s{1,3}\S{1,60}){0,6}?\s{1,3}[`'\"]?"
        r"(?:unit\s+|e2e\s+|regression\s+)?(?:tests?\b|test\s+cases?\b|test_\w{1,60}\.py"
        r"|tests/)"
        r"|\btest\s+coverage\b|\b(?:is|are)\s+there\s+(?:a|an|any)\s+(?:unit\s+)?tests?\b"
        r"|\btests?\s+(?:should|needs?\s+to|must)\b"
        r"|\bneeds?\s+(?:a\s+|some\s+|more\s+)?(?:unit\s+)?tests?\b"
    )),
    ("docs", re.compile(
        r"\b(?:update|add|adding|write|document|extend|mention)\b[^.?!]{0,40}?"
        r"\b(?:docs?|documentation|docstrings?|readme)\b"
        r"|\bdocument\s+(?:this|it|the)\b|\bdocs?\s+(?:as\s+well|too)\b"
    )),
    ("rebase", re.compile(
        r"\brebase\b|\b(?:fix|resolve|address)\b[^.?!]{0,25}?\b(?:merge\s+)?conflicts?\b"
        r"|\bconflicts?\s+with\s+main\b|\bmerge\s+(?:in\s+)?(?:the\s+)?(?:latest\s+)?main\b"
    )),
    ("split", re.compile(
        r"\bsplit\b[^.?!]{0,30}?\b(?:into|up|out|in\s+two|smaller)\b|\bsplit\s+(?:this|the)\s+pr\b"
        r"|\b(?:separate|smaller)\s+prs\b|\bbreak\s+(?:this|it)\s+(?:up|down|into)\b"
    )),
)
# "Can we get some evidence first?": what it asks for is in the sentence before.
_CONTEXT_KINDS: tuple[tuple[AskKind, re.Pattern[str]], ...] = (
    ("gpu-eval", re.compile(_EVAL)), ("numbers", re.compile(_PERF)),
)
_NUMBERS_ALONE = re.compile(_NUMBERS)
_GENERIC = re.compile(r"\b(?:evidence|numbers|data|proof|results?)\b")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=\S)")


@dataclass(frozen=True)
class FoundAsk:
    kind: AskKind
    sentence: str  # verbatim, whitespace-folded, at most _MAX_QUOTE characters


def find_asks(text: str | None) -> tuple[FoundAsk, ...]:
    """The kinds one comment asks for, each once (its first sentence), in reading order."""
    return read_asks(text)[0]


def read_asks(text: str | None, limit: int = MAX_SENTENCES) -> tuple[tuple[FoundAsk, ...], int]:
    """`find_asks` reading at most `limit` sentences, and how many it read: a thread's
    reader shares one budget among its remarks."""
    found: dict[AskKind, FoundAsk] = {}
    previous = ""
    read = 0
    for sentence in _sentences(text, min(limit, MAX_SENTENCES)):
        read += 1
        lowered = sentence.lower()
        for kind in _kinds_asked(lowered, previous):
            found.setdefault(kind, FoundAsk(kind, sentence[:_MAX_QUOTE]))
        previous = lowered
    return tuple(found.values()), read


def _kinds_asked(sentence: str, previous: str) -> list[AskKind]:
    cue = _CUE.search(sentence)
    if cue is None or _WAIVED.search(sentence):
        return []
    kinds = [
        kind for kind, pattern in _KINDS
        if any(m.end() > cue.start() for m in pattern.finditer(sentence))
    ]
    if not kinds and _GENERIC.search(sentence, cue.start()):
        kinds = [kind for kind, pattern in _CONTEXT_KINDS if pattern.search(previous)]
    # "lm_eval numbers" ask for an evaluation; numbers alone need a performance word.
    if "gpu-eval" in kinds and "numbers" in kinds and not _NUMBERS_ALONE.search(sentence):
        kinds.remove("numbers")
    # Results of an evaluation or a benchmark are that, not test results.
    if "test-results" in kinds and ("gpu-eval" in kinds or "numbers" in kinds):
        kinds.remove("test-results")
    return kinds


def _sentences(text: str | None, limit: int = MAX_SENTENCES) -> Iterator[str]:
    """Sentences of the author's own prose: no quotes, fences or HTML comments."""
    if not text or limit <= 0:
        return
    cleaned = strip_html_comments(text[:MAX_TEXT_CHARS].replace("\r\n", "\n"))
    fence = ""
    count = 0
    for line in cleaned.split("\n", MAX_LINES)[:MAX_LINES]:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        fence = opens_fence(line)
        if fence or not stripped or stripped.startswith((">", "/digest", "|")):
            continue
        for piece in _SENTENCE_END.split(stripped.lstrip("-*+ ")[:4 * _MAX_SENTENCE]):
            folded = " ".join(piece.split())[:_MAX_SENTENCE]
            if folded:
                yield folded
                count += 1
                if count >= limit:
                    return


_MENTIONS: dict[AskKind, re.Pattern[str]] = {
    "tests": re.compile(r"\btests?\b|\btest_\w|\btests/"),
    "test-results": re.compile(r"\bresults?\b|\bpass(?:ed|es)?\b|\boutputs?\b|\blogs?\b"),
    "gpu-eval": re.compile(_EVAL),
    "numbers": re.compile(_PERF + r"|\bnumbers\b|\d\s?(?:%|x|ms|tok/s)"),
    "hardware-run": re.compile(r"\b" + _DEVICE + r"\b"),
    "docs": re.compile(r"\b(?:docs?|documentation|docstrings?|readme)\b"),
    "rebase": re.compile(
        r"\brebased?\b|\bconflicts?\b|\bmerged?\s+(?:the\s+)?(?:latest\s+)?main\b"),
    "split": re.compile(r"\bsplit\b|\bseparate\b"),
}


def mentions_kind(text: str | None, kind: AskKind) -> bool:
    """The text speaks of what an ask of `kind` asked for (a reply naming it)."""
    return bool(text) and _MENTIONS[kind].search((text or "")[:MAX_TEXT_CHARS].lower()) is not None
