"""Which of a PR's tests a CI step's own pytest commands run (step_tests.py): small
commands, vLLM 0.34.0's real job files, and hostile sizes."""

from __future__ import annotations

import time
from pathlib import Path

from bot.core.repo_config.pipeline import parse_pipeline
from bot.core.repo_config.step_tests import (
    MAX_PATHS,
    MAX_RUNS,
    ChangedTests,
    PytestRun,
    file_marks,
    pytest_runs,
)

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_config" / "0.34.0"


def test_each_pytest_of_a_command_is_one_run_with_its_paths_ignores_and_marker() -> None:
    runs = pytest_runs([
        "pip install x",
        "python -m pytest_cov_report tests/x",  # `pytest` only inside a longer word
        "pytest -v -s models/multimodal -m core_model --ignore models/multimodal/processing"
        " --ignore=models/multimodal/generation/test_whisper.py",
        "cd .. && VLLM_X=1 pytest -v -s tests/models/test_a.py::test_one -m 'not slow'",
        "pytest -k 'foo or bar' -n 2 v1/core && pytest v1/engine/test_x.py",
        "pytest v1/e2e -m 'slow and not cuda'",
        "pytest models/multimodal -v -s -m 'distributed(num_gpus=2)'",
        "pytest -v -s model_executor/test_loader.py -m '(not slow_test)'",
    ])
    assert runs == (
        PytestRun(("models/multimodal",),
                ("models/multimodal/processing", "models/multimodal/generation/test_whisper.py"),
                "core_model"),
        # `-m 'not slow'`: the marker it leaves out
        PytestRun(("models/test_a.py",), excluded_marker="slow"),
        PytestRun(("v1/core",)),
        PytestRun(("v1/engine/test_x.py",)),
        # any other `-m` expression is not read: no marker
        PytestRun(("v1/e2e",)),
        # a marker with arguments selects by its name; parentheses around one are read
        PytestRun(("models/multimodal",), (), "distributed"),
        PytestRun(("model_executor/test_loader.py",), excluded_marker="slow_test"),
    )


def test_two_pytests_a_newline_joins_are_two_runs() -> None:
    runs = pytest_runs(["pytest -v models/language/generation -m cpu_model\n"
                        "pytest -v models/language/pooling"])
    assert runs == (PytestRun(("models/language/generation",), (), "cpu_model"),
                    PytestRun(("models/language/pooling",)))


def test_a_pytest_inside_a_wrapper_scripts_quotes_is_read_to_the_quote() -> None:
    (run,) = pytest_runs(['bash .buildkite/scripts/run-cpu-test.sh 45m "\npytest -x -v -s '
                        'tests/models/multimodal/generation -m cpu_model --shard-id=$$JOB"'])
    assert run == PytestRun(("models/multimodal/generation",), (), "cpu_model")


def test_distance_is_zero_for_the_named_file_and_the_levels_above_for_a_folder() -> None:
    change = ChangedTests([("tests/v1/spec_decode/test_eagle.py", None)], ())
    assert change.distance((PytestRun(("v1/spec_decode/test_eagle.py",)),)) == 0
    assert change.distance((PytestRun(("v1",)), PytestRun(("v1/spec_decode",)))) == 1
    assert change.distance((PytestRun(("v1/core",)),)) == -1
    assert change.distance((PytestRun(("v1",), ("v1/spec_decode",)),)) == -1


def test_a_marker_an_added_file_never_names_keeps_the_run_from_it() -> None:
    added = ChangedTests([("tests/models/test_new.py", "@pytest.mark.core_model\ndef t(): ...")],
                         ())
    assert added.distance((PytestRun(("models",), (), "cpu_model"),)) == -1
    assert added.distance((PytestRun(("models",), (), "core_model"),)) == 1
    # A modified file's patch does not hold all its markers: the run counts.
    modified = ChangedTests([("tests/models/test_new.py", None)], ())
    assert modified.distance((PytestRun(("models",), (), "cpu_model"),)) == 1


ADDED_CORE_ONLY = """\
import pytest

@pytest.mark.core_model
def test_smoke(vllm_runner): ...


@pytest.mark.skip(reason="HF cannot load it")
@pytest.mark.parametrize("model", [pytest.param("a", marks=pytest.mark.core_model), "b"])
def test_accuracy(vllm_runner, model): ...
"""


def test_a_not_marker_run_skips_an_added_file_whose_every_test_has_the_marker_or_skip() -> None:
    change = ChangedTests([("tests/models/gen/test_new.py", ADDED_CORE_ONLY)], ())
    extended = PytestRun(("models/gen",), excluded_marker="core_model")
    assert change.distance((extended,)) == -1
    assert change.tests_run((extended,)) == set()
    assert change.distance((PytestRun(("models/gen",)),)) == 1
    # one test without the marker (a parametrize `marks=` is not the test's mark): it runs
    unmarked = ADDED_CORE_ONLY.replace('@pytest.mark.skip(reason="HF cannot load it")\n', "")
    assert ChangedTests([("tests/models/gen/test_new.py", unmarked)], ()).distance(
        (extended,)) == 1
    # a module-wide mark covers every test
    module = "import pytest\npytestmark = [pytest.mark.core_model]\n\ndef test_a(): ...\n"
    assert ChangedTests([("tests/models/gen/test_new.py", module)], ()).distance(
        (extended,)) == -1
    # a modified file's patch does not show all its tests: the run counts
    assert ChangedTests([("tests/models/gen/test_new.py", None)], ()).distance(
        (extended,)) == 1


