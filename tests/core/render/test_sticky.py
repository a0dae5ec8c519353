"""The sticky comment plan and the marker it is found by."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.render.comment import render_digest
from bot.core.render.marker import MARKER_PREFIX, Marker, parse_marker, render_marker
from bot.core.render.sticky import (
    CommentSnapshot,
    StickyPlan,
    existing_ticks,
    our_comments,
    plan_sticky,
    risk_escalated,
    same_body,
)
from tests.core.render.test_render import deep_read_digest, quiet_digest

BOT = "pr-digest[bot]"
SHA = "0123456789abcdef0123456789abcdef01234567"
T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

BODY = f"{MARKER_PREFIX} v1 sha={SHA} rules=abc lang=en verdict=read risk=low -->\nhello"
NEW = f"{MARKER_PREFIX} v1 sha={SHA} rules=abc lang=en verdict=read risk=high -->\nchanged"
QUIET = f"{MARKER_PREFIX} v1 sha={SHA} rules=abc lang=en verdict=quiet risk=none -->\nquiet"


def comment(
    cid: int, body: str = BODY, author: str = BOT, minutes: int | None = 0
) -> CommentSnapshot:
    created = None if minutes is None else T0 + timedelta(minutes=minutes)
    return CommentSnapshot(id=cid, author=author, body=body, created_at=created)


CASES: list[tuple[str, list[CommentSnapshot], str | None, StickyPlan]] = [
    ("nothing yet", [], NEW, StickyPlan(action="create", body=NEW)),
    ("nothing yet, quiet PR", [], None, StickyPlan(action="noop")),
    (
        "only human comments",
        [comment(1, "LGTM", "simon-mo"), comment(2, "/digest", "youkaichao")],
        NEW,
        StickyPlan(action="create", body=NEW),
    ),
    ("ours, changed", [comment(5)], NEW, StickyPlan(action="update", comment_id=5, body=NEW)),
    ("ours, equal", [comment(5)], BODY, StickyPlan(action="noop", comment_id=5)),
    (
        "ours, equal but trailing whitespace and CRLF",
        [comment(5, BODY.replace("\n", "  \r\n") + "\n\n")],
        BODY,
        StickyPlan(action="noop", comment_id=5),
    ),
    (
        "another bot copied our marker",
        [comment(3, BODY, "copycat[bot]"), comment(5)],
        NEW,
        StickyPlan(action="update", comment_id=5, body=NEW),
    ),
    (
        "only another bot's copy",
        [comment(3, BODY, "copycat[bot]")],
        NEW,
        StickyPlan(action="create", body=NEW),
    ),
    (
        "our login quoting the marker later in the body is not ours",
        [comment(4, "see below\n" + BODY)],
        NEW,
        StickyPlan(action="create", body=NEW),
    ),
    (
        "two of ours: keep the oldest, delete the rest",
        [comment(9, minutes=2), comment(7, minutes=0), comment(8, minutes=1)],
        NEW,
        StickyPlan(action="update", comment_id=7, body=NEW, delete_ids=(8, 9)),
    ),
    (
        "two of ours, oldest already right",
        [comment(7, NEW, minutes=0), comment(8, BODY, minutes=1)],
        NEW,
        StickyPlan(action="noop", comment_id=7, delete_ids=(8,)),
    ),
    (
        "same second: the lower id is older",
        [comment(12, minutes=0), comment(11, minutes=0)],
        NEW,
        StickyPlan(action="update", comment_id=11, body=NEW, delete_ids=(12,)),
    ),
    (
        "quiet PR with ours: neutralize it",
        [comment(5)],
        None,
        StickyPlan(action="update", comment_id=5, body=QUIET),
    ),
    (
        "quiet PR, already neutral",
        [comment(5, QUIET)],
        None,
        StickyPlan(action="noop", comment_id=5),
    ),
    (
        "login compared case-insensitively",
        [comment(5, author="PR-Digest[bot]")],
        NEW,
        StickyPlan(action="update", comment_id=5, body=NEW),
    ),
]


@pytest.mark.parametrize(
    ("existing", "desired", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_plan_sticky(
    existing: list[CommentSnapshot], desired: str | None, expected: StickyPlan
) -> None:
    assert plan_sticky(existing, BOT, desired, quiet_body=QUIET) == expected


def test_quiet_without_quiet_body_is_refused_when_a_comment_exists() -> None:
    with pytest.raises(ValueError, match="quiet_body"):
        plan_sticky([comment(5)], BOT, None)
    assert plan_sticky([], BOT, None) == StickyPlan(action="noop")


def test_comments_without_created_at_sort_by_id_after_dated_ones() -> None:
    ours = our_comments(
        [comment(3, minutes=None), comment(9, minutes=5), comment(2, minutes=None)], BOT
    )
    assert [c.id for c in ours] == [9, 2, 3]


def test_naive_and_aware_timestamps_mix() -> None:
    naive = CommentSnapshot(id=4, author=BOT, body=BODY, created_at=datetime(2026, 1, 5, 11, 0))
    ours = our_comments([comment(3, minutes=0), naive], BOT)
    assert [c.id for c in ours] == [4, 3]


def test_same_body_ignores_only_trailing_whitespace() -> None:
    assert same_body("a\nb", "a  \nb\n\n")
    assert same_body("a\r\nb", "a\nb")
    assert not same_body("a\nb", "a\n b")
    assert not same_body("a\nb", "a\nB")


def test_existing_ticks_come_from_the_kept_comment_and_feed_the_render() -> None:
    digest = deep_read_digest()
    ticked_body = render_digest(digest, ticked=frozenset({"missing-gpu-eval"}))
    existing = [
        comment(10, ticked_body, minutes=0),
        comment(11, render_digest(digest, ticked=frozenset({"compile/tests-run"})), minutes=1),
        comment(9, render_digest(digest, ticked=frozenset({"compile/tests-run"})), "other[bot]"),
    ]
    ticks = existing_ticks(existing, BOT)
    assert ticks == frozenset({"missing-gpu-eval"})
    # The handler re-renders with the carried ticks: the kept comment is unchanged.
    plan = plan_sticky(existing, BOT, render_digest(digest, ticked=ticks))
    assert plan == StickyPlan(action="noop", comment_id=10, delete_ids=(11,))
    assert existing_ticks([], BOT) == frozenset()


def test_quiet_render_neutralizes_an_existing_digest() -> None:
    old = render_digest(deep_read_digest())
    quiet = render_digest(quiet_digest())
    plan = plan_sticky([comment(5, old)], BOT, None, quiet_body=quiet)
    assert plan == StickyPlan(action="update", comment_id=5, body=quiet)


MARKERS = [
    Marker(head_sha=SHA, rules_version="9c1d2e7f", lang="en", verdict="read", risk_level="high"),
    Marker(
        head_sha="f" * 64,
        rules_version="2026.01+rc1",
        lang="zh",
        verdict="quiet",
        risk_level="none",
        muted=True,
        explain=True,
    ),
    Marker(head_sha="", rules_version="unknown", lang="en", verdict="deep-read", risk_level="low"),
]


@pytest.mark.parametrize("marker", MARKERS)
def test_marker_round_trip(marker: Marker) -> None:
    line = render_marker(marker)
    assert "\n" not in line
    assert line.startswith(MARKER_PREFIX + " v1 ")
    assert line.endswith(" -->")
    assert parse_marker(line) == marker
    assert parse_marker(line + "\n### body\n- [ ] x") == marker


def test_marker_line_shape() -> None:
    assert render_marker(MARKERS[0]) == (
        f"<!-- pr-digest v1 sha={SHA} rules=9c1d2e7f lang=en verdict=read risk=high -->"
    )


GOOD = f"<!-- pr-digest v1 sha={SHA} rules=abc lang=en verdict=read risk=low -->"


@pytest.mark.parametrize(
    "body",
    [
        "",
        "hello",
        "\n" + GOOD,  # not on the first line
        GOOD.replace("sha=" + SHA, "sha=" + SHA[:39]),  # short sha
        GOOD.replace("sha=" + SHA, "sha=" + SHA.upper()),  # not lowercase hex
        GOOD.replace("sha=" + SHA, "sha=" + "g" * 40),
        GOOD.replace("lang=en", "lang=fr"),
        GOOD.replace("verdict=read", "verdict=urgent"),
        GOOD.replace("risk=low", "risk=critical"),
        GOOD.replace("rules=abc", "rules=a<b"),
        GOOD.replace("rules=abc", "rules="),
        GOOD.replace(" lang=en", ""),  # required field missing
        GOOD.replace(" -->", " muted=maybe -->"),
        GOOD.replace(" -->", " risk=high -->"),  # duplicate key
        GOOD.replace(" -->", ""),  # never closed
        GOOD.replace(" -->", " --> -->"),
        GOOD.replace(" v1 ", " version1 "),
        GOOD.replace("<!-- pr-digest", "<!-- pr-digestive"),
        GOOD.replace(" -->", " " + "x=y " * 400 + "-->"),  # absurdly long
    ],
)
def test_malformed_markers_are_rejected(body: str) -> None:
    assert parse_marker(body) is None


def test_marker_tolerates_unknown_fields_and_surrounding_space() -> None:
    body = (
        f"  {MARKER_PREFIX} v1 future=thing sha={SHA} rules=abc flag"
        " lang=en verdict=read risk=low -->\r\nx"
    )
    marker = parse_marker(body)
    assert marker is not None
    assert (marker.head_sha, marker.risk_level, marker.muted) == (SHA, "low", False)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, "high", False),
        ("none", "low", True),
        ("low", "high", True),
        ("medium", "medium", False),
        ("high", "low", False),
    ],
)
def test_risk_escalated(old: str | None, new: str, expected: bool) -> None:
    def mk(level: str) -> Marker:
        return Marker.model_validate(
            {
                "head_sha": SHA,
                "rules_version": "r",
                "lang": "en",
                "verdict": "read",
                "risk_level": level,
            }
        )

    assert risk_escalated(None if old is None else mk(old), mk(new)) is expected


def test_muted_pr_never_pings() -> None:
    old = MARKERS[0].model_copy(update={"risk_level": "low"})
    assert risk_escalated(old, MARKERS[0])
    assert not risk_escalated(old, MARKERS[0].model_copy(update={"muted": True}))


def _seen_at(body: str, seen: int) -> str:
    return body.replace(" -->", f" seen={seen} -->", 1)


def test_a_digest_built_from_an_older_read_of_the_pr_never_replaces_a_newer_one() -> None:
    shown = [comment(5, _seen_at(BODY, 200))]
    assert plan_sticky(shown, BOT, NEW, seen=100) == StickyPlan(action="older", comment_id=5)
    assert plan_sticky(shown, BOT, None, quiet_body=QUIET, seen=100).action == "older"
    assert plan_sticky(shown, BOT, NEW, seen=200) == StickyPlan(
        action="update", comment_id=5, body=_seen_at(NEW, 200))
    assert plan_sticky(shown, BOT, NEW, seen=300).body == _seen_at(NEW, 300)
    # Nothing to order by on either side (a marker from before `seen`, or no read time):
    # the newest run writes, as before.
    assert plan_sticky([comment(5)], BOT, NEW, seen=100).action == "update"
    assert plan_sticky(shown, BOT, NEW).body == NEW


def test_the_read_time_alone_is_no_reason_to_write() -> None:
    assert plan_sticky([comment(5, _seen_at(BODY, 200))], BOT, BODY, seen=300) == StickyPlan(
        action="noop", comment_id=5)
    assert plan_sticky([comment(5, _seen_at(BODY, 300))], BOT, BODY, seen=200).action == "noop"
    assert plan_sticky([], BOT, NEW, seen=300) == StickyPlan(
        action="create", body=_seen_at(NEW, 300))


def test_seen_extends_the_marker_and_old_or_mangled_ones_still_parse() -> None:
    marker = parse_marker(BODY)
    assert marker is not None
    assert marker.seen is None
    stamped = render_marker(marker.model_copy(update={"seen": 1767614400}))
    assert stamped.endswith(" seen=1767614400 -->")
    assert parse_marker(stamped) == marker.model_copy(update={"seen": 1767614400})
    for mangled in ("x", "-5", "1e9", "１２", "9" * 13, ""):
        again = parse_marker(_seen_at(BODY, 0).replace("seen=0", f"seen={mangled}"))
        assert again == marker, mangled  # as if absent: the rest of the marker is kept
