"""Python source text -> a FileRecord, with tree-sitter: the code is never imported or run.

tree-sitter builds its tree in C and one query collects every definition, import and
call name, so a file costs about what `ast.parse` alone would (bench/bench_index.py);
walking Python AST objects cost more than the parse itself.

Bounded: text over `max_bytes`, text that is not UTF-8, binary content, text the
grammar refuses, and text so dense in brackets and operators that its tree would dwarf
the file come back as a `Skipped` with a reason the caller counts; nothing here raises
on bad input. The query starts no match deeper than `_MAX_START_DEPTH` nodes: a chain
of calls thousands deep (`f()()()…`) would otherwise cost quadratic time, and no
hand-written call sits that deep.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Literal

import tree_sitter
import tree_sitter_python

from bot.core.repo_index.model import ClassRecord, FileRecord, FunctionRecord, module_name

__all__ = [
    "DEFAULT_MAX_FILE_BYTES", "SKIP_REASONS", "SkipReason", "Skipped", "blob_sha", "module_name",
    "parse_python", "parse_signature",
]

SkipReason = Literal["too-large", "binary", "not-utf8", "syntax-error", "too-deep"]
SKIP_REASONS: tuple[SkipReason, ...] = (
    "too-large", "binary", "not-utf8", "syntax-error", "too-deep",
)
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024  # vLLM's largest hand-written file is ~200 kB
_MAX_START_DEPTH = 200
# Nodes per byte of text: vLLM's densest file has 0.41; `f()()()…` has 2. Past this the
# tree would take far more memory than the text it came from.
_MAX_NODES_PER_BYTE = 1.0
# Before parsing a large file: the share of bracket and operator bytes above which its
# tree could outgrow the child's memory cap. Hand-written code has under 15%.
_DENSE_FROM_BYTES = 256 * 1024
_MAX_DENSE_SHARE = 0.35
_DENSE_BYTES = (b"(", b")", b"[", b"]", b"{", b"}", b"-", b"~", b"+", b"*")
_MAX_LOCAL_CALLS = 200
MAX_SIGNATURE_TEXT = 6_000  # bytes of a signature kept for re-anchoring and comparing

_LANGUAGE = tree_sitter.Language(tree_sitter_python.language())
_QUERY = tree_sitter.Query(_LANGUAGE, """
(function_definition) @def
(class_definition) @class
(import_statement) @import
(import_from_statement) @import
(call function: [(identifier) @call (attribute attribute: (identifier) @call)])
""")


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: SkipReason


def blob_sha(data: bytes) -> str:
    """Git's object id of a blob with these bytes: what the trees API says a file is."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def parse_python(
    path: str, data: bytes, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES, blob: str = ""
) -> FileRecord | Skipped:
    if len(data) > max_bytes:
        return Skipped(path, "too-large")
    if b"\x00" in data:
        return Skipped(path, "binary")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return Skipped(path, "not-utf8")
    if len(data) > _DENSE_FROM_BYTES and _dense(data):
        return Skipped(path, "too-deep")
    try:
        tree = tree_sitter.Parser(_LANGUAGE).parse(data)
    except MemoryError:
        return Skipped(path, "too-deep")
    root = tree.root_node
    if root.has_error:
        return Skipped(path, "syntax-error")
    if root.descendant_count > max(_MAX_NODES_PER_BYTE * len(data), 1000):
        return Skipped(path, "too-deep")
    cursor = tree_sitter.QueryCursor(_QUERY)
    cursor.set_max_start_depth(_MAX_START_DEPTH)
    return _Reader(path, data, cursor.captures(root)).record(blob)


def _dense(data: bytes) -> bool:
    return sum(data.count(b) for b in _DENSE_BYTES) > _MAX_DENSE_SHARE * len(data)


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


