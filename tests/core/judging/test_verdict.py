"""judge_verdict: the verdict table, reading time and the one-line reason."""

from __future__ import annotations

import pytest

from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.judging.verdict import VerdictCall, judge_verdict, rank_areas
from bot.core.render.words import verdict_reason
from bot.core.vocabulary import AreaMatch, Criticality, Lang, Risk, Severity, Verdict


def reason(call: VerdictCall, areas: tuple[AreaMatch, ...], lang: Lang = "en") -> str:
    """The one-line reason rendering words from the verdict's grounds."""
    return verdict_reason(call.grounds, areas, lang)


def area(
    area_id: str, criticality: Criticality = "medium", *, quiet: bool = False, title: str = ""
) -> AreaMatch:
    return AreaMatch(
        id=area_id,
        title=title or area_id,
        audience="reviewers",
        criticality=criticality,
        numerics=False,
        quiet=quiet,
    )


def pr(additions: int, deletions: int, files: int = 1, name: str = "vllm/x.py") -> PullRequestFacts:
    changed = tuple(
        ChangedFile(filename=f"{name}{i or ''}", additions=additions // files,
                    deletions=deletions // files)
        for i in range(files)
    )  # fmt: skip
    return PullRequestFacts(
        files=changed, changed_files=files, additions=additions, deletions=deletions
    )


def risk(severity: Severity) -> Risk:
    return Risk(id=f"r-{severity}", severity=severity, text="t")


DOCS = area("docs", "low", quiet=True)
CI = area("ci", "low", quiet=True)
FRONTEND = area("frontend", "medium")
COMPILE = area("compile", "high", title="torch.compile")
ATTENTION = area("attention-backend", "critical")

TABLE: list[tuple[str, PullRequestFacts, tuple[AreaMatch, ...], tuple[Risk, ...], Verdict]] = [
    ("docs only", pr(40, 3, name="docs/a.md"), (DOCS,), (), "quiet"),
    ("docs and ci", pr(40, 3, 2), (DOCS, CI), (risk("low"),), "quiet"),
    # `quiet` is "nothing to say": an open medium risk is something.
    ("docs and ci, medium risk", pr(40, 3, 2), (DOCS, CI), (risk("medium"),), "skim"),
    ("no areas, medium risk", pr(300, 10), (), (risk("medium"),), "skim"),
    ("no areas", pr(300, 10), (), (), "quiet"),
    ("docs cherry-pick: a high risk is never quiet", pr(4, 1), (DOCS,), (risk("high"),), "read"),
    ("+5/-1 frontend", pr(5, 1), (FRONTEND,), (), "skim"),
    ("+5/-1 frontend with medium risk", pr(5, 1), (FRONTEND,), (risk("medium"),), "skim"),
    ("+10/-0 is still tiny", pr(10, 0), (FRONTEND,), (), "skim"),
    ("+11/-0 frontend", pr(11, 0), (FRONTEND,), (), "read"),
    ("+5/-1 compile", pr(5, 1), (COMPILE,), (), "read"),
    # A change of <= 20 lines is never a deep read, whatever it touches or risks...
    ("+5/-1 compile, high risk", pr(5, 1), (COMPILE,), (risk("high"),), "read"),
    ("+20/-0 critical, high risk", pr(20, 0), (ATTENTION,), (risk("high"),), "read"),
    ("+21/-0 compile, high risk", pr(21, 0), (COMPILE,), (risk("high"),), "deep-read"),
    ("unknown size, compile, high risk", pr(0, 0, 2), (COMPILE,), (risk("high"),), "deep-read"),
    ("unknown size, compile", pr(0, 0, 2), (COMPILE,), (), "read"),
    ("+412/-37 compile", pr(412, 37, 9), (COMPILE,), (), "deep-read"),
    ("+60/-20 critical attention", pr(60, 20), (ATTENTION,), (), "deep-read"),
    ("frontend, mid size", pr(200, 50, 3), (FRONTEND,), (risk("medium"),), "read"),
    ("frontend, big, high risk", pr(500, 80, 6), (FRONTEND,), (risk("high"),), "deep-read"),
    ("frontend, small, high risk", pr(50, 8), (FRONTEND,), (risk("high"),), "read"),
    ("unknown size in frontend", pr(0, 0, 2), (FRONTEND,), (), "read"),
    ("docs plus compile, mid size", pr(120, 4, 3), (DOCS, COMPILE), (), "read"),
    ("docs plus compile, large", pr(150, 4, 3), (DOCS, COMPILE), (), "deep-read"),
    ("+150 test-only lines in compile", pr(150, 0, name="tests/compile/test_a.py"), (COMPILE,),
     (), "read"),
]


@pytest.mark.parametrize(
    ("facts", "areas", "risks", "expected"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_verdict_table(
    facts: PullRequestFacts,
    areas: tuple[AreaMatch, ...],
    risks: tuple[Risk, ...],
    expected: Verdict,
) -> None:
    call = judge_verdict(facts, areas, risks)
    assert call.verdict == expected
    assert call.reading_minutes >= 1


def test_a_repository_finding_is_never_quiet() -> None:
    facts = pr(40, 3, name="docs/a.md")
    assert judge_verdict(facts, (DOCS,), ()).verdict == "quiet"
    assert judge_verdict(facts, (DOCS,), (), repo_findings=True).verdict == "skim"


def test_an_admitted_gap_makes_even_a_small_change_a_deep_read() -> None:
    # "...unless the author admits a gap": "Not yet run — needs a GPU run before merge".
    call = judge_verdict(pr(5, 1), (COMPILE,), (risk("high"),), admitted=True)
    assert call.verdict == "deep-read"
    assert judge_verdict(pr(5, 1), (FRONTEND,), (), admitted=True).verdict == "skim"


def _claiming(base: AreaMatch, *files: str) -> AreaMatch:
    return base.model_copy(update={"files": files})


def test_the_lead_area_holds_most_changed_code_lines() -> None:
    # A frontend error migration touching chat_utils.py once: frontend leads, not the
    # higher-criticality multimodal area that claimed one small file.
    files = (
        ChangedFile(filename="vllm/entrypoints/openai/serving_chat.py", additions=80, deletions=60),
        ChangedFile(filename="vllm/entrypoints/openai/protocol.py", additions=30, deletions=10),
        ChangedFile(filename="vllm/entrypoints/chat_utils.py", additions=3, deletions=3),
        ChangedFile(filename="tests/entrypoints/test_chat.py", additions=300, deletions=0),
    )
    facts = PullRequestFacts(files=files, changed_files=4)
    frontend = _claiming(FRONTEND, *(f.filename for f in files[:3]))
    multimodal = _claiming(area("multimodal", "high"), "vllm/entrypoints/chat_utils.py")
    tests_heavy = _claiming(COMPILE, "tests/entrypoints/test_chat.py")
    call = judge_verdict(facts, (tests_heavy, multimodal, frontend), ())
    assert (call.grounds.lead, call.grounds.more_areas) == ("frontend", 2)
    assert reason(call, (tests_heavy, multimodal, frontend)).startswith(
        "frontend (+2 more) change")
    assert call.verdict == "read"
    # Areas already in reading order (as build_digest passes them) are not ranked again.
    ranked = rank_areas(facts, (tests_heavy, multimodal, frontend))
    assert ranked[0] is frontend
    assert judge_verdict(facts, ranked, (), ranked=True) == call


def test_reason_names_area_size_and_risks_not_the_area_criticality() -> None:
    call = judge_verdict(pr(412, 37, 9), (COMPILE,), (risk("high"),))
    assert reason(call, (COMPILE,)) == (
        "torch.compile change, +412/−37 in 9 files, with open high-severity risks"
    )


@pytest.mark.parametrize(
    ("risks", "note"),
    [
        ((risk("medium"),), ", with 1 open risk"),
        ((risk("medium"), risk("low"), risk("medium")), ", with 2 open risks"),
        ((risk("low"),), ""),
    ],
)  # fmt: skip
def test_reason_counts_the_shown_risks_in_words(risks: tuple[Risk, ...], note: str) -> None:
    call = judge_verdict(pr(412, 37, 9), (COMPILE,), risks)
    assert reason(call, (COMPILE,)) == (
        f"torch.compile change, +412/−37 in 9 files{note}")


def test_reason_in_chinese_and_for_more_areas() -> None:
    call = judge_verdict(pr(5, 1), (FRONTEND, COMPILE), ())
    assert reason(call, (FRONTEND, COMPILE), "zh") == (
        "torch.compile（另有 1 个领域）改动，1 个文件 +5/−1")


@pytest.mark.parametrize(
    ("facts", "areas", "words"),
    [
        (pr(3, 0, name="docs/a.md"), (DOCS,), "Only docs changes, +3/−0 in 1 file"),
        (pr(7, 2), (), "No area rule matched, +7/−2 in 1 file"),
        (pr(30, 2, name="tests/test_a.py"), (FRONTEND,),
         "frontend change, +30/−2 in 1 file, tests only"),
        (pr(3, 90, 3), (FRONTEND,),
         "frontend change, +3/−90 in 3 files, mostly deletions"),
        (pr(0, 0, 4), (FRONTEND,), "frontend change, 4 files of unknown size"),
        (pr(0, 0, 1), (FRONTEND,), "frontend change, 1 file of unknown size"),
        (PullRequestFacts(), (FRONTEND,), "frontend change, size unknown"),
        (pr(60, 20), (ATTENTION,), "attention-backend change, +60/−20 in 1 file"),
    ],
)  # fmt: skip
def test_reason_variants(
    facts: PullRequestFacts, areas: tuple[AreaMatch, ...], words: str
) -> None:
    assert reason(judge_verdict(facts, areas, ()), areas) == words


def test_reading_time_grows_sublinearly_and_with_criticality() -> None:
    def minutes(lines: int, areas: tuple[AreaMatch, ...]) -> int:
        return judge_verdict(pr(lines, 0), areas, ()).reading_minutes

    small, medium, large = (minutes(n, (FRONTEND,)) for n in (10, 400, 4000))
    assert small < medium < large
    assert large < 10 * medium  # ten times the lines, far less than ten times the time
    assert minutes(400, (ATTENTION,)) > minutes(400, (FRONTEND,)) > minutes(400, (DOCS,))
    assert judge_verdict(pr(1, 0, name="docs/a.md"), (DOCS,), ()).reading_minutes == 1
    high = judge_verdict(pr(400, 0), (FRONTEND,), (risk("high"),)).reading_minutes
    assert high > minutes(400, (FRONTEND,))


def test_a_lead_whose_files_docs_or_ci_also_claim_is_named_by_the_quiet_area() -> None:
    page = "docs/install/cpu.md"
    platform = area("hardware", "medium", title="Non-CUDA platforms").model_copy(
        update={"files": (page,)})
    docs = DOCS.model_copy(update={"files": (page,)})
    areas = (platform, docs)
    call = judge_verdict(pr(5, 5, name=page), areas, ())
    assert (call.grounds.lead, call.grounds.criticality, call.grounds.more_areas) == (
        "docs", "low", 1)
    assert reason(call, areas).startswith("docs (+1 more) change")


def test_a_lead_with_code_of_its_own_keeps_its_name() -> None:
    platform = area("hardware", "medium").model_copy(
        update={"files": ("vllm/platforms/cpu.py", "docs/install/cpu.md")})
    docs = DOCS.model_copy(update={"files": ("docs/install/cpu.md",)})
    call = judge_verdict(pr(10, 2, 2), (platform, docs), ())
    assert (call.grounds.lead, call.grounds.criticality, call.grounds.more_areas) == (
        "hardware", "medium", 0)


DOCSTRING_PATCH = (
    "@@ -10,4 +10,7 @@ class SchedulerConfig:\n"
    "     max_num_seqs: int = 128\n"
    '     """Maximum number of sequences per iteration.\n'
    "+\n"
    "+    Applies per data-parallel rank, not to the whole server; the API server\n"
    "+    admits requests against it.\n"
    '     """\n'
)
CODE_PATCH = DOCSTRING_PATCH + "+    max_waiting: int = 64\n"


def test_a_change_of_docstrings_and_docs_pages_is_a_skim_in_any_area() -> None:
    """Nothing runs differently: reading the words is a skim, not a read."""
    def facts(patch: str) -> PullRequestFacts:
        files = (ChangedFile(filename="vllm/config/scheduler.py", additions=40, deletions=2,
                             patch=patch),
                 ChangedFile(filename="docs/serving/dp.md", additions=30, deletions=0))
        return PullRequestFacts(files=files, changed_files=2, additions=70, deletions=2)

    assert judge_verdict(facts(DOCSTRING_PATCH), (ATTENTION,), ()).verdict == "skim"
    assert judge_verdict(facts(CODE_PATCH), (ATTENTION,), ()).verdict != "skim"
    assert judge_verdict(facts(DOCSTRING_PATCH), (ATTENTION,), (risk("high"),)).verdict != "skim"
