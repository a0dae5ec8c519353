"""Read one YAML rule file into data *and* its node tree, so errors can name a line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml

MAX_FILE_BYTES = 1024 * 1024


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


def read_yaml(text: str) -> YamlSource:
    if len(text.encode("utf-8", errors="replace")) > MAX_FILE_BYTES:
        raise YamlProblem(1, f"file is larger than {MAX_FILE_BYTES // 1024} KiB")
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
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
        loader.dispose()
    return YamlSource(data, root)


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
