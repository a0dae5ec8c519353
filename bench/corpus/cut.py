"""Cut one PR's patch out of the diff between two vLLM releases (REAL_PRS.md, steps 2-4).

Find the release pair where the PR's tokens first appear (`git grep`), split each file's
diff between the two releases into blocks (difflib opcodes), keep the PR's blocks,
rebuild base = release A and head = A + the kept blocks, and let
`git diff --no-index -U3` make the GitHub-style patch.
"""

from __future__ import annotations

import difflib
import hashlib
import subprocess
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import Version

from bench.corpus.spec import FileCut, Spec

MIN_QUOTED_LINE = 16  # a thread line shorter than this matches too much code by chance


class CutError(Exception):
    """The PR cannot be cut as specified (the message says which part and why)."""


class ReleaseRepo:
    """Read-only access to the release repository (one tag vX.Y.Z per release)."""

    def __init__(self, path: Path) -> None:
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise CutError(
                f"{path}: no release repository (run `python -m bench corpus releases …`)"
            )
        self.path = path

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, check=check
        )

    def releases(self) -> list[str]:
        names = self._git("tag", "--list", "v*").stdout.decode().split()
        return sorted((name[1:] for name in names), key=Version)

    def has(self, release: str, token: str, paths: Sequence[str]) -> bool:
        result = self._git(
            "grep", "-q", "-F", "-e", token, f"v{release}", "--", *paths, check=False
        )
        return result.returncode == 0

    def text(self, release: str, path: str) -> str | None:
        # `cat-file`, not `show`: `show` reads `[128,128]` in a path as a pattern and
        # answers a missing file with nothing and exit 0 (an added file read as modified).
        result = self._git("cat-file", "blob", f"v{release}:{path}", check=False)
        if result.returncode != 0:
            return None
        try:
            return result.stdout.decode("utf-8")
        except UnicodeDecodeError as error:
            raise CutError(f"{path} at {release}: not UTF-8 text") from error

    def changed(self, old: str, new: str, paths: Sequence[str]) -> list[str]:
        result = self._git("diff", "--name-only", f"v{old}", f"v{new}", "--", *paths)
        return result.stdout.decode().split()


@dataclass(frozen=True)
class Window:
    pair: tuple[str, str]
    votes: Mapping[str, tuple[str, str] | None]  # token -> the pair where it first appears
    agreed: bool  # every token that was found points at `pair`


def find_window(repo: ReleaseRepo, tokens: Sequence[str], paths: Sequence[str]) -> Window:
    """The consecutive release pair where most tokens first appear (absent in A, present in B)."""
    releases = repo.releases()
    if len(releases) < 2:
        raise CutError("the release repository has fewer than two releases")
    where = list(paths) or ["."]
    votes: dict[str, tuple[str, str] | None] = {}
    for token in tokens:
        present = [repo.has(release, token, where) for release in releases]
        # The last appearance after an absence: a token removed and re-added later is
        # placed by its final arrival, which is the one that stayed.
        firsts = [i for i in range(1, len(releases)) if present[i] and not present[i - 1]]
        votes[token] = (releases[firsts[-1] - 1], releases[firsts[-1]]) if firsts else None
    counted = Counter(pair for pair in votes.values() if pair is not None)
    if not counted:
        raise CutError(f"no token appears between two releases: {', '.join(tokens)}")
    pair, _ = counted.most_common(1)[0]
    return Window(pair=pair, votes=votes, agreed=len(counted) == 1)


@dataclass(frozen=True)
class Block:
    index: int
    tag: str  # replace | delete | insert
    old: tuple[int, int]  # line range in A (0-based, end exclusive)
    new: tuple[int, int]  # line range in B
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


def blocks_of(old: str, new: str) -> tuple[list[str], list[str], list[Block]]:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    blocks: list[Block] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            blocks.append(
                Block(len(blocks), tag, (i1, i2), (j1, j2), tuple(a[i1:i2]), tuple(b[j1:j2]))
            )
    return a, b, blocks


def _mentions(block: Block, tokens: Sequence[str], quoted: frozenset[str]) -> bool:
    lines = block.old_lines + block.new_lines
    text = "".join(lines)
    if any(token in text for token in tokens):
        return True
    return any(line.strip() in quoted for line in lines)


def quoted_lines(spec: Spec) -> frozenset[str]:
    """Code lines a thread entry quotes (review comments carry their diff context)."""
    lines: set[str] = set()
    for entry in spec.thread:
        for raw in (
            str(entry.get("text", "")).splitlines() + str(entry.get("diff", "")).splitlines()
        ):
            line = raw.strip().lstrip("+- ").strip()
            if len(line) >= MIN_QUOTED_LINE:
                lines.add(line)
    return frozenset(lines)


