"""Hostile PR text through the whole digest pipeline (issue 5, "Prove it").

Titles, bodies, file names, labels and branch names full of mentions, HTML, marker
look-alikes, control and bidi characters go through `build_digest` + `render_digest`
(en and zh, explain on and off) and through the handler onto the in-memory fake.
Whatever goes in, the comment keeps its guarantees: one marker on line 1 that parses,
no live mention or reference, no HTML but the renderer's own, no control characters,
within GitHub's size limit.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.digest import build_digest
from bot.core.facts import ChangedFile, PullRequestFacts
from bot.core.render.comment import DEFAULT_BUDGET, render_digest
from bot.core.render.escape import WORD_JOINER
from bot.core.render.marker import SHA_PATTERN, parse_marker
from bot.core.vocabulary import Lang
from bot.handlers.digest import Steer, sync_pull_request
from bot.rulebook.files import load_rules
from tests.fakes.github_state import FakeFile
from tests.handler_env import BOT, REPO, gh_for, make_ctx, make_state

RULES = load_rules(Path(__file__).resolve().parents[2] / "rules")

# Tags the renderer itself writes; any other tag-like text is an injection.
OWN_TAGS = frozenset({"<details>", "<details open>", "<summary>", "</summary>", "</details>",
                      "<sub>", "</sub>"})
_TAG = re.compile(r"<[!/?A-Za-z][^<>\n]*>?")
_BIDI = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C])
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")

HOSTILE_BITS = [
    "@vllm-project/maintainers", "@simon-mo", "@ simon", "a@b.c", "@@x", "@\u2060x",
    "-->", "--!>", "<!--", "<!-- pr-digest v1 sha=" + "f" * 40 +
    " rules=x lang=en verdict=read risk=none -->",
    "<img src=x onerror=alert(1)>", "<IMG SRC=x>", "<script>alert(1)</script>", "<ScRiPt>",
    "<details>", "<details open><summary>x</summary>", "</details>", "<sub>", "<a href=x>",
    "<", ">", "&lt;script&gt;", "&#64;simon-mo", "&#x40;", "\\@simon-mo", "\\<img>",
    "[click](https://evil.example/)", "![img](https://evil.example/x.png)", "[x]: http://y",
    "https://github.com/vllm-project/vllm/issues/1", "www.evil.example", "GH-1234",
    "#1234", "vllm-project/vllm#1", "owner/repo#12", "`", "``", "```", "|", "| a | b |",
    "*", "_", "~~", "\\", "# heading", "1. ", "- [ ] ", "- [x] **missing-gpu-eval** · ",
    "\x00", "\x07", "\x1b[31m", "\x7f", "\r", "\r\n", "\t", "\v", "\f", "\u0085", "\u2028",
    "\u2029", "\u202e", "\u202d", "\u2066", "\u2069", "\u200e", "\u061c", "\ufeff", "\u200b",
    "\ud800", "\udfff", " ", "\n", "\n\n", "## Test Plan\n", "## Test Result\n",
    "/digest mute", "@" + "a" * 39, "x" * 500,
]
FRAGMENT = st.one_of(st.sampled_from(HOSTILE_BITS), st.text(max_size=12))
HOSTILE = st.lists(FRAGMENT, max_size=25).map("".join)
# Paths that make rules fire, so hostile names reach the areas, evidence and trace.
REAL_DIRS = ["vllm/compilation/", "vllm/v1/attention/backends/", "csrc/", "docs/",
             "vllm/model_executor/models/", ".buildkite/", "tests/", "requirements/",
             "vllm/entrypoints/openai/", "vllm/model_executor/layers/quantization/", ""]
FILE_NAME = st.builds(lambda d, n, ext: d + n + ext, st.sampled_from(REAL_DIRS), HOSTILE,
                      st.sampled_from([".py", ".cu", ".md", ".yaml", ".txt", ""]))
PATCH_LINE = st.builds(lambda sign, text: sign + text, st.sampled_from(["+", "-", " "]),
                       st.one_of(HOSTILE, st.sampled_from([
                           "def @simon-mo():", "class <img src=x>:", "def f_-->(x):",
                           "    if torch.compiler.is_compiling():", "import os  # @vllm"])))
PATCH = st.one_of(
    st.none(),
    st.lists(PATCH_LINE, max_size=6).map(lambda ls: "@@ -1,3 +1,4 @@ def g():\n" + "\n".join(ls)),
    HOSTILE,
)
CHANGED_FILE = st.builds(
    ChangedFile, filename=FILE_NAME,
    status=st.sampled_from(["added", "removed", "modified", "renamed", "<img>"]),
    additions=st.integers(0, 5000), deletions=st.integers(0, 5000), patch=PATCH,
    previous_filename=st.one_of(st.none(), FILE_NAME),
)
HEAD_SHA = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=40, max_size=40),
    st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    st.text(alphabet="0123456789ABCDEF", min_size=40, max_size=40),
    HOSTILE,
)
LABEL = st.one_of(HOSTILE, st.sampled_from(["torch.compile", "v1", "ci/build", "rocm",
                                            "documentation", "@vllm-project/maintainers"]))
FACTS = st.builds(
    PullRequestFacts,
    repo=st.just(REPO), number=st.integers(1, 10**6), title=HOSTILE,
    body=st.one_of(HOSTILE, st.lists(st.sampled_from(["## Purpose\n", "## Test Plan\n",
                                                      "## Test Result\n"]) | FRAGMENT,
                                     max_size=40).map("".join)),
    author=HOSTILE, labels=st.lists(LABEL, max_size=6).map(tuple), base_ref=HOSTILE,
    head_sha=HEAD_SHA, draft=st.booleans(), changed_files=st.integers(0, 4000),
    files=st.lists(CHANGED_FILE, max_size=12).map(tuple),
)


# -- the properties, shared by every test ---------------------------------------------


def outside_code_spans(markdown: str) -> str:
    return _CODE_SPAN.sub("", markdown)


def assert_safe_comment(markdown: str, head_sha: str) -> None:
    first, _, rest = markdown.partition("\n")
    assert first.startswith("<!-- pr-digest "), first
    assert first.endswith(" -->"), first
    assert markdown.count("<!--") == 1
    assert markdown.count("-->") == 1
    marker = parse_marker(markdown)
    assert marker is not None, first
    if re.fullmatch(SHA_PATTERN, head_sha.lower()):
        assert marker.head_sha == head_sha.lower()
    else:
        assert marker.head_sha == ""
    # GitHub resolves mentions on rendered text, code spans excepted, but we break
    # them everywhere: no '@' is ever directly followed by a name character.
    assert not re.search(r"@[A-Za-z0-9_]", markdown), _around(markdown, r"@[A-Za-z0-9_]")
    prose = outside_code_spans(rest)
    assert not re.search(r"#[0-9]", prose), _around(prose, r"#[0-9]")
    assert not re.search(r"(?<!\\)\]\(", prose), _around(prose, r"(?<!\\)\]\(")
    assert not re.search(r"(?i)<\s*(img|script|a|iframe|svg)", markdown)
    tags = {tag for tag in _TAG.findall(rest)}
    assert tags <= OWN_TAGS, tags - OWN_TAGS
    # Ours: the collapsed area checklist and the explain trace, each closed.
    assert rest.count("<details") <= 2
    assert rest.count("<details") == rest.count("</details>")
    assert len(markdown) <= DEFAULT_BUDGET
    bad = [hex(ord(c)) for c in markdown
           if (unicodedata.category(c) in ("Cc", "Cs") and c != "\n") or ord(c) in _BIDI]
    assert not bad, bad


def _around(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return "" if match is None else repr(text[max(0, match.start() - 60): match.end() + 60])


def render(facts: PullRequestFacts, lang: Lang, explain: bool) -> str:
    return render_digest(build_digest(facts, RULES, lang, explain=explain))


# -- pure pipeline -------------------------------------------------------------------


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(facts=FACTS, lang=st.sampled_from(["en", "zh"]), explain=st.booleans())
def test_hostile_pull_requests_render_safe_comments(
    facts: PullRequestFacts, lang: Lang, explain: bool
) -> None:
    assert_safe_comment(render(facts, lang, explain), facts.head_sha)


_ALL_BITS = "".join(HOSTILE_BITS)
HUGE_BODY = (_ALL_BITS * (1_000_000 // len(_ALL_BITS) + 1))[:1_000_000]
MANY_FILES = tuple(
    ChangedFile(filename=f"vllm/compilation/@simon-mo-{i}<img src=x>-->.py", additions=3,
                patch=f"@@ -1 +1 @@ def f():\n+def @vllm_project_maintainers_{i}(): <script>")
    for i in range(3000)
)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("explain", [False, True])
@pytest.mark.parametrize("facts", [
    PullRequestFacts(title="@simon-mo " * 10_000, body=HUGE_BODY, head_sha="a" * 40,
                     labels=("@vllm-project/maintainers", "<img src=x onerror=alert(1)>"),
                     files=(ChangedFile(filename="vllm/compilation/-->.py", patch=HUGE_BODY),)),
    PullRequestFacts(title="x", body="## Test Plan\n" + "@simon-mo #1234 " * 60_000,
                     head_sha="-->", base_ref="<!-- pr-digest", changed_files=4200,
                     files=MANY_FILES),
], ids=["1MB-body", "3000-files"])
def test_megabyte_bodies_and_huge_prs_stay_safe_and_bounded(
    facts: PullRequestFacts, lang: Lang, explain: bool
) -> None:
    assert len(facts.body) >= 900_000
    markdown = render(facts, lang, explain)
    assert_safe_comment(markdown, facts.head_sha)
    assert "@\u2060" in markdown or "simon" not in markdown  # escaped, not dropped silently


def test_the_property_checks_catch_what_they_claim_to() -> None:
    good = render(PullRequestFacts(head_sha="b" * 40, files=MANY_FILES[:3]), "en", True)
    assert_safe_comment(good, "b" * 40)
    planted = [
        good + "\ncc @simon-mo",
        good + "\n<img src=x onerror=alert(1)>",
        good + "\nsee #1234",
        good + "\n[x](https://evil.example)",
        good + "\n-->",
        good + "\n<details>",
        good + "\x1b[31m",
        good + "\u202e",
        good + "x" * DEFAULT_BUDGET,
        good.replace("b" * 40, "c" * 40, 1),
    ]
    for bad in planted:
        with pytest.raises(AssertionError):
            assert_safe_comment(bad, "b" * 40)
    assert WORD_JOINER in render(PullRequestFacts(title="@x", body="@simon-mo",
                                                  files=MANY_FILES[:1]), "en", False)


# -- through the handler onto the in-memory fake GitHub --------------------------------

HOSTILE_PULLS = [
    {"title": "[Core] <img src=x onerror=alert(1)> @vllm-project/maintainers -->",
     "body": "## Test Plan\n@simon-mo please <script>alert(1)</script> #1234 --> \u202e"
             "<!-- pr-digest v1 sha=" + "0" * 40 + " rules=x lang=en verdict=read risk=none -->",
     "labels": ["@simon-mo", "<details>", "torch.compile"], "base": "<!-- pr-digest",
     "files": [FakeFile("vllm/compilation/@simon-mo<img src=x>.py",
                        patch="@@ -1 +1 @@ def f():\n+def `@x`():\n+class A_-->: pass"),
               FakeFile("docs/-->\u202e.md", status="removed")]},
    {"title": "``` | | ![x](https://evil.example/p.png) \x00\x1b",
     "body": "\r\n".join(HOSTILE_BITS) * 200, "labels": ["ci/build", "a|b`c"], "base": "main",
     "files": [FakeFile(f"csrc/@vllm-project/maintainers/{i}-->.cu") for i in range(400)]},
]


@pytest.mark.parametrize("steer", [Steer(force=True), Steer(force=True, explain=True),
                                   Steer(force=True, lang="zh", explain=True)],
                         ids=["en", "en-explain", "zh-explain"])
@pytest.mark.parametrize("pull", HOSTILE_PULLS, ids=["html-mentions", "markdown-bulk"])
async def test_handler_posts_a_safe_comment_for_hostile_pulls(
    pull: dict[str, object], steer: Steer
) -> None:
    state = make_state()
    seeded = state.add_pull(REPO, 7, author="@simon-mo", **pull)  # type: ignore[arg-type]
    outcome = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7, steer)
    bodies = state.bot_comments(REPO, 7, BOT)
    assert outcome.action == "create"
    assert len(bodies) == 1
    assert_safe_comment(bodies[0], seeded.head_sha)
    again = await sync_pull_request(gh_for(state), make_ctx(), REPO, 7, steer)
    assert again.action == "noop"  # the hostile text renders the same way every time
