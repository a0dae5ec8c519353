"""How well does the digest read vLLM's own config (CI pipeline, CODEOWNERS, Mergify)?

Run: python -m bench repo-config [--sdists DIR] [--size 90] [--seed 34] [--repeat 3]
     [--rebuild] [--json PATH]
     python -m bench repo-config --owners-bound   (CODEOWNERS cost only, no sdists: vLLM's
     file, the baseline, and a 5,000-glob bomb, in one run; issue 38, item 4)

Data: the PyPI source releases vllm 0.33.0 (the base) and 0.34.0 (the head) in DIR
(--sdists, else $PR_DIGEST_SDISTS, else the corpus cache's sdists/ that `python -m bench
corpus releases 0.33.0 0.34.0` fills), as vllm-VERSION.tar.gz (unpacked there on first
use, bench/sdists.py) or already unpacked vllm-VERSION/. Without them the bench says so
and exits 0: CI has no sdists.

The sample. There is no git history between two sdists, so a "change" is a cluster of
changed files that plausibly landed together, built deterministically from the file
diff of the two trees:

1. The changed files: every path whose bytes differ between the trees (`modified`), or
   that only one has (`added`, `removed`; no rename detection). Skipped: PKG-INFO,
   `*.egg-info/`, files over 1 MB and files that are not UTF-8 (GitHub gives them no
   patch). The list is sorted and shuffled with `random.Random(seed)`.
2. Walking that order, each path not yet used anchors one change:
   - a stem pair: a non-test `.py` whose module stem (`scheduler` for
     vllm/v1/core/sched/scheduler.py; generic stems such as `utils`, `__init__`, `base`
     and stems under 3 characters never pair) plus the changed tests named
     `test_<stem>.py` or `test_<stem>_*.py` (at most 3, sorted). A test anchor finds
     its source the same way, longest stem first. When several sources share a stem,
     a test goes to the one sharing the most directory names with it.
   - otherwise a directory cluster: the anchor plus 0, 0, 1 or 2 (drawn from the same
     RNG) other unused changed files of its directory.
3. Stop at `size` changes. Each file is `{filename, status, additions, deletions,
   patch}`, the patch made with `difflib.unified_diff(n=3)` and cut before the first
   `@@`, as GitHub's PR-files endpoint gives it. The title is plain, from the anchor's
   path ("Update scheduler.py and its tests", "Add foo.py and 2 more files"): no
   `[Tag]`, no body, no labels, author "contributor".
The sample is cached as JSON in DIR (`repo_config_sample.json`, keyed by versions, seed
and size; `--rebuild` remakes it).

Each change is digested twice in-process, rules loaded once: BEFORE =
`build_digest(facts, rules, "en")`, AFTER = the same with `repo_config=` the base's
config, read from the 0.33.0 checkout as `digest-bot digest --repo-dir` reads it
(`read_config_files(DirectorySource(...))` + `read_repo_config`). Both go through
`render_digest` and `digest_json`, and are scored from the JSON.

Truth, computed here from the base's files with the parsers alone (not the digest):
- CI: `select_steps(parse_pipeline(job files), paths).narrow` -- the steps the
  generator runs on the PR that a narrow dependency reached -- as (file, label).
  BEFORE predicts, for each of the digest's `ci_areas` (test-area stems from the
  hand-written rules), every step of `.buildkite/test_areas/<stem>.yaml` that runs on
  PRs (not nightly, not optional). AFTER predicts the JSON's `ci.steps[]` (file, label);
  a JSON without `ci` predicts nothing. "Nameable test-area files": BEFORE, the test
  areas that any rule lists; AFTER, the test-area files with a PR step (not nightly,
  not optional) that has a narrow dependency, which `ci.steps` can list.
- Owners: `owners_for(parse_codeowners(.github/CODEOWNERS), paths)`, users and teams,
  case-insensitive. BEFORE names the reviewer pools' people (JSON `reviewers`, the
  routing the rules give); AFTER names JSON `owners.users` + `owners.teams`. Changes
  nobody owns are left out.
- Areas: `predict_labels(parse_mergify(.github/mergify.yml), ...)` on the change (title,
  files, added files), mapped to area ids by LABEL_TO_AREA below (only topics both
  vocabularies cover). Recall of JSON `areas[].id` against the mapped labels; precision
  only among the areas in the mapping's image. Note: AFTER feeds the Mergify labels to
  the area rules as label signals, so an area whose rule reads that label agrees with
  the truth by construction; the row measures that wiring, not independent evidence.
- Model changes: the share of changes touching vllm/models/** or
  vllm/model_executor/models/** that get any area at all.

Also measured: GitHub API calls to read the config at a base commit
(`config_at_base` over the in-memory fake GitHub, the base's .github/ and .buildkite/
trees as a commit): cold, warm same base, warm new base (0.34.0's config), warm new
base with only code changed; and the median (and p90) time of one digest (build +
render + JSON) before and after, `--repeat` timed runs each, alternated.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import sdists
from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import render_digest
from bot.core.render.contract import digest_json
from bot.core.repo_config.codeowners import CodeOwners, owners_for, parse_codeowners
from bot.core.repo_config.config import RepoConfig, read_repo_config
from bot.core.repo_config.files import CODEOWNERS_PATHS, MERGIFY_PATHS, ConfigFiles
from bot.core.repo_config.mergify import (
    LabelInput,
    MergifyLabels,
    parse_mergify,
    predict_labels,
)
from bot.core.repo_config.pipeline import (
    CI_CONFIG_PATH,
    CiStep,
    Pipeline,
    is_broad,
    parse_pipeline,
    select_steps,
)
from bot.core.rules import RuleSet
from bot.handlers.repo_config import (
    DirectorySource,
    GitObjectCache,
    config_at_base,
    read_config_files,
)
from bot.rulebook.files import load_rules

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
BASE_VERSION = "0.33.0"
HEAD_VERSION = "0.34.0"
SEED = 34
SAMPLE_SIZE = 90
SAMPLE_FORMAT = 1
SAMPLE_NAME = "repo_config_sample.json"
REPO = "vllm-project/vllm"
TEST_AREAS_DIR = ".buildkite/test_areas/"
MODEL_DIRS = ("vllm/models/", "vllm/model_executor/models/")

MAX_FILE_BYTES = 1024 * 1024
MAX_TESTS = 3
# Stems too common to say which test belongs to which module.
GENERIC_STEMS = frozenset({
    "__init__", "__main__", "utils", "util", "common", "base", "config", "conftest",
    "types", "interface", "interfaces", "layer", "layers", "ops", "main", "core",
    "models", "model", "registry", "helpers", "constants", "api", "abstract", "test",
})  # fmt: skip

# Mergify label -> our area id (rules/*.yaml), only where both name the same topic.
# Left out on purpose: the model-family labels (qwen, llama, deepseek, mistral, ...:
# Mergify also puts them on tool parsers, tests and examples, which our `model` area
# does not claim), nvidia (our `hardware` is the non-CUDA platforms), performance,
# bug, pooling, rust, recipe, ray, mrv2, vllm-ir and the state labels.
LABEL_TO_AREA: dict[str, str] = {
    "documentation": "docs",
    "ci/build": "ci",
    "frontend": "frontend",
    "tool-calling": "frontend",
    "multi-modality": "multimodal",
    "new-model": "new-model",
    "quantization": "quantization",
    "speculative-decoding": "spec-decode",
    "dflash": "spec-decode",
    "structured-output": "structured-output",
    "torch.compile": "compile",
    "rocm": "hardware",
    "cpu": "hardware",
    "tpu": "hardware",
    "intel-gpu": "hardware",
    "kv-connector": "distributed",
    "mooncake": "distributed",
    "scheduler": "core",
    "kv-cache-manager": "core",
}
MAPPED_AREAS = frozenset(LABEL_TO_AREA.values())


# --- the sample ------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    filename: str
    status: str  # added | removed | modified
    additions: int
    deletions: int
    patch: str


@dataclass(frozen=True)
class Change:
    name: str
    number: int
    title: str
    kind: str  # "stem" | "dir"
    files: tuple[FileChange, ...]

    def facts(self) -> PullRequestFacts:
        return PullRequestFacts(
            repo=REPO,
            number=self.number,
            title=self.title,
            author="contributor",
            files=tuple(
                ChangedFile(
                    filename=f.filename,
                    status=f.status,
                    additions=f.additions,
                    deletions=f.deletions,
                    patch=f.patch or None,
                )
                for f in self.files
            ),
        )

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.filename for f in self.files)


def _ignored(path: str) -> bool:
    return path == "PKG-INFO" or ".egg-info/" in path


def _text_files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for directory, _dirs, names in os.walk(root):
        for name in names:
            full = Path(directory, name)
            rel = full.relative_to(root).as_posix()
            if _ignored(rel) or full.is_symlink() or full.stat().st_size > MAX_FILE_BYTES:
                continue
            data = full.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            out[rel] = data
    return out


def changed_files(base: Path, head: Path) -> dict[str, str]:
    """path -> status for every text file that differs between the two trees, sorted."""
    old, new = _text_files(base), _text_files(head)
    status: dict[str, str] = {}
    for path in sorted(old.keys() | new.keys()):
        if path not in old:
            status[path] = "added"
        elif path not in new:
            status[path] = "removed"
        elif old[path] != new[path]:
            status[path] = "modified"
    return status


def file_patch(before: str, after: str) -> tuple[str, int, int]:
    """GitHub-style hunks (from the first `@@`, 3 lines of context), additions, deletions."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=3))
    hunks = lines[2:] if len(lines) >= 2 and lines[0].startswith("---") else lines
    additions = sum(1 for x in hunks if x.startswith("+"))
    deletions = sum(1 for x in hunks if x.startswith("-"))
    return "\n".join(hunks), additions, deletions


