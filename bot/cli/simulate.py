"""`digest-bot simulate --override FILE --cases DIR|FILE...`: what an override would change.

Each case (a PR's `pull_request` payload and its files, as the corpus in
tests/fixtures/cases/real/corpus/ stores them) is digested twice, with the bundled rules
and with the override applied through `apply_override` (the service's path), and the
rendered Markdown of the two is compared line by line. The label view's store keeps
each digest's output, not the PR's files, so the inputs come from case files.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.cli.override_file import bundled_rule_files, read_override_text, rules_with_override
from bot.cli.problems import BadOverride
from bot.core.digest import build_digest
from bot.core.pr_object import (
    NotAPullRequest,
    changed_files,
    facts_from_pull_request,
    pull_request_object,
)
from bot.core.render.comment import render_digest
from bot.core.render.marker import is_marker_line
from bot.core.rules import RuleSet
from bot.core.rules.parse import compile_rule_files
from bot.core.vocabulary import Lang

MAX_CASES = 1_000
MAX_CASE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    name: str
    payload: dict[str, Any]
    files: list[dict[str, Any]]


@dataclass(frozen=True)
class CaseDiff:
    name: str
    pr: str  # OWNER/REPO#N
    lines: tuple[str, ...]  # "+..." added, "-..." removed, "@@..." where

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))


def case_paths(given: Sequence[Path]) -> list[Path]:
    """The case files: each FILE as given, each DIR's *.json sorted by name."""
    paths: list[Path] = []
    for path in given:
        if path.is_dir():
            paths.extend(sorted(p for p in path.glob("*.json") if p.is_file()))
        elif path.is_file():
            paths.append(path)
        else:
            raise BadOverride([f"{path}: no such file or directory"])
    if not paths:
        raise BadOverride([f"{', '.join(map(str, given))}: no *.json case file"])
    if len(paths) > MAX_CASES:
        raise BadOverride([f"{len(paths):,} case files; at most {MAX_CASES:,} a run"])
    return paths


def read_case(path: Path) -> Case:
    """One case: {"event": pull_request payload, "files": [PR-file objects]}."""
    if path.stat().st_size > MAX_CASE_BYTES:
        raise BadOverride([f"{path}: larger than {MAX_CASE_BYTES:,} bytes"])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadOverride([f"{path}: cannot read: {exc}"]) from None
    except json.JSONDecodeError as exc:
        raise BadOverride([f"{path}:{exc.lineno}: not valid JSON ({exc.msg})"]) from None
    if not (isinstance(data, dict) and isinstance(data.get("event"), dict)
            and isinstance(data.get("files", []), list)):
        raise BadOverride([f"{path}: expected a case object with \"event\" (a pull_request "
                           "payload) and \"files\" (PR-file objects)"])
    return Case(path.stem, data["event"], data.get("files", []))


def _markdown(case: Case, rules: RuleSet, lang: Lang) -> tuple[str, str]:
    try:
        pr = pull_request_object(case.payload)
        facts = facts_from_pull_request(pr, changed_files(case.files))
    except NotAPullRequest as exc:
        raise BadOverride([f"{case.name}: {exc}"]) from None
    markdown = render_digest(build_digest(facts, rules, lang))
    return f"{facts.repo}#{facts.number}", markdown


def _lines(markdown: str) -> list[str]:
    # The hidden marker names the rules version, which any override changes.
    return [line for line in markdown.splitlines() if not is_marker_line(line)]


def diff_case(case: Case, bundled: RuleSet, overridden: RuleSet, lang: Lang) -> CaseDiff:
    pr, before = _markdown(case, bundled, lang)
    _, after = _markdown(case, overridden, lang)
    hunks = difflib.unified_diff(_lines(before), _lines(after), lineterm="", n=0)
    lines = tuple(line for line in hunks if not line.startswith(("---", "+++")))
    return CaseDiff(case.name, pr, lines)


def simulate(override: Path, cases: Sequence[Path], rules_dir: Path,
             lang: Lang) -> Iterator[CaseDiff]:
    """Each case's diff, in order; raises BadOverride before the first when the override
    cannot be applied."""
    files = bundled_rule_files(rules_dir)
    overridden = rules_with_override(files, read_override_text(override), str(override))
    bundled = compile_rule_files(files)  # what the service applies without an override
    for path in case_paths(cases):
        yield diff_case(read_case(path), bundled, overridden, lang)


def report(diffs: Sequence[CaseDiff], override: Path) -> str:
    """Per changed PR its added and removed lines, then one summary line."""
    out: list[str] = []
    for diff in diffs:
        if diff.lines:
            out += [f"=== {diff.pr} ({diff.name}): +{diff.added} -{diff.removed}", *diff.lines, ""]
    changed = [diff for diff in diffs if diff.lines]
    out.append(
        f"{override}: changes {len(changed)} of {len(diffs)} digest"
        f"{'' if len(diffs) == 1 else 's'} (+{sum(d.added for d in changed)} "
        f"-{sum(d.removed for d in changed)} lines)")
    return "\n".join(out)
