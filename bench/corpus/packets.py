"""Blind judge packets: one folder per corpus PR, holding only what a reviewer would see.

pr.md (the PR as GitHub shows it, plus the case's note), thread.md (the thread as seen),
digest.md (the digest as the bot posts it when the PR is opened), items.md (the digest
split into numbered items by bench/corpus/items.py, the rule the report matches verdicts
by), JUDGE.md (the brief) and sha256.txt. No rules, no digest JSON, no code, no verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.corpus.cases import (
    ROOT,
    CorpusCase,
    Rendered,
    content_sha,
    digest_document,
    load_corpus,
    render_case,
    sha256,
)
from bench.corpus.items import items_markdown, split_items
from bench.corpus.rejudge import is_stale, to_judge
from bench.corpus.written import WRITER_JUDGED, renderer
from bench.quality_corpus import Judgement, load_judgements

BRIEF = ROOT / "bench/judged/JUDGE.md"
LIMITS = (
    "The patch is the PR's effect as it landed in a vLLM release, cut from the diff between "
    "two PyPI source releases: review-round commits are folded in, a later PR that rewrote the "
    "same lines before the release can hide part of it, a file the PR touched and a later PR "
    "reverted is missing, and line numbers are against the older release, not the PR's merge "
    "base. Labels are the ones seen in the thread (often none were captured)."
)


def _fence(text: str) -> str:
    """A code fence longer than any backtick run inside `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def pr_markdown(case: CorpusCase) -> str:
    raw = case.raw
    pr = raw["event"]["pull_request"]
    labels = ", ".join(label["name"] for label in pr.get("labels") or []) or "(none seen)"
    files: Sequence[Mapping[str, Any]] = raw["files"]
    source = raw["source"]
    out = [
        f"# #{case.number}: {pr['title']}",
        "",
        f"- author: {pr['user']['login']}",
        f"- opened: {str(pr.get('created_at', ''))[:10]} · state: {source.get('pr_state', '?')}",
        f"- labels: {labels}",
        f"- size: {len(files)} files, +{pr['additions']}/−{pr['deletions']}",
        "",
        "## Description",
        "",
        pr.get("body") or "(empty)",
        "",
        "## Files",
        "",
    ]
    for entry in files:
        patch = entry.get("patch") or ""
        fence = _fence(patch)
        out += [
            f"### `{entry['filename']}` ({entry['status']}, "
            f"+{entry['additions']}/−{entry['deletions']})",
            "",
            f"{fence}diff",
            patch,
            fence,
            "",
        ]
    out += [
        "## How this case was made (where the patch or file list may be incomplete)",
        "",
        raw.get("note") or "(no note)",
        "",
        LIMITS,
        "",
    ]
    return "\n".join(out)


def thread_markdown(case: CorpusCase) -> str:
    raw = case.raw
    out = [f"# Thread of #{case.number}", "", f"What was seen: {raw.get('thread_visibility')}", ""]
    thread = raw.get("thread") or []
    for entry in thread:
        head = f"**{entry.get('kind')}** by {entry.get('author') or '?'}"
        if entry.get("date"):
            head += f", {entry['date']}"
        if entry.get("state"):
            head += f" · {entry['state']}"
        if entry.get("path"):
            head += f" · on `{entry['path']}`"
        out += [f"### {head}", ""]
        if entry.get("diff"):
            fence = _fence(entry["diff"])
            out += [f"{fence}diff", entry["diff"], fence, ""]
        out += [entry.get("text") or "(no text)", ""]
    evidence = raw.get("evidence") or {}
    if evidence and not thread:
        out += ["Reviewer remarks known from the thread (quoted):", ""]
        out += [f"- {quote}" for quote in evidence.values()]
        out.append("")
    if not thread and not evidence:
        out += ["No comments, reviews or review comments were seen.", ""]
    return "\n".join(out)


REJUDGE = (
    "Re-judge: this digest changed since it was judged. Judge only the items marked JUDGE "
    "(their text is new); the items marked kept have a verdict already and are not "
    "judged again. Decide your points and judge them, and the verdict and minutes, as "
    "for a new digest, with the whole digest in view.\n\n"
)


def write_packet(case: CorpusCase, out_dir: Path, brief: str,
                 judgement: Judgement | None = None, *, rejudge: bool = False,
                 render: Callable[[CorpusCase], Rendered] = render_case) -> Path | None:
    """The packet of one PR; with `rejudge`, only when its digest changed since
    `judgement` (None: nothing to judge again), its new items marked JUDGE."""
    rendered = render(case)
    items = split_items(rendered.markdown)
    digest = digest_document(rendered)
    judge: frozenset[int] | None = None
    if rejudge and judgement is not None:
        if not is_stale(sha256(digest), items, judgement, content_sha(digest)):
            return None
        judge = to_judge(items, judgement)
    folder = out_dir / case.name
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "pr.md": pr_markdown(case),
        "thread.md": thread_markdown(case),
        "digest.md": digest,
        "items.md": (
            f"# Items of digest.md (sha256 {sha256(digest)}); brief JUDGE.md sha256 "
            f"{sha256(brief)}\n\n" + (REJUDGE if judge is not None else "")
            + items_markdown(items, judge)
        ),
        "JUDGE.md": brief,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "sha256.txt").write_text(
        "".join(f"{sha256(text)}  {name}\n" for name, text in files.items()), encoding="utf-8"
    )
    return folder


def write_packets(out_dir: Path, *, only: set[str], brief_path: Path = BRIEF,
                  rejudge: bool = False, writer: Path | None = None) -> list[Path]:
    """One packet per case (`only`: these); with `rejudge`, only the cases whose digest
    changed since their judgement in bench/judged/corpus, for a re-judge of the new items.
    With `writer` (a folder of recorded completions), the written digests of the cases
    that have one, judged apart in bench/judged/writer: items whose text the plain digest
    shows too keep their verdict from bench/judged/corpus, the written ones are JUDGE."""
    brief = brief_path.read_text(encoding="utf-8")
    judgements = load_judgements() if rejudge or writer else {}
    render: Callable[[CorpusCase], Rendered] = render_case
    if writer is not None:
        written_judged = load_judgements(WRITER_JUDGED) if WRITER_JUDGED.is_dir() else {}
        judgements = {**judgements, **written_judged}
        render = renderer(writer)
        only = only or {path.stem for path in writer.glob("pr*.json")}
        rejudge = True
    written = (
        write_packet(case, out_dir, brief, judgements.get(case.number), rejudge=rejudge,
                     render=render)
        for case in load_corpus(only=sorted(only))
    )
    return [folder for folder in written if folder is not None]
