"""Which Buildkite CI steps a PR runs, by the step selection of vLLM's pipeline generator.

This follows vllm-project/ci-infra `buildkite/pipeline_generator` (snapshot of
2026-08-21, commit 3e4cfe4): `global_config.py` (config, run-all), `step.py` (job files),
`buildkite_step.py` (`_step_should_run`, `_source_file_dependencies_match`, the AMD
mirrors), `amd.py` and `pipeline_generator.py` (the docs-only skip). Its rules:

- `.buildkite/ci_config.yaml` names `job_dirs`; every file ending `.yaml` under each of
  them, at any depth (`os.walk`), is a job file: `group`, maybe `depends_on`, `steps`.
  `ci_config_rocm.yaml` and `ci_config_intel.yaml` configure separate pipelines (the
  ROCm one, and Intel's through ci-infra's `bootstrap-intel.sh`). Intel's is read as a
  second pipeline by the same rules (`parse_pipeline(files, INTEL_CI_CONFIG_PATH)`): its
  own `job_dirs`, `run_all_patterns` and `run_all_exclude_patterns`, its steps marked
  `platform="intel"`; the ROCm one is not read (its steps are the main config's mirrors).
- When a file has a `depends_on`, the generator appends the file's own path
  (".buildkite/test_areas/attention.yaml") to the `source_file_dependencies` of *every*
  step in it, so editing a job file runs its steps.
- A dependency matches a changed path equal to it or under it at a `/` boundary, after
  trailing `/` are dropped: `vllm/lora` matches `vllm/lora/x.py`, not `vllm/lora_x.py`.
  (Until ci-infra #347, 2026-06, it was a substring test.) An entry starting with `!`
  (ci-infra #450, 2026-08) excludes: a path it matches counts for none of that step's
  entries, and for no other step. Patterns such as `*` are not globs: the generator
  compares them literally (reported as a problem).
- A step with no dependencies at all never runs by itself (it becomes a block step);
  in a file with `depends_on` it has one, its file's path.
- `optional: true` steps become block steps that wait for a manual unblock, even when
  run-all holds; only NIGHTLY=1 (or the `ready-run-all-tests` label) runs them.
- A changed path matching a `run_all_patterns` regex (Python `re.match`: anchored at
  the start, not the end) and no `run_all_exclude_patterns` one runs every step that is
  not optional.
- Steps keyed `image-build*`, `ensure-ci-base-amd` or `refresh-rocm-base-amd` always run,
  optional or not (`_step_should_run` asks the key first).
- A native AMD GPU step (`dind: false`) also runs when the AMD test wrapper
  `.buildkite/scripts/hardware_ci/run-amd-test.sh` changes; an AMD mirror also runs,
  optional or not, when `docker/Dockerfile.rocm_base` changes.
- A PR whose every path is under `docs/`, ends in `.md` or is `mkdocs.yaml` runs nothing
  (unless run-all holds); an empty one is not docs-only.
- `mirror: {amd: {...}}` makes a second step, keyed `amd-<key>`: its own `device`,
  `label` (else "AMD: <label> (<device>)"), `optional` (else the step's; an explicit
  null is not optional), GPU count (`num_devices`, `num_gpus`, else the step's
  `num_devices`; an AMD device `miNNN_K` has K GPUs), and as dependencies its own
  `source_file_dependencies` followed by the step's (with the file's path). Other
  mirror kinds are not built by the generator; nor is a mirror of a step that itself
  runs on an AMD GPU (that step becomes its AMD step and the loop moves on). Both are
  reported as problems.
- A step's own GPU count is its `num_devices` (Step has no `num_gpus`, and pydantic
  drops keys it does not know), 1 when unstated; 0 with `no_gpu`, on a CPU device
  (`cpu`, `cpu-small`, `cpu-medium`, `intel_cpu`, `arm_cpu`, `amd_cpu`, `zen5`) and for
  a `:docker:` image build, which `get_agent_queue` sends to a CPU queue.
- A step without `device` goes to the generator's generic GPU queue (`gpu_1_queue`, or
  `gpu_4_queue` for 2 or 4 devices): `device` is "" here.

Where this differs, and why:
- vLLM's configs are newer than the snapshot. `amd_run_all_patterns` (0.34.0) is in no
  ci-infra code we could read; as the config's own comment describes it, a path matching
  one (and no exclude pattern) runs every AMD step (`CiSelection.amd_run_all`). The
  comment also says `csrc/` on CUDA is chosen by ci-infra's "ci-selector" from kernel
  recordings; that is not modelled: CUDA steps fall back to their dependencies.
  Devices such as `mi355_dpx` are also unknown to the snapshot.
- Nightly-only: the generator has no such key. A step is `nightly` here when it is
  optional and its label carries `[Nightly]` (vLLM's convention for steps meant for
  the NIGHTLY=1 build), or when its `if:` needs `build.env("NIGHTLY")`/
  `build.env("TORCH_NIGHTLY") == "1"` or `build.source == "schedule"`. An AMD mirror
  of a nightly step is nightly while it stays optional (`optional: false` in the
  mirror puts it on PRs). A `[Nightly]` step that is not optional runs on PRs, and is
  reported as a problem.
  To the generator a `[Nightly]` step is an optional step like any other: it waits as
  a block step, and what runs optional steps runs it (an always-run key; for a mirror,
  `docker/Dockerfile.rocm_base`), so the selection counts it then.
  The `if:` is a deliberate difference: the snapshot's Step has no `if` field, so the
  generator drops it and would treat the step as a PR step (ci-infra's `if_condition`,
  which passes it on to Buildkite, is on an unmerged branch). vLLM writes it for steps
  that must run only in nightly builds (crcr_report.yaml), so such a step never runs
  here, mirror included.
- PR labels (`ready-run-all-tests`), RUN_ALL, NOAUTO and VLLM_CI_ONLY_STEP_KEYS are
  inputs this function does not have: they are not modelled.
- The generator lists AMD steps under one "Hardware-AMD Tests" group; `CiStep.group`
  keeps the job file's group, which says more about what the step tests. A step that
  runs on an AMD GPU itself keeps its label as written (vLLM's already say ":amd:
  (MI355) ..."); the generator shows it as "AMD: <label> (<device>)".
- A step without `key` keeps "" (and its mirror has none): the generator derives one
  from the label, but every step of vLLM's config has a key.
- Regexes run on RE2 (bot/core/rules/patterns.py), not `re`: the base's config is
  read on every PR, and RE2's time is linear whatever the pattern.
- YAML anchors and aliases are allowed (pytorch.yaml and cpu.yaml use them), with the
  expansion bounded; bot/core/rules/yaml_source.read_yaml refuses them, so the node tree
  is composed here, under the same size and depth caps.

Narrow and broad: a dependency is BROAD when it is a top-level directory: after
dropping trailing `/`, it has no `/` and was either written with a trailing `/` or
has no `.` in its name (`vllm/`, `vllm`, `tests`, `csrc/`, `requirements/`, `rust/`).
Every other entry is NARROW (`setup.py`, `vllm/v1/`, the job file's own path). A step
reached only through broad entries runs for almost any change, so it is counted, not
listed; one reached through a narrow entry is listed.

A step's `commands` are read for the tests they run (`CiStep.test_runs`,
bot/core/repo_config/step_tests.py; an AMD mirror's own commands, else its step's): the
generator does not select by them, the digest ranks by them.

`tests_without_step`: a changed `tests/**/test_*.py` or `tests/**/*_test.py` that no
step, of any kind (PR, optional, nightly, any platform), names through a narrow entry
its own `!` entries do not take back. A step reached through broad `tests/` may run
one other file, so that is no evidence; a narrow directory entry (`tests/v1/`) is
taken as evidence, though its commands may still skip the file.

Inputs are hostile: nothing here raises; what cannot be read is a problem
`"{file}:{line}: {message}"`. Caps: 200 job files, 8 MiB of YAML and 500,000 built
YAML nodes in all, 5,000 steps, 500 dependencies a step, 32 job dirs, 200 patterns,
200 problems, 20,000 changed paths, 20 paths in a StepMatch's `files`. Reading is
linear in the files' size; selection in the changed paths times their depth plus the
entries (sets of steps are bit masks), not in steps times paths.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import yaml

from bot.core.repo_config.step_tests import PytestRun, path_and_folders, pytest_runs
from bot.core.rules.patterns import LinePattern, PatternError
from bot.core.rules.yaml_source import MAX_DEPTH, MAX_FILE_BYTES, YamlProblem, line_of

CI_CONFIG_PATH = ".buildkite/ci_config.yaml"
INTEL_CI_CONFIG_PATH = ".buildkite/ci_config_intel.yaml"

MAX_JOB_DIRS = 32
MAX_FILES = 200
MAX_STEPS = 5_000
MAX_DEPENDENCIES = 500
MAX_PATTERNS = 200
MAX_PROBLEMS = 200
MAX_CHANGED = 20_000
MAX_PATH_CHARS = 4_096
MAX_MATCH_FILES = 20  # StepMatch.files: enough to say why a step runs
# Aliases share nodes, so a small file can expand to billions (billion laughs): every
# node visited while building data is charged, over all the files of one config (vLLM's
# 0.34.0 config builds ~16,000).
MAX_EXPANDED_NODES = 500_000
MAX_TOTAL_BYTES = 8 * 1024 * 1024  # as bot/core/repo_config/files.py reads at most

# ci-infra amd.py / buildkite_step.py
_ALWAYS_RUN_KEYS = frozenset({"ensure-ci-base-amd", "refresh-rocm-base-amd"})
# constants.py DeviceType: the CPU queues, where a step gets no GPU
_CPU_DEVICES = frozenset(
    {"cpu", "cpu-small", "cpu-medium", "intel_cpu", "arm_cpu", "amd_cpu", "zen5"}
)
_AMD_RUNTIME_SCRIPT = ".buildkite/scripts/hardware_ci/run-amd-test.sh"
_ROCM_BASE_DOCKERFILE = "docker/Dockerfile.rocm_base"

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_AMD_GPU = re.compile(r"mi\d+(?:_\w+)?")
_AMD_GPU_COUNT = re.compile(r"mi\d+_(\d+)")
_NIGHTLY_LABEL = re.compile(r"\[nightly\]", re.IGNORECASE)
_NIGHTLY_IF = re.compile(
    r"""build\.env\(\s*["'](?:TORCH_)?NIGHTLY["']\s*\)\s*==\s*["']1["']"""
    r"""|build\.source\s*==\s*["']schedule["']"""
)
_REGEX_META = frozenset(".^$*+?{}[]\\|()")


@dataclass(frozen=True)
class CiStep:
    label: str  # as written; an AMD mirror's own label, else "AMD: <label> (<device>)"
    key: str  # as written, "amd-<key>" for a mirror; "" when unstated
    file: str
    group: str
    device: str  # "" when unstated: the generator's generic GPU queue
    gpus: int
    # "amd" for AMD devices and mirrors, "intel" for every step of Intel's pipeline, else
    # "cuda" (the main pipeline)
    platform: str
    dependencies: tuple[str, ...]  # includes, as written, the job file's path appended
    excludes: tuple[str, ...]  # the `!` entries, without the `!`
    optional: bool
    nightly: bool
    line: int
    dind: bool = True
    mirror_of: str = ""  # for a mirror: the label of the step it mirrors
    # its `if:` keeps it to nightly or scheduled builds: never in a PR's build (a
    # `[Nightly]` label alone makes an optional step, which some changes do run)
    nightly_if: bool = False
    # the pytest invocations of its `commands` (bot/core/repo_config/step_tests.py)
    test_runs: tuple[PytestRun, ...] = ()


def _commands(raw: Mapping[object, object]) -> list[str]:
    """A step's `commands` (or `command`): a string or a list of strings."""
    value = raw.get("commands", raw.get("command"))
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [c for c in value if isinstance(c, str)]
    return []


@dataclass(frozen=True)
class Pipeline:
    steps: tuple[CiStep, ...]
    run_all_patterns: tuple[str, ...]
    amd_run_all_patterns: tuple[str, ...]
    run_all_exclude_patterns: tuple[str, ...]
    problems: tuple[str, ...]

    @cached_property
    def _index(self) -> _StepIndex:
        """Built on the first selection: a config is read once and asked on every PR."""
        return _StepIndex.of(self.steps)

    def listed_by(self, entry: str) -> int:
        """How many steps list this dependency entry (trailing `/` ignored): an entry
        dozens of steps share (`vllm/config/`, `vllm/envs.py`) says little about which
        of them tests the changed code."""
        return len(self._index.includes.get(entry.rstrip("/"), ()))


@dataclass(frozen=True)
class StepMatch:
    step: CiStep
    matched: tuple[str, ...]  # the matching entries, narrow and broad, in step order
    # up to MAX_MATCH_FILES of the changed paths the narrow entries matched (of those all
    # matched entries matched when none is narrow), sorted
    files: tuple[str, ...]
    narrow: bool


@dataclass(frozen=True)
class CiSelection:
    narrow: tuple[StepMatch, ...]  # steps that run on this PR, reached through a narrow entry
    broad_count: int  # other steps that run on it (always-run image builds not counted)
    broad_through: tuple[str, ...]  # what reached those: broad entries, AMD trigger files
    run_all: bool
    run_all_files: tuple[str, ...]
    nightly: tuple[StepMatch, ...]  # nightly steps a narrow entry matches
    optional: tuple[StepMatch, ...]  # optional, not nightly, a narrow entry matches: unblock
    tests_without_step: tuple[str, ...]
    docs_only: bool
    amd_run_all: bool = False  # an amd_run_all pattern matched: every AMD step runs
    amd_run_all_files: tuple[str, ...] = ()


def is_broad(dependency: str) -> bool:
    """A top-level directory entry (see the module docstring)."""
    name = dependency.rstrip("/")
    if not name or "/" in name:
        return False
    return dependency.endswith("/") or "." not in name


def is_test_file(path: str) -> bool:
    """A pytest test module under `tests/` (pytest's default `test_*.py`, `*_test.py`)."""
    if not path.startswith("tests/") or not path.endswith(".py"):
        return False
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")


# --- reading YAML ---------------------------------------------------------------------


class _Unreadable(ValueError):
    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message)


