"""Re-judging a changed digest: only the items whose text is new, with the whole digest in view.

JUDGE.md: "When the digest changes, the items whose text is new are judged by a fresh
judge, given the whole new digest and told which items to judge; items whose text is
unchanged keep their verdict, and the points are judged again." So:

- `stale_cases` names the corpus PRs whose digest today differs from the one judged (or
  that have no judgement yet);
- `to_judge` says which of a digest's items carry no verdict yet (their ids go into the
  packet's items.md marked JUDGE; the rest are marked kept);
- `merge` folds a re-judge's YAML into the stored judgement: the new points, verdict and
  digest, the new items' verdicts, and the kept verdicts of the items still shown. A
  verdict is never edited: one of an item no longer shown is dropped, and the digests
  judged before are listed under `earlier_digests`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench.corpus.cases import content_sha, sha256
from bench.corpus.items import Item
from bench.quality_corpus import Judgement, JudgementError, key


def to_judge(items: Sequence[Item], judgement: Judgement | None) -> frozenset[int]:
    """The ids of the items with no verdict on their text (all of them without one)."""
    marks = judgement.items if judgement else {}
    return frozenset(item.id for item in items if key(item.text) not in marks)


def is_stale(digest_sha: str, items: Sequence[Item], judgement: Judgement | None,
             content: str = "") -> bool:
    """Whether a digest needs a fresh judge: never judged, new item texts, or other text
    than the judged digest (`content`: its sha without the hidden marker line)."""
    return (judgement is None or not judgement.judged_as(digest_sha, content)
            or bool(to_judge(items, judgement)))


def record_content(judged: dict[str, Any], document: str) -> bool:
    """Record in `judged` the content sha of `document` when it is the digest judged (its
    `digest:` is the document's sha); whether it did."""
    if judged.get("digest") != sha256(document):
        return False
    judged["content"] = content_sha(document)
    return True


def merge(old: Mapping[str, Any] | None, new: Mapping[str, Any],
          shown: Iterable[Item], where: str) -> dict[str, Any]:
    """The stored judgement after a re-judge (see the module docstring)."""
    if not isinstance(new, Mapping) or not isinstance(new.get("items", []), list):
        raise JudgementError(f"{where}: expected a judgement with an `items` list")
    texts = {key(item.text) for item in shown}
    fresh = [entry for entry in new.get("items") or [] if isinstance(entry, Mapping)]
    fresh_keys = {key(str(entry.get("text", ""))) for entry in fresh}
    kept = [
        entry for entry in (old or {}).get("items") or []
        if isinstance(entry, Mapping)
        and (k := key(str(entry.get("text", "")))) in texts and k not in fresh_keys
    ]
    merged = {name: value for name, value in new.items() if name != "items"}
    earlier = list((old or {}).get("earlier_digests") or [])
    if old and old.get("digest") and old.get("digest") != new.get("digest"):
        earlier.append(old["digest"])
    if earlier:
        merged["earlier_digests"] = earlier
    merged["items"] = [*kept, *fresh]
    return merged
