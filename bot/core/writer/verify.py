"""Verification of a writer model's reply before anything is shown (issue 41).

Every item must rest on what the model was given: each code span, identifier, file path,
number, `#N` and `@login` in it occurs in the packet; it cites a fact of the packet or a
changed path; it contradicts no fact (a risk's severity, a changed symbol said to be
unchanged); it uses none of the packet's internal words. What fails is dropped with a
reason key and kept in the result, never shown. Escaping is rendering's job."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any

from pydantic import ValidationError

from bot.core.writer.packet import Packet
from bot.core.writer.reply import Item, Reply
from bot.core.writer.request import PROMPT_VERSION
from bot.core.writer.result import Dropped, Section, WriterResult, WriterStatus, WrittenItem

# A reply is read only this far: a model looping past max_tokens is not worth more.
MAX_REPLY_CHARS = 200_000

_CODE = re.compile(r"`+([^`]+)`+")
_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)+", re.ASCII)
_REF = re.compile(r"(?:^|(?<=[^\w&]))#(\d+)", re.ASCII)
_LOGIN = re.compile(r"(?:^|(?<=[^\w]))@([A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?)", re.ASCII)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?", re.ASCII)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", re.ASCII)
_INTERNAL = re.compile(
    r"\b(?:packet|analy[sz]er|fact ids?|digest json|verdict_grounds|not_needed|"
    r"reading_minutes|repo_context)\b|数据包|分析器|事实编号", re.IGNORECASE)
_UNCHANGED = re.compile(
    r"\b(?:unchanged|untouched|not (?:changed|modified|touched)|does not (?:change|modify|"
    r"touch)|doesn't (?:change|touch))\b|未改|没有改|未修改|没有修改|保持不变", re.IGNORECASE)
_SEVERITY_WORDS = {
    "high": ("high", "高风险", "高危"),
    "medium": ("medium", "中等风险", "中风险"),
    "low": ("low", "低风险", "低危"),
}
# Two items citing the same facts are one repeated when this share of the shorter one's
# content words is in the other. On the tuned recorded completions, gaps that follow up a
# point on the same fact (judged useful: "no numbers show what this costs") share at most
# 0.56; a restatement shares most of them.
REPEAT_SHARE = 0.6
MIN_REPEAT_WORDS = 3
_LAYER: dict[str, str] = {"points": "reading", "gaps": "reading", "not_needed": "not_needed"}
_CONTENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*", re.ASCII)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_STOP_WORDS = (
    "the and for are not any but its was were has have had does can may will would which "
    "what when where who why how there their they them these those such each every other "
    "more most same just now new all one two that this with from into only also than then "
    "been being should could nothing")
_STOP = frozenset(_STOP_WORDS.split())
_LINE_CITE = re.compile(r"^(.+?):(\d+)(?:-(\d+))?$")
# Clauses: a sentence, or its parts around a colon, a semicolon or "but"/"while"/"so".
# A relative clause (", which `test_x` covers") says something of another subject.
_CLAUSE = re.compile(
    r"(?<=[.:;!?。：；])\s+|,?\s+(?:but|while|so|whereas)\s+|,\s+which\s+|但|而")


def verify(packet: Packet, raw_reply_text: str, *, model: str = "", lang: str = "en"
           ) -> WriterResult:
    """The reply checked against the packet; the result's status says how it went."""
    base = WriterResult(status="ok", model=model, prompt_version=PROMPT_VERSION,
                        packet_sha256=packet.sha256, lang=lang)
    parsed = _parse(raw_reply_text[:MAX_REPLY_CHARS])
    if parsed is None:
        return _failed(base, "not_json", "the reply is not a JSON object")
    try:
        reply = Reply.model_validate(parsed)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        return _failed(base, "schema", f"{where}: {first['msg']}")
    checker = _Checker(packet)
    kept: list[WrittenItem] = []
    dropped: list[Dropped] = []
    for section, item in _items(reply):
        verdict = checker.check(item, needs_cite=section not in ("title", "summary"))
        if verdict is None:
            cites = tuple(c for c in item.cites if checker.known_cite(c))
            written = WrittenItem(section, item.text.strip(), cites)
            earlier = repeat_of(written, kept)
            if earlier is None:
                kept.append(written)
            else:
                dropped.append(Dropped(section, item.text, "repeat", earlier.text[:200]))
        else:
            dropped.append(Dropped(section, item.text, *verdict))
    body = [k for k in kept if k.section not in ("title",)]
    status: WriterStatus = "nothing_verified" if not body else ("partial" if dropped else "ok")
    return WriterResult(status=status, model=model, prompt_version=PROMPT_VERSION,
                        packet_sha256=packet.sha256, lang=lang, items=tuple(kept),
                        dropped=tuple(dropped),
                        reason="" if body else "no item survived verification")


