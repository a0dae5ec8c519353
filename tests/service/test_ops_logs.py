"""Issue 14 item 9: no log field is dropped silently, handler lines carry the job and
delivery ids, secrets stay masked, and a console format for people."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import logging.handlers
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.observe.logs import (
    HotPathLog,
    LogFormat,
    bind_log_context,
    configure_logging,
    log_timestamp,
    register_secret,
)
from bot.observe.metrics import Metrics
from bot.queue.jobs import Worker
from bot.queue.store import Job, NewJob, SqliteJobStore, pr_key

SECRET = "a-webhook-secret-for-logs-0123"




def _capture(fmt: LogFormat) -> tuple[io.StringIO, logging.Handler]:
    handler = configure_logging("INFO", fmt)
    stream = io.StringIO()
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    return stream, handler


def test_every_extra_field_is_written_and_redacted() -> None:
    register_secret(SECRET)
    stream, handler = _capture("json")
    try:
        logging.getLogger("bot.test").info("requested reviewers", extra={
            "users": ["alice", "bob"], "teams": ["core"], "deleted": 2, "chars": 812,
            "note": f"token {SECRET}"})
    finally:
        logging.getLogger().removeHandler(handler)
    line = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert line["users"] == ["alice", "bob"]
    assert line["teams"] == ["core"]
    assert (line["deleted"], line["chars"]) == (2, 812)
    assert line["note"] == "token [REDACTED]"
    assert SECRET not in stream.getvalue()


def test_bound_context_reaches_lines_logged_inside_it() -> None:
    stream, handler = _capture("json")
    try:
        with bind_log_context(job=12, delivery="d-1"):
            logging.getLogger("bot.handlers.digest").info("planned update")
            logging.getLogger("bot.handlers.digest").info("explicit", extra={"job": 99})
        logging.getLogger("bot.handlers.digest").info("outside")
    finally:
        logging.getLogger().removeHandler(handler)
    inside, explicit, outside = (json.loads(x) for x in stream.getvalue().strip().splitlines())
    assert (inside["job"], inside["delivery"]) == (12, "d-1")
    assert explicit["job"] == 99
    assert "job" not in outside
    assert "delivery" not in outside


async def test_handler_lines_of_a_job_carry_its_ids(tmp_path: Path) -> None:
    stream, handler = _capture("json")
    store = SqliteJobStore(tmp_path / "jobs.db", settle_seconds=0.0)

    async def process(job: Job) -> None:
        logging.getLogger("bot.handlers.digest").info("dry-run: would create_comment")

    job_id = await store.enqueue(NewJob(kind="pr", key=pr_key("a/b", 5), installation_id=1,
                                        repo="a/b", number=5), delivery_id="delivery-77")
    worker = Worker(store, process, Metrics(), concurrency=1, poll_interval=0.01)
    try:
        await worker.start()
        for _ in range(500):
            if (await store.counts())["done"] == 1:
                break
            await asyncio.sleep(0.01)
        await worker.stop(1.0)
    finally:
        store.close()
        logging.getLogger().removeHandler(handler)
    lines = [json.loads(x) for x in stream.getvalue().strip().splitlines()]
    handler_line = next(x for x in lines if x["msg"] == "dry-run: would create_comment")
    assert handler_line["job"] == job_id
    assert handler_line["delivery"] == "delivery-77"
    assert handler_line["pr"] == 5


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_uvicorns_coloured_copy_of_the_message_is_left_out(fmt: LogFormat) -> None:
    stream, handler = _capture(fmt)
    try:
        # As uvicorn logs it: the message, and a copy with ANSI colours for its formatter.
        # (Not uvicorn's own logger: other tests' servers may have set its propagation.)
        logging.getLogger("bot.test.server").info(
            "Finished server process [%d]", 42,
            extra={"color_message": "Finished server process [\x1b[36m%d\x1b[0m]"})
    finally:
        logging.getLogger().removeHandler(handler)
    text = stream.getvalue()
    assert "Finished server process [42]" in text
    assert "color_message" not in text
    assert "\x1b" not in text
    assert "\\u001b" not in text


def test_console_format_is_one_readable_line() -> None:
    stream, handler = _capture("console")
    try:
        with bind_log_context(job=3):
            logging.getLogger("bot.queue.jobs").warning(
                "job %s", "retry", extra={"error": "GET https://x/y: cannot connect (refused)",
                                          "users": ["a", "b"]})
    finally:
        logging.getLogger().removeHandler(handler)
    text = stream.getvalue().strip()
    assert "\n" not in text
    assert " WARNING bot.queue.jobs: job retry  " in text
    assert 'error="GET https://x/y: cannot connect (refused)"' in text
    assert "users=a,b" in text
    assert "job=3" in text
    assert not text.startswith("{")


def _only_our_handler(fmt: LogFormat) -> tuple[io.StringIO, list[logging.Handler]]:
    """Root logging as the service configures it: our handler and nothing else (pytest's
    capture handlers are set aside for the test and put back by the caller)."""
    root = logging.getLogger()
    saved = list(root.handlers)
    stream, handler = _capture(fmt)
    root.handlers = [handler]
    return stream, saved


def _hot_and_logging_lines(
    fmt: LogFormat, fields: dict[str, object] | None = None,
) -> tuple[dict[str, object], dict[str, object]]:
    register_secret(SECRET)
    if fields is None:
        fields = {
            "delivery": "d-7", "event": "pull_request", "action": "opened",
            "outcome": "accepted", "repo": "vllm-project/vllm", "pr": 12, "installation": 3,
            "job": 41, "status": 202, "duration_ms": 1.25, "reason": None,
            "note": f"sig {SECRET} ghp_{'a' * 36}", "labels": ["x", "\ud800"],
        }
    stream, saved = _only_our_handler(fmt)
    records: list[logging.LogRecord] = []
    make_record = logging.getLogRecordFactory()

    def counting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        records.append(make_record(*args, **kwargs))
        return records[-1]

    logging.setLogRecordFactory(counting_factory)
    try:
        with bind_log_context(kind="intake", job=5):
            HotPathLog("bot.intake.app").log(logging.WARNING, "delivery accepted", dict(fields))
            # The fast path made no LogRecord: it really was taken.
            assert records == []
            logging.getLogger("bot.intake.app").warning(
                "delivery %s", "accepted", extra=dict(fields))
            assert len(records) == 1
    finally:
        logging.setLogRecordFactory(make_record)
        logging.getLogger().handlers = saved
    hot, slow = (json.loads(x) for x in stream.getvalue().strip().splitlines())
    return hot, slow


def test_hot_path_line_is_the_line_logging_writes() -> None:
    hot, slow = _hot_and_logging_lines("json")
    assert hot.pop("ts")
    assert slow.pop("ts")
    assert hot == slow
    # Same key order too: a person reading the log sees the same line.
    assert list(hot) == list(slow)
    assert hot["job"] == 41  # an explicit field wins over the bound context
    assert hot["kind"] == "intake"
    assert hot["note"] == "sig [REDACTED] [REDACTED]"
    assert "reason" not in hot  # None is left out, as logging's formatter does


@pytest.mark.parametrize(("note", "written"), [
    ("plain words", "plain words"),
    (f"sig {SECRET}", "sig [REDACTED]"),
    (f"ghp_{'b' * 36} and {SECRET}", "[REDACTED] and [REDACTED]"),
    ("sha256=" + "ab" * 32, "[REDACTED]"),
])
def test_hot_path_line_of_plain_values_is_redacted_as_logging_does(
        note: str, written: str) -> None:
    # Scalar values only: the line checks them all at once and redacts one by one only
    # when something may need it; either way it must equal what logging writes.
    fields: dict[str, object] = {"delivery": "d-9", "pr": 4, "duration_ms": 0.5,
                                 "reason": note, "status": 202}
    hot, slow = _hot_and_logging_lines("json", fields)
    hot.pop("ts")
    slow.pop("ts")
    assert hot == slow
    assert hot["reason"] == written


def test_hot_path_defers_to_logging_when_anything_else_listens() -> None:
    # A capture handler beside ours (as in tests, or an app embedding the bot) must get
    # the record: the hot path steps aside.
    stream, saved = _only_our_handler("json")
    listener = logging.handlers.BufferingHandler(10)
    logging.getLogger().addHandler(listener)
    try:
        HotPathLog("bot.intake.app").log(logging.INFO, "delivery ignored", {"delivery": "d-8"})
    finally:
        logging.getLogger().handlers = saved
    assert [r.getMessage() for r in listener.buffer] == ["delivery ignored"]
    assert json.loads(stream.getvalue())["delivery"] == "d-8"


def test_hot_path_console_format_goes_through_logging() -> None:
    stream, saved = _only_our_handler("console")
    try:
        HotPathLog("bot.intake.app").log(logging.INFO, "delivery accepted", {"pr": 3})
    finally:
        logging.getLogger().handlers = saved
    assert "INFO    bot.intake.app: delivery accepted  pr=3" in stream.getvalue()


def test_hot_path_respects_the_level() -> None:
    stream, saved = _only_our_handler("json")
    try:
        logging.getLogger().setLevel(logging.WARNING)
        HotPathLog("bot.intake.app").log(logging.INFO, "delivery accepted", {"pr": 3})
    finally:
        logging.getLogger().handlers = saved
        logging.getLogger().setLevel(logging.INFO)
    assert stream.getvalue() == ""


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=0, max_value=4e9, allow_nan=False)
       | st.integers(0, 4_000_000_000).map(lambda s: s + 0.9999996)
       | st.integers(0, 4_000_000_000_000).map(lambda ms: ms / 1000 + 0.0005))
def test_cached_timestamp_is_datetimes_own(created: float) -> None:
    # The per-second prefix cache must round exactly as datetime does, at every edge.
    expected = datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")
    assert log_timestamp(created) == expected