SHOWN_CUDA_ONLY = """\
@pytest.mark.parametrize("model_id", MODELS)
@pytest.mark.skipif(
    not current_platform.is_cuda_alike(), reason="Skip if not cuda or rocm"
)
def test_image(model_id, vllm_runner): ...


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_video(vllm_runner): ...
"""


def test_a_step_without_a_gpu_does_not_run_a_test_every_shown_test_of_which_needs_cuda() -> None:
    assert file_marks(SHOWN_CUDA_ONLY).gpu_only()
    change = ChangedTests([("tests/models/test_vit.py", None)], (),
                          gpu_only=["tests/models/test_vit.py"])
    run = (PytestRun(("models",)),)
    assert change.distance(run, gpu=False) == -1
    assert change.distance(run) == 1
    # one shown test without the skip runs on a CPU too
    mixed = SHOWN_CUDA_ONLY + "\n\ndef test_cpu(): ...\n"
    assert not file_marks(mixed).gpu_only()
    assert file_marks("pytestmark = pytest.mark.skipif(\n    not current_platform.is_cuda(),"
                      " reason='x')\n").gpu_only()
    assert not file_marks("x = 1\n").gpu_only()  # no test shown: not known to need CUDA


def test_module_tests_are_its_test_file_or_its_package_test_folder() -> None:
    change = ChangedTests((), ["vllm/tokenizers/registry.py", "vllm/envs.py",
                               "vllm/v1/spec_decode/eagle.py", "vllm/v1/utils.py"])
    assert change.runs_module_tests((PytestRun(("tokenizers_",)),))  # shadowing `_`
    assert change.runs_module_tests((PytestRun(("test_envs.py",)),))
    assert change.runs_module_tests((PytestRun(("v1/spec_decode/test_eagle.py",)),))
    # `vllm/v1/utils.py` is at the top of `v1`: only `tests/v1` as a whole is its folder.
    assert change.runs_module_tests((PytestRun(("v1",)),))
    assert not change.runs_module_tests((PytestRun(("v1/e2e",)),))
    assert not change.runs_module_tests((PytestRun(("models/test_registry.py",)),))
    assert not ChangedTests((), ["vllm/__init__.py"]).runs_module_tests((PytestRun(("v1",)),))


def test_vllm_steps_carry_the_tests_their_commands_run() -> None:
    pipeline = parse_pipeline({str(p.relative_to(FIXTURE)): p.read_text()
                               for p in FIXTURE.rglob("*.yaml")})
    by_label = {s.label: s for s in pipeline.steps}
    change = ChangedTests([("tests/config/test_basic.py", None)], ())
    runners = sorted(s.label for s in pipeline.steps if change.distance(s.test_runs) >= 0)
    assert runners == [":computer: (CPU) Multimodal + Config"]
    # An AMD mirror without commands of its own runs its step's.
    mirrors = [s for s in pipeline.steps if s.mirror_of in by_label]
    assert any(m.test_runs and m.test_runs == by_label[m.mirror_of].test_runs
               for m in mirrors)
    assert sum(1 for s in pipeline.steps if s.test_runs) > len(pipeline.steps) // 2


def test_hostile_commands_are_bounded() -> None:
    many = ["pytest " + " ".join(f"a{n}/b" for n in range(10_000))] * 100
    start = time.perf_counter()
    runs = pytest_runs(many)
    assert len(runs) == MAX_RUNS
    assert all(len(r.paths) <= MAX_PATHS for r in runs)
    change = ChangedTests([(f"tests/a{n}/b/test_x.py", None) for n in range(2_000)],
                          [f"vllm/a{n}/b/c.py" for n in range(2_000)])
    assert change.distance(runs) == 1
    assert change.runs_module_tests(runs)
    assert time.perf_counter() - start < 2.0


def test_hostile_test_texts_are_read_in_linear_time() -> None:
    start = time.perf_counter()
    for text in ("def test_a(\n" * 100_000, "pytestmark = 1\n" * 100_000,
                 "@pytest.mark.skip\n" * 100_000 + "def test_a(): ...\n"):
        marks = file_marks(text)
        assert len(marks.decorators) <= 20_000
        marks.gpu_only()
        marks.excluded_by("core_model")
    assert time.perf_counter() - start < 2.0


def test_random_commands_never_raise() -> None:
    import random

    rng = random.Random(40)
    alphabet = ["pytest", " ", "-m", "--ignore", "=", "'", '"', "a/b", "tests/", "&&",
                "\n", "::", "x.py", "-k", "$(", "#", "not"]
    change = ChangedTests([("tests/a/b/x.py", "x"), ("tests/x.py", None)], ["vllm/a/b.py"])
    for _ in range(2_000):
        command = "".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
        runs = pytest_runs([command])
        assert change.distance(runs) >= -1
        change.runs_module_tests(runs)
        change.tests_run(runs)


def test_an_added_test_every_reaching_run_selects_out_is_named_with_the_selections() -> None:
    unmarked = "import pytest\n\ndef test_load(): ...\n"
    change = ChangedTests([("tests/models/multimodal/test_new.py", unmarked)], ())
    runs = (PytestRun(("models/multimodal",), (), "distributed"),
            PytestRun(("models/multimodal",), ("models/multimodal/processing",), "core_model"),
            PytestRun(("v1/core",)))
    assert change.selected_out(runs) == {
        "tests/models/multimodal/test_new.py": ("-m distributed", "-m core_model")}
    # One run that selects it, and it is run: nothing to say.
    assert change.selected_out((*runs, PytestRun(("models",)))) == {}
    # A modified file's markers are not all in its patch: never claimed.
    modified = ChangedTests([("tests/models/multimodal/test_new.py", None)], ())
    assert modified.selected_out(runs) == {}
