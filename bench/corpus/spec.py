"""One PR's spec file (bench/corpus/specs/pr<N>.yaml): hand-researched data and how to cut it.

The shape is the corpus contract's (the issue-44 notes); `load_spec` checks it and says
clearly what is wrong, so a typo in a hand-written spec never yields a silently odd case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ASK_KEYS = (
    "gpu_eval",
    "tests",
    "test_results",
    "perf_numbers",
    "hardware_run",
    "release_gate",
    "docs",
)
STATES = ("merged", "closed", "open")
VISIBILITY = ("full", "partial", "description-only")
CONFIDENCE = ("high", "medium", "low")
THREAD_KINDS = ("comment", "review", "review_comment")


class SpecError(ValueError):
    """A spec file that is not the documented shape (the message names the file and field)."""


@dataclass(frozen=True)
class BlockEdit:
    """A block kept with hand-edited new lines (another PR's lines taken out)."""

    block: int
    new: str


@dataclass(frozen=True)
class FileCut:
    """Which diff blocks of one file belong to the PR: None = the default rule."""

    blocks: tuple[int, ...] | None = None  # None: default; () never (use "all")
    every: bool = False
    edits: tuple[BlockEdit, ...] = ()


@dataclass(frozen=True)
class Spec:
    number: int
    title: str
    author: str
    created_at: str
    state: str
    labels: tuple[str, ...]
    body: str
    thread: tuple[Mapping[str, Any], ...]
    thread_visibility: str
    asks: Mapping[str, Any]
    evidence: Mapping[str, str]
    areas_truth: tuple[str, ...]
    tokens: tuple[str, ...]
    files: tuple[str, ...]
    release_pair: tuple[str, str] | None
    cuts: Mapping[str, FileCut] = field(default_factory=dict)
    note: str = ""
    confidence: str = "medium"
    path: str = ""

    @property
    def name(self) -> str:
        return f"pr{self.number}"


def _need(raw: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in raw:
        raise SpecError(f"{where}: `{key}` is missing")
    value = raw[key]
    if not isinstance(value, kind):
        raise SpecError(f"{where}: `{key}` should be a {kind.__name__}, not {type(value).__name__}")
    return value


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SpecError(f"{where}: `{key}` should be a list of strings")
    return tuple(value)


def _one_of(value: Any, allowed: tuple[str, ...], key: str, where: str) -> str:
    if value not in allowed:
        raise SpecError(f"{where}: `{key}` is {value!r}; expected one of {', '.join(allowed)}")
    return str(value)


def _cut(path: str, raw: Any, where: str) -> FileCut:
    if raw == "all":
        return FileCut(every=True)
    if not isinstance(raw, list):
        raise SpecError(f'{where}: blocks of {path}: expected "all" or a list of block numbers')
    numbers: list[int] = []
    edits: list[BlockEdit] = []
    for entry in raw:
        if isinstance(entry, int) and not isinstance(entry, bool) and entry >= 0:
            numbers.append(entry)
        elif (
            isinstance(entry, Mapping)
            and isinstance(entry.get("block"), int)
            and isinstance(entry.get("new"), str)
        ):
            numbers.append(int(entry["block"]))
            edits.append(BlockEdit(int(entry["block"]), str(entry["new"])))
        else:
            raise SpecError(
                f"{where}: blocks of {path}: {entry!r} is neither a block number nor {{block, new}}"
            )
    return FileCut(blocks=tuple(numbers), edits=tuple(edits))


def _thread(raw: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SpecError(f"{where}: `thread` should be a list")
    entries = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or entry.get("kind") not in THREAD_KINDS:
            raise SpecError(f"{where}: thread[{index}]: needs `kind` in {', '.join(THREAD_KINDS)}")
        if not isinstance(entry.get("text", ""), str) or not isinstance(
            entry.get("author", ""), str
        ):
            raise SpecError(f"{where}: thread[{index}]: `author` and `text` should be strings")
        entries.append({key: ("" if value is None else str(value)) for key, value in entry.items()})
    return tuple(entries)


def parse_spec(raw: Any, where: str) -> Spec:
    if not isinstance(raw, Mapping):
        raise SpecError(f"{where}: expected a mapping")
    number = _need(raw, "number", int, where)
    asks = dict(raw.get("asks") or {})
    unknown = set(asks) - set(ASK_KEYS) - {"other"}
    if unknown:
        raise SpecError(
            f"{where}: unknown asks {sorted(unknown)}; known: {', '.join(ASK_KEYS)}, other"
        )
    for key in ASK_KEYS:
        if asks.setdefault(key, None) not in (True, False, None):
            raise SpecError(f"{where}: asks.{key} should be true, false or null")
    asks["other"] = list(_strings(asks.get("other"), "asks.other", where))
    evidence = raw.get("evidence") or {}
    if not isinstance(evidence, Mapping):
        raise SpecError(f"{where}: `evidence` should be a mapping of ask to quote")
    for key, value in asks.items():
        if value is True and key not in evidence:
            raise SpecError(f"{where}: asks.{key} is true but `evidence` has no quote for it")
    locate = raw.get("locate") or {}
    if not isinstance(locate, Mapping):
        raise SpecError(f"{where}: `locate` should be a mapping with tokens and files")
    pair = raw.get("release_pair")
    if pair is not None:
        pair_strings = _strings(pair, "release_pair", where)
        if len(pair_strings) != 2:
            raise SpecError(f"{where}: `release_pair` should be two versions")
        pair = (pair_strings[0], pair_strings[1])
    blocks = raw.get("blocks") or {}
    if not isinstance(blocks, Mapping):
        raise SpecError(f"{where}: `blocks` should be a mapping of file to block numbers")
    tokens = _strings(locate.get("tokens"), "locate.tokens", where)
    if pair is None and not tokens:
        raise SpecError(
            f"{where}: give `locate.tokens` or `release_pair`, or the window cannot be found"
        )
    return Spec(
        number=number,
        title=str(_need(raw, "title", str, where)),
        author=str(_need(raw, "author", str, where)),
        created_at=str(_need(raw, "created_at", str, where)),
        state=_one_of(raw.get("state", "merged"), STATES, "state", where),
        labels=_strings(raw.get("labels"), "labels", where),
        body=str(raw.get("body") or ""),
        thread=_thread(raw.get("thread"), where),
        thread_visibility=_one_of(
            raw.get("thread_visibility"), VISIBILITY, "thread_visibility", where
        ),
        asks=asks,
        evidence={str(k): str(v) for k, v in evidence.items()},
        areas_truth=_strings(raw.get("areas_truth"), "areas_truth", where),
        tokens=tokens,
        files=_strings(locate.get("files"), "locate.files", where),
        release_pair=pair,
        cuts={str(path): _cut(str(path), value, where) for path, value in blocks.items()},
        note=str(raw.get("note") or ""),
        confidence=_one_of(raw.get("confidence", "medium"), CONFIDENCE, "confidence", where),
        path=where,
    )


def load_spec(path: Path) -> Spec:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise SpecError(f"{path}: cannot read: {error}") from error
    return parse_spec(raw, str(path))
