"""The errors of both databases; importing them imports no driver.

`StoreUnavailable` is part of the JobStore contract and imported from bot.queue.store;
it is defined here, at the bottom, so the PostgreSQL pool (bot/db/pool.py) can raise
it without importing the queue that uses the pool."""

from __future__ import annotations


class StoreUnavailable(Exception):
    """The database cannot be reached or written; intake answers 503."""


class DatabaseUnreachable(Exception):
    """The database cannot be used at all (bad URL, host, credentials, database):
    `line` says why in one line with the password hidden, for `serve` and the CLI."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line