def choose(
    blocks: Sequence[Block], cut: FileCut | None, tokens: Sequence[str], quoted: frozenset[str]
) -> tuple[list[int], str]:
    """The kept block numbers and how they were chosen."""
    if cut is not None and cut.every:
        return [b.index for b in blocks], "all (spec)"
    if cut is not None and cut.blocks is not None:
        bad = [n for n in cut.blocks if n >= len(blocks)]
        if bad:
            raise CutError(f"blocks {bad} do not exist (the file has {len(blocks)} blocks)")
        return sorted(set(cut.blocks)), "spec"
    hits = [b.index for b in blocks if _mentions(b, tokens, quoted)]
    if hits:
        return hits, "token/thread"
    return [b.index for b in blocks], "all (nothing matched)"


def rebuild(
    a: Sequence[str], blocks: Sequence[Block], kept: Sequence[int], edits: Mapping[int, str]
) -> str:
    """Release A with the kept blocks applied (an edited block brings its hand-made lines)."""
    out: list[str] = []
    position = 0
    keep = set(kept)
    for block in blocks:
        out.extend(a[position : block.old[0]])
        if block.index in keep:
            if block.index in edits:
                out.extend(edits[block.index].splitlines(keepends=True))
            else:
                out.extend(block.new_lines)
        else:
            out.extend(block.old_lines)
        position = block.old[1]
    out.extend(a[position:])
    return "".join(out)


def patch_of(old: str | None, new: str | None) -> tuple[str, int, int]:
    """`git diff --no-index -U3` of two texts (None = no file), from the first `@@` on."""
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for name, text in (("base", old), ("head", new)):
            if text is None:
                paths.append("/dev/null")
                continue
            target = Path(scratch) / name
            target.write_text(text, encoding="utf-8")
            paths.append(str(target))
        result = subprocess.run(
            ["git", "diff", "--no-index", "--no-color", "-U3", "--no-ext-diff", *paths],
            capture_output=True,
        )
    if result.returncode not in (0, 1):
        raise CutError(f"git diff failed: {result.stderr.decode(errors='replace').strip()}")
    diff = result.stdout.decode("utf-8")
    start = diff.find("\n@@")
    if start < 0:
        return "", 0, 0
    patch = diff[start + 1 :].rstrip("\n")
    lines = patch.split("\n")
    additions = sum(1 for line in lines if line.startswith("+"))
    deletions = sum(1 for line in lines if line.startswith("-"))
    return patch, additions, deletions


@dataclass(frozen=True)
class FileResult:
    path: str
    status: str
    patch: str
    additions: int
    deletions: int
    blocks: int
    kept: tuple[int, ...]
    how: str


def cut_file(
    repo: ReleaseRepo, pair: tuple[str, str], path: str, spec: Spec, quoted: frozenset[str]
) -> FileResult | None:
    old, new = repo.text(pair[0], path), repo.text(pair[1], path)
    if old is None and new is None:
        raise CutError(f"{path}: in neither v{pair[0]} nor v{pair[1]}")
    a, _, blocks = blocks_of(old or "", new or "")
    if not blocks:
        return None
    cut = spec.cuts.get(path)
    kept, how = choose(blocks, cut, spec.tokens, quoted)
    if not kept:
        return None
    edits = {edit.block: edit.new for edit in (cut.edits if cut else ())}
    head: str | None = rebuild(a, blocks, kept, edits)
    if new is None and len(kept) == len(blocks) and not edits:
        head, status = None, "removed"
    elif old is None:
        status = "added"
    else:
        status = "modified"
    patch, additions, deletions = patch_of(old, head)
    if not patch:
        return None
    return FileResult(path, status, patch, additions, deletions, len(blocks), tuple(kept), how)


def holdout(number: int) -> bool:
    """About a third of new cases, by the PR number alone (never by the digest)."""
    return int(hashlib.sha256(f"pr{number}".encode()).hexdigest(), 16) % 3 == 0


