"""The risk checklist: what a vLLM reviewer would still ask for before merging.

Each check is a small function from (PR, parsed body, matched areas, compiled
settings) to at most one Risk: its id, severity, parameters and clues, never a sentence.
Ids are a contract (docs/architecture.md); the words are rendering's
(bot/core/render/words.py); every list or threshold that is a choice lives in RiskSettings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.findings import CiPlan, CiStepRef
from bot.core.reading.body import PullRequestBody
from bot.core.reading.prose_lines import patch_is_prose
from bot.core.rules.globset import GlobSet, PathGroups
from bot.core.rules.patterns import LinePattern, PatternError
from bot.core.rules.risk_settings import RiskSettings
from bot.core.vocabulary import AreaMatch, Clue, Risk, RiskParam, Severity

SEVERITY_RANK: dict[Severity, int] = {"high": 0, "medium": 1, "low": 2}
# An added registry entry: `+    "FooForCausalLM": ("foo", "FooForCausalLM"),`.
_REGISTRY_ENTRY = re.compile(r"^\+[ \t]{0,16}[\"']\w{1,100}[\"']:[ \t]{0,4}\(", re.MULTILINE)


@dataclass(frozen=True)
class CompiledPlatform:
    name: str
    paths: GlobSet
    title: LinePattern | None
    hardware_names: tuple[LinePattern, ...]
    ci_link: LinePattern | None


@dataclass(frozen=True)
class CompiledRiskSettings:
    """RiskSettings with globs and regexes compiled once."""

    settings: RiskSettings
    tests: GlobSet
    sources: GlobSet
    docs_ci: GlobSet
    numerics: GlobSet
    forward: GlobSet
    plumbing: tuple[LinePattern, ...]
    hardware_gates: tuple[LinePattern, ...]
    model_registry: GlobSet
    model_files: GlobSet
    release_branch: LinePattern
    backport: tuple[LinePattern, ...]
    perf_title: LinePattern
    hardware: tuple[CompiledPlatform, ...]


# Keyed by id(settings) and holding the settings object itself, so an id is never
# reused while cached. Settings are loaded once and treated as immutable.
_COMPILED: dict[int, tuple[RiskSettings, CompiledRiskSettings]] = {}
_COMPILED_MAX = 16


def compile_risk_settings(settings: RiskSettings) -> CompiledRiskSettings:
    """Compile (or fetch the compiled form of) one settings object."""
    hit = _COMPILED.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    compiled = CompiledRiskSettings(
        settings=settings,
        tests=GlobSet(settings.test_paths),
        sources=GlobSet(settings.source_paths),
        docs_ci=GlobSet(settings.docs_ci_paths),
        numerics=GlobSet(settings.numerics_paths),
        forward=GlobSet(settings.forward_paths),
        plumbing=_union(settings.plumbing_line_patterns),
        hardware_gates=_any_of(settings.hardware_gate_patterns),
        model_registry=GlobSet(settings.model_registry_paths),
        model_files=GlobSet(settings.model_file_paths),
        release_branch=LinePattern(settings.release_branch_pattern),
        backport=_any_of(settings.backport_patterns),
        perf_title=LinePattern(settings.perf_title_pattern, ignore_case=True),
        hardware=tuple(
            CompiledPlatform(
                name=name,
                paths=GlobSet(platform.paths),
                title=LinePattern(platform.title_pattern, ignore_case=True)
                if platform.title_pattern
                else None,
                hardware_names=_any_of(platform.hardware_names),
                ci_link=LinePattern(platform.ci_link_pattern, ignore_case=True)
                if platform.ci_link_pattern
                else None,
            )
            for name, platform in settings.hardware.items()
        ),
    )
    remember_compiled(compiled)
    return compiled


def remember_compiled(compiled: CompiledRiskSettings) -> None:
    """Let `compile_risk_settings(compiled.settings)` answer `compiled` (one compiled
    with the rules and cached with them, bot/rulebook/cache.py)."""
    # Digests are built on worker threads: another may evict the same key first.
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.pop(next(iter(_COMPILED), 0), None)
    _COMPILED[id(compiled.settings)] = (compiled.settings, compiled)


def _any_of(patterns: Sequence[str], *, ignore_case: bool = True) -> tuple[LinePattern, ...]:
    # RE2 (bot/core/rules/patterns.py): these come from risks.yaml or a repository's override
    # and run on untrusted titles, bodies and patches.
    return tuple(LinePattern(p, ignore_case=ignore_case) for p in patterns)


def _union(patterns: Sequence[str]) -> tuple[LinePattern, ...]:
    """Patterns whose only use is "does any of them match": folded into one RE2
    alternation (one search per line instead of one per pattern), which matches exactly
    when one of them does. Each stays in its own group, so its inline flags stay its
    own. Too long or too big for one pattern: kept apart."""
    if len(patterns) > 1:
        try:
            return (LinePattern("|".join(f"(?:{p})" for p in patterns)),)
        except PatternError:
            pass
    return _any_of(patterns, ignore_case=False)


def _first_match(patterns: Sequence[LinePattern], *texts: str) -> str | None:
    """The first match of the first pattern, in the first text, that matches."""
    for text in texts:
        for pattern in patterns:
            found = pattern.search(text)
            if found is not None:
                return found
    return None


# How strongly a changed file stands behind a numerics risk.
_STRONG, _MEDIUM, _NONE = 2, 1, 0
# Lines of one patch looked at: enough to find a compute line, bounded on huge patches.
_MAX_PATCH_LINES = 4000


# A debugging aid (vllm/utils/gpu_sync_debug.py, *_debug.py): not production numerics.
_DEBUG_HELPER = re.compile(r"(?:^|[_./-])debug(?:[_./-]|$)")
# A Markdown table row with at least two cells holding a number: posted measurements.
_TABLE_ROW = re.compile(r"^[ \t]{0,8}\|")
_NUMBER_CELL = re.compile(r"\d")
_MAX_BODY_LINES = 2000


def posts_numbers(text: str) -> bool:
    """Whether the description posts a table of numbers (benchmark or eval results):
    a reviewer reads those before asking for a GPU evaluation."""
    rows = 0
    for line in text.split("\n", _MAX_BODY_LINES)[:_MAX_BODY_LINES]:
        if _TABLE_ROW.match(line):
            cells = line[:2000].split("|")
            rows += sum(1 for cell in cells if _NUMBER_CELL.search(cell)) >= 2
            if rows >= 2:
                return True
    return False


# An added `if`/`elif` line (Python or C-like) that opens a block.
_CONDITION_LINE = re.compile(r"^(?:(?:el)?if\b.*:|(?:\}\s*)?(?:else\s+)?if\s*\(.*\)\s*\{?)$")
# A line (split at "\n") starting with "+" but not "+++", without its "+".
_ADDED_LINE = re.compile(r"^\+(?!\+\+)(.*)", re.MULTILINE)


def _looked_at(patch: str) -> int:
    """Where the patch's first _MAX_PATCH_LINES lines end."""
    if patch.count("\n") < _MAX_PATCH_LINES:
        return len(patch)
    rest = patch.split("\n", _MAX_PATCH_LINES)[_MAX_PATCH_LINES]
    return len(patch) - len(rest) - 1