def _compose(text: str) -> yaml.Node:
    """The node tree of one document, size and depth bounded as read_yaml bounds them."""
    if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise _Unreadable(1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    loader = None
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    raise _Unreadable(
                        int(mark.line) + 1 if mark else 1, f"nested deeper than {MAX_DEPTH} levels"
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        loader = _Loader(text)
        root = loader.get_single_node()
    except _Unreadable:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = int(mark.line) + 1 if mark is not None else 1
        raise _Unreadable(line, f"not valid YAML: {exc.problem or exc.context}") from None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise _Unreadable(1, f"not valid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if root is None:
        raise _Unreadable(1, "file is empty")
    return root


class _Budget:
    """What is left to spend over all the files of one config."""

    def __init__(self) -> None:
        self.nodes = MAX_EXPANDED_NODES
        self.bytes = MAX_TOTAL_BYTES


class _Builder:
    """Plain data from nodes, aliases expanded under a budget; `<<` merges as PyYAML's."""

    def __init__(self, problems: _Problems, path: str, budget: _Budget) -> None:
        self._constructor = yaml.SafeLoader("")
        self._budget = budget
        self._problems = problems
        self._path = path

    def build(self, node: yaml.Node, depth: int = 0) -> object:
        self._budget.nodes -= 1
        if self._budget.nodes < 0:
            raise _Unreadable(
                _line(node),
                f"the CI config expands to more than {MAX_EXPANDED_NODES:,} YAML nodes: "
                "the rest is not read",
            )
        if depth > MAX_DEPTH:  # a recursive alias composes fine and never ends
            raise _Unreadable(_line(node), f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.ScalarNode):
            try:
                return self._constructor.construct_object(node)
            except (yaml.YAMLError, ValueError, OverflowError) as exc:
                raise _Unreadable(_line(node), f"unreadable value: {exc}") from None
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, depth + 1) for item in node.value]
        if isinstance(node, yaml.MappingNode):
            merged: dict[object, object] = {}
            own: dict[object, object] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    merged.update(self._merge(value_node, depth))
                    continue
                key = self.build(key_node, depth + 1)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    raise _Unreadable(_line(key_node), "a mapping key must be a scalar")
                if key in own:
                    # PyYAML, as the generator loads it, keeps the last one silently.
                    self._problems.add(self._path, _line(key_node), f"duplicate key {key!r}")
                own[key] = self.build(value_node, depth + 1)
            merged.update(own)
            return merged
        raise _Unreadable(_line(node), "unknown YAML node")

    def _merge(self, node: yaml.Node, depth: int) -> dict[object, object]:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out: dict[object, object] = {}
        # Earlier sources win in YAML's merge key, so later ones are laid down first.
        for source in reversed(sources):
            data = self.build(source, depth + 1)
            if not isinstance(data, dict):
                raise _Unreadable(_line(source), "`<<` merges only mappings")
            out.update(data)
        return out


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    @property
    def full(self) -> bool:
        return len(self.items) >= MAX_PROBLEMS

    def add(self, path: str, line: int, message: str) -> None:
        if self.full:
            self.dropped += 1
        else:
            self.items.append(f"{path}:{line}: {message}")

    def result(self) -> tuple[str, ...]:
        if self.dropped:
            return (*self.items, f"{self.dropped:,} more problems not shown")
        return tuple(self.items)


class _Doc:
    def __init__(self, path: str, root: yaml.Node, data: object) -> None:
        self.path = path
        self.root = root
        self.data = data
        self._top: dict[str, tuple[yaml.Node, yaml.Node]] | None = None

    def line(self, *loc: int | str) -> int:
        """line_of, with the top-level keys indexed once: every step asks for its line,
        and a scan of a long top-level mapping for each would be quadratic."""
        if not loc or not isinstance(self.root, yaml.MappingNode):
            return line_of(self.root, loc)
        if self._top is None:
            self._top = {}
            for key, value in self.root.value:
                if isinstance(key, yaml.ScalarNode):
                    self._top.setdefault(key.value, (key, value))
        found = self._top.get(str(loc[0]))
        if found is None:
            return _line(self.root)
        return _line(found[0]) if len(loc) == 1 else line_of(found[1], loc[1:])


def _read_doc(path: str, text: str, problems: _Problems, budget: _Budget) -> _Doc | None:
    budget.bytes -= len(text)
    if budget.bytes < 0:
        problems.add(path, 1, f"the CI config is larger than {MAX_TOTAL_BYTES // 2**20} MiB "
                     "in all: this file is not read")
        return None
    try:
        root = _compose(text)
        data = _Builder(problems, path, budget).build(root)
    except _Unreadable as exc:
        problems.add(path, exc.line, exc.message)
        return None
    except (YamlProblem, RecursionError, MemoryError) as exc:
        problems.add(path, 1, f"not readable: {type(exc).__name__}")
        return None
    return _Doc(path, root, data)


# --- ci_config.yaml -------------------------------------------------------------------


def _clean_dir(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    path = value.strip()
    while path.startswith("./"):
        path = path[2:]
    path = path.rstrip("/")
    parts = path.split("/")
    # The loader lists these directories: nothing outside the repository, nothing odd.
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    if len(path) > MAX_PATH_CHARS or "\n" in path or "\x00" in path:
        return None
    return path


def _config_dirs(doc: _Doc, problems: _Problems) -> tuple[str, ...]:
    data = doc.data
    if not isinstance(data, dict):
        problems.add(doc.path, 1, "the CI config is not a mapping")
        return ()
    raw = data.get("job_dirs")
    if not isinstance(raw, list) or not raw:
        problems.add(doc.path, doc.line("job_dirs"), "`job_dirs` is not a non-empty list")
        return ()
    dirs: list[str] = []
    for index, value in enumerate(raw):
        if len(dirs) >= MAX_JOB_DIRS:
            problems.add(
                doc.path, doc.line("job_dirs", index), f"more than {MAX_JOB_DIRS} job dirs"
            )
            break
        clean = _clean_dir(value)
        if clean is None:
            problems.add(doc.path, doc.line("job_dirs", index), f"unusable job dir {value!r}")
        elif clean not in dirs:
            dirs.append(clean)
    return tuple(dirs)


def job_dirs(ci_config_text: str) -> tuple[str, ...]:
    """The directories the loader must list (recursively) and read the `.yaml` files of."""
    doc = _read_doc(CI_CONFIG_PATH, ci_config_text, _Problems(), _Budget())
    return () if doc is None else _config_dirs(doc, _Problems())


def _patterns(doc: _Doc, key: str, problems: _Problems) -> tuple[str, ...]:
    data = doc.data
    raw = data.get(key) if isinstance(data, dict) else None
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add(doc.path, doc.line(key), f"`{key}` is not a list")
        return ()
    out: list[str] = []
    for index, value in enumerate(raw):
        if len(out) >= MAX_PATTERNS:
            problems.add(doc.path, doc.line(key, index), f"more than {MAX_PATTERNS} patterns")
            break
        if not isinstance(value, str) or not value:
            problems.add(doc.path, doc.line(key, index), f"pattern {value!r} is not a string")
            continue
        why = _compiled(value)[1]
        if why is not None:
            problems.add(doc.path, doc.line(key, index), f"pattern {value!r}: {why}")
            continue
        out.append(value)
    return tuple(out)


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> tuple[tuple[str, LinePattern] | None, str | None]:
    """(literal prefix, anchored RE2 pattern), or why the pattern cannot run.

    The literal prefix is what any match must start with: most paths fail it by one
    `startswith`, and RE2 is asked only for the rest.
    """
    try:
        regex = LinePattern(f"^(?:{pattern})")
    except PatternError as exc:
        return None, str(exc)
    prefix = ""
    if "|" not in pattern:
        for index, char in enumerate(pattern):
            if char in _REGEX_META:
                # A quantifier may make the character before it optional.
                if char in "*?{" and prefix:
                    prefix = prefix[:-1]
                break
            prefix = pattern[: index + 1]
    return (prefix, regex), None


def _matching(paths: Sequence[str], patterns: Sequence[str], excludes: Sequence[str]) -> list[str]:
    compiled = [c for c in (_compiled(p)[0] for p in patterns) if c is not None]
    skip = [c for c in (_compiled(p)[0] for p in excludes) if c is not None]
    if not compiled:
        return []

    def hit(path: str, pats: list[tuple[str, LinePattern]]) -> bool:
        return any(path.startswith(pre) and rx.search(path) is not None for pre, rx in pats)

    return [p for p in paths if hit(p, compiled) and not hit(p, skip)]


# --- job files ------------------------------------------------------------------------


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4096:
        return None
    return value


def _is_amd_gpu(device: str) -> bool:
    return _AMD_GPU.fullmatch(device) is not None


def _gpus(device: str, counts: Sequence[object], no_gpu: object) -> tuple[int, str | None]:
    """The GPU count and, when the generator would refuse the step, why."""
    if no_gpu is True or device in _CPU_DEVICES:
        return 0, None
    stated = next((c for c in (_count(v) for v in counts) if c is not None), None)
    amd = _AMD_GPU_COUNT.fullmatch(device)
    if amd is not None:
        fixed = int(amd.group(1))
        if stated is not None and stated != fixed:
            return fixed, f"AMD device {device} provides {fixed} GPUs, but {stated} are asked"
        return fixed, None
    return (1 if stated is None else stated), None


def _nightly_condition(condition: object) -> bool:
    return isinstance(condition, str) and _NIGHTLY_IF.search(condition[:MAX_PATH_CHARS]) is not None


def _nightly(label: str, optional: bool, by_condition: bool) -> bool:
    return by_condition or (optional and _NIGHTLY_LABEL.search(label) is not None)


class _FileReader:
    def __init__(self, doc: _Doc, problems: _Problems, steps: list[CiStep],
                 platform: str = "") -> None:
        self.pipeline_platform = platform  # "intel": every step is that pipeline's
        self.doc = doc
        self.path = doc.path
        self.problems = problems
        self.steps = steps

    def problem(self, message: str, *loc: int | str) -> None:
        if self.problems.full:  # counted, and no line looked up
            self.problems.dropped += 1
        else:
            self.problems.add(self.path, self.doc.line(*loc), message)

    def read(self) -> None:
        data = self.doc.data
        if not isinstance(data, dict):
            self.problem("a job file is a mapping with `group` and `steps`")
            return
        group = data.get("group")
        if group is not None and not isinstance(group, str):
            self.problem("`group` is not a string", "group")
            group = None
        raw_steps = data.get("steps", [])
        if not isinstance(raw_steps, list):
            self.problem("`steps` is not a list", "steps")
            return
        # ci-infra step.py: a truthy file-level depends_on adds the file to every step.
        own_path = self.path if data.get("depends_on") else None
        for index, raw in enumerate(raw_steps):
            if len(self.steps) >= MAX_STEPS:
                self.problem(f"more than {MAX_STEPS:,} steps: the rest is not read", "steps", index)
                return
            if not isinstance(raw, dict):
                self.problem("a step is a mapping", "steps", index)
                continue
            self._step(raw, index, group or "", own_path)

    def _dependencies(
        self, raw: object, loc: tuple[int | str, ...]
    ) -> tuple[list[str], list[str]] | None:
        if raw is None:
            return [], []
        if not isinstance(raw, list):
            self.problem("`source_file_dependencies` is not a list", *loc)
            return None
        includes: list[str] = []
        excludes: list[str] = []
        for index, entry in enumerate(raw):
            if index >= MAX_DEPENDENCIES:
                self.problem(
                    f"more than {MAX_DEPENDENCIES} dependencies: the rest is ignored", *loc
                )
                break
            if not isinstance(entry, str):
                self.problem(f"dependency {entry!r} is not a string", *loc, index)
                continue
            if len(entry) > MAX_PATH_CHARS:
                self.problem("dependency is too long", *loc, index)
                continue
            if "*" in entry or "?" in entry:
                self.problem(
                    f"dependency {entry!r} is matched literally, not as a glob", *loc, index
                )
            if entry.startswith("!"):
                excludes.append(entry[1:])
            else:
                includes.append(entry)
        return includes, excludes

    def _step(
        self, raw: dict[object, object], index: int, group: str, own_path: str | None
    ) -> None:
        loc: tuple[int | str, ...] = ("steps", index)
        label = raw.get("label")
        if not isinstance(label, str) or not label.strip():
            self.problem("a step needs a `label` (the generator refuses the file)", *loc)
            return
        raw_key = raw.get("key")
        key = raw_key if isinstance(raw_key, str) else ""
        if not group:
            own_group = raw.get("group")
            group = own_group if isinstance(own_group, str) else ""
        raw_device = raw.get("device")
        if raw_device is not None and not isinstance(raw_device, str):
            self.problem("`device` is not a string", *loc, "device")
        device = raw_device if isinstance(raw_device, str) else ""
        optional = self._flag(raw, "optional", False, loc)
        dind = self._flag(raw, "dind", True, loc)
        deps = self._dependencies(
            raw.get("source_file_dependencies"), (*loc, "source_file_dependencies")
        )
        includes, excludes = deps if deps is not None else ([], [])
        if own_path is not None and own_path not in includes:
            includes.append(own_path)
        # `num_gpus` is read only in an AMD mirror: Step has no such field.
        gpus, why = _gpus(device, (raw.get("num_devices"),), raw.get("no_gpu"))
        if label.startswith(":docker:") and not _is_amd_gpu(device):
            # get_agent_queue: the image builds' CPU queues
            gpus = 0
        if why:
            self.problem(why, *loc)
        nightly_if = _nightly_condition(raw.get("if"))
        nightly = _nightly(label, optional, nightly_if)
        if _NIGHTLY_LABEL.search(label) and not optional and not nightly:
            self.problem(f"{label!r} is labelled [Nightly] but not optional: it runs on PRs", *loc)
        step = CiStep(
            label=label,
            key=key,
            file=self.path,
            group=group,
            device=device,
            gpus=gpus,
            platform=self.pipeline_platform or (
                "amd" if _is_amd_gpu(device) or device == "amd_cpu" else "cuda"),
            dependencies=tuple(includes),
            excludes=tuple(excludes),
            optional=optional,
            nightly=nightly,
            line=self.doc.line(*loc),
            dind=dind,
            nightly_if=nightly_if,
            test_runs=pytest_runs(_commands(raw)),
        )
        self.steps.append(step)
        mirror = raw.get("mirror")
        if mirror is None:
            return
        if not isinstance(mirror, dict):
            self.problem("`mirror` is not a mapping", *loc, "mirror")
            return
        if _is_amd_gpu(device) and mirror.get("amd"):
            # convert_group_step_to_buildkite_step turns an AMD step into its AMD command
            # step and goes on to the next before it looks at `mirror`.
            self.problem("a step on an AMD GPU gets no AMD mirror", *loc, "mirror")
            return
        for name, spec in mirror.items():
            if name != "amd":
                self.problem(f"mirror {name!r} is not one the generator builds", *loc, "mirror")
            elif spec:
                self._amd_mirror(step, raw, spec, (*loc, "mirror", "amd"))

    def _flag(
        self, raw: Mapping[object, object], name: str, default: bool, loc: tuple[int | str, ...]
    ) -> bool:
        value = raw.get(name, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(f"`{name}` is not true or false", *loc, name)
            return default
        return value

    def _amd_mirror(
        self,
        step: CiStep,
        raw: Mapping[object, object],
        spec: object,
        loc: tuple[int | str, ...],
    ) -> None:
        if len(self.steps) >= MAX_STEPS:
            self.problem(f"more than {MAX_STEPS:,} steps: the rest is not read", *loc)
            return
        if not isinstance(spec, dict):
            self.problem("`mirror.amd` is not a mapping", *loc)
            return
        device = spec.get("device")
        if not isinstance(device, str) or not device:
            self.problem("an AMD mirror needs a `device`", *loc)
            return
        if not _is_amd_gpu(device):
            self.problem(f"{device!r} is not an AMD GPU device", *loc, "device")
        own_label = spec.get("label")
        label = (
            own_label
            if isinstance(own_label, str) and own_label
            else f"AMD: {step.label} ({device})"
        )
        # _get_amd_mirror_effective_step: `amd.get("optional", step.optional)`, so an
        # explicit null is not optional.
        optional = (
            False
            if "optional" in spec and spec["optional"] is None
            else self._flag(spec, "optional", step.optional, loc)
        )
        deps = self._dependencies(
            spec.get("source_file_dependencies"), (*loc, "source_file_dependencies")
        )
        includes, excludes = deps if deps is not None else ([], [])
        # _get_amd_mirror_effective_step: the mirror's entries, then the step's.
        own = set(includes)
        includes += [d for d in step.dependencies if d not in own]
        own = set(excludes)
        excludes += [d for d in step.excludes if d not in own]
        no_gpu = spec.get("no_gpu", raw.get("no_gpu"))
        counts = (spec.get("num_devices"), spec.get("num_gpus"), raw.get("num_devices"))
        gpus, why = _gpus(device, counts, no_gpu)
        if why:
            self.problem(why, *loc)
        # A mirror of a [Nightly] step is the same nightly test unless it opts into PRs.
        nightly = _nightly(label, optional, step.nightly_if) or (optional and step.nightly)
        if isinstance(own_label, str) and _NIGHTLY_LABEL.search(own_label) and not nightly:
            self.problem(
                f"{own_label!r} is labelled [Nightly] but not optional: it runs on PRs", *loc
            )
        self.steps.append(
            CiStep(
                label=label,
                key=f"amd-{step.key}" if step.key else "",
                file=self.path,
                group=step.group,
                device=device,
                gpus=gpus,
                platform="amd",
                dependencies=tuple(includes),
                excludes=tuple(excludes),
                optional=optional,
                nightly=nightly,
                line=self.doc.line(*loc),
                dind=self._flag(spec, "dind", True, loc),
                mirror_of=step.label,
                nightly_if=step.nightly_if,
                # the mirror's own commands, else the step's
                test_runs=pytest_runs(_commands(spec)) if _commands(spec) else step.test_runs,
            )
        )


def _clean_file(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def parse_pipeline(files: Mapping[str, str], config_path: str = CI_CONFIG_PATH) -> Pipeline:
    """The steps of a CI config's job files (ci_config.yaml's unless `config_path` names
    another, such as Intel's); `files` maps repository paths to texts."""
    platform = "intel" if config_path == INTEL_CI_CONFIG_PATH else ""
    problems = _Problems()
    texts: dict[str, str] = {}
    for path, text in files.items():
        if isinstance(path, str) and isinstance(text, str):
            texts.setdefault(_clean_file(path), text)
    config_text = texts.get(config_path)
    if config_text is None:
        problems.add(config_path, 1, "the CI config was not given")
        return Pipeline((), (), (), (), problems.result())
    budget = _Budget()
    config = _read_doc(config_path, config_text, problems, budget)
    if config is None:
        return Pipeline((), (), (), (), problems.result())
    dirs = _config_dirs(config, problems)
    run_all = _patterns(config, "run_all_patterns", problems)
    amd_run_all = _patterns(config, "amd_run_all_patterns", problems)
    exclude = _patterns(config, "run_all_exclude_patterns", problems)

    job_files: list[str] = []
    taken: set[str] = set()
    for index, directory in enumerate(dirs):
        found = sorted(
            p
            for p in texts
            if p.endswith(".yaml") and p.startswith(directory + "/") and p not in taken
        )
        taken.update(found)
        if not found:
            # The generator stops ("Job directory not found") when a job dir is missing.
            problems.add(
                config_path,
                config.line("job_dirs", index),
                f"job dir {directory!r}: no .yaml files given",
            )
        job_files += found
    if len(job_files) > MAX_FILES:
        problems.add(
            config_path,
            config.line("job_dirs"),
            f"{len(job_files)} job files: only the first {MAX_FILES} are read",
        )
        job_files = job_files[:MAX_FILES]

    steps: list[CiStep] = []
    for path in job_files:
        doc = _read_doc(path, texts[path], problems, budget)
        if doc is not None:
            _FileReader(doc, problems, steps, platform).read()
    return Pipeline(tuple(steps), run_all, amd_run_all, exclude, problems.result())


# --- selection ------------------------------------------------------------------------


def is_docs_only(paths: Sequence[str]) -> bool:
    """ci-infra pipeline_generator.py `is_docs_only_change`; no paths is not docs-only."""
    real = [p for p in paths if p]
    return bool(real) and all(
        p.startswith("docs/") or p.endswith(".md") or p == "mkdocs.yaml" for p in real
    )


def _under(path: str, entry: str) -> bool:
    name = entry.rstrip("/")
    return bool(name) and (path == name or path.startswith(name + "/"))


def _always_runs(step: CiStep) -> bool:
    # A mirror is judged on a copy whose key is None, so it never always-runs.
    return not step.mirror_of and (
        step.key.startswith("image-build") or step.key in _ALWAYS_RUN_KEYS
    )


def _clean_paths(changed: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for path in changed[:MAX_CHANGED]:
        if isinstance(path, str) and path and len(path) <= MAX_PATH_CHARS and path not in seen:
            seen.add(path)
            out.append(path)
    return out


def select_steps(pipeline: Pipeline, changed: Sequence[str]) -> CiSelection:
    """Which steps the generator runs for a PR changing `changed` (repository paths)."""
    paths = _clean_paths(changed)
    run_all_files = _matching(paths, pipeline.run_all_patterns, pipeline.run_all_exclude_patterns)
    run_all = bool(run_all_files)
    if not run_all and is_docs_only(paths):
        return CiSelection((), 0, (), False, (), (), (), (), True)
    amd_files = _matching(paths, pipeline.amd_run_all_patterns, pipeline.run_all_exclude_patterns)
    steps = pipeline.steps

    index = pipeline._index
    includes, exclude_bits = index.includes, index.exclude_bits
    taken_back: dict[str, int] = {}  # path -> the steps whose `!` entries take it back
    files_by_key: dict[str, list[str]] = {}
    for path in paths:
        back = 0
        for key in path_and_folders(path):
            if key in includes:
                files_by_key.setdefault(key, []).append(path)
            back |= exclude_bits.get(key, 0)
        if back:
            taken_back[path] = back

    # step -> [(entry, the key it matched)]
    hits: dict[int, list[tuple[str, str]]] = {}
    for key, under in files_by_key.items():
        every_path_back = -1  # the steps that take back every path under `key`
        for path in under:
            every_path_back &= taken_back.get(path, 0)
            if not every_path_back:
                break
        for number, entry in includes[key]:
            if not (every_path_back >> number) & 1:
                hits.setdefault(number, []).append((entry, key))

    amd_runtime = any(_under(p, _AMD_RUNTIME_SCRIPT) for p in paths)
    rocm_base = _ROCM_BASE_DOCKERFILE in paths
    narrow: list[StepMatch] = []
    nightly: list[StepMatch] = []
    optional: list[StepMatch] = []
    broad_count = 0
    broad_through: set[str] = set()
    files = _MatchFiles(files_by_key, taken_back)
    for number, step in enumerate(steps):
        found = hits.get(number)
        match = _match(step, found, files.of(number, found)) if found else None
        if step.nightly_if:  # Buildkite leaves it out of the PR's build
            if match is not None and match.narrow:
                nightly.append(match)
            continue
        triggers: list[str] = []
        if step.mirror_of and rocm_base:
            triggers.append(_ROCM_BASE_DOCKERFILE)
        if (
            not step.optional
            and step.platform == "amd"
            and _is_amd_gpu(step.device)
            and not step.dind
            and amd_runtime
        ):
            triggers.append(_AMD_RUNTIME_SCRIPT)
        runs = (
            bool(triggers)
            or _always_runs(step)
            or (
                not step.optional
                and (run_all or (bool(amd_files) and step.platform == "amd") or match is not None)
            )
        )
        if not runs:
            # Only an optional step stays out with a match; a [Nightly] one is optional.
            if match is not None and match.narrow:
                (nightly if step.nightly else optional).append(match)
            continue
        if match is not None and match.narrow:
            narrow.append(match)
        elif not _always_runs(step):
            broad_count += 1
            if match is not None:
                broad_through.update(match.matched)
            broad_through.update(triggers)

    uncovered = [
        p for p in paths
        if is_test_file(p) and not _covered(p, index.narrow_bits, taken_back.get(p, 0))
    ]
    return CiSelection(
        narrow=tuple(narrow),
        broad_count=broad_count,
        broad_through=tuple(sorted(broad_through)),
        run_all=run_all,
        run_all_files=tuple(run_all_files),
        nightly=tuple(nightly),
        optional=tuple(optional),
        tests_without_step=tuple(sorted(uncovered)),
        docs_only=False,
        amd_run_all=bool(amd_files),
        amd_run_all_files=tuple(amd_files),
    )


@dataclass(frozen=True)
class _StepIndex:
    """The steps' entries by name (trailing `/` dropped), for select_steps.

    Sets of steps are ints, bit n for step n: which steps take a path back is one OR a
    directory level, and which steps a name reaches one AND a path, however many steps
    and paths there are (a walk over the paths per step would be steps x paths).
    """

    includes: Mapping[str, Sequence[tuple[int, str]]]  # name -> (step, entry as written)
    exclude_bits: Mapping[str, int]  # name -> the steps with a `!` entry of that name
    narrow_bits: Mapping[str, int]  # name -> the steps with a narrow entry of that name

    @classmethod
    def of(cls, steps: Sequence[CiStep]) -> _StepIndex:
        includes: dict[str, list[tuple[int, str]]] = {}
        exclude_steps: dict[str, list[int]] = {}
        narrow_steps: dict[str, list[int]] = {}
        for number, step in enumerate(steps):
            for entry in step.dependencies:
                name = entry.rstrip("/")
                if name:
                    includes.setdefault(name, []).append((number, entry))
                    if not is_broad(entry):
                        narrow_steps.setdefault(name, []).append(number)
            for entry in step.excludes:
                name = entry.rstrip("/")
                if name:
                    exclude_steps.setdefault(name, []).append(number)
        return cls(
            includes=includes,
            exclude_bits={name: _bits(numbers) for name, numbers in exclude_steps.items()},
            narrow_bits={name: _bits(numbers) for name, numbers in narrow_steps.items()},
        )


def _bits(numbers: Sequence[int]) -> int:
    """The set of step numbers as an int, bit n for step n."""
    buf = bytearray((max(numbers) >> 3) + 1)
    for number in numbers:
        buf[number >> 3] |= 1 << (number & 7)
    return int.from_bytes(buf, "little")


class _MatchFiles:
    """StepMatch.files, with one budget for all steps: a step whose `!` entries take back
    most paths under an entry costs a walk over them, and thousands of such steps must
    not cost thousands of walks (the match itself never depends on this)."""

    BUDGET = 200_000

    def __init__(self, files_by_key: Mapping[str, list[str]], taken_back: Mapping[str, int]):
        self._files_by_key = files_by_key
        self._taken_back = taken_back
        self._left = self.BUDGET

    def of(self, number: int, found: Sequence[tuple[str, str]] | None) -> tuple[str, ...]:
        if not found:
            return ()
        narrow_found = [key for entry, key in found if not is_broad(entry)]
        out: dict[str, None] = {}
        for key in narrow_found or [key for _, key in found]:
            for path in self._files_by_key[key]:
                if len(out) >= MAX_MATCH_FILES or self._left <= 0:
                    return tuple(sorted(out))
                self._left -= 1
                if not (self._taken_back.get(path, 0) >> number) & 1:
                    out.setdefault(path, None)
        return tuple(sorted(out))


def _match(step: CiStep, found: list[tuple[str, str]], files: tuple[str, ...]) -> StepMatch:
    matched = {entry for entry, _ in found}
    return StepMatch(
        step=step,
        matched=tuple(e for e in step.dependencies if e in matched),
        files=files,
        narrow=any(not is_broad(entry) for entry in matched),
    )


def _covered(path: str, narrow_bits: Mapping[str, int], taken_back: int) -> bool:
    """Whether any step, of any kind, names `path` through a narrow entry that no `!`
    entry of the same step takes back: a step reached through broad `tests/` may run a
    single other file, so that is no evidence the new test runs."""
    return any(narrow_bits.get(key, 0) & ~taken_back for key in path_and_folders(path))