def event(spec: Spec, files: Sequence[FileResult]) -> dict[str, Any]:
    """The `pull_request` opened webhook, with the placeholders REAL_PRS.md documents."""
    head_sha = hashlib.sha1(f"vllm-pr-{spec.number}".encode(), usedforsecurity=False).hexdigest()
    created = spec.created_at if "T" in spec.created_at else f"{spec.created_at}T00:00:00Z"
    return {
        "action": "opened",
        "number": spec.number,
        "pull_request": {
            "number": spec.number,
            "title": spec.title,
            "body": spec.body,
            "state": "open",
            "draft": False,
            "labels": [{"name": label} for label in spec.labels],
            "user": {"login": spec.author, "type": "User"},
            "author_association": "CONTRIBUTOR",
            "base": {"ref": "main", "sha": "0" * 40, "repo": {"full_name": "vllm-project/vllm"}},
            "head": {"ref": f"pr-{spec.number}", "sha": head_sha},
            "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files),
            "changed_files": len(files),
            "html_url": f"https://github.com/vllm-project/vllm/pull/{spec.number}",
            "created_at": created,
        },
        "repository": {
            "full_name": "vllm-project/vllm",
            "name": "vllm",
            "owner": {"login": "vllm-project"},
            "default_branch": "main",
        },
        "installation": {"id": 4242},
        "sender": {"login": spec.author, "type": "User"},
    }


def cut_case(repo: ReleaseRepo, spec: Spec) -> dict[str, Any]:
    """The corpus case (tests/fixtures/cases/real/corpus/pr<N>.json) of one spec."""
    if spec.release_pair is not None:
        window = Window(pair=spec.release_pair, votes={}, agreed=True)
    else:
        window = find_window(repo, spec.tokens, spec.files)
    pair = window.pair
    paths = list(spec.files) or _files_with_tokens(repo, pair, spec.tokens)
    if not paths:
        raise CutError("no files: give locate.files (no changed file holds a token)")
    quoted = quoted_lines(spec)
    results: list[FileResult] = []
    empty: list[str] = []
    for path in paths:
        try:
            result = cut_file(repo, pair, path, spec, quoted)
        except CutError as error:
            raise CutError(f"{spec.name}: {error}") from error
        if result is None:
            empty.append(path)
        else:
            results.append(result)
    if not results:
        raise CutError(
            f"{spec.name}: no change between v{pair[0]} and v{pair[1]} in {', '.join(paths)}"
        )
    cuts = {r.path: {"blocks": r.blocks, "kept": list(r.kept), "how": r.how} for r in results}
    hand = sorted(path for path, cut in spec.cuts.items() if cut.edits)
    return {
        "name": spec.name,
        "event": event(spec, results),
        "files": [
            {
                "filename": r.path,
                "status": r.status,
                "additions": r.additions,
                "deletions": r.deletions,
                "changes": r.additions + r.deletions,
                "patch": r.patch,
            }
            for r in results
        ],
        "note": _note(spec, window, results, empty, hand),
        "asks": dict(spec.asks),
        "evidence": dict(spec.evidence),
        "thread_visibility": spec.thread_visibility,
        "areas_truth": list(spec.areas_truth),
        "source": {
            "release_pair": list(pair),
            "pr_state": spec.state,
            "pr_created": spec.created_at[:10],
            "per_file": {r.path: f"+{r.additions}/-{r.deletions} {r.status}" for r in results},
            "cuts": cuts,
            "window_votes": {t: list(p) if p else None for t, p in window.votes.items()},
            "hand_edited": hand,
            "confidence": spec.confidence,
            "spec": Path(spec.path).name if spec.path else "",
        },
        "thread": [dict(entry) for entry in spec.thread],
        "holdout": holdout(spec.number),
    }


def _files_with_tokens(
    repo: ReleaseRepo, pair: tuple[str, str], tokens: Sequence[str]
) -> list[str]:
    changed = repo.changed(pair[0], pair[1], ["."])
    return [path for path in changed if any(repo.has(pair[1], t, [path]) for t in tokens)]


def _note(
    spec: Spec,
    window: Window,
    results: Sequence[FileResult],
    empty: Sequence[str],
    hand: Sequence[str],
) -> str:
    pair = window.pair
    parts = [f"Real patches, vllm {pair[0]}->{pair[1]} (PyPI sdists)."]
    if window.votes:
        found = sum(1 for p in window.votes.values() if p == pair)
        parts.append(
            f"Window from tokens: {found} of {len(window.votes)} first appear in this pair"
            + ("." if window.agreed else "; the others point elsewhere (see source.window_votes).")
        )
    partial = [
        f"{r.path} ({len(r.kept)} of {r.blocks} blocks)" for r in results if len(r.kept) < r.blocks
    ]
    if partial:
        parts.append("Cut other PRs' blocks from: " + ", ".join(partial) + ".")
    if hand:
        parts.append("Hand-edited blocks in: " + ", ".join(hand) + ".")
    if empty:
        parts.append("No change in this window (not in the case): " + ", ".join(empty) + ".")
    if spec.note:
        parts.append(spec.note.strip())
    parts.append(f"Confidence: {spec.confidence}.")
    return " ".join(parts)