@dataclass(frozen=True)
class _Context:
    facts: PullRequestFacts
    body: PullRequestBody
    areas: Sequence[AreaMatch]
    rules: CompiledRiskSettings
    ci: CiPlan | None = None

    @property
    def files(self) -> tuple[ChangedFile, ...]:
        return self.facts.files

    # Several checks ask a glob list about each of a 3,000-file PR's files: each list is
    # asked about all of them at once (GlobSet.select), and a path is looked up.
    @cached_property
    def names(self) -> frozenset[str]:
        return frozenset(f.filename for f in self.files)

    @cached_property
    def groups(self) -> PathGroups:
        return PathGroups(f.filename for f in self.files)

    def selected(self, globs: GlobSet) -> frozenset[str]:
        return frozenset(globs.select(self.groups))

    @cached_property
    def test_files(self) -> frozenset[str]:
        return self.selected(self.rules.tests)

    @cached_property
    def docs_ci_files(self) -> frozenset[str]:
        return self.selected(self.rules.docs_ci)

    @cached_property
    def numerics_code_files(self) -> frozenset[str]:
        return self.selected(self.rules.numerics) | self.selected(self.rules.forward)

    def is_test(self, path: str) -> bool:
        if path in self.names:
            return path in self.test_files
        return self.rules.tests.match_file(path)

    def is_docs_ci(self, path: str) -> bool:
        if path in self.names:
            return path in self.docs_ci_files
        return self.rules.docs_ci.match_file(path)

    @property
    def tests_changed(self) -> bool:
        return bool(self.test_files)

    def has_compute(self, changed: ChangedFile) -> bool | None:
        """Whether the patch adds a line that is not plumbing; None when it is unknown."""
        patch = changed.patch
        if not patch:
            return None
        plumbing = self.rules.plumbing
        # The added lines among the first _MAX_PATCH_LINES, found one at a time: the
        # first added line is usually compute, and the rest of the patch is not split.
        # A line starting before offset _MAX_PATCH_LINES is among them (every line
        # before it takes at least its "\n"); past that, where they end is worked out.
        end: int | None = None
        # A condition whose own added body is plumbing (`if not x.is_contiguous():` then
        # `raise ValueError(...)`) is a guard, not compute; one that guards compute, or
        # existing code (no added body), changes what runs.
        condition = False
        for added in _ADDED_LINE.finditer(patch):
            if added.start() >= _MAX_PATCH_LINES:
                if end is None:
                    end = _looked_at(patch)
                if added.start() > end:
                    break
            code = added.group(1).strip()[:400]
            if _first_match(plumbing, code) is not None:
                condition = False
                continue
            if condition or not _CONDITION_LINE.match(code):
                return True
            condition = True
        return condition

    @cached_property
    def docs_ci_only(self) -> bool:
        return bool(self.files) and self.docs_ci_files >= self.names

    @cached_property
    def changed_sources(self) -> list[ChangedFile]:
        """Source files the PR keeps whose patch can change what runs (not a docstring)."""
        sources, docs_ci = self.selected(self.rules.sources), self.docs_ci_files
        return [
            f
            for f in self.files
            if f.status != "removed"
            and f.filename in sources
            and f.filename not in docs_ci
            and not (f.patch and patch_is_prose(f.patch))
        ]

    @cached_property
    def device_gate(self) -> str:
        """The first hardware gate when every changed source file's patch sits behind one
        (a condition on a device property, a table entry keyed by a compute capability):
        that code runs only on such a device, which no ordinary CI runner is. "" if not."""
        gates = [_hardware_gate(f.patch, self.rules) if f.patch else ""
                 for f in self.changed_sources]
        return gates[0] if gates and all(gates) else ""

    @cached_property
    def nothing_runs_differently(self) -> bool:
        """Docs or CI files, and code whose patch changes only docstrings and comments:
        there is nothing to run, so no test output to ask for."""
        if not self.files or self.docs_ci_only:
            return self.docs_ci_only
        return all(
            f.filename in self.docs_ci_files
            or f.status == "removed"
            or (f.patch is not None and patch_is_prose(f.patch))
            for f in self.files
        )


