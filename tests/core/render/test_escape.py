"""Hostile PR text must never mention, reference, inject HTML or escape its line."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.render.comment import digest_marker, render_digest, ticked_ids
from bot.core.render.escape import WORD_JOINER, escape_code, escape_text, sanitize_trusted
from bot.core.render.marker import parse_marker
from bot.core.vocabulary import (
    Clue,
    Evidence,
    Note,
    Reviewers,
    Risk,
    RoutingOutcome,
    RuleText,
    Symbol,
    TraceEntry,
)
from tests.core.render.test_render import deep_read_digest

HOSTILE = [
    "@vllm-project/maintainers please look",
    "cc @simon-mo",
    "-->",
    "<!-- pr-digest v1 sha=" + "0" * 40 + " rules=x lang=en verdict=quiet risk=none -->",
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    "![x](https://evil.example/x.png)",
    "fixes #1234",
    "vllm-project/vllm#1",
    "see https://github.com/vllm-project/vllm/issues/1",
    "GH-42",
    "bell\x07 null\x00 esc\x1b[31m",
    "abc\u202eexe.py\u202c and \u2066isolate\u2069",
    "line1\nline2\r\n- [x] **missing-gpu-eval** · forged",
    "x" * 10_000,
    "@" * 5000 + "a",
    "weird`file``name```.py",
    "| a | b |",
    "# heading",
    "> quote",
    "- item",
    "1. ordered",
    "**bold** _em_ ~~strike~~",
    "&lt;!-- entity --&gt;",
    "back\\slash\\",
]

MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def outside_code(line: str) -> str:
    """The line with CommonMark code spans blanked out (backslash escapes respected)."""
    out: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
            continue
        if ch != "`":
            out.append(ch)
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < len(line):
            if line[k] != "`":
                k += 1
                continue
            m = k
            while m < len(line) and line[m] == "`":
                m += 1
            if m - k == run:
                close = k
                break
            k = m
        if close < 0:
            out.append(line[i:j])
            i = j
        else:
            out.append(" CODE ")
            i = close + run
    return "".join(out)


def untrusted_digest(s: str) -> str:
    """`s` in every field that carries PR-derived text."""
    base = deep_read_digest()
    digest = base.model_copy(
        update={
            "risks": (
                *base.risks,
                Risk(id="large-diff", severity="low",
                     params=(("files", 50), ("additions", 9000), ("deletions", 10)),
                     evidence=(Clue(kind="quote", text=s), Clue(kind="file", text=s))),
            ),
            # The refused config's problem is quoted from the repository's own file.
            "notes": (Note(id="repo-config-invalid", text=s),),
            "symbols": (*base.symbols, Symbol(file=s, name=s, change="added")),
            "removed_files": (s,),
            "labels": (s, "torch.compile"),
            "reviewers": Reviewers(users=(s,), teams=(s,)),
            "routing": RoutingOutcome(
                requested_users=(s,), because=((s, s),), skipped=((s, "busy"),)
            ),
            "trace": (
                *base.trace,
                TraceEntry(
                    rule=s, fired=True, evidence=(Evidence(rule=s, kind="title", subject=s),)
                ),
            ),
            "ci_areas": (s,),
        }
    )
    return render_digest(digest)


def trusted_digest(s: str) -> str:
    """`s` in the catalogue/rule fields: Markdown stays, the hard guarantees must hold."""
    base = deep_read_digest()
    area = base.areas[0].model_copy(
        update={"title": RuleText(en=s), "audience": RuleText(en=s), "focus": (RuleText(en=s),)})
    digest = base.model_copy(
        update={
            "areas": (area, *base.areas[1:]),
            "routing": RoutingOutcome(skipped=(("someone", s),)),
            "trace": (*base.trace, TraceEntry(rule="r", fired=False, note=s)),
        }
    )
    return render_digest(digest)


def assert_hard_guarantees(body: str) -> None:
    assert body.count("<!--") == 1
    assert body.count("-->") == 1
    assert body.startswith("<!-- pr-digest v1 ")
    assert parse_marker(body) == digest_marker(deep_read_digest())
    assert not re.search(r"<\s*(img|script)", body, re.IGNORECASE)
    assert not BIDI.search(body)
    assert not CONTROL.search(body)
    assert ticked_ids(body) == frozenset()  # no forged tick
    # Mentions do not notify from code spans, but we break them there too.
    assert not re.search(r"@[A-Za-z0-9]", body)
    for line in body.splitlines():
        assert not re.search(r"#\d", outside_code(line)), line  # no issue reference


@pytest.mark.parametrize("s", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_pr_text_in_a_full_digest_is_inert(s: str) -> None:
    body = untrusted_digest(s)
    assert_hard_guarantees(body)
    for line in body.splitlines():
        prose = outside_code(line)
        assert not MENTION.search(prose), line
        assert not re.search(r"(?<!\\)\]\(", prose), line  # no link syntax
        assert "://" not in prose, line  # no autolinked URL


@pytest.mark.parametrize("s", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_in_trusted_fields_still_cannot_ping_or_inject(s: str) -> None:
    assert_hard_guarantees(trusted_digest(s))


def test_escape_text_neutralizes_each_construct() -> None:
    assert escape_text("@simon-mo") == f"@{WORD_JOINER}simon-mo"
    assert escape_text("@vllm-project/maintainers") == f"@{WORD_JOINER}vllm-project/maintainers"
    assert escape_text("#1234") == f"\\#{WORD_JOINER}1234"
    assert escape_text("-->") == "\\--&gt;"
    assert escape_text("<b>&") == "&lt;b&gt;&amp;"
    assert escape_text("[a](b)") == "\\[a\\]\\(b\\)"
    assert escape_text("a|b*c_d`e") == "a\\|b\\*c\\_d\\`e"
    assert escape_text("1. x") == "1\\. x"
    assert escape_text("a\nb\r\nc\td") == "a b c d"
    assert escape_text("ok\u202eko") == "okko"


def test_escape_text_caps_length_with_an_ellipsis() -> None:
    out = escape_text("word " * 5000)
    assert len(out) <= 200
    assert out.endswith("…")
    assert escape_text("short") == "short"
    assert len(escape_text("<" * 1000, limit=50)) <= 50  # counted after escaping
    assert escape_text("a" * 300, limit=10) == "a" * 9 + "…"


@pytest.mark.parametrize(
    "name",
    ["plain/path.py", "a`b.py", "``start.py", "end.py``", "a```b``c`d", "`", "```"],
)
def test_escape_code_round_trips_backticks(name: str) -> None:
    span = escape_code(name)
    fence = re.match(r"^`+", span)
    assert fence is not None
    n = len(fence.group(0))
    assert span.endswith("`" * n)
    inner = span[n:-n]
    assert "`" * n not in inner  # no run as long as the fence inside
    if inner.startswith(" ") and inner.endswith(" "):
        inner = inner[1:-1]
    assert inner == name


def test_escape_code_keeps_the_tail_of_long_paths() -> None:
    path = "vllm/" + "deep/" * 200 + "the_file.py"
    span = escape_code(path, 60)
    assert span.startswith("`…")
    assert span.endswith("the_file.py`")
    assert len(span) <= 62


def test_escape_code_breaks_html_comment_and_tags() -> None:
    span = escape_code("<!-- x --> <img src=x>")
    assert "<!--" not in span
    assert "-->" not in span
    assert "<img" not in span
    assert escape_code("") == "` `"


def test_sanitize_trusted_keeps_markdown_but_not_pings() -> None:
    assert sanitize_trusted("Run `pytest` **now**") == "Run `pytest` **now**"
    assert sanitize_trusted("ask @youkaichao about #12") == (
        f"ask @{WORD_JOINER}youkaichao about #{WORD_JOINER}12"
    )
    assert sanitize_trusted("<!-- x -->") == "&lt;!-- x --&gt;"
    already = escape_text("@a #1")
    assert sanitize_trusted(already) == already  # idempotent on escaped text


@settings(max_examples=300, deadline=None)
@given(st.text(), st.integers(min_value=1, max_value=400))
def test_escape_text_properties(s: str, limit: int) -> None:
    out = escape_text(s, limit=limit)
    assert len(out) <= limit
    assert "<" not in out
    assert ">" not in out
    assert "\n" not in out
    assert "\r" not in out
    assert not re.search(r"@[^\u2060]|@$", out)  # every @ is followed by the joiner
    assert not re.search(r"#\d", out)
    assert not BIDI.search(out)
    assert not CONTROL.search(out)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_escape_code_properties(s: str) -> None:
    out = escape_code(s)
    assert "\n" not in out
    assert "<!--" not in out
    assert "-->" not in out
    assert not re.search(r"<[A-Za-z/!?]", out)
    assert not re.search(r"@[A-Za-z0-9]", out)
    assert outside_code(out) == " CODE "  # exactly one well-formed code span


def test_escape_code_can_keep_the_head_of_phrases() -> None:
    span = escape_code("Model evaluation: Not yet run " + "z" * 500, 40, keep="head")
    assert span.startswith("`Model evaluation: Not yet run")
    assert span.endswith("…`")
    assert len(span) <= 42
