"""What the digest found specific to one PR: names the author points at, the author's
decisions, the patch's structure, linked work and changed values. Plain frozen records,
shared by the extractors (mentions, decisions, structure, links, value_tables), the
Digest and the renderer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MentionKind = Literal["symbol", "file"]


@dataclass(frozen=True)
class Mention:
    """A name from the description that the change contains, and the file it lives in."""

    name: str  # as the author wrote it, trimmed ("torch.compiler.is_compiling")
    file: str
    kind: MentionKind
    defined: bool  # the patch adds, removes or edits a def/class of that name


@dataclass(frozen=True)
class Decision:
    """One of the author's stated choices, shortened, with what it is about."""

    quote: str  # the author's words, cut at a sentence boundary (may hold `code`)
    concerns: str  # a symbol or file name from the change, or ""
    concerns_file: str  # the file that symbol lives in, or ""
    score: int


StructureKind = Literal[
    "reordered",
    "condition",
    "raise-added",
    "raise-removed",
    "raise-changed",
    "assert-added",
    "assert-removed",
    "assert-changed",
    "decorator-added",
    "decorator-removed",
    "kwarg-removed",
    "wrapped",
    "todo",
    "parametrize",
    "isolated",
]


@dataclass(frozen=True)
class StructureNote:
    """One structural fact about one function: `kind` says how to phrase `details`."""

    file: str
    symbol: str  # the function or class it concerns ("" at module level)
    kind: StructureKind
    details: tuple[str, ...] = ()  # code snippets or counts, untrusted: escape


LinkKind = Literal[
    "supersedes", "follow-up", "part-of", "depends-on", "reverts", "fixes", "related",
    "cherry-pick",
]


@dataclass(frozen=True)
class Link:
    kind: LinkKind
    number: int
    repo: str  # "" for this repository
    title: str = ""  # fetched by the handler when the read budget allows; untrusted
    # What the linked PR or issue is now (open | merged | closed, "" when not read) and,
    # for a closed-unmerged PR this one supersedes, its last maintainer's first sentence.
    state: str = ""
    is_pull: bool = False
    objection: str = ""  # untrusted
    objection_by: str = ""  # untrusted


@dataclass(frozen=True)
class ValueChange:
    entity: str  # the row's name ("TeleChat3")
    field: str  # what changes ("max_model_len"), "" when the header does not say
    before: str
    after: str