# Evidence that ties an area to the change itself; a title word or a body mention
# alone is weaker (bot/core/rules: evidence kinds).
_STRONG_AREA_EVIDENCE = frozenset({"path", "label", "added", "base", "author"})


def weigh_areas(
    facts: PullRequestFacts, areas: Sequence[AreaMatch], settings: RiskSettings
) -> tuple[AreaMatch, ...]:
    """Drop areas that only a title word or a body mention found when every changed file
    is docs or CI: "[Docs] List XPU attention backends" is a docs change, not an
    attention one. Without a file list every signal counts (partial data)."""
    docs_ci = compile_risk_settings(settings).docs_ci
    if not facts.files or not all(docs_ci.match_file(f.filename) for f in facts.files):
        return tuple(areas)
    return tuple(
        area
        for area in areas
        if area.quiet or any(r.kind in _STRONG_AREA_EVIDENCE for r in area.reasons)
    )


def assess_risks(
    facts: PullRequestFacts,
    body: PullRequestBody,
    areas: Sequence[AreaMatch],
    settings: RiskSettings,
    *,
    ci: CiPlan | None = None,
) -> tuple[Risk, ...]:
    """Every open risk, high severity first (stable within a severity). `ci` is what
    the base's pipeline runs for the PR and, when read, how it fared on the head."""
    ctx = _Context(facts, body, areas, compile_risk_settings(settings), ci)
    found = [risk for check in _CHECKS if (risk := check(ctx)) is not None]
    untested = body.test_plan_empty and body.test_result_empty
    found = _results_told_once(_one_ask_per_run(found, untested=untested), untested=untested)
    return tuple(sorted(found, key=lambda r: SEVERITY_RANK[r.severity]))


