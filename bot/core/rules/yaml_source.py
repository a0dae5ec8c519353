"""Read one YAML rule file into data *and* its node tree, so errors can name a line.

libyaml (CSafeLoader) when it is installed, else PyYAML's pure-Python loader: both
compose nodes that carry their marks, which is all `line_of` needs, and libyaml reads a
rule file ~10x faster. Before composing, one pass over the event stream bounds the
nesting depth: composing and constructing recurse, so a 2,000-deep override raised
RecursionError (and a deeper one could overflow libyaml's C stack).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml

MAX_FILE_BYTES = 1024 * 1024
# Rule files nest a few levels (area > match > any > condition > not > ...); 64 leaves
# room for any honest `any`/`all`/`not` tree.
MAX_DEPTH = 64
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class YamlSource:
    data: object
    root: yaml.Node


class YamlProblem(ValueError):
    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _check_tree(root: yaml.Node) -> None:
    """Reject aliases (a billion-laughs file expands exponentially when validated) and
    duplicate keys (PyYAML silently keeps the last one, hiding a typo)."""
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            raise YamlProblem(_line(node), "YAML anchors and aliases are not allowed")
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        raise YamlProblem(_line(key), f"duplicate key {key.value!r}")
                    keys.add(key.value)
                pending += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            pending += node.value


def _check_depth(text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = int(event.start_mark.line) + 1 if event.start_mark else 1
                raise YamlProblem(line, f"nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def read_yaml(text: str, *, allow_empty: bool = False) -> YamlSource:
    """Data and nodes of one YAML document; an empty one (nothing but comments) is an
    error unless `allow_empty`, which reads it as an empty mapping."""
    if len(text.encode("utf-8", errors="replace")) > MAX_FILE_BYTES:
        raise YamlProblem(1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    loader = None
    try:
        _check_depth(text)
        loader = _Loader(text)
        root = loader.get_single_node()
        if root is None:
            if allow_empty:
                start = yaml.Mark("", 0, 0, 0, "", 0)
                return YamlSource({}, yaml.MappingNode("tag:yaml.org,2002:map", [], start, start))
            raise YamlProblem(1, "file is empty")
        _check_tree(root)
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = int(mark.line) + 1 if mark is not None else 1
        raise YamlProblem(line, f"not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(1, f"not valid YAML: {exc}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return YamlSource(data, root)


def _is_key(node: yaml.Node, part: int | str) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == str(part)


def node_at(root: yaml.Node, loc: Sequence[int | str]) -> yaml.Node:
    """The value node at `loc` (mapping keys and sequence indexes), or the deepest that
    exists on the way."""
    node = root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = [v for k, v in node.value if _is_key(k, part)]
            if not found:
                break
            node = found[0]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
        else:
            break
    return node


def line_of(root: yaml.Node, loc: Sequence[int | str]) -> int:
    """The line of the node at a pydantic error location (the deepest node that exists).

    A location that ends at a mapping key gives the key's own line, so an unknown key
    or a bad value is reported where its key is written.
    """
    node = root
    last = len(loc) - 1
    for index, part in enumerate(loc):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    node = key if index == last else value
                    break
            # else: a pydantic-internal step (a validator or union tag): stay here
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if 0 <= part < len(node.value):
                node = node.value[part]
        else:
            break
    return _line(node)