class _Reader:
    """One file's captures -> its record."""

    def __init__(
        self, path: str, data: bytes, captures: dict[str, list[tree_sitter.Node]]
    ) -> None:
        self.path = path
        self.data = data
        self.module = module_name(path)
        self.captures = captures

    def record(self, blob: str) -> FileRecord:
        classes, functions, spans = self._definitions()
        # Names stay bytes until counted: a file has ten times more calls than names.
        calls: Counter[bytes] = Counter()
        defined = {fn.name.encode() for fn in functions}
        local: list[list[tuple[int, bytes]]] = [[] for _ in spans]
        starts = [start for start, _, _ in spans]
        for node in self.captures.get("call", ()):
            name = node.text or b""
            calls[name] += 1
            if name in defined:
                start = node.start_byte
                at = bisect.bisect_right(starts, start) - 1
                if at >= 0 and start < spans[at][1]:
                    local[at].append((start, name))
        for (_, _, index), names in zip(spans, local, strict=True):
            if names:
                fn = functions[index]
                # In source order (the query's two call patterns interleave).
                ordered = dict.fromkeys(n for _, n in sorted(names))
                own = tuple(n.decode("utf-8", "replace") for n in ordered)
                functions[index] = FunctionRecord(
                    fn.name, fn.class_name, fn.line, fn.end_line, fn.body_line, fn.decorators,
                    fn.params, own[:_MAX_LOCAL_CALLS], fn.first_line, fn.doc_line, fn.doc_end,
                    fn.nested_in, fn.signature,
                )
        return FileRecord(
            path=self.path, module=self.module, classes=tuple(classes),
            functions=tuple(functions), imports=self._imports(),
            calls=tuple(sorted((n.decode("utf-8", "replace"), c) for n, c in calls.items())),
            blob=blob,
        )

    def _definitions(
        self,
    ) -> tuple[list[ClassRecord], list[FunctionRecord], list[tuple[int, int, int]]]:
        """Classes and functions in file order, and the byte spans of the outermost
        functions and methods (start, end, index in functions): where calls are made."""
        nodes = [(n.start_byte, n.end_byte, True, n) for n in self.captures.get("def", ())]
        nodes += [(n.start_byte, n.end_byte, False, n) for n in self.captures.get("class", ())]
        nodes.sort(key=lambda item: item[0])
        classes: list[ClassRecord] = []
        functions: list[FunctionRecord] = []
        spans: list[tuple[int, int, int]] = []
        # Open scopes: (end byte, is a def, name, qualname of the outermost def or None).
        stack: list[tuple[int, bool, str, str | None]] = []
        for start, end, is_def, node in nodes:
            while stack and stack[-1][0] <= start:
                stack.pop()
            outer = next((s[3] for s in stack if s[1]), None)
            name = _text(node.child_by_field_name("name"))
            if not is_def:
                if outer is None:
                    classes.append(ClassRecord(
                        name=name, bases=_bases(node),
                        line=node.start_point.row + 1, end_line=node.end_point.row + 1,
                    ))
                stack.append((end, False, name, outer))
                continue
            class_name = stack[-1][2] if stack and not stack[-1][1] and outer is None else None
            fn = _function(node, name, class_name, outer, self.data)
            if outer is None:
                spans.append((start, end, len(functions)))
            functions.append(fn)
            stack.append((end, True, name, outer or fn.qualname))
        return classes, functions, spans

    def _imports(self) -> tuple[str, ...]:
        package = self.module if self.path.endswith("__init__.py") else (
            self.module.rpartition(".")[0]
        )
        found: list[str] = []
        # Two patterns share this capture: their nodes come pattern by pattern.
        for node in sorted(self.captures.get("import", ()), key=lambda n: n.start_byte):
            names = [_imported_name(n) for n in node.children_by_field_name("name")]
            if node.type == "import_statement":
                found.extend(n for n in names if n)
                continue
            base = _from_module(node.child_by_field_name("module_name"), package)
            if base:
                found.append(base)
                found.extend(f"{base}.{n}" for n in names if n)
        return tuple(dict.fromkeys(found))


def _function(
    node: tree_sitter.Node, name: str, class_name: str | None, outer: str | None, data: bytes
) -> FunctionRecord:
    line = node.start_point.row + 1
    body = node.child_by_field_name("body")
    body_line = body.start_point.row + 1 if body is not None else line
    decorators: tuple[str, ...] = ()
    first_line = 0
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        first_line = parent.start_point.row + 1
        decorators = tuple(
            d for d in (_decorator(c) for c in parent.children if c.type == "decorator") if d
        )
    doc_line, doc_end = _docstring(body)
    return FunctionRecord(
        name=name,
        class_name=class_name,
        line=line,
        end_line=node.end_point.row + 1,
        body_line=max(body_line, line + 1),
        decorators=decorators,
        params=_params(node.child_by_field_name("parameters"),
                       method=class_name is not None, decorators=decorators),
        first_line=first_line if first_line != line else 0,
        doc_line=doc_line,
        doc_end=doc_end,
        nested_in=outer,
        signature=_signature_text(node, body, data),
    )