def _results_told_once(found: list[Risk], *, untested: bool) -> list[Risk]:
    """A description whose Test Plan and Test Result are both empty is told so once. Folded
    into a run ask (`_one_ask_per_run`) the gap is a clue of the ask kept; standing on its
    own beside a missing regression test, a second stock line saying "no results" repeats
    it (blind judges' word for it), so the gap becomes a clue of missing-tests."""
    results = next((r for r in found if r.id == "missing-test-results"), None)
    if results is None or not untested:
        return found
    host = next((r for r in found if r.id == "missing-tests" and r.severity != "low"), None)
    if host is None:
        return found
    merged = host.model_copy(update={"evidence": (*_told(results), *host.evidence)})
    return [merged if r is host else r for r in found if r is not results]


def _told(results: Risk) -> tuple[Clue, ...]:
    """missing-test-results' "what is absent" clues, under its id for the one carrying them."""
    return tuple(
        c.model_copy(update={"text": f"missing-test-results.{c.text}"})
        for c in results.evidence if c.kind == "absent"
    )


# Risks that each ask the author for a run of the change. A reviewer asks once, for the
# most specific run: on the platform the change is for, else an accuracy evaluation,
# else any test output. The one kept takes the highest severity of those it stands for;
# a low one (a title tag with no platform file behind it) stands for nothing more.
_RUN_ASKS = ("hardware-unverified", "missing-gpu-eval", "missing-test-results")


def _one_ask_per_run(found: list[Risk], *, untested: bool) -> list[Risk]:
    asks = [r for r in found if r.id in _RUN_ASKS]
    raised = [r for r in asks if r.severity != "low"]
    if len(asks) < 2 or not raised:
        return found
    kept = min(raised, key=lambda r: _RUN_ASKS.index(r.id))
    severity = min((r.severity for r in asks), key=SEVERITY_RANK.__getitem__)
    # The kept ask still says what the description lacks (issue 40: folding the results
    # ask away lost the one signal it carried, an empty Test Plan and Test Result).
    folded = [c for r in asks if untested and r.id == "missing-test-results" and r is not kept
              for c in _told(r)]
    merged = kept.model_copy(update={"severity": severity,
                                     "evidence": (*folded, *kept.evidence)})
    return [merged if r is kept else r for r in found if r.id not in _RUN_ASKS or r is kept]


def _risk(risk_id: str, severity: Severity, evidence: Sequence[Clue],
          **params: RiskParam) -> Risk:
    return Risk(
        id=risk_id,
        severity=severity,
        params=tuple(params.items()),
        evidence=tuple(dict.fromkeys(c for c in evidence if c.text or c.numbers)),
    )


def _quotes(texts: Sequence[str]) -> list[Clue]:
    return [Clue(kind="quote", text=text) for text in texts]


def _files(paths: Sequence[str]) -> list[Clue]:
    return [Clue(kind="file", text=path) for path in paths]


def _numerics_strength(ctx: _Context) -> tuple[int, list[str]]:
    """How strongly the changed files stand behind a GPU-evaluation risk, and which.

    Strong: compute lines in kernels or model-forward code. Medium: such code with an
    unknown patch, or compute lines in a numerics area's other files. None: tests, docs,
    removed files, plumbing-only patches, a numerics area matched without a file.
    """
    claimed = {f for a in ctx.areas if a.numerics for f in a.files}
    best, files = _NONE, list[str]()
    tests, docs_ci, numerics_code = ctx.test_files, ctx.docs_ci_files, ctx.numerics_code_files
    for changed in ctx.files:
        name = changed.filename
        if changed.status == "removed" or name in tests or name in docs_ci:
            continue
        if _DEBUG_HELPER.search(name.rsplit("/", 1)[-1]):
            continue
        code = name in numerics_code
        if not code and name not in claimed:
            continue
        compute = ctx.has_compute(changed)
        if compute is False or (changed.patch and patch_is_prose(changed.patch)):
            continue
        strength = _STRONG if code and compute else _MEDIUM
        if strength > best:
            best, files = strength, []
        if strength == best:
            files.append(name)
    return best, files


