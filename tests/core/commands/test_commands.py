"""`/digest` parsing: only lines that render as plain text starting with /digest count."""

from __future__ import annotations

import time

import pytest

from bot.core.commands.parse import (
    MAX_COMMANDS,
    CommandSpec,
    command_lines_changed,
    commands_added,
    find_spec,
    parse_commands,
)
from bot.core.render.commands import render_help_table
from bot.core.render.i18n import CATALOGUE
from bot.core.vocabulary import Lang

# (case id, body, expected (name, args, known) in order)
CASES: list[tuple[str, str, list[tuple[str, tuple[str, ...], bool]]]] = [
    ("bare", "/digest", [("refresh", (), True)]),
    ("bare-trailing-space", "/digest   ", [("refresh", (), True)]),
    ("explain", "/digest explain", [("explain", (), True)]),
    ("wrong-case", "/DIGEST Explain", [("explain", (), True)]),
    ("leading-3-spaces", "   /digest zh", [("zh", (), True)]),
    ("leading-4-spaces-is-code", "    /digest zh", []),
    ("leading-tab-is-code", "\t/digest zh", []),
    ("args-kept", "/digest route Extra ARG", [("route", ("Extra", "ARG"), True)]),
    ("unknown", "/digest frobnicate", [("frobnicate", (), False)]),
    ("unknown-prose", "/digest thanks!", [("thanks!", (), False)]),
    ("digestion", "/digestion", []),
    ("digest-dash", "/digest-now", []),
    ("mid-line", "please /digest", []),
    ("mid-line-after-text", "Could someone run /digest explain?", []),
    ("in-list", "- /digest", []),
    ("quoted", "> /digest route", []),
    ("quoted-nested", "> > /digest route", []),
    ("quote-then-own-line", "> you said\n/digest en", [("en", (), True)]),
    ("fenced-backticks", "```\n/digest route\n```", []),
    ("fenced-tildes", "~~~\n/digest route\n~~~", []),
    ("fenced-long", "````md\n```\n/digest route\n```\n````", []),
    ("fenced-unclosed", "```\n/digest route", []),
    ("fence-needs-same-char", "```\n~~~\n/digest route\n```\n/digest", [("refresh", (), True)]),
    ("after-fence", "```\ncode\n```\n/digest explain", [("explain", (), True)]),
    ("indented-code", "text\n\n    /digest route\n", []),
    ("lazy-indented-in-paragraph", "text\n    /digest route", []),
    ("inline-code", "`/digest route`", []),
    ("inline-code-across-lines", "see `x\n/digest route` here", []),
    ("unmatched-backtick-is-text", "a ` b\n/digest en", [("en", (), True)]),
    ("html-comment-one-line", "<!-- /digest route -->", []),
    ("html-comment-multiline", "<!--\nPlease:\n/digest route\n-->\n/digest zh", [("zh", (), True)]),
    ("html-comment-across-blank", "<!--\n\n/digest route\n\n-->", []),
    (
        "html-comment-inline-open",
        "/digest explain <!-- note\n/digest route -->",
        [
            ("explain", (), True),
        ],
    ),
    ("html-comment-tail-args", "/digest en <!-- why -->", [("en", (), True)]),
    ("html-comment-unclosed-inline", "x <!-- y\n/digest en", [("en", (), True)]),
    (
        "several",
        "/digest explain\nthanks\n/digest zh\n/digest route",
        [("explain", (), True), ("zh", (), True), ("route", (), True)],
    ),
    (
        "duplicates",
        "/digest\n/digest\n/DIGEST explain\n/digest explain",
        [("refresh", (), True), ("explain", (), True)],
    ),
    ("refresh-long-form-is-distinct", "/digest refresh", [("refresh", (), True)]),
    ("crlf", "hi\r\n/digest explain\r\n/digest zh\r\n", [("explain", (), True), ("zh", (), True)]),
    ("cr-only", "hi\r/digest en", [("en", (), True)]),
    ("no-slash", "nothing to see", []),
    ("empty", "", []),
]


@pytest.mark.parametrize(
    ("body", "expected"), [(b, e) for _, b, e in CASES], ids=[c for c, _, _ in CASES]
)
def test_parse_commands(body: str, expected: list[tuple[str, tuple[str, ...], bool]]) -> None:
    got = [(c.name, c.args, c.known) for c in parse_commands(body)]
    assert got == expected


def test_line_keeps_what_was_written_without_trailing_comment() -> None:
    (command,) = parse_commands("  /DIGEST Explain  <!-- hidden -->")
    assert command.line == "/DIGEST Explain"


def test_known_vocabulary_comes_from_caller() -> None:
    (command,) = parse_commands("/digest label", known={"label"})
    assert command.known
    (command,) = parse_commands("/digest explain", known={"label"})
    assert not command.known


def test_cap_on_commands_per_comment() -> None:
    body = "\n".join(f"/digest cmd{i}" for i in range(MAX_COMMANDS * 3))
    commands = parse_commands(body)
    assert [c.name for c in commands] == [f"cmd{i}" for i in range(MAX_COMMANDS)]


