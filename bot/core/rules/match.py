"""match_areas: which area rules a PR touches, with reasons and a trace of every rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from bot.core.facts import PullRequestFacts, is_prose_page, is_test_path
from bot.core.rules.compiled import CompiledArea, CompiledCondition, RuleSet
from bot.core.rules.evaluate import MAX_REASONS, Outcome, PullRequestScan, Reason, evaluate
from bot.core.rules.schema import CRITICALITY_ORDER, LocalizedText
from bot.core.vocabulary import AreaMatch, ChecklistItem, Evidence, RuleText, TraceEntry

MAX_FILES_PER_AREA = 20  # files beyond this are counted, not listed, in the reasons
MAX_NOTES = 3
# An added line that only imports a name, or one in a test, says the PR *uses* an area's
# name, not that it changes the area: alone it never opens one (issue 27).
_IMPORT_LINE = re.compile(r"\s*(?:from\s+[\w.]+\s+import\b|import\s+\w|#\s*include\b)")
# A checklist item that asks for a test to *exist* under a tests/ path ("A test under
# tests/entrypoints ...", "A tests/kernels test ...", "tests/models/registry.py has an
# entry ...") is already met when the PR adds lines there: the file list answers it.
_ASKS_FOR_TEST = re.compile(
    r"^(?:A\s+test\s+(?:under|in)\s+`?(tests/[\w./-]+?)`?[\s,.]"
    r"|A\s+`?(tests/[\w./-]+?)`?\s+test\b"
    r"|`?(tests/[\w./-]+\.py)`?\s+has\s+an?\s+entry\b)"
)


@dataclass(frozen=True)
class AreaMatchResult:
    areas: tuple[AreaMatch, ...]
    trace: tuple[TraceEntry, ...]  # one entry per rule, fired or not
    # False when the added lines were too large to scan in full (added.SCAN_BUDGET_BYTES)
    added_complete: bool = True
    texts_complete: bool = True  # title, body, mention and base searches all ran


def _capped(reasons: list[Reason]) -> tuple[Evidence, ...]:
    unique = list(dict.fromkeys(reasons))
    paths = [e for e in unique if e.kind == "path"][:MAX_FILES_PER_AREA]
    others = [e for e in unique if e.kind != "path"]
    # Non-path reasons first: a title or label is rarer and says more than file #17.
    return tuple(reason.evidence() for reason in (others + paths)[:MAX_REASONS])


# What kind of signal an evidence item is (issue 40). A non-test path, or a changed code
# line that uses one of the area's names, opens an area alone. The rest are weak: a
# title word, a label (Mergify predicts them from the title and paths), the body's words,
# a test file, an import, a decorator or interface flag on a class (every model carries
# `@support_torch_compile` and `SupportsLoRA` without touching the compiler or LoRA), a
# name the file only hands on as a keyword argument (a model calling
# `get_rope(rope_parameters=...)` consumes RoPE, it does not change it): alone they never
# open an area; two of different kinds do.
# Who opened the PR and the branch it targets are facts a rule asks for on purpose.
_STRONG = frozenset({"path", "code", "author", "base"})
_SAID = frozenset({"title", "label", "body", "mention"})
_DECORATOR_OR_BASES = re.compile(r"\s*(?:@|class\s+\w+\s*\()")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_COMMENT = re.compile(r"\s*(?:#|//|/\*|\*)")
_DOCSTRING_QUOTES = ('"""', "'''")
_WEAK_SIGNALS = (
    "only a title word, a label, a test file, an import, a class flag or a keyword"
    " argument matched"
    " (one kind): not enough to open the area"
)