def _missing_gpu_eval(ctx: _Context) -> Risk | None:
    if ctx.docs_ci_only:
        return None
    admitted = ctx.body.not_run
    strength, files = _numerics_strength(ctx)
    numerics_areas = [a for a in ctx.areas if a.numerics]
    # With a file list, no numerics code changed (plumbing, checks, tests): an admitted
    # gap there is a test not run, not an evaluation to ask for. Without one (partial
    # data), an admission in a numerics area still stands on its own.
    if strength == _NONE and (bool(ctx.files) or not (admitted and numerics_areas)):
        return None
    if (ctx.body.accuracy_evidence or posts_numbers(ctx.body.text)) and not admitted:
        return None
    # High only where the author admits the gap in numerics code: a red flag that fires
    # on every silent description is one reviewers learn to skip. Medium: compute with
    # nothing measured, glue code, no description to read (partial data), an area's name.
    high = bool(admitted) and strength >= _MEDIUM
    severity: Severity = "high" if high else "medium"
    if not high and ctx.body.run_evidence:
        severity = "low"  # it ran (tests passed, a CI build, a named device), unmeasured
    read = {f.filename for f in ctx.files if f.patch}
    if not admitted and files and read.issuperset(files):
        # With the patch read and no gap the author admits, the ask is the area's, not
        # this PR's: blind judges called it unjustified on 10 of the 11 tuned corpus PRs
        # where only a numerics area's other files computed (a schema check, a lock, a
        # buffer's size), and on 5 of 9 where kernel or forward code did (1 useful, 3
        # unsure: a sampling-length choice, a top-k index, an exact-output tile test).
        # Kept, collapsed. An unread patch still says "medium".
        severity = "low"
    said = _quotes(admitted[:3]) or [Clue(kind="absent", text="no-evidence")]
    chosen = set(files)
    backing = [a for a in numerics_areas if not chosen.isdisjoint(a.files)] or (
        [] if files else numerics_areas[:1]
    )
    claimed = {f for a in backing for f in a.files}
    kernels = [f for f in files if f not in claimed]
    return _risk(
        "missing-gpu-eval",
        severity,
        [*said, *(Clue(kind="area", text=a.id) for a in backing), *_files(kernels[:2])],
        areas=tuple(a.id for a in backing),
        kernels=len(kernels),
    )


def _missing_test_results(ctx: _Context) -> Risk | None:
    body = ctx.body
    if (ctx.nothing_runs_differently or not body.test_result_empty or body.evidence
            or body.perf_numbers or body.perf_sections):
        return None
    result = body.sections.get("test_result")
    if not body.text.strip():
        evidence = Clue(kind="absent", text="empty-body")
    elif result is not None and result.strip():
        evidence = Clue(kind="quote", text=result.strip().split("\n", 1)[0][:80])
    elif result is not None:
        both = "test_plan" in body.sections and body.test_plan_empty
        evidence = Clue(kind="absent", text="empty-sections" if both else "empty-section")
    elif "test_plan" in body.sections and _named_section(body):
        # One section for plan and results, as vLLM's template has since 0.32
        # ("Validation"): named in the author's words.
        key = "no-result-in" if not body.test_plan_empty else "empty-named"
        evidence = Clue(kind="absent", text=key, detail=_named_section(body))
    elif not body.test_plan_empty:
        evidence = Clue(kind="absent", text="no-result-section")
    else:
        evidence = Clue(kind="absent", text="no-sections")
    # CI is what vLLM reviewers look at: an empty Test Result matters only where the
    # change needs a run to be trusted and nothing else shows one.
    tests_changed = ctx.tests_changed
    # Only source code needs a run to be trusted: a Dockerfile or a build script in a
    # weighty area is checked by the CI build it changes (blind judges called the
    # stock ask on a CI-image change generic).
    sources = ctx.selected(ctx.rules.sources)
    weighty = [
        f
        for a in ctx.areas
        if a.numerics or a.criticality in ("high", "critical")
        for f in a.files
        if f in sources and not ctx.is_test(f) and not ctx.is_docs_ci(f)
    ]
    severity: Severity = "medium" if weighty and not tests_changed else "low"
    # A change behind a hardware gate is trusted by a run on such a device: say which.
    gate = ctx.device_gate
    entry = gate.startswith("key:")
    device = [Clue(kind="absent", text="device-entry" if entry else "device-only",
                   detail=gate.removeprefix("key:"))] if gate else []
    return _risk("missing-test-results", severity, [evidence, *device])