def repeat_of(item: WrittenItem, kept: Sequence[WrittenItem]) -> WrittenItem | None:
    """The kept item this one says again, if any: the same facts cited (a shared cite,
    `path:line` read as its path) and most of the shorter one's content words in the
    other. Points and gaps are one layer (a gap restating a point); what need not be
    re-checked is compared only with its own kind, since "X is unchanged" beside "X
    changes" shares its words without repeating it."""
    layer = _LAYER.get(item.section)
    if layer is None:
        return None
    cites = {_cited(c) for c in item.cites}
    words = _content_words(item.text)
    for earlier in kept:
        if _LAYER.get(earlier.section) != layer or not cites & {_cited(c) for c in earlier.cites}:
            continue
        other = _content_words(earlier.text)
        shorter = min(len(words), len(other))
        if shorter >= MIN_REPEAT_WORDS and len(words & other) >= REPEAT_SHARE * shorter:
            return earlier
    return None


def _cited(cite: str) -> str:
    cite = cite.strip().strip("`[]")
    match = _LINE_CITE.match(cite)
    return match.group(1) if match else cite


def _content_words(text: str) -> frozenset[str]:
    """Lower-cased words of three letters or more that carry content, and each pair of
    adjacent Chinese characters (Chinese has no spaces to split on)."""
    ascii_words = {w.lower().rstrip(".") for w in _CONTENT.findall(text)
                   if len(w) > 2 and w.lower() not in _STOP}
    han = "".join(_HAN.findall(text))
    return frozenset(ascii_words | {han[i:i + 2] for i in range(len(han) - 1)})


def _failed(base: WriterResult, status: WriterStatus, reason: str) -> WriterResult:
    return WriterResult(status=status, model=base.model, prompt_version=base.prompt_version,
                        packet_sha256=base.packet_sha256, lang=base.lang, reason=reason)


