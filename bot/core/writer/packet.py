"""The packet: everything a writer model is given about one PR, each part marked complete
or cut, within a token budget.

The model must never reason from a hunk as from a file, nor from a cut list as from the
whole (issue 41: it called a symbol unimported that the base file imports, and took a
file missing from the list as missing from the PR). So every part says what it is and
what it lacks, and the budget cuts the least important parts first, saying so."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from bot.core.facts import GITHUB_FILES_CAP, ChangedFile, PullRequestFacts, is_test_path
from bot.core.findings import Digest
from bot.core.writer.base_source import changed_functions
from bot.core.writer.facts import Fact, canonical_json, digest_facts
from bot.core.writer.tokens import estimate_tokens

DEFAULT_BUDGET_TOKENS = 24_000
MAX_PATCH_FILES = 8
MAX_PATCH_LINES = 400
MAX_BODY_CHARS = 20_000
MAX_LISTED_FILES = 300
MAX_BASE_LINES = 150  # lines of one changed function's base source


@dataclass(frozen=True)
class Part:
    """One block of the packet. `rank`: lower is more important (cut last)."""

    id: str
    rank: int
    title: str
    lines: tuple[str, ...]
    complete: bool = True
    cut: str = ""  # why it is incomplete, in words the model reads
    untrusted: bool = False  # text anyone could have written: data, never instructions

    def text(self) -> str:
        state = "complete" if self.complete else f"INCOMPLETE: {self.cut}"
        head = f"## {self.title} [{state}]"
        if not self.untrusted:
            return "\n".join((head, *self.lines))
        # A fence the text cannot forge: it carries a hash of the text it encloses.
        fence = "UNTRUSTED-" + hashlib.sha256("\n".join(self.lines).encode()).hexdigest()[:12]
        return "\n".join((head, f"<<<{fence}", *self.lines, f"{fence}>>>"))


@dataclass(frozen=True)
class Packet:
    repo: str
    number: int
    head_sha: str
    facts: tuple[Fact, ...]
    parts: tuple[Part, ...]
    budget_tokens: int
    # What the budget removed or shortened, most important last (also said in the parts).
    budget_cuts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # every changed path (cites may name them)

    def text(self) -> str:
        return "\n\n".join(part.text() for part in self.parts)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text())

    @property
    def fact_ids(self) -> frozenset[str]:
        return frozenset(fact.id for fact in self.facts)

    def canonical(self) -> str:
        return canonical_json({
            "repo": self.repo, "number": self.number, "head_sha": self.head_sha,
            "budget_tokens": self.budget_tokens, "budget_cuts": list(self.budget_cuts),
            "text": self.text(),
        })

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()


def read_first(digest: Digest, files: Sequence[ChangedFile]) -> list[ChangedFile]:
    """The files in the order a reviewer reads them: those holding the digest's symbols
    (its order), its start files, other code by size, then tests by size."""
    by_name = {f.filename: f for f in files}
    order: list[str] = []
    for name in [s.file for s in digest.symbols] + list(digest.start_files):
        if name in by_name and name not in order:
            order.append(name)
    rest = sorted((f for f in files if f.filename not in order),
                  key=lambda f: (is_test_path(f.filename), -f.changes, f.filename))
    return [by_name[name] for name in order] + rest


def build_packet(
    digest: Digest,
    facts: PullRequestFacts,
    *,
    base_files: Mapping[str, str] | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
) -> Packet:
    """The packet for `digest` of the PR `facts`. `base_files`: changed files' text at the
    PR's base (path -> text), where the caller has them; each changed function's base
    source is cut from them. Pure and deterministic."""
    ordered = read_first(digest, facts.files)
    fact_list = digest_facts(digest)
    candidates = [
        _pr_part(facts),
        Part("facts", 1, "Facts found in the change (cite them by the id in brackets)",
             tuple(fact.line() for fact in fact_list)),
        _body_part(facts.title, facts.body),
        *_patch_parts(ordered),
        *_base_parts(ordered, base_files or {}),
        _asks_part(digest),
        _ci_part(digest),
        _owners_part(digest),
        _files_part(facts),
    ]
    parts = [p for p in candidates if p is not None]
    kept, cuts = _fit(parts, budget_tokens)
    return Packet(
        repo=facts.repo, number=facts.number, head_sha=facts.head_sha, facts=fact_list,
        parts=tuple(sorted(kept, key=lambda p: p.rank)), budget_tokens=budget_tokens,
        budget_cuts=tuple(cuts), paths=tuple(f.filename for f in facts.files),
    )


def _pr_part(facts: PullRequestFacts) -> Part:
    lines = (
        f"repository: {facts.repo} · pull request #{facts.number} by @{facts.author}",
        f"base branch: {facts.base_ref} · labels: {', '.join(facts.labels) or 'none'}",
        f"size: {facts.total_changed_files} files, +{facts.total_additions}/"
        f"-{facts.total_deletions}",
    )
    return Part("pr", 0, "The pull request", lines)


def _body_part(title: str, body: str) -> Part:
    text = body.replace("\r\n", "\n")
    heading = "The author's title and description"
    lines = (f"Title: {title}", "", *(text[:MAX_BODY_CHARS].split("\n") if text.strip()
                                       else ["(no description)"]))
    if len(text) <= MAX_BODY_CHARS:
        return Part("body", 2, heading, lines, untrusted=True)
    return Part("body", 2, heading, lines, complete=False, untrusted=True,
                cut=f"description cut at {MAX_BODY_CHARS} of {len(text)} characters")


def _patch_parts(ordered: Sequence[ChangedFile]) -> list[Part]:
    parts = []
    for rank, changed in enumerate(ordered[:MAX_PATCH_FILES]):
        title = f"Patch of {changed.filename} ({changed.status}, +{changed.additions}/" \
                f"-{changed.deletions}): changed hunks only, not the whole file"
        part_id = f"patch:{changed.filename}"
        if changed.patch is None:
            parts.append(Part(part_id, 10 + rank, title, (), complete=False,
                              cut="GitHub sends no patch for this file (binary or too large)"))
            continue
        lines = tuple(changed.patch.split("\n"))
        if len(lines) > MAX_PATCH_LINES:
            parts.append(Part(part_id, 10 + rank, title, lines[:MAX_PATCH_LINES], complete=False,
                              cut=f"patch cut at {MAX_PATCH_LINES} of {len(lines)} lines"))
        else:
            parts.append(Part(part_id, 10 + rank, title, lines))
    return parts


def _base_parts(ordered: Sequence[ChangedFile], base_files: Mapping[str, str]) -> list[Part]:
    parts = []
    for rank, changed in enumerate(ordered[:MAX_PATCH_FILES]):
        base = base_files.get(changed.previous_filename or changed.filename)
        if base is None or changed.patch is None or not changed.filename.endswith(".py"):
            continue
        for name, start, lines in changed_functions(changed.filename, base, changed.patch):
            shown = lines[:MAX_BASE_LINES]
            part = Part(f"base:{changed.filename}:{name}", 30 + rank,
                        f"Base source of {name} in {changed.filename}, from line {start}, "
                        "before this change", tuple(shown))
            if len(lines) > MAX_BASE_LINES:
                part = replace(part, complete=False,
                               cut=f"base source cut at {MAX_BASE_LINES} of {len(lines)} lines")
            parts.append(part)
    return parts


def _asks_part(digest: Digest) -> Part | None:
    asks = [a for a in digest.asks if a.status == "open"]
    if not asks:
        return None
    lines = tuple(f"- [ask.{a.kind}] @{a.by}" + (" (no write access)" if a.access == "none"
                                                   else "") + f": {a.quote}" for a in asks)
    return Part("asks", 40, "Reviewers' open requests in the conversation", lines,
                untrusted=True)


def _ci_part(digest: Digest) -> Part | None:
    ci = digest.ci
    if ci is None:
        return None
    lines = [f"- {s.label} ({s.device or 'GPU'}), reached through "
             f"{', '.join(s.matched) or 'the pipeline'}"
             + (" — runs a test this change edits" if s.runs_changed_tests else "")
             for s in sorted(ci.steps, key=lambda s: s.directness)[:15]]
    if len(ci.steps) > 15:
        lines.append(f"- and {len(ci.steps) - 15} more steps")
    if ci.broad_count:
        lines.append(f"- {ci.broad_count} more steps run only through shared paths "
                     f"({', '.join(ci.broad_through)})")
    if ci.optional:
        lines.append(f"- not run unless unblocked: {', '.join(s.label for s in ci.optional)}")
    if ci.tests_without_step:
        lines.append(f"- changed tests no step runs: {', '.join(ci.tests_without_step)}")
    return Part("ci", 50, "CI steps the base's pipeline runs for these paths", tuple(lines))


def _owners_part(digest: Digest) -> Part | None:
    owners = digest.owners
    if owners is None:
        return None
    lines = tuple(f"- {path}: {' '.join(names)}" for path, names in owners.by_file[:40])
    complete = not owners.unmatched and len(owners.by_file) <= 40
    return Part("owners", 60, "Code owners of the changed files (CODEOWNERS at the base)",
                lines, complete=complete,
                cut="" if complete else "owners of some files not worked out or not listed")


def _files_part(facts: PullRequestFacts) -> Part:
    files = facts.files[:MAX_LISTED_FILES]
    lines = tuple(f"- {f.filename} ({f.status}, +{f.additions}/-{f.deletions})"
                  + (f", renamed from {f.previous_filename}" if f.previous_filename else "")
                  for f in files)
    total = facts.total_changed_files
    if facts.files_truncated and len(facts.files) >= GITHUB_FILES_CAP:
        cut = (f"file list incomplete: GitHub lists at most {GITHUB_FILES_CAP:,} files; "
               f"{len(files)} of {total} shown")
    elif len(facts.files) < total:
        cut = f"file list incomplete: {len(files)} of {total} files shown"
    elif len(files) < len(facts.files):
        cut = f"file list cut at {len(files)} of {total} files"
    else:
        cut = ""
    return Part("files", 70, "Changed files", lines or ("(none listed)",),
                complete=not cut, cut=cut)


def _fit(parts: list[Part], budget: int) -> tuple[list[Part], list[str]]:
    """Cut the least important parts until the packet fits: halve a part's lines, then
    drop it, saying so in the part, or in a closing part listing what was left out."""
    kept = list(parts)
    cuts: list[str] = []

    def with_note() -> list[Part]:
        left_out = sorted(c.split(": ")[0] for c in cuts if c.endswith("left out"))
        note = [Part("budget", 99, "Left out for the token budget",
                     tuple(f"- {name}" for name in left_out))] if left_out else []
        return kept + note

    while estimate_tokens("\n\n".join(p.text() for p in with_note())) > budget:
        cuttable = [p for p in kept if p.rank >= 2]
        if not cuttable:
            break
        worst = max(cuttable, key=lambda p: (p.rank, p.id))
        index = kept.index(worst)
        if len(worst.lines) > 8:
            half = len(worst.lines) // 2
            kept[index] = replace(worst, lines=worst.lines[:half], complete=False,
                                  cut=f"cut to its first {half} lines for the token budget"
                                  + (f" (before: {worst.cut})" if worst.cut else ""))
            cuts.append(f"{worst.id}: cut to {half} lines")
        else:
            del kept[index]
            cuts.append(f"{worst.id}: left out")
    return with_note(), cuts