def _named_section(body: PullRequestBody) -> str:
    """The test section's heading as written, when it is a plain short title of a section
    meant to hold results too ("Validation", "Testing"); a "Test Plan" expects a separate
    result section, and its absence is what is named then."""
    title = body.titles.get("test_plan", "")
    plain = 0 < len(title) <= 40 and title.replace(" ", "").isalpha()
    return title if plain and "plan" not in title.lower() else ""


# A source change this small (lines added + removed) is read whole in review; a missing
# regression test for it is noted, not raised.
_TINY_CHANGE = 6


# A path-like token of a test plan: `tests/x/test_y.py::test_z`, `tests/entrypoints/`.
_PATH_TOKEN = re.compile(r"[\w.-]{1,100}(?:/[\w.-]{1,100}){1,20}/?")
_MAX_PLAN_CHARS = 4000


def _plan_names_test(ctx: _Context) -> bool:
    """Whether the Test Plan names a test to run (a path the test globs match): the author
    points at the existing test that covers the change, which answers "add a test"."""
    plan = ctx.body.sections.get("test_plan", "")[:_MAX_PLAN_CHARS]
    return any(ctx.is_test(token.group(0).rstrip("/")) for token in _PATH_TOKEN.finditer(plan))


# A title that says the PR fixes something: "[Bugfix]", "Fix …", "fixes", "bug".
_FIX = re.compile(r"(?i)\b(?:bug\s*fix\w*|fix(?:es|ed|ing)?|bugs?|hotfix)\b")


def _missing_tests(ctx: _Context) -> Risk | None:
    if ctx.tests_changed or _performance_change(ctx) or _plan_names_test(ctx):
        return None
    changed = ctx.changed_sources  # a docstring cannot fail a test
    if not changed:
        return None
    sources = [f.filename for f in changed]
    tiny = all(f.patch is not None for f in changed) and (
        sum(f.changes for f in changed) <= _TINY_CHANGE
    )
    limit = ctx.rules.settings.evidence_files
    # Blind judges called the stock ask unjustified where the changed branch runs only
    # on hardware no CI runner has (an smem threshold, an SM's table entries), and
    # generic where a PR that fixes nothing only changes model definitions: vLLM's
    # registry-driven model tests load every model, and such a PR (a compile decorator,
    # LoRA support) adds no behaviour a regression test would pin.
    model_files = ctx.selected(ctx.rules.model_files)
    model_only = all(name in model_files for name in sources) and not _FIX.search(
        ctx.facts.title)
    severity: Severity = "low" if tiny or ctx.device_gate or model_only else "medium"
    return _risk("missing-tests", severity, _files(sources[:limit]), count=len(sources))


def _hardware_gate(patch: str, rules: CompiledRiskSettings) -> str:
    """The first hardware gate of the patch when every line it adds or removes, past
    plumbing, sits behind one earlier in its hunk (a condition on a device property, a
    table entry keyed by a compute capability): the change runs only on that kind of
    device. A hunk's removed lines count as gated when the hunk adds a gate (a check the
    gate replaces). "" when some change is not gated."""
    gates, plumbing = rules.hardware_gates, rules.plumbing
    first = ""
    gated = ungated_removal = False
    for line in patch.split("\n", _MAX_PATCH_LINES)[:_MAX_PATCH_LINES]:
        if line.startswith("@@"):
            if ungated_removal and not gated:
                return ""
            gated = ungated_removal = False
            continue
        if line.startswith(("+++", "---")) or not line.startswith(("+", "-")):
            continue
        code = line[1:].strip()[:400]
        if gated:
            continue
        if _first_match(gates, code) is not None:
            gated = True
            first = first or _gate_condition(code)
        elif _first_match(plumbing, code) is not None:
            continue
        elif line.startswith("+"):
            return ""
        else:
            ungated_removal = True
    return "" if ungated_removal and not gated else first


# A gate line's own condition: `max_smem_per_block < 128 * 1024` of
# `if (max_smem_per_block < 128 * 1024) {`, `"10.7"` of `"10.7": {  # sm_107`.
_GATE_KEYWORD = re.compile(r"^(?:#\s*|\}\s*)?(?:else\s+)?(?:el)?if\b\s*")
_GATE_TAIL = re.compile(r"[\s{:]+$")


_GATE_COMMENT = re.compile(r"\s*(?:#|//).*$")
_GATE_KEY_QUOTES = "\"'"