def _parse(text: str) -> dict[str, Any] | None:
    candidates = [text.strip()]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:  # JSON mode's reply wrapped in a Markdown fence or a sentence
        candidates.append(text[start:end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _items(reply: Reply) -> Iterator[tuple[Section, Item]]:
    if reply.title.strip():
        yield "title", Item(text=reply.title, cites=[])
    if reply.summary.strip():
        yield "summary", Item(text=reply.summary, cites=[])
    for section, items in (("points", reply.points), ("not_needed", reply.not_needed),
                           ("gaps", reply.gaps)):
        for item in items:
            if item.text.strip():
                yield section, item  # type: ignore[misc]
    if reply.lesson is not None and reply.lesson.text.strip():
        yield "lesson", reply.lesson


class _Checker:
    def __init__(self, packet: Packet) -> None:
        self.text = packet.text()
        self.plain = self.text.replace(",", "")
        self.fact_ids = packet.fact_ids
        self.paths = frozenset(packet.paths)
        self.severity = {fact.id: str(fact.data.get("severity", ""))
                         for fact in packet.facts if fact.id.startswith("risk.")}
        self.changed = {str(fact.data.get("name")): str(fact.data.get("change"))
                        for fact in packet.facts if fact.id.startswith("symbol.")}
        # The project's own name in prose ("vLLM" for vllm-project/vllm) is no identifier.
        self.project_names = frozenset(
            part.casefold() for part in re.split(r"[/_-]", packet.repo) if part)

    def known_cite(self, cite: str) -> bool:
        cite = cite.strip().strip("`[]")
        if cite in self.fact_ids or cite in self.paths:
            return True
        match = _LINE_CITE.match(cite)
        return match is not None and match.group(1) in self.paths

    def occurs(self, token: str) -> bool:
        if token in self.text or token.replace(",", "") in self.plain:
            return True
        # `Class.method`, `module.function`: a qualified name whose parts are each there.
        parts = token.removesuffix("()").split(".")
        return len(parts) > 1 and all(_IDENT.fullmatch(p) and re.search(
            rf"(?<!\w){re.escape(p)}(?!\w)", self.text) for p in parts)

    def check(self, item: Item, *, needs_cite: bool) -> tuple[str, str] | None:
        """None when the item holds; else (reason, detail)."""
        text = item.text
        internal = _INTERNAL.search(text)
        if internal:
            return "internal-word", internal.group(0)
        leaked = next((i for i in self.fact_ids if re.search(
            rf"(?<![\w.-]){re.escape(i)}(?![\w-])", text)), None)
        if leaked is not None and not self.occurs_outside_facts(leaked):
            return "internal-word", leaked
        found = self._ungrounded(text)
        if found is not None:
            return found
        if needs_cite and not any(self.known_cite(c) for c in item.cites):
            return "no-cite", ", ".join(item.cites)[:200]
        return self._contradiction(item)

    def occurs_outside_facts(self, token: str) -> bool:
        # A fact id that is also real text of the PR (a dotted name) may be named.
        return self.text.count(token) > self.text.count(f"[{token}]")

    def span_grounded(self, span: str) -> bool:
        """A code span the packet holds verbatim, or an expression built only of names and
        numbers it holds (`a // (b * c)`, `x = y`): the model may quote a computation
        across lines, never a name the PR does not have."""
        if self.occurs(span):
            return True
        names = _IDENT.findall(span)
        return bool(names) and all(
            re.search(rf"(?<!\w){re.escape(name)}(?!\w)", self.text) for name in names
        ) and all(self.occurs(number) for number in _NUMBER.findall(span))

    def _ungrounded(self, text: str) -> tuple[str, str] | None:
        for span in _CODE.findall(text):
            if not self.span_grounded(span.strip()):
                return "unknown-code", span
        for path in _PATH.findall(_CODE.sub(" ", text)):
            bare = _LINE_CITE.sub(r"\1", path)
            if _looks_like_path(bare) and not self.occurs(bare):
                return "unknown-path", path
        for number in _REF.findall(text):
            if not self.occurs(number):
                return "unknown-reference", f"#{number}"
        for login in _LOGIN.findall(text):
            if f"@{login}" not in self.text and f'"{login}"' not in self.text:
                return "unknown-login", f"@{login}"
        prose = _CODE.sub(" ", text)
        for word in _WORD.findall(prose):
            if (_looks_like_code(word) and word.casefold() not in self.project_names
                    and not self.occurs(word.removesuffix("()"))):
                return "unknown-identifier", word
        for number in _NUMBER.findall(_PATH.sub(" ", prose)):
            if not self.occurs(number):
                return "unknown-number", number
        return None

    def _contradiction(self, item: Item) -> tuple[str, str] | None:
        text = item.text
        lowered = text.lower()
        for cite in item.cites:
            severity = self.severity.get(cite.strip().strip("`[]"))
            if not severity:
                continue
            said = {level for level, words in _SEVERITY_WORDS.items()
                    if any(re.search(rf"\b{w}\b" if w.isascii() else re.escape(w), lowered)
                           for w in words)}
            if said and severity not in said:
                return "contradicts-severity", f"{cite}: {severity}"
        for clause in _CLAUSE.split(text):
            if not _UNCHANGED.search(clause):
                continue
            for name in self.changed:
                # The name and "unchanged" in one clause: said of that name, not of
                # something else the sentence goes on to (a default path, a caller).
                if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", clause):
                    return "contradicts-change", name
        return None


def _looks_like_path(token: str) -> bool:
    """`vllm/x.py`, `a/b/c`: a file or a nested folder. Not prose with a slash
    (async/PP, TTFT/TPOT, and/or), which the model writes as words."""
    return token.count("/") >= 2 or "." in token.rsplit("/", 1)[-1]


def _looks_like_code(word: str) -> bool:
    """snake_case, dotted.names, camelCase, calls: not an English word. (Capitals alone
    are not: GPU, CUDA and FP8 are prose.)"""
    bare = word.removesuffix("()")
    if word.endswith("()") or "_" in bare or "." in bare:
        return True
    return any(a.islower() and b.isupper() for a, b in pairwise(bare))