def _is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") and name.startswith("test_") and name.endswith(".py")


def _stem(path: str) -> str | None:
    """The module stem a source file pairs on, or None (tests, non-Python, generic)."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py") or path.startswith("tests/"):
        return None
    stem = name[: -len(".py")]
    return stem if len(stem) >= 3 and stem not in GENERIC_STEMS else None


def _test_stems(path: str) -> list[str]:
    """The stems a test file can pair with, longest first: test_a_b.py -> a_b, a."""
    name = path.rsplit("/", 1)[-1][len("test_") : -len(".py")]
    parts = name.split("_")
    stems = ["_".join(parts[:i]) for i in range(len(parts), 0, -1)]
    return [s for s in stems if len(s) >= 3 and s not in GENERIC_STEMS]


def _shared_dirs(a: str, b: str) -> int:
    skip = {"tests", "vllm"}
    return len((set(a.split("/")[:-1]) - skip) & (set(b.split("/")[:-1]) - skip))


def _best_source(test: str, sources: Sequence[str]) -> str:
    return max(sorted(sources), key=lambda s: _shared_dirs(test, s))


def _title(anchor: str, status: str, others: int, kind: str) -> str:
    verb = {"added": "Add", "removed": "Remove"}.get(status, "Update")
    name = anchor.rsplit("/", 1)[-1]
    if others == 0:
        return f"{verb} {name}"
    if kind == "stem":
        return f"{verb} {name} and its tests"
    return f"{verb} {name} and {others} more file{'s' if others > 1 else ''}"


def cluster(status: Mapping[str, str], *, size: int, seed: int) -> list[tuple[str, list[str]]]:
    """[(kind, paths)]: the changes of the sample, anchor first (see the docstring)."""
    paths = sorted(status)
    rng = random.Random(seed)
    order = list(paths)
    rng.shuffle(order)
    sources: dict[str, list[str]] = {}
    tests: dict[str, list[str]] = {}
    by_dir: dict[str, list[str]] = {}
    for path in paths:
        by_dir.setdefault(path.rpartition("/")[0], []).append(path)
        stem = _stem(path)
        if stem:
            sources.setdefault(stem, []).append(path)
    for path in paths:
        if _is_test(path):
            for stem in _test_stems(path):
                if stem in sources:
                    tests.setdefault(stem, []).append(path)
                    break
    used: set[str] = set()
    out: list[tuple[str, list[str]]] = []

    def tests_of(source: str, stem: str) -> list[str]:
        mine = [
            t
            for t in tests.get(stem, ())
            if t not in used and _best_source(t, sources[stem]) == source
        ]
        return mine[:MAX_TESTS]

    for anchor in order:
        if len(out) >= size:
            break
        if anchor in used:
            continue
        group: list[str] = []
        kind = "dir"
        stem = _stem(anchor)
        if stem and tests_of(anchor, stem):
            group, kind = [anchor, *tests_of(anchor, stem)], "stem"
        elif _is_test(anchor):
            for candidate in _test_stems(anchor):
                free = [s for s in sources.get(candidate, ()) if s not in used]
                if free:
                    source = _best_source(anchor, free)
                    mine = [t for t in tests_of(source, candidate) if t != anchor]
                    group, kind = [source, anchor, *mine[: MAX_TESTS - 1]], "stem"
                    break
        if not group:
            siblings = [
                p for p in by_dir[anchor.rpartition("/")[0]] if p != anchor and p not in used
            ]
            extra = rng.choice((0, 0, 1, 2))
            group = [anchor, *rng.sample(siblings, min(extra, len(siblings)))]
        used.update(group)
        out.append((kind, group))
    return out


def build_sample(
    base: Path, head: Path, *, size: int = SAMPLE_SIZE, seed: int = SEED
) -> list[Change]:
    status = changed_files(base, head)
    changes: list[Change] = []
    for number, (kind, group) in enumerate(cluster(status, size=size, seed=seed), start=1):
        files: list[FileChange] = []
        for path in group:
            old = (base / path).read_text("utf-8") if status[path] != "added" else ""
            new = (head / path).read_text("utf-8") if status[path] != "removed" else ""
            patch, additions, deletions = file_patch(old, new)
            files.append(FileChange(path, status[path], additions, deletions, patch))
        title = _title(group[0], status[group[0]], len(group) - 1, kind)
        changes.append(Change(f"c{number:03d}", number, title, kind, tuple(files)))
    return changes


def _sample_key(size: int, seed: int) -> dict[str, Any]:
    return {
        "format": SAMPLE_FORMAT,
        "base": BASE_VERSION,
        "head": HEAD_VERSION,
        "size": size,
        "seed": seed,
    }


def load_or_build_sample(
    base: Path,
    head: Path,
    cache: Path,
    *,
    size: int = SAMPLE_SIZE,
    seed: int = SEED,
    rebuild: bool = False,
) -> tuple[list[Change], bool]:
    """The sample from `cache` when it was made with these settings, else built and
    written there. Returns (changes, built)."""
    key = _sample_key(size, seed)
    if cache.is_file() and not rebuild:
        try:
            data = json.loads(cache.read_text("utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data.get("key") == key:
            return [_change_from_json(c) for c in data["changes"]], False
    changes = build_sample(base, head, size=size, seed=seed)
    cache.write_text(
        json.dumps({"key": key, "changes": [asdict(c) for c in changes]}, indent=1), "utf-8"
    )
    return changes, True


def _change_from_json(raw: Mapping[str, Any]) -> Change:
    return Change(
        raw["name"],
        raw["number"],
        raw["title"],
        raw["kind"],
        tuple(FileChange(**f) for f in raw["files"]),
    )


# --- truth and predictions -------------------------------------------------------------


StepId = tuple[str, str]  # (job file, label)


def _step_id(step: CiStep) -> StepId:
    return step.file, step.label


def _runs_on_prs(step: CiStep) -> bool:
    return not step.nightly and not step.optional


@dataclass(frozen=True)
class Truth:
    steps: frozenset[StepId]
    owners: frozenset[str]  # casefolded logins and org/team names
    labels: tuple[str, ...]
    areas: frozenset[str]  # the labels mapped to area ids


def label_input(change: Change) -> LabelInput:
    return LabelInput(
        title=change.title,
        body="",
        files=change.paths,
        added_files=tuple(f.filename for f in change.files if f.status == "added"),
        labels=(),
        changed_files=len(change.files),
    )


@dataclass(frozen=True)
class BaseFiles:
    """The base's config parsed straight from its files, for the truth: not through the
    config walk or the digest."""

    pipeline: Pipeline | None
    codeowners: CodeOwners | None
    mergify: MergifyLabels | None


def read_base_files(root: Path) -> BaseFiles:
    """Every .buildkite/**/*.yaml (parse_pipeline keeps the job dirs' files, at any
    depth, as the generator's os.walk does), the first CODEOWNERS and mergify.yml."""
    buildkite = root / ".buildkite"
    ci = (
        {
            p.relative_to(root).as_posix(): p.read_text("utf-8")
            for p in sorted(buildkite.rglob("*.yaml"))
            if p.is_file()
        }
        if buildkite.is_dir()
        else {}
    )
    pipeline = parse_pipeline(ci) if CI_CONFIG_PATH in ci else None

    def first(paths: Sequence[str]) -> tuple[str, str] | None:
        for path in paths:
            if (root / path).is_file():
                return path, (root / path).read_text("utf-8")
        return None

    owners = first(CODEOWNERS_PATHS)
    mergify = first(MERGIFY_PATHS)
    return BaseFiles(
        pipeline=pipeline,
        codeowners=parse_codeowners(owners[1], source=owners[0]) if owners else None,
        mergify=parse_mergify(mergify[1], source=mergify[0]) if mergify else None,
    )


def truth_for(change: Change, base: BaseFiles) -> Truth:
    steps: frozenset[StepId] = frozenset()
    if base.pipeline is not None:
        selection = select_steps(base.pipeline, change.paths)
        steps = frozenset(_step_id(m.step) for m in selection.narrow)
    owners: frozenset[str] = frozenset()
    if base.codeowners is not None:
        found = owners_for(base.codeowners, change.paths)
        owners = frozenset(x.casefold() for x in (*found.users, *found.teams))
    labels: tuple[str, ...] = ()
    if base.mergify is not None:
        predicted = predict_labels(base.mergify, label_input(change))
        labels = tuple(dict.fromkeys(p.label for p in predicted))
    areas = frozenset(LABEL_TO_AREA[x] for x in labels if x in LABEL_TO_AREA)
    return Truth(steps, owners, labels, areas)


def area_steps(pipeline: Pipeline | None, stems: Iterable[str]) -> frozenset[StepId]:
    """What naming test areas predicts: every PR step of each named test-area file."""
    if pipeline is None:
        return frozenset()
    files = {f"{TEST_AREAS_DIR}{stem}.yaml" for stem in stems}
    return frozenset(_step_id(s) for s in pipeline.steps if s.file in files and _runs_on_prs(s))


def json_steps(payload: Mapping[str, Any]) -> frozenset[StepId] | None:
    """The JSON's `ci.steps` as (file, label); None when the digest has no `ci` key."""
    ci = payload.get("ci")
    if not isinstance(ci, Mapping):
        return None
    steps = ci.get("steps") or ()
    return frozenset(
        (str(s.get("file", "")), str(s.get("label", ""))) for s in steps if isinstance(s, Mapping)
    )


def json_owners(payload: Mapping[str, Any], key: str) -> frozenset[str]:
    found = payload.get(key)
    if not isinstance(found, Mapping):
        return frozenset()
    return frozenset(str(x).casefold() for x in (*found.get("users", ()), *found.get("teams", ())))


def json_areas(payload: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(a["id"]) for a in payload.get("areas") or () if "id" in a)


def test_area_files(pipeline: Pipeline | None) -> frozenset[str]:
    if pipeline is None:
        return frozenset()
    return frozenset(s.file for s in pipeline.steps if s.file.startswith(TEST_AREAS_DIR))


def nameable_after(pipeline: Pipeline | None) -> frozenset[str]:
    """Test-area files `ci.steps` can list: a PR step with a narrow dependency."""
    if pipeline is None:
        return frozenset()
    return frozenset(
        s.file
        for s in pipeline.steps
        if s.file.startswith(TEST_AREAS_DIR)
        and _runs_on_prs(s)
        and any(not is_broad(d) for d in s.dependencies)
    )


def nameable_before(rules: RuleSet, pipeline: Pipeline | None) -> frozenset[str]:
    """Test-area files some rule's `ci_areas` names (and the base has)."""
    named = {f"{TEST_AREAS_DIR}{stem}.yaml" for area in rules.areas for stem in area.ci_areas}
    return frozenset(named & test_area_files(pipeline))


# --- scoring ---------------------------------------------------------------------------


@dataclass
class SetScore:
    """Micro-averaged set agreement over the changes."""

    hits: int = 0
    truth: int = 0
    predicted: int = 0
    all_named: int = 0  # changes whose whole truth set was named
    any_named: int = 0
    cases: int = 0  # changes with a non-empty truth set

    def add(self, truth: frozenset[object], predicted: frozenset[object]) -> None:
        hit = len(truth & predicted)
        self.hits += hit
        self.truth += len(truth)
        self.predicted += len(predicted)
        if truth:
            self.cases += 1
            self.all_named += hit == len(truth)
            self.any_named += hit > 0

    @property
    def recall(self) -> float | None:
        return self.hits / self.truth if self.truth else None

    @property
    def precision(self) -> float | None:
        return self.hits / self.predicted if self.predicted else None


@dataclass
class Side:
    ci: SetScore = field(default_factory=SetScore)
    owners: SetScore = field(default_factory=SetScore)
    areas: SetScore = field(default_factory=SetScore)
    areas_mapped: SetScore = field(default_factory=SetScore)  # predictions in MAPPED_AREAS
    models_with_area: int = 0
    test_areas_named: set[str] = field(default_factory=set)
    times: list[float] = field(default_factory=list)


@dataclass
class Report:
    changes: int
    files: int
    kinds: dict[str, int]
    model_changes: int
    before: Side
    after: Side
    nameable_before: int
    nameable_after: int
    test_area_total: int
    ci_key_missing: int = 0
    api_calls: dict[str, int] = field(default_factory=dict)
    config_read_ms: float = 0.0
    config_summary: str = ""


def _touches_models(change: Change) -> bool:
    return any(p.startswith(MODEL_DIRS) for p in change.paths)


def _digest(
    facts: PullRequestFacts, rules: RuleSet, config: RepoConfig | None
) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    digest = build_digest(facts, rules, "en", repo_config=config)
    payload = digest_json(digest, render_digest(digest))
    return payload, time.perf_counter() - start


def measure(
    changes: Sequence[Change],
    rules: RuleSet,
    config: RepoConfig,
    base: BaseFiles,
    *,
    repeat: int = 1,
) -> Report:
    """Score BEFORE (no config) and AFTER (`config`) digests against `base`'s truth."""
    pipeline = base.pipeline
    before, after = Side(), Side()
    report = Report(
        changes=len(changes),
        files=sum(len(c.files) for c in changes),
        kinds={k: sum(1 for c in changes if c.kind == k) for k in ("stem", "dir")},
        model_changes=sum(1 for c in changes if _touches_models(c)),
        before=before,
        after=after,
        nameable_before=len(nameable_before(rules, pipeline)),
        nameable_after=len(nameable_after(pipeline)),
        test_area_total=len(test_area_files(pipeline)),
    )
    for change in changes:
        facts = change.facts()
        truth = truth_for(change, base)
        was, now = _digest(facts, rules, None), _digest(facts, rules, config)
        for _ in range(max(0, repeat - 1)):  # further timed runs, alternated
            before.times.append(_digest(facts, rules, None)[1])
            after.times.append(_digest(facts, rules, config)[1])
        before.times.append(was[1])
        after.times.append(now[1])
        old, new = was[0], now[0]

        predicted_before = area_steps(pipeline, old.get("ci_areas") or ())
        predicted_after = json_steps(new)
        if predicted_after is None:
            report.ci_key_missing += 1
            predicted_after = frozenset()
        before.ci.add(truth.steps, predicted_before)
        after.ci.add(truth.steps, predicted_after)
        before.test_areas_named.update(f for f, _ in predicted_before)
        after.test_areas_named.update(f for f, _ in predicted_after if f.startswith(TEST_AREAS_DIR))

        if truth.owners:
            before.owners.add(truth.owners, json_owners(old, "reviewers"))
            after.owners.add(truth.owners, json_owners(new, "owners"))

        for side, payload in ((before, old), (after, new)):
            areas = json_areas(payload)
            side.areas.add(truth.areas, areas)
            side.areas_mapped.add(truth.areas, areas & MAPPED_AREAS)
            if _touches_models(change) and areas:
                side.models_with_area += 1
    return report


# --- the API calls ---------------------------------------------------------------------


def _config_commit(root: Path, **overrides: bytes) -> dict[str, bytes]:
    """The tree's .github/ and .buildkite/ folders and its top-level files, as a commit."""
    files: dict[str, bytes] = {}
    for directory in (".github", ".buildkite"):
        for path in sorted((root / directory).rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    for path in sorted(root.iterdir()):
        if path.is_file() and not path.is_symlink() and not _ignored(path.name):
            files[path.name] = path.read_bytes()
    files.update(overrides)
    return files


async def api_calls(base: Path, head: Path) -> dict[str, int]:
    """GitHub calls `config_at_base` makes: cold, warm same base, warm new bases."""
    from tests.fakes.github_memory import MemoryGitHub
    from tests.fakes.github_state import FakeGitHubState

    state = FakeGitHubState()
    base_files = _config_commit(base)
    first = state.add_commit(REPO, base_files)
    code_only = state.add_commit(REPO, {**base_files, "vllm/__init__.py": b"# moved\n"})
    newer = state.add_commit(REPO, _config_commit(head))
    gh, cache = MemoryGitHub(state), GitObjectCache()
    calls: dict[str, int] = {}
    _, calls["cold"] = await config_at_base(gh, REPO, first, cache)
    _, calls["warm, same base"] = await config_at_base(gh, REPO, first, cache)
    _, calls["warm, new base, code only"] = await config_at_base(gh, REPO, code_only, cache)
    _, calls[f"warm, new base ({HEAD_VERSION} config)"] = await config_at_base(
        gh, REPO, newer, cache
    )
    return calls


# --- CODEOWNERS bound ------------------------------------------------------------------

FIXTURE_CONFIG = ROOT / "tests" / "fixtures" / "vllm_config" / "0.34.0"
BOMB_RULES = 5_000
BOMB_FILES = 3_000


def glob_bomb(rules: int = BOMB_RULES) -> str:
    """A CODEOWNERS of `rules` distinct `**` globs that no path matches, each of which
    every path must still be asked about: no literal prefix, no literal last component
    (issue 38, item 4)."""
    return "".join(f"**/v*{i}q*/** @bomb{i}\n" for i in range(rules))


@dataclass(frozen=True)
class OwnersBound:
    """One config's CODEOWNERS cost on a `BOMB_FILES`-file PR, in seconds."""

    name: str
    rules: int
    parse_s: float  # parse_codeowners: every pattern compiled
    digest_s: float  # build_digest + render + JSON, owners included
    owned: int
    unmatched: int


def owners_bound(codeowners_text: str, name: str, rules: RuleSet) -> OwnersBound:
    """Parse `codeowners_text` beside vLLM's other config files (the fixture's) and
    digest a synthetic 3,000-file vLLM PR (bench/bench_match.py) with it."""
    from bench.bench_match import synthetic_pr

    files = asyncio.run(read_config_files(DirectorySource(FIXTURE_CONFIG), "fixture 0.34.0"))
    texts = {**files.texts, CODEOWNERS_PATHS[0]: codeowners_text}
    start = time.perf_counter()
    config = read_repo_config(ConfigFiles(source=files.source, texts=texts))
    parsed = time.perf_counter()
    payload, digest_s = _digest(synthetic_pr(BOMB_FILES), rules, config)
    owners = payload.get("owners") or {}
    return OwnersBound(
        name=name,
        rules=len(config.codeowners.rules) if config.codeowners else 0,
        parse_s=parsed - start,
        digest_s=digest_s,
        owned=len(owners.get("by_file") or {}),
        unmatched=int(owners.get("unmatched_files") or 0),
    )


def run_owners_bound(rules_dir: Path = RULES_DIR) -> list[OwnersBound]:
    """vLLM's real CODEOWNERS (the baseline) and the glob bomb, in the same run."""
    rules = load_rules(rules_dir)
    real = (FIXTURE_CONFIG / CODEOWNERS_PATHS[0]).read_text("utf-8")
    return [owners_bound(real, "vLLM 0.34.0 CODEOWNERS", rules),
            owners_bound(glob_bomb(), f"glob bomb ({BOMB_RULES:,} `**` globs)", rules)]


def format_owners_bound(rows: Sequence[OwnersBound]) -> list[str]:
    lines = [f"CODEOWNERS on a {BOMB_FILES:,}-file PR (parse once per base; digest per PR):"]
    lines += [
        f"  {r.name}: {r.rules:,} rules, parse {r.parse_s:.2f} s, digest {r.digest_s:.2f} s, "
        f"{r.owned:,} files owned, {r.unmatched:,} past the budget"
        for r in rows
    ]
    return lines


# --- report ----------------------------------------------------------------------------


def read_base_config(base: Path) -> tuple[ConfigFiles, RepoConfig, float]:
    """The base checkout's config as `digest --repo-dir` reads it, and the seconds taken."""
    start = time.perf_counter()
    files = asyncio.run(read_config_files(DirectorySource(base), f"checkout {base}"))
    config = read_repo_config(files)
    return files, config, time.perf_counter() - start


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole * 100:.0f}%)" if whole else "0/0"


