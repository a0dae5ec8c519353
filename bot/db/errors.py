"""The one error a database start can fail with; importing it imports no driver."""

from __future__ import annotations


class DatabaseUnreachable(Exception):
    """The database cannot be used at all (bad URL, host, credentials, database):
    `line` says why in one line with the password hidden, for `serve` and the CLI."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line
