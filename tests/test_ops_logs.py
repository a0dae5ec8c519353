"""Issue 14 item 9: no log field is dropped silently, handler lines carry the job and
delivery ids, secrets stay masked, and a console format for people."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path

from bot.logs import LogFormat, bind_log_context, configure_logging, register_secret
from bot.metrics import Metrics
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
