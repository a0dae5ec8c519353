"""The small real-shaped tree the symbol-index tests parse, and the PR that changes it."""

from __future__ import annotations

import json
from pathlib import Path

from bot.core.facts import PullRequestFacts
from bot.core.pr_object import changed_files, facts_from_pull_request, pull_request_object
from bot.core.repo_index.memory import MemoryIndex
from bot.core.repo_index.model import FileRecord
from bot.core.repo_index.parse import parse_python

FIXTURES = Path(__file__).parent / "fixtures" / "repo_index"
TREE = FIXTURES / "tree"
PR_EVENT = FIXTURES / "pr.json"
PR_FILES = FIXTURES / "pr_files.json"


def tree_records() -> list[FileRecord]:
    records = []
    for path in sorted(TREE.rglob("*.py")):
        parsed = parse_python(path.relative_to(TREE).as_posix(), path.read_bytes())
        if isinstance(parsed, FileRecord):
            records.append(parsed)
    return records


def tree_index() -> MemoryIndex:
    return MemoryIndex(tree_records(), commit="f" * 40)


def pr_facts() -> PullRequestFacts:
    pr = pull_request_object(json.loads(PR_EVENT.read_text()))
    return facts_from_pull_request(pr, changed_files(json.loads(PR_FILES.read_text())))