def _classified_lines(patch: str) -> list[tuple[str, str]]:
    """Each added line with its kind: `comment` (a comment or a docstring line),
    `import`, `flag` (a decorator or a class's bases) or `code`. Docstrings, and imports
    and class headers wrapped over several lines in parentheses, are followed through the
    hunk's context lines."""
    out: list[tuple[str, str]] = []
    in_docstring = False
    wrapped = ""  # "import" | "flag" while their parentheses are open
    depth = 0
    for raw in patch.splitlines():
        if raw.startswith("@@"):
            in_docstring, wrapped, depth = False, "", 0
            continue
        if raw[:1] not in ("+", " ") or raw.startswith("+++ "):
            continue
        line = raw[1:]
        quotes = sum(line.count(q) for q in _DOCSTRING_QUOTES)
        was_in = in_docstring
        if quotes % 2:
            in_docstring = not in_docstring
        if was_in or line.lstrip().startswith(_DOCSTRING_QUOTES) or _COMMENT.match(line):
            kind = "comment"
        elif wrapped:
            kind = wrapped
        elif _IMPORT_LINE.match(line):
            kind = "import"
        elif _DECORATOR_OR_BASES.match(line):
            kind = "flag"
        else:
            kind = "code"
        if kind in ("import", "flag"):
            depth += line.count("(") - line.count(")")
            wrapped = kind if depth > 0 else ""
            depth = max(depth, 0)
        if raw[0] == "+":
            out.append((kind, line))
    return out


def _annotation_only(phrase: str, line: str) -> bool:
    """Whether the line names `phrase` once, as a type annotation (`x: T`, `-> T`,
    `x: list[T] | None`)."""
    if not _IDENTIFIER.fullmatch(phrase) or line.count(phrase) != 1:
        return False
    name = re.escape(phrase)
    annotation = rf"(?::|->)[ \t]*[\w.\[\], |\"']*(?<![\w.]){name}\b(?![\w(])"
    return re.search(annotation, line) is not None


def _keyword_argument_only(phrase: str, code: list[str]) -> bool:
    """Whether `phrase` is a name the file passes on as a keyword argument (`name=...`) and
    never defines or sets: no `def`/`class` of it, no `name:` annotation or key, no
    `.name = ` or `name[...] = ` assignment. A local of the same name that feeds the
    keyword (`name = config.name`) is still only passing it on."""
    if not _IDENTIFIER.fullmatch(phrase):
        return False
    name = re.escape(phrase)
    if not any(re.search(rf"\b{name}=(?!=)", line) for line in code):
        return False
    defines = re.compile(
        rf"\b(?:def|class)\s+{name}\b|\b{name}\b['\"]?\s*:(?!=)"
        rf"|\.{name}\s*(?:\[[^\]]*\])?\s*[-+*/|&]?=(?!=)|\b{name}\s*\[[^\]]*\]\s*[-+*/|&]?=(?!=)"
    )
    return not any(defines.search(line) for line in code)


def _signal(reason: Reason, lines_of: Callable[[str], list[tuple[str, str]]]) -> str | None:
    """The kind of signal one reason is (see _STRONG); None when it is none at all (a
    phrase found only in a comment, or in a test's added lines)."""
    if reason.kind == "path":
        return "test" if is_test_path(reason.subject) else "path"
    if reason.kind in _SAID:
        return "said"
    if reason.kind != "added":
        return reason.kind
    path, _, phrase = reason.subject.partition(": ")
    if is_test_path(path):
        return None
    if is_prose_page(path):
        return "said"
    phrase = phrase.removesuffix("…")
    lines = lines_of(path)
    kinds = {kind for kind, line in lines if phrase in line}
    code = [line for kind, line in lines if kind == "code" and phrase in line]
    if code and _keyword_argument_only(phrase, code):
        kinds = (kinds - {"code"}) | {"argument"}
    elif code and all(_annotation_only(phrase, line) for line in code):
        # `tokenizer: TokenizerLike,` uses the area's type as an import does (a tool
        # parser's signature opened the tokenizer area: judged misdirected)
        kinds = (kinds - {"code"}) | {"import"}
    for kind in ("code", "flag", "import", "argument"):
        if kind in kinds:
            return kind
    return None


def _scoping_only(cond: CompiledCondition, scan: PullRequestScan) -> set[str]:
    """The files only a `paths` that scopes an `added` pattern matched (`paths: [platform
    files], added: attention`): where to look, not a signal. Such a file opens the area
    through a code line of its own, not by being changed (a comment naming CPU_ATTN in the
    CPU platform file opened the attention area; judged misdirected)."""
    scoping: set[str] = set()
    plain: set[str] = set()

    def walk(c: CompiledCondition) -> None:
        if c.path_ids:
            (scoping if c.added_id is not None else plain).update(scan.files_of(c.path_ids))
        for inner in (*c.any_, *c.all_):
            walk(inner)

    walk(cond)
    return scoping - plain


