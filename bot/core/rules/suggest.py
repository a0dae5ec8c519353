"""`did you mean 'routing'?` for an unknown key: the keys a schema allows at the place of
the mistake, read from the model's JSON Schema (so every nesting level it defines, through
lists, mappings and unions), and the nearest of them by difflib's ratio."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

MAX_DEPTH = 32  # a loc is as deep as the YAML reader allows; a $ref cycle ends here too


@cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[str, ...]:
    """The keys the mapping at `loc` (from the model's top) may hold; () when it is a free
    mapping or the place is not found."""
    root = _schema(model)
    defs: dict[str, Any] = root.get("$defs", {})
    nodes = [root]
    for part in loc[:MAX_DEPTH]:
        nodes = [child for node in nodes for child in _children(_expand(node, defs), part)]
    keys: dict[str, None] = {}
    for node in nodes:
        for expanded in _expand(node, defs):
            keys.update(dict.fromkeys(expanded.get("properties", {})))
    return tuple(keys)


def _expand(node: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """`node` with its $ref resolved and its unions opened (each alternative)."""
    if depth > MAX_DEPTH:
        return []
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return _expand(target, defs, depth + 1) if isinstance(target, dict) else []
    alternatives = [*node.get("anyOf", ()), *node.get("oneOf", ()), *node.get("allOf", ())]
    if alternatives:
        return [found for alt in alternatives if isinstance(alt, dict)
                for found in _expand(alt, defs, depth + 1)]
    return [node]


def _children(nodes: list[dict[str, Any]], part: int | str) -> list[dict[str, Any]]:
    children: list[dict[str, Any]] = []
    for node in nodes:
        if isinstance(part, int):
            items = node.get("items")
            children.extend([items] if isinstance(items, dict) else
                            [i for i in node.get("prefixItems", ()) if isinstance(i, dict)])
            continue
        child = node.get("properties", {}).get(part)
        if child is None:
            child = node.get("additionalProperties")
        if isinstance(child, dict):
            children.append(child)
    return children


def nearest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate `word` was most likely meant to be, if one is close enough."""
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not found:
        folded = {candidate.casefold(): candidate for candidate in candidates}
        found = [folded[word.casefold()]] if word.casefold() in folded else []
    return found[0] if found else None