def _gate_condition(code: str) -> str:
    """`if (x < 1) {` gives `x < 1`; a table entry `"10.7": {  # ...` gives `key:10.7`."""
    condition = _GATE_KEYWORD.match(code)
    if condition is None:
        key = _GATE_TAIL.sub("", code.split(":", 1)[0]).strip(_GATE_KEY_QUOTES)
        return f"key:{key[:40]}"
    text = _GATE_TAIL.sub("", _GATE_COMMENT.sub("", code[condition.end():]))
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text.strip()[:80]


def _performance_change(ctx: _Context) -> bool:
    """A change made for speed: tagged so, or posting performance numbers. Its behaviour
    is meant to stay the same, so the ask is its numbers (perf-claim-without-numbers),
    and the tests that already cover the path are the regression test."""
    body = ctx.body
    return (bool(body.perf_numbers or body.perf_sections)
            or ctx.rules.perf_title.search(ctx.facts.title) is not None)


def _release_branch(ctx: _Context) -> Risk | None:
    base = ctx.facts.base_ref
    if ctx.rules.release_branch.search(base) is not None:
        return _risk("release-branch", "high", [Clue(kind="base", text=base)], reason=base)
    match = _first_match(ctx.rules.backport, ctx.facts.title, ctx.body.text)
    if match is None:
        return None
    return _risk("release-branch", "high", _quotes([match]), reason=match)


def _large_diff(ctx: _Context) -> Risk | None:
    settings = ctx.rules.settings
    facts = ctx.facts
    lines = facts.total_additions + facts.total_deletions
    files = facts.total_changed_files
    if not (
        facts.files_truncated
        or lines > settings.large_diff_lines
        or files > settings.large_diff_files
    ):
        return None
    huge = (
        facts.files_truncated
        or lines > settings.huge_diff_lines
        or files > settings.huge_diff_files
    )
    add, delete = facts.total_additions, facts.total_deletions
    evidence = [Clue(kind="diff", numbers=(add, delete)), Clue(kind="files", numbers=(files,))]
    if facts.files_truncated:
        # GitHub's PR-files endpoint stops at 3000 files; say how many it listed.
        listed = len(facts.files)
        return _risk(
            "large-diff", "medium", evidence,
            listed=listed, files=files, additions=add, deletions=delete,
        )  # fmt: skip
    severity: Severity = "medium" if huge else "low"
    return _risk("large-diff", severity, evidence, files=files, additions=add, deletions=delete)


def _new_model_checklist(ctx: _Context) -> Risk | None:
    if not ctx.files:
        return None
    rules = ctx.rules
    present = {f.filename for f in ctx.files if f.status != "removed"}
    # A registry change adds an entry unless its patch shows otherwise (a rename, a fix).
    registry_files = ctx.selected(rules.model_registry)
    drafts = rules.settings.model_registry_draft_tables
    changed_registry = [f for f in ctx.files
                        if f.filename in present and f.filename in registry_files]
    registry = [f.filename for f in changed_registry
                if f.patch is None or _adds_servable_entry(f.patch, drafts)]
    model_files = ctx.selected(rules.model_files)
    # A model file the registry files only as a draft architecture is one too: the
    # registry's own patch says what the new file is.
    only_drafts = bool(changed_registry) and not registry and any(
        _adds_entry_under(f.patch or "", drafts) for f in changed_registry)
    added_models = [] if only_drafts else [
        f.filename for f in ctx.files if f.status == "added" and f.filename in model_files
    ]
    if not (registry or added_models):
        return None
    missing = [f for f in rules.settings.new_model_required_files if f not in present]
    if not missing:
        return None
    return _risk("new-model-checklist", "medium", _files(missing), missing=tuple(missing))


def _adds_servable_entry(patch: str, draft_tables: Sequence[str]) -> bool:
    """Whether a registry patch adds an entry outside the draft tables: git names the
    table a hunk sits in on its `@@` line (the nearest unindented line above it)."""
    return any(_REGISTRY_ENTRY.search(hunk) for hunk in _hunks(patch, draft_tables, False))


def _adds_entry_under(patch: str, draft_tables: Sequence[str]) -> bool:
    return any(_REGISTRY_ENTRY.search(hunk) for hunk in _hunks(patch, draft_tables, True))


def _hunks(patch: str, tables: Sequence[str], inside: bool) -> Iterator[str]:
    """The hunks whose `@@` line names one of `tables` (inside) or none of them."""
    for hunk in _HUNK_START.split(patch):
        header = hunk.split("\n", 1)[0]
        if any(table in header for table in tables) == inside:
            yield hunk