def test_huge_args_are_bounded() -> None:
    (command,) = parse_commands("/digest route " + " ".join(["x" * 500] * 100))
    assert len(command.args) <= 8
    assert all(len(arg) <= 64 for arg in command.args)
    assert len(command.line) <= 200


def _seconds(body: str) -> float:
    start = time.perf_counter()
    parse_commands(body)
    return time.perf_counter() - start


@pytest.mark.parametrize(
    ("unit", "finds_tail"),
    [
        ("/digest explain\n", True),
        ("text with ` backtick and <!-- open /x\n", True),
        ("`" * 7 + " ``` " + "`" * 3 + " /x\n", True),
        ("> quote /digest\n", True),
        ("<!--\n/digest\n", False),
        ("```\n/digest\n", False),
    ],
    ids=["commands", "unclosed-inline", "backtick-runs", "quotes", "comments", "fences"],
)
@pytest.mark.timing
def test_one_megabyte_body_is_linear(unit: str, finds_tail: bool) -> None:
    tail = "\n/digest zh"
    small = unit * (100_000 // len(unit)) + tail
    big = unit * (1_000_000 // len(unit)) + tail
    assert len(big) > 990_000
    small_time = min(_seconds(small) for _ in range(2))
    big_time = min(_seconds(big) for _ in range(2))
    assert big_time < 2.0
    # 10x the input: linear is ~10x; quadratic would be ~100x.
    assert big_time < 30 * small_time + 0.02
    assert any(c.name == "zh" for c in parse_commands(big)) is finds_tail


@pytest.mark.timing
def test_pathological_backticks_are_linear() -> None:
    body = "".join("`" * n + " " for n in range(1, 1400))  # ~1 MB, every run length distinct
    assert len(body) > 900_000
    assert _seconds(body + "\n/digest") < 1.0


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("/digest explain", "/digest explain\n\nthanks, fixed a typo", False),
        ("/digest explain", "/digest  explain", False),
        ("/digest explain", "/DIGEST EXPLAIN", False),
        ("no command", "no command, edited", False),
        ("no command", "no command\n/digest route", True),
        ("/digest explain", "/digest zh", True),
        ("/digest explain", "", True),
        ("/digest explain", "```\n/digest explain\n```", True),
        ("/digest en\n/digest zh", "/digest zh\n/digest en", True),
    ],
)
def test_command_lines_changed(old: str, new: str, changed: bool) -> None:
    assert command_lines_changed(old, new) is changed


def test_commands_added_runs_only_new_ones() -> None:
    added = commands_added("/digest explain", "/digest explain\n/digest route")
    assert [c.name for c in added] == ["route"]
    assert commands_added("/digest explain\n/digest route", "/digest route") == ()


# A sample of what handler modules declare next to their handlers.
SAMPLE_SPECS = (
    CommandSpec(
        name="refresh",
        usage="/digest",
        summary_key="commands.summary.refresh",
        who="author-or-write",
    ),
    CommandSpec(
        name="explain",
        usage="/digest explain",
        summary_key="commands.summary.explain",
        who="author-or-write",
    ),
    CommandSpec(
        name="route",
        usage="/digest route",
        summary_key="commands.summary.route",
        who="anyone-with-write",
    ),
    CommandSpec(
        name="help",
        usage="/digest help",
        summary_key="commands.summary.help",
        who="author-or-write",
    ),
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_table_lists_every_spec(lang: Lang) -> None:
    table = render_help_table(SAMPLE_SPECS, lang)
    lines = table.splitlines()
    assert len(lines) == 2 + len(SAMPLE_SPECS)
    assert lines[1] == "| --- | --- | --- |"
    for spec, row in zip(SAMPLE_SPECS, lines[2:], strict=True):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[0] == f"`{spec.usage}`"
        assert cells[1] == CATALOGUE[spec.summary_key][lang]
        assert cells[2] == CATALOGUE["commands.who." + spec.who][lang]
    assert CATALOGUE["commands.help.column.who"][lang] in lines[0]


def test_help_table_escapes_pipes() -> None:
    spec = CommandSpec(
        name="x",
        usage="/digest x a|b",
        summary_key="commands.summary.help",
        who="anyone-with-write",
    )
    row = render_help_table([spec], "en").splitlines()[2]
    assert "a\\|b" in row
    assert row.count(" | ") == 2


def test_find_spec() -> None:
    assert find_spec(SAMPLE_SPECS, "route") is SAMPLE_SPECS[2]
    assert find_spec(SAMPLE_SPECS, "mute") is None


def test_every_command_key_has_both_languages() -> None:
    keys = [k for k in CATALOGUE if k.startswith(("commands.", "routing."))]
    assert len(keys) > 20
    for key in keys:
        assert set(CATALOGUE[key]) == {"en", "zh"}, key
        assert all(CATALOGUE[key].values()), key
