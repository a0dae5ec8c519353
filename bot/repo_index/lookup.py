"""Answer a digest's questions from the stored index: open the newest ready generation
of the PR's repository and run the pure queries. No index, no answer (None), never an
error: the digest simply says nothing about the code around the change."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path

from bot.core.facts import PullRequestFacts
from bot.core.repo_index.context import repo_context
from bot.core.repo_index.findings import RepoContext
from bot.core.repo_index.memory import MemoryIndex
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import Skipped, parse_python
from bot.repo_index import store
from bot.repo_index.build import DEFAULT_LIMITS, Limits, python_files

log = logging.getLogger(__name__)


class IndexLookup:
    """One read connection, used by one caller at a time (the digest runs it in a thread)."""

    def __init__(self, db_path: Path | str) -> None:
        self._path = str(db_path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def context(
        self, facts: PullRequestFacts, repo: str | None = None,
        base: Mapping[str, FileRecord] | None = None,
    ) -> RepoContext | None:
        """`base`: the changed files' records at the PR's base (bot/handlers/index_base.py)."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = store.connect(self._path)
                generation = store.latest(self._conn, repo or facts.repo)
                if generation is None:
                    return None
                view = store.SqliteIndexView(self._conn, generation)
                return repo_context(view, facts, base=base)
            except sqlite3.Error:
                log.exception("symbol index unreadable; digest goes without it")
                return None

    def stored(self, blobs: Mapping[str, str]) -> dict[str, FileRecord]:
        """Records of (path -> blob SHA) that some indexed commit already read."""
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = store.connect(self._path)
                return store.stored_records(self._conn, blobs)
            except sqlite3.Error:
                log.exception("symbol index unreadable")
                return {}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def memory_index(root: Path, limits: Limits = DEFAULT_LIMITS) -> MemoryIndex:
    """Index a local checkout in memory (the offline `digest --index DIR`)."""
    records: list[FileRecord] = []
    for path in python_files(root, lambda reason: None):
        if path.stat().st_size > limits.max_file_bytes:
            continue
        parsed = parse_python(path.relative_to(root).as_posix(), path.read_bytes(),
                              max_bytes=limits.max_file_bytes)
        if not isinstance(parsed, Skipped):
            records.append(parsed)
    return MemoryIndex(records, commit=f"local:{root.name}")