def _p90(times: Sequence[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))] if ordered else 0.0


def _ms(times: Sequence[float], how: str) -> str:
    if not times:
        return "n/a"
    value = statistics.median(times) if how == "median" else _p90(times)
    return f"{value * 1000:.2f} ms"


def format_report(report: Report) -> list[str]:
    b, a = report.before, report.after
    rows: list[tuple[str, str, str]] = [
        (
            f"CI steps recall (truth {b.ci.truth} steps in {b.ci.cases} changes)",
            _pct(b.ci.recall),
            _pct(a.ci.recall),
        ),
        ("CI steps precision", _pct(b.ci.precision), _pct(a.ci.precision)),
        ("CI steps predicted (total)", str(b.ci.predicted), str(a.ci.predicted)),
        (
            "CI: changes with every true step named",
            _share(b.ci.all_named, b.ci.cases),
            _share(a.ci.all_named, a.ci.cases),
        ),
        (
            f"test-area files ever nameable (of {report.test_area_total})",
            _share(report.nameable_before, report.test_area_total),
            _share(report.nameable_after, report.test_area_total),
        ),
        (
            "test-area files named in this sample",
            str(len(b.test_areas_named)),
            str(len(a.test_areas_named)),
        ),
        (
            f"owners: changes with all owners named (of {b.owners.cases} owned)",
            _share(b.owners.all_named, b.owners.cases),
            _share(a.owners.all_named, a.owners.cases),
        ),
        (
            "owners: changes with any owner named",
            _share(b.owners.any_named, b.owners.cases),
            _share(a.owners.any_named, a.owners.cases),
        ),
        (
            "owners: owner slots named",
            _share(b.owners.hits, b.owners.truth),
            _share(a.owners.hits, a.owners.truth),
        ),
        (
            f"areas recall vs mapped Mergify labels ({b.areas.truth} in {b.areas.cases} changes)",
            _pct(b.areas.recall),
            _pct(a.areas.recall),
        ),
        (
            "areas precision, mapped vocabulary only",
            _pct(b.areas_mapped.precision),
            _pct(a.areas_mapped.precision),
        ),
        (
            f"model changes with any area (of {report.model_changes})",
            _share(b.models_with_area, report.model_changes),
            _share(a.models_with_area, report.model_changes),
        ),
        (
            f"time per digest, median ({len(b.times)} runs)",
            _ms(b.times, "median"),
            _ms(a.times, "median"),
        ),
        ("time per digest, p90", _ms(b.times, "p90"), _ms(a.times, "p90")),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [
        f"changes: {report.changes} ({report.kinds.get('stem', 0)} source+tests, "
        f"{report.kinds.get('dir', 0)} directory clusters), {report.files} files; "
        f"{report.model_changes} touch model code",
        f"config: {report.config_summary}; read + parse {report.config_read_ms:.0f} ms",
        "",
        f"{'metric':<{width}}  {'before':>14}  {'after':>14}",
    ]
    lines += [f"{name:<{width}}  {was:>14}  {now:>14}" for name, was, now in rows]
    if report.ci_key_missing:
        lines.append(
            f"note: {report.ci_key_missing} AFTER digests had no `ci` key (counted as no steps)"
        )
    if report.api_calls:
        lines.append("")
        lines.append("GitHub API calls to read the config at a base (config_at_base, fake):")
        lines += [f"  {name}: {count}" for name, count in report.api_calls.items()]
    return lines


def _summary(files: ConfigFiles, config: RepoConfig) -> str:
    steps = len(config.pipeline.steps) if config.pipeline else 0
    owners = len(config.codeowners.rules) if config.codeowners else 0
    labels = len(config.mergify.rules) if config.mergify else 0
    return (
        f"{len(files.texts)} files, {steps} CI steps, {owners} CODEOWNERS rules, "
        f"{labels} Mergify rules, {len(config.problems)} problems"
    )


def run(
    base: Path,
    head: Path,
    cache: Path,
    *,
    size: int,
    seed: int,
    repeat: int,
    rebuild: bool,
    rules_dir: Path = RULES_DIR,
    with_api: bool = True,
) -> Report:
    changes, built = load_or_build_sample(base, head, cache, size=size, seed=seed, rebuild=rebuild)
    print(f"sample: {cache} ({'built' if built else 'cached'}, seed {seed})")
    rules = load_rules(rules_dir)
    files, config, seconds = read_base_config(base)
    if config.codeowners is None or config.pipeline is None or config.mergify is None:
        print("warning: the base lacks CODEOWNERS, the pipeline or mergify.yml", file=sys.stderr)
    report = measure(changes, rules, config, read_base_files(base), repeat=repeat)
    report.config_read_ms = seconds * 1000
    report.config_summary = _summary(files, config)
    if with_api:
        report.api_calls = asyncio.run(api_calls(base, head))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench repo-config",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--sdists",
        type=Path,
        default=None,
        help=f"folder of vllm-0.33.0 and vllm-0.34.0 (.tar.gz or unpacked; default "
        f"${sdists.ENV}, else the corpus cache's sdists/)",
    )
    parser.add_argument("--size", type=int, default=SAMPLE_SIZE)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeat", type=int, default=3, help="timed digests per change")
    parser.add_argument("--rebuild", action="store_true", help="remake the cached sample")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    parser.add_argument("--owners-bound", action="store_true",
                        help="only the CODEOWNERS cost: vLLM's file and a glob bomb")
    args = parser.parse_args(argv)
    if args.owners_bound:
        for line in format_owners_bound(run_owners_bound()):
            print(line)
        return 0
    folder = args.sdists or sdists.sdists_dir()
    base = sdists.release_tree(BASE_VERSION, folder)
    head = sdists.release_tree(HEAD_VERSION, folder)
    if base is None or head is None:
        print("repo-config bench skipped: "
              + sdists.missing_message(BASE_VERSION, HEAD_VERSION, folder=folder))
        return 0
    print(
        f"== repo config: vLLM {BASE_VERSION} (base) -> {HEAD_VERSION}, "
        f"before = no repo config, after = the base's =="
    )
    report = run(
        base,
        head,
        folder / SAMPLE_NAME,
        size=args.size,
        seed=args.seed,
        repeat=args.repeat,
        rebuild=args.rebuild,
    )
    for line in format_report(report):
        print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(_report_json(report), indent=1), "utf-8")
    return 0


def _report_json(report: Report) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {
            "ci": asdict(s.ci),
            "owners": asdict(s.owners),
            "areas": asdict(s.areas),
            "areas_mapped": asdict(s.areas_mapped),
            "models_with_area": s.models_with_area,
            "test_areas_named": sorted(s.test_areas_named),
            "median_ms": statistics.median(s.times) * 1000 if s.times else None,
        }

    return {
        "changes": report.changes,
        "files": report.files,
        "kinds": report.kinds,
        "model_changes": report.model_changes,
        "before": side(report.before),
        "after": side(report.after),
        "nameable_before": report.nameable_before,
        "nameable_after": report.nameable_after,
        "test_area_total": report.test_area_total,
        "ci_key_missing": report.ci_key_missing,
        "api_calls": report.api_calls,
        "config_read_ms": report.config_read_ms,
        "config": report.config_summary,
    }


if __name__ == "__main__":
    sys.exit(main())