def _opens(outcome: Outcome, facts: PullRequestFacts, scoping: Callable[[], set[str]]) -> bool:
    """A non-test path or a code line opens an area; weak signals need a second kind.
    Without a file list (offline, or GitHub did not give it) the title and labels are
    all there is: any match opens."""
    if not outcome.evidence or not facts.files:
        return True
    paths = [r.subject for r in outcome.evidence
             if r.kind == "path" and not is_test_path(r.subject)]
    if paths and not set(paths) <= scoping():
        return True
    patches = {f.filename: f.patch or "" for f in facts.files}
    cache: dict[str, list[tuple[str, str]]] = {}

    def lines_of(path: str) -> list[tuple[str, str]]:
        if path not in cache:
            cache[path] = _classified_lines(patches.get(path) or "")
        return cache[path]

    kinds = {_signal(r, lines_of) for r in outcome.evidence
             if not (r.kind == "path" and r.subject in paths)} - {None}
    return bool(kinds & _STRONG) or len(kinds) >= 2


def _met_by_files(item_en: str, facts: PullRequestFacts) -> bool:
    asked = _ASKS_FOR_TEST.match(item_en)
    if asked is None:
        return False
    where = next(group for group in asked.groups() if group).rstrip("/")
    return any(
        f.additions > 0 and (f.filename == where or f.filename.startswith(where + "/"))
        for f in facts.files
    )


def _applies(when: CompiledCondition | None, scan: PullRequestScan, rule: str) -> bool:
    return when is None or evaluate(when, scan, rule).ok


def _text(text: LocalizedText) -> RuleText:
    return RuleText(en=text.en, zh=text.zh)


def _area_match(area: CompiledArea, outcome: Outcome, scan: PullRequestScan) -> AreaMatch:
    files = sorted(set(outcome.files), key=scan.order.__getitem__)
    return AreaMatch(
        id=area.id,
        title=_text(area.title),
        audience=_text(area.audience),
        criticality=area.criticality,
        numerics=area.numerics,
        files=tuple(files),
        reasons=_capped(outcome.evidence),
        focus=tuple(_text(f.text) for f in area.focus if _applies(f.when, scan, area.id)),
        focus_triggered=tuple(
            _text(f.text)
            for f in area.focus
            if f.when is not None and _applies(f.when, scan, area.id)
        ),
        checklist=tuple(
            ChecklistItem(id=c.id, text=_text(c.text))
            for c in area.checklist
            if _applies(c.when, scan, area.id) and not _met_by_files(c.text.en, scan.facts)
        ),
        ci_areas=area.ci_areas,
        labels=area.labels,
        quiet=area.quiet,
        catch_all=area.catch_all,
    )


def _trace(area: CompiledArea, outcome: Outcome, files: int) -> TraceEntry:
    if outcome.ok:
        return TraceEntry(rule=area.id, fired=True, evidence=_capped(outcome.evidence),
                          files=files)
    notes = list(dict.fromkeys(outcome.notes))[:MAX_NOTES]
    if not notes and outcome.evidence:
        notes = ["partly matched"]
    return TraceEntry(
        rule=area.id, fired=False, evidence=_capped(outcome.evidence), note="; ".join(notes)
    )


def match_areas(facts: PullRequestFacts, rules: RuleSet) -> AreaMatchResult:
    scan = PullRequestScan(facts, rules)
    matches: list[AreaMatch] = []
    trace: list[TraceEntry] = []
    for area in rules.areas:
        outcome = evaluate(area.match, scan, area.id)
        if outcome.ok and not _opens(outcome, facts, partial(_scoping_only, area.match, scan)):
            outcome = Outcome(ok=False, evidence=outcome.evidence, notes=[_WEAK_SIGNALS])
        if outcome.ok:
            matches.append(_area_match(area, outcome, scan))
        trace.append(_trace(area, outcome, len(set(outcome.files))))
    matches.sort(key=lambda m: (CRITICALITY_ORDER[m.criticality], -len(m.files), m.id))
    return AreaMatchResult(
        areas=tuple(matches), trace=tuple(trace), added_complete=scan.added_complete,
        texts_complete=scan.texts_complete,
    )


def match_condition(cond: CompiledCondition, facts: PullRequestFacts, rules: RuleSet) -> bool:
    """Whether one compiled condition of `rules` holds for `facts` (for previews and tests)."""
    return evaluate(cond, PullRequestScan(facts, rules), "").ok