def _signature_text(node: tree_sitter.Node, body: tree_sitter.Node | None, data: bytes) -> str:
    """The `def` line through the signature's colon, one stripped line per source line."""
    end = body.start_byte if body is not None else node.end_byte
    for child in node.children:
        if child.type == ":":
            end = child.end_byte  # the signature's colon (annotations' colons are nested)
    text = data[node.start_byte:min(end, node.start_byte + MAX_SIGNATURE_TEXT)]
    return "\n".join(line.strip() for line in text.decode("utf-8", "replace").split("\n"))


def parse_signature(text: str) -> tuple[str, ...] | None:
    """The parameters of the first `def` in a small piece of source text, `self`
    included; None when it holds no readable signature."""
    data = text.encode()
    tree = tree_sitter.Parser(_LANGUAGE).parse(data)
    if tree.root_node.has_error:
        return None
    node = tree.root_node.named_children[0] if tree.root_node.named_child_count else None
    if node is not None and node.type == "decorated_definition":
        node = node.child_by_field_name("definition")
    if node is None or node.type != "function_definition":
        return None
    return _params(node.child_by_field_name("parameters"), method=False, decorators=())


def _docstring(body: tree_sitter.Node | None) -> tuple[int, int]:
    if body is None:
        return 0, 0
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            value = child.named_children[0]
            if value.type in ("string", "concatenated_string"):
                return child.start_point.row + 1, child.end_point.row + 1
        return 0, 0
    return 0, 0


_PARAM_NAME = {"identifier": "", "list_splat_pattern": "*", "dictionary_splat_pattern": "**"}


def _params(
    node: tree_sitter.Node | None, *, method: bool, decorators: tuple[str, ...]
) -> tuple[str, ...]:
    if node is None:
        return ()
    names: list[str] = []
    for child in node.named_children:
        kind = child.type
        if kind in _PARAM_NAME:
            names.append(_star_name(child))
        elif kind == "typed_parameter":
            inner = child.named_children[0] if child.named_child_count else None
            if inner is not None:
                names.append(_star_name(inner))
        elif kind in ("default_parameter", "typed_default_parameter"):
            names.append(_text(child.child_by_field_name("name")) + "=")
        elif kind == "keyword_separator":
            names.append("*")
    if method and "staticmethod" not in decorators and names and names[0] in ("self", "cls"):
        names = names[1:]
    return tuple(names)


def _star_name(node: tree_sitter.Node) -> str:
    prefix = _PARAM_NAME.get(node.type, "")
    if not prefix:
        return _text(node)
    inner = node.named_children[0] if node.named_child_count else None
    return prefix + _text(inner)


def _last_name(node: tree_sitter.Node) -> str:
    if node.type == "identifier":
        return _text(node)
    if node.type == "attribute":
        return _text(node.child_by_field_name("attribute"))
    if node.type == "subscript":  # Generic[T] -> Generic
        value = node.child_by_field_name("value")
        return _last_name(value) if value is not None else ""
    return ""


def _bases(node: tree_sitter.Node) -> tuple[str, ...]:
    listed = node.child_by_field_name("superclasses")
    if listed is None:
        return ()
    return tuple(b for b in map(_last_name, listed.named_children) if b)


def _decorator(node: tree_sitter.Node) -> str:
    expr = node.named_children[0] if node.named_child_count else None
    if expr is not None and expr.type == "call":
        expr = expr.child_by_field_name("function")
    if expr is None or expr.type not in ("identifier", "attribute"):
        return ""
    text = "".join(_text(expr).split())
    return text if all(part.isidentifier() for part in text.split(".")) else ""


def _imported_name(node: tree_sitter.Node) -> str:
    if node.type == "aliased_import":
        name = node.child_by_field_name("name")
        return "".join(_text(name).split()) if name is not None else ""
    return "".join(_text(node).split())


def _from_module(node: tree_sitter.Node | None, package: str) -> str:
    """`from ..a import b` in package `x.y.z` -> `x.y.a`; absolute modules as they are."""
    if node is None:
        return ""
    text = "".join(_text(node).split())
    module = text.lstrip(".")
    level = len(text) - len(module)
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)