_HUNK_START = re.compile(r"(?m)^(?=@@)")


def _perf_claim_without_numbers(ctx: _Context) -> Risk | None:
    body = ctx.body
    if body.perf_numbers or body.perf_sections or body.eval_evidence:
        return None
    tag = ctx.rules.perf_title.search(ctx.facts.title)
    claims = ([tag] if tag else []) + list(body.perf_claims[:3])
    if not claims:
        return None
    return _risk("perf-claim-without-numbers", "medium", _quotes(claims))


def _hardware_unverified(ctx: _Context) -> Risk | None:
    if ctx.docs_ci_only:
        return None
    platforms: list[str] = []
    evidence: list[Clue] = []
    any_files = False
    for platform in ctx.rules.hardware:
        platform_files = ctx.selected(platform.paths)
        files = [
            f.filename
            for f in ctx.files
            if f.status != "removed"
            and f.filename in platform_files
            and f.filename not in ctx.test_files
        ] if platform_files else []  # most platforms touch none of a PR's 3,000 files
        titled = platform.title is not None and platform.title.search(ctx.facts.title) is not None
        if not files and not titled:
            continue
        named = _first_match(platform.hardware_names, ctx.body.text) is not None
        ci_run = platform.ci_link is not None and any(
            platform.ci_link.search(link) is not None for link in ctx.body.ci_links
        )
        if (named or ci_run) and not ctx.body.not_run:
            continue
        platforms.append(platform.name)
        any_files = any_files or bool(files)
        if not named:
            evidence.append(Clue(kind="platform", text=platform.name))
        evidence.extend(_files(files[:3]))
    if not platforms:
        return None
    # A platform tag in the title with no platform file behind it says less.
    return _risk(
        "hardware-unverified",
        "medium" if any_files else "low",
        [*_quotes(ctx.body.not_run[:3]), *evidence],
        platforms=tuple(platforms),
    )


# The build's states in which a step without a status did not run: done, or waiting
# on a block step with nothing else left to run.
_BUILD_SETTLED = frozenset({"blocked", "passed", "failed", "error"})
_NOT_RUN = frozenset({"not-run", "blocked", "pending"})


def _ordinary_device(device: str, patterns: Sequence[str]) -> bool:
    name = device.strip().lower()
    for pattern in patterns:
        wanted = pattern.strip().lower()
        if wanted.endswith("*") and name.startswith(wanted[:-1]):
            return True
        if wanted.startswith("*") and len(wanted) > 1 and name.endswith(wanted[1:]):
            return True
        if name == wanted:
            return True
    return False


def _special_hardware(step: CiStepRef, settings: RiskSettings) -> bool:
    return step.gpus > 1 or not _ordinary_device(step.device, settings.ci_ordinary_devices)


def _relevant_ci_not_run(ctx: _Context) -> Risk | None:
    """A step the change reaches through a narrow dependency, on special hardware, that
    the PR's build did not run on this head. Precision first: only when the build
    exists on the head and is done or blocked, its statuses were all read, and at
    least one of them named a step of the pipeline (so an absence means something;
    bot/core/repo_config/ci_status.py decides each step's status)."""
    plan = ctx.ci
    run = plan.run if plan is not None else None
    if plan is None or run is None or run.state not in _BUILD_SETTLED:
        return None
    if not run.complete or run.reported == 0:
        return None
    settings = ctx.rules.settings
    candidates = (*plan.steps, *(plan.optional if settings.ci_not_run_optional else ()))
    missing = sorted((s for s in candidates
                      if s.status in _NOT_RUN and _special_hardware(s, settings)),
                     key=lambda s: -s.specificity)
    if not missing:
        return None
    limit = settings.evidence_files
    evidence = [
        Clue(kind="ci-step", text=s.label, detail=s.status, device=s.device, numbers=(s.gpus,))
        for s in missing[:limit]
    ]
    return _risk("relevant-ci-not-run", "medium", evidence, count=len(missing), state=run.state)


_CHECKS: tuple[Callable[[_Context], Risk | None], ...] = (
    _missing_gpu_eval,
    _release_branch,
    _missing_test_results,
    _missing_tests,
    _new_model_checklist,
    _perf_claim_without_numbers,
    _hardware_unverified,
    _relevant_ci_not_run,
    _large_diff,
)
