"""Which labels Mergify will put on a PR, from the label rules of the repository's config.

Only `pull_request_rules` entries whose `actions.label` adds, toggles or removes labels
are read; every other rule (comments, assignments, merges) is ignored, problems and all.
A rule with `disabled:` set is skipped.

Conditions, as Mergify documents them (docs.mergify.com/configuration/conditions):
- A condition list means all of them; `and:` / `or:` take a list, `not:` one condition
  (a list there is read as all of it). `conditions: true` is an empty list.
- A string condition is `[-|¬|+] [#] attribute [operator value]`, spaces allowed
  between the parts. Operators: `=` `:` `==`, `!=` `≠`, `~=` (a regex *search*),
  `<` `>` `<=` `>=` `≤` `≥`. On a list attribute (`files`, `added-files`, `label`) a
  positive operator holds when any element matches and `!=` when none equals; `-`
  negates the whole condition, so `-files~=X` holds when no file matches. `#attr`
  compares the length of the list (or string) with an integer.
- Attributes read here: `files`, `added-files`, `label`, `title`, `body` (HTML comments
  removed, as Mergify does), `body-raw`, `base`, and the booleans `draft`, `closed` and
  `merged` (the PR is open: the last two are false). Renames, as Mergify documents them:
  `files` holds both the old and the new path, `added-files` the new one, and `#files` is
  GitHub's changed-file count, which counts a rename once (`LabelInput.changed_files`).
- Any other attribute (`conflict`, `check-failure`, `author`, `#approved-reviews-by`...),
  the glob operator `*=`, a condition we cannot read, or a regex RE2 refuses is
  *unknown*: reported once (per attribute; per rule and pattern for a regex), and
  evaluated as neither true nor false (Kleene logic). A rule is predicted only when its
  tree is true whatever the unknowns are, so `or: [files~=^docs/, conflict]` still
  predicts on a docs change and `[label!=stale, conflict]` never does.

Regexes come from the repository, so they run on RE2 (bot/core/rules/patterns.py), never
on Python's `re`, and each distinct one is compiled once. Mergify runs Python's `re`,
whose lookaheads RE2 lacks; vLLM's file uses the anchored form `^P(?!A)R` (P a literal),
which is rewritten exactly: `^P(?:R)` matches and `^P(?:A)` does not (positive: does).
Any other lookaround or backreference is refused. RE2 never matches across a line break,
and its `$` does not match before a final newline (Python's does); paths and titles have
none, a multi-line `body~=` pattern is the only place this shows.

Evaluation is bounded: an anchored literal prefix (`^vllm/v1/`) narrows the sorted file
list by bisection, a literal the regex needs (bot/core/rules/literals.py) rejects most
other paths without RE2, results are shared between rules that repeat a condition, and
one prediction spends at most MAX_SEARCH_COST on RE2 (past it, the rest is unknown).

Predicted labels follow the rules in order, as Mergify runs their actions: a matching
rule adds its `add` and `toggle` labels, then `remove_all` drops every label so far, then
`remove` drops its own; a toggle rule that does not match removes its labels. A label
a later matching rule removes is therefore not predicted (it would flap, and end
removed); one rule adding and removing a label ends without it. Each label is credited to
the first rule that adds it (since its last removal); names compare case-insensitively.
The PR's labels are read as they are: predicted ones are not fed back into `label`
conditions.

Problems are `"{source}:{line}: {message}"` strings; nothing here raises on any input.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import yaml

from bot.core.reading.template import strip_html_comments
from bot.core.rules.literals import RequiredLiterals, required_literals
from bot.core.rules.patterns import MAX_TEXT_BYTES, LinePattern, PatternError, encode
from bot.core.rules.yaml_source import YamlProblem, line_of, read_yaml

# Mergify reads the first of these it finds, in this order (docs: "Configuration File").
MERGIFY_PATHS: tuple[str, ...] = (
    ".mergify.yml",
    ".mergify.yaml",
    ".mergify/config.yml",
    ".mergify/config.yaml",
    ".github/mergify.yml",
    ".github/mergify.yaml",
)
DEFAULT_SOURCE = ".github/mergify.yml"

# Mergify's own schema allows 500 conditions in one list and 50 labels in one action.
MAX_RULES = 1_000
MAX_CONDITIONS_PER_RULE = 500
MAX_DEPTH = 16
MAX_LABELS_PER_LIST = 50
MAX_PATTERNS = 1_500
MAX_PROBLEMS = 200
# GitHub lists at most 3,000 files of a PR; a longer list makes file conditions unknown
# rather than letting one caller buy unbounded work.
MAX_FILES = 10_000
MAX_LABELS = 1_000
# What one prediction may spend finding literals and running RE2, in units of roughly a
# microsecond: an RE2 search costs its pattern's cost_weight (bot/core/rules/patterns.py)
# per 256 bytes, a literal scan one unit per KiB (CPython's find of a short needle can
# be that slow), a candidate it finds one more. Hostile files measured 0.2-1 us a unit,
# so this bounds a prediction near 120 ms; vLLM's file spends 1,500-7,500 on 3,000 files.
MAX_SEARCH_COST = 120_000
_MAX_NUMBER_DIGITS = 9

_LIST_ATTRIBUTES = frozenset({"files", "added-files", "label"})
_TEXT_ATTRIBUTES = frozenset({"title", "body", "body-raw", "base"})
_BOOLEAN_ATTRIBUTES = frozenset({"draft", "closed", "merged"})
# Values of these are unquoted by Mergify's TEXT parser; `base` is a branch name.
_UNQUOTED = frozenset({"files", "added-files", "label", "title", "body", "body-raw"})
# Longest first: `==` before `=`, `>=` before `>`.
_OPERATORS = ("~=", "*=", "==", "!=", ">=", "<=", "=", ":", "≠", "≥", "≤", "<", ">")
_ALIASES = {":": "=", "==": "=", "≠": "!=", "≥": ">=", "≤": "<="}
_ATTRIBUTE_END = frozenset(" \t=:!≠~<>≥≤")
_META = frozenset(".^$*+?{}[]|()")
_QUANTIFIERS = frozenset("*+?{")


@dataclass(frozen=True, eq=False)
class _Regex:
    source: str
    main: LinePattern
    # (must match, pattern) for each rewritten lookahead, anchored where it stood.
    guards: tuple[tuple[bool, LinePattern], ...]
    # Every match starts at the text's beginning with this (case-sensitive); "" if unknown.
    prefix: str
    literals: RequiredLiterals | None


@dataclass(frozen=True, eq=False)
class _Leaf:
    text: str
    attribute: str
    operator: str  # "=", "!=", "~=", "<", ">", "<=", ">=", or "" for a boolean
    negate: bool
    count: bool
    value: str = ""
    number: int = 0
    regex: _Regex | None = None


@dataclass(frozen=True, eq=False)
class _Unknown:
    kind: str  # "attribute", "pattern", "syntax", or a parse failure already reported
    detail: str = ""
    reason: str = ""


@dataclass(frozen=True, eq=False)
class _All:
    items: tuple[_Tree, ...]


@dataclass(frozen=True, eq=False)
class _Any:
    items: tuple[_Tree, ...]


@dataclass(frozen=True, eq=False)
class _Not:
    item: _Tree


_Tree: TypeAlias = "_Leaf | _Unknown | _All | _Any | _Not"
_Loc: TypeAlias = list[int | str]


@dataclass(frozen=True)
class LabelRule:
    name: str
    add: tuple[str, ...]
    remove: tuple[str, ...]
    line: int
    tree: _Tree = field(repr=False, compare=False)
    toggle: tuple[str, ...] = ()
    remove_all: bool = False


@dataclass(frozen=True)
class MergifyLabels:
    source: str
    rules: tuple[LabelRule, ...]
    problems: tuple[str, ...]


@dataclass(frozen=True)
class LabelInput:
    """What a PR offers the conditions. Renames as Mergify sees them: `files` holds both
    the old and the new path, `added_files` the new one; `changed_files` is GitHub's
    count for `#files` (a rename once), `len(files)` when None."""

    title: str
    body: str
    files: tuple[str, ...]
    added_files: tuple[str, ...]
    labels: tuple[str, ...]
    base: str = "main"
    draft: bool = False
    changed_files: int | None = None


@dataclass(frozen=True)
class PredictedLabel:
    label: str
    rule: str


# --- regex scanning --------------------------------------------------------------------


def _class_end(src: str, start: int) -> int | None:
    """Index just past the `]` closing the class opened at src[start]."""
    n = len(src)
    i = start + 1
    if i < n and src[i] == "^":
        i += 1
    if i < n and src[i] == "]":
        i += 1
    while i < n:
        char = src[i]
        if char == "\\":
            i += 2
            continue
        if src.startswith("[:", i):
            close = src.find(":]", i + 2)
            if close != -1:
                i = close + 2
                continue
        if char == "]":
            return i + 1
        i += 1
    return None


def _group_end(src: str, start: int) -> int | None:
    """Index just past the `)` closing the group opened at src[start]."""
    depth = 0
    i = start
    while i < len(src):
        char = src[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            end = _class_end(src, i)
            if end is None:
                return None
            i = end
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _shape(src: str) -> tuple[bool, bool] | None:
    """(has a top-level `|`, has lookaround anywhere), or None if unbalanced."""
    depth = 0
    bar = look = False
    i = 0
    while i < len(src):
        char = src[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            end = _class_end(src, i)
            if end is None:
                return None
            i = end
            continue
        if char == "(":
            if src.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                look = True
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
        elif char == "|" and depth == 0:
            bar = True
        i += 1
    return None if depth else (bar, look)


def _literal_run(src: str, start: int) -> tuple[int, str]:
    """The literal run from `start`: where it ends and its text. A quantifier after the
    run applies to its last character alone, which is then left out of both."""
    i = last = start
    chars: list[str] = []
    while i < len(src):
        char = src[i]
        if char == "\\":
            if i + 1 >= len(src) or src[i + 1].isalnum():
                break
            chars.append(src[i + 1])
            last, i = i, i + 2
            continue
        if char in _META:
            break
        chars.append(char)
        last, i = i, i + 1
    if i < len(src) and src[i] in _QUANTIFIERS and chars:
        chars.pop()
        i = last
    return i, "".join(chars)


def _anchored_prefix(src: str) -> tuple[str, int]:
    """The literal text every match starts with at the text's start ("" if none is
    known), and where the pattern goes on after it."""
    if not src.startswith("^"):
        return "", 0
    shape = _shape(src)
    if shape is None or shape[0]:
        return "", 0
    end, prefix = _literal_run(src, 1)
    return prefix, end


def _split_lookaheads(src: str) -> tuple[str, tuple[tuple[bool, str], ...]] | None:
    """`[(?flags)]^P(?!A)...R` as (`^P(?:R)`, ((must match, `^P(?:A)`), ...)), or None.

    Exact: `^` without multi-line mode fixes where each lookahead stands, at len(P)."""
    i = 0
    flags = ""
    if src.startswith("(?"):
        j = 2
        while j < len(src) and src[j].isalpha():
            j += 1
        if j > 2 and j < len(src) and src[j] == ")":
            flags = src[: j + 1]
            if "m" in flags:
                return None
            i = j + 1
    if not src.startswith("^", i):
        return None
    prefix_end, _ = _literal_run(src, i + 1)
    head = flags + src[i:prefix_end]
    i = prefix_end
    guards: list[tuple[bool, str]] = []
    while src.startswith(("(?=", "(?!"), i):
        end = _group_end(src, i)
        if end is None:
            return None
        guards.append((src[i + 2] == "=", src[i + 3 : end - 1]))
        i = end
    rest = src[i:]
    if not guards or (rest and rest[0] in _QUANTIFIERS):
        return None
    for part, whole in [(rest, True), *((body, False) for _, body in guards)]:
        shape = _shape(part)
        if shape is None or shape[1] or (whole and shape[0]):
            return None
    return f"{head}(?:{rest})", tuple((pos, f"{head}(?:{body})") for pos, body in guards)


def _compile_regex(source: str) -> _Regex | str:
    """The compiled regex, or why RE2 refuses it."""
    try:
        return _build_regex(source, source, ())
    except PatternError as refused:
        split = _split_lookaheads(source)
        if split is None:
            return str(refused)
        try:
            return _build_regex(source, split[0], split[1])
        except PatternError as exc:
            return str(exc)


def _build_regex(source: str, main: str, guards: tuple[tuple[bool, str], ...]) -> _Regex:
    compiled = LinePattern(main)
    checks = tuple((positive, LinePattern(body)) for positive, body in guards)
    prefix, end = _anchored_prefix(main)
    # The prefix is checked on its own; a literal after it is what tells files apart
    # (`^vllm/model_executor/models/.*qwen`: "qwen").
    rest = main[end:] if prefix else main
    return _Regex(
        source=source,
        main=compiled,
        guards=checks,
        prefix=prefix,
        literals=required_literals(rest) if rest else None,
    )


# --- parsing ---------------------------------------------------------------------------


def _unquote(value: str) -> str | None:
    if not value:
        return value
    first, last = value[0], value[-1]
    quoted_first, quoted_last = first in "'\"", last in "'\""
    if quoted_first != quoted_last or (quoted_first and (first != last or len(value) < 2)):
        return None
    return value[1:-1] if quoted_first else value


def _number(value: str) -> int | None:
    digits = value[1:] if value.startswith("-") else value
    if not digits or len(digits) > _MAX_NUMBER_DIGITS or not digits.isascii():
        return None
    if not digits.isdigit():
        return None
    return int(value)


def _clip(text: str, limit: int = 120) -> str:
    """A repository's text, cut short enough for a problem line."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


class _Parser:
    def __init__(self, root: yaml.Node, source: str) -> None:
        self.root = root
        self.source = source
        self.problems: list[str] = []
        self.dropped = 0
        self.regexes: dict[str, _Regex | str] = {}
        self.leaves: dict[str, _Tree] = {}
        self.reported_attributes: set[str] = set()
        self.reported: set[tuple[str, str]] = set()

    def problem(self, loc: Sequence[int | str], message: str) -> None:
        if len(self.problems) >= MAX_PROBLEMS:
            self.dropped += 1
            return
        line = line_of(self.root, loc)
        self.problems.append(f"{self.source}:{line}: {message}")

    def finish(self) -> tuple[str, ...]:
        if self.dropped:
            self.problems.append(f"{self.source}:1: {self.dropped} more problems not shown")
        return tuple(self.problems)

    # A leaf is parsed once per distinct text; what it says about a rule is reported
    # for each rule that uses it (a refused regex) or once (an unknown attribute).
    def leaf(self, text: str, rule: str, loc: _Loc) -> _Tree:
        key = text.strip()
        tree = self.leaves.get(key)
        if tree is None:
            tree = self._parse_leaf(key)
            self.leaves[key] = tree
        if isinstance(tree, _Unknown):
            self._report(tree, key, rule, loc)
        return tree

    def _report(self, tree: _Unknown, text: str, rule: str, loc: _Loc) -> None:
        if tree.kind == "attribute":
            bare = tree.detail.lstrip("#")
            if bare in self.reported_attributes:
                return
            self.reported_attributes.add(bare)
            self.problem(
                loc,
                f"rule {_clip(rule)!r}: condition {_clip(text)!r} uses "
                f"`{_clip(tree.detail)}`, which is not predicted; the condition counts as unknown",
            )
        elif tree.kind == "pattern":
            if (rule, tree.detail) in self.reported:
                return
            self.reported.add((rule, tree.detail))
            self.problem(
                loc,
                f"rule {_clip(rule)!r}: pattern {_clip(tree.detail)!r} is refused ({tree.reason}); "
                "the condition counts as unknown",
            )
        else:
            self.problem(
                loc,
                f"rule {_clip(rule)!r}: cannot read condition {_clip(text)!r}: {tree.detail}; "
                "it counts as unknown",
            )

    def _regex(self, source: str) -> _Regex | str:
        found = self.regexes.get(source)
        if found is None:
            if len(self.regexes) >= MAX_PATTERNS:
                return f"more than {MAX_PATTERNS:,} distinct patterns in the file"
            found = _compile_regex(source)
            self.regexes[source] = found
        return found

    def _parse_leaf(self, text: str) -> _Tree:
        n = len(text)
        i = _skip(text, 0)
        if i >= n:
            return _Unknown("syntax", "the condition is empty")
        negate = False
        if text[i] in "-¬":
            negate, i = True, i + 1
        elif text[i] == "+":
            i += 1
        i = _skip(text, i)
        count = i < n and text[i] == "#"
        if count:
            i = _skip(text, i + 1)
        j = i
        while j < n and text[j] not in _ATTRIBUTE_END and not text.startswith("*=", j):
            j += 1
        attribute = text[i:j]
        if not attribute:
            return _Unknown("syntax", "no attribute")
        i = _skip(text, j)
        rest = text[i:]
        if attribute in _BOOLEAN_ATTRIBUTES:
            if rest or count:
                return _Unknown("syntax", f"`{attribute}` is a boolean, without operator")
            return _Leaf(text, attribute, "", negate, False)
        if attribute not in _LIST_ATTRIBUTES and attribute not in _TEXT_ATTRIBUTES:
            return _Unknown("attribute", f"{'#' if count else ''}{attribute}")
        operator = next((op for op in _OPERATORS if rest.startswith(op)), None)
        if operator is None:
            return _Unknown("syntax", "no operator after the attribute")
        if operator == "*=":
            return _Unknown("attribute", "*= (glob operator)")
        value = rest[len(operator) :].strip()
        operator = _ALIASES.get(operator, operator)
        if count:
            number = _number(value)
            if number is None or operator == "~=":
                return _Unknown("syntax", f"`#{attribute}` compares with a whole number")
            return _Leaf(text, attribute, operator, negate, True, number=number)
        if operator == "~=":
            regex = self._regex(value)
            if isinstance(regex, str):
                return _Unknown("pattern", value, regex)
            return _Leaf(text, attribute, operator, negate, False, value=value, regex=regex)
        if attribute in _UNQUOTED:
            unquoted = _unquote(value)
            if unquoted is None:
                return _Unknown("syntax", "unbalanced quotes")
            value = unquoted
        return _Leaf(text, attribute, operator, negate, False, value=value)

    def tree(self, node: object, rule: str, loc: _Loc, depth: int, budget: list[int]) -> _Tree:
        budget[0] -= 1
        if budget[0] < 0:
            if budget[0] == -1:
                self.problem(
                    loc,
                    f"rule {rule!r}: more than {MAX_CONDITIONS_PER_RULE} conditions; "
                    "the rest count as unknown",
                )
            return _Unknown("capped")
        if isinstance(node, str):
            return self.leaf(node, rule, loc)
        if isinstance(node, dict):
            if len(node) != 1 or next(iter(node)) not in ("and", "or", "not"):
                keys = ", ".join(sorted(str(k) for k in node)) or "nothing"
                self.problem(
                    loc,
                    f"rule {rule!r}: a condition mapping holds one of and/or/not, not {keys}; "
                    "it counts as unknown",
                )
                return _Unknown("shape")
            if depth >= MAX_DEPTH:
                self.problem(
                    loc, f"rule {rule!r}: conditions nest deeper than {MAX_DEPTH}; unknown"
                )
                return _Unknown("depth")
            key, value = next(iter(node.items()))
            inner = [*loc, key]
            if key == "not":
                if isinstance(value, list):
                    return _Not(self.items(value, rule, inner, depth + 1, budget))
                return _Not(self.tree(value, rule, inner, depth + 1, budget))
            if value is True:
                value = []
            if not isinstance(value, list):
                self.problem(inner, f"rule {rule!r}: `{key}` takes a list of conditions")
                return _Unknown("shape")
            items = tuple(
                self.tree(item, rule, [*inner, index], depth + 1, budget)
                for index, item in enumerate(value)
            )
            return _All(items) if key == "and" else _Any(items)
        self.problem(
            loc,
            f"rule {rule!r}: a condition is a string or an and/or/not mapping, "
            f"not {type(node).__name__}; it counts as unknown",
        )
        return _Unknown("shape")

    def items(
        self, value: list[object], rule: str, loc: _Loc, depth: int, budget: list[int]
    ) -> _All:
        return _All(
            tuple(
                self.tree(item, rule, [*loc, index], depth, budget)
                for index, item in enumerate(value)
            )
        )

    def labels(
        self, action: dict[object, object], key: str, rule: str, loc: _Loc
    ) -> tuple[str, ...]:
        value = action.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.problem([*loc, key], f"rule {rule!r}: label `{key}` takes a list of labels")
            return ()
        out: list[str] = []
        for index, item in enumerate(value[:MAX_LABELS_PER_LIST]):
            if not isinstance(item, str) or not item.strip():
                self.problem([*loc, key, index], f"rule {rule!r}: a label is a non-empty string")
            elif "{{" in item or "{%" in item:
                self.problem(
                    [*loc, key, index],
                    f"rule {rule!r}: label {item!r} is a template; it is not predicted",
                )
            elif item not in out:
                out.append(item)
        if len(value) > MAX_LABELS_PER_LIST:
            self.problem(
                [*loc, key], f"rule {rule!r}: more than {MAX_LABELS_PER_LIST} labels in `{key}`"
            )
        return tuple(out)

    def rule(self, entry: object, index: int, names: set[str]) -> LabelRule | None:
        loc: _Loc = ["pull_request_rules", index]
        if not isinstance(entry, dict):
            self.problem(loc, "a rule is a mapping with name, conditions and actions")
            return None
        actions = entry.get("actions")
        if not isinstance(actions, dict) or "label" not in actions:
            return None
        action = actions["label"]
        aloc: _Loc = [*loc, "actions", "label"]
        if action is None or entry.get("disabled") is not None:
            return None
        name_value = entry.get("name")
        name = name_value if isinstance(name_value, str) and name_value else f"rule #{index + 1}"
        if name is not name_value:
            self.problem(loc, f"{name}: a rule needs a name")
        name = _clip(name, 200)
        if not isinstance(action, dict):
            self.problem(aloc, f"rule {name!r}: the label action is a mapping (add/remove/toggle)")
            return None
        add = self.labels(action, "add", name, aloc)
        remove = self.labels(action, "remove", name, aloc)
        toggle = self.labels(action, "toggle", name, aloc)
        remove_all = action.get("remove_all") is True
        if not (add or remove or toggle or remove_all):
            return None
        if name in names:
            self.problem(loc, f"rule {name!r}: two rules have this name (Mergify refuses that)")
        names.add(name)
        conditions = entry.get("conditions")
        cloc: _Loc = [*loc, "conditions"]
        if conditions is True:
            conditions = []
        if not isinstance(conditions, list):
            self.problem(
                cloc if "conditions" in entry else loc,
                f"rule {name!r}: conditions must be a list; the rule is not predicted",
            )
            tree: _Tree = _Unknown("shape")
        else:
            tree = self.items(conditions, name, cloc, 0, [MAX_CONDITIONS_PER_RULE])
        return LabelRule(
            name=name,
            add=add,
            remove=remove,
            line=line_of(self.root, loc),
            tree=tree,
            toggle=toggle,
            remove_all=remove_all,
        )


def parse_mergify(text: str, *, source: str = DEFAULT_SOURCE) -> MergifyLabels:
    """The label rules of a Mergify configuration, with problems; never raises."""
    try:
        document = read_yaml(text, allow_empty=True)
    except YamlProblem as exc:
        return MergifyLabels(source, (), (f"{source}:{exc.line}: {exc.message}",))
    except Exception as exc:  # a YAML library edge case must not take the digest down
        return MergifyLabels(source, (), (f"{source}:1: not readable: {type(exc).__name__}",))
    parser = _Parser(document.root, source)
    data = document.data
    if not isinstance(data, dict):
        parser.problem([], "the configuration is a mapping (pull_request_rules: ...)")
        return MergifyLabels(source, (), parser.finish())
    if "extends" in data:
        parser.problem(
            ["extends"], "`extends` is not followed: rules of the extended file are not predicted"
        )
    entries = data.get("pull_request_rules")
    if entries is None:
        return MergifyLabels(source, (), parser.finish())
    if not isinstance(entries, list):
        parser.problem(["pull_request_rules"], "pull_request_rules is a list of rules")
        return MergifyLabels(source, (), parser.finish())
    if len(entries) > MAX_RULES:
        parser.problem(
            ["pull_request_rules", MAX_RULES],
            f"more than {MAX_RULES:,} rules; the rest are not read",
        )
    rules: list[LabelRule] = []
    names: set[str] = set()
    for index, entry in enumerate(entries[:MAX_RULES]):
        rule = parser.rule(entry, index, names)
        if rule is not None:
            rules.append(rule)
    return MergifyLabels(source, tuple(rules), parser.finish())


# --- evaluation ------------------------------------------------------------------------


class _Exhausted(Exception):
    pass


class _Texts:
    """One attribute's values, prepared once per prediction: sorted (a prefix is a
    range), and joined, as typed and ASCII-folded, so the literals a regex needs are
    found by `str.find` over all of them at once rather than one value at a time."""

    __slots__ = ("_data", "folded", "joined", "members", "starts", "texts", "unfoldable")

    def __init__(self, values: Sequence[str], cap: int) -> None:
        self.texts: list[str] = []
        self.unfoldable: list[int] = []
        if len(values) > cap:
            self.texts = []
            self.members: frozenset[str] | None = None
            self.joined = self.folded = ""
            self.starts = [0]
            self._data: list[bytes | None] = []
            return
        self.texts = sorted(values)
        self.members = frozenset(self.texts)
        self.joined = "\n".join(self.texts)
        # Lower-casing keeps an ASCII text's length, so offsets hold in both strings; a
        # non-ASCII text is kept as is and always searched (str.lower folds more than RE2).
        self.folded = "\n".join(t.lower() if t.isascii() else t for t in self.texts)
        self.unfoldable = [i for i, t in enumerate(self.texts) if not t.isascii()]
        self.starts = [0]
        for text in self.texts:
            self.starts.append(self.starts[-1] + len(text) + 1)
        self._data = [None] * len(self.texts)

    @property
    def unknown(self) -> bool:
        return self.members is None

    def data(self, index: int) -> bytes:
        found = self._data[index]
        if found is None:
            found = encode(self.texts[index])[:MAX_TEXT_BYTES]
            self._data[index] = found
        return found


def _successor(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` (None: none is)."""
    while prefix and prefix[-1] == "\U0010ffff":
        prefix = prefix[:-1]
    return prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else None


class _Context:
    def __init__(self, pr: LabelInput) -> None:
        self.pr = pr
        self.cost = 0
        self.exhausted = False
        self.memo: dict[int, bool | None] = {}
        self._texts: dict[str, _Texts] = {}

    def texts(self, attribute: str) -> _Texts:
        found = self._texts.get(attribute)
        if found is None:
            pr = self.pr
            body = pr.body[:MAX_TEXT_BYTES]
            values: dict[str, tuple[Sequence[str], int]] = {
                "files": (pr.files, MAX_FILES),
                "added-files": (pr.added_files, MAX_FILES),
                "label": (pr.labels, MAX_LABELS),
                "title": ((pr.title,), 1),
                "body": ((strip_html_comments(body),), 1),
                "body-raw": ((body,), 1),
                "base": ((pr.base,), 1),
            }
            items, cap = values[attribute]
            found = _Texts(items, cap)
            self._texts[attribute] = found
        return found

    def count(self, attribute: str) -> int:
        pr = self.pr
        if attribute == "files" and pr.changed_files is not None:
            return pr.changed_files
        if attribute in _LIST_ATTRIBUTES:
            return len(
                {"files": pr.files, "added-files": pr.added_files, "label": pr.labels}[attribute]
            )
        return len(self.texts(attribute).texts[0])

    def search(self, regex: _Regex, texts: _Texts) -> bool:
        """Whether any value matches; RE2 runs only where the prefix and a literal the
        regex needs are both present."""
        lo, hi = 0, len(texts.texts)
        if regex.prefix:
            lo = bisect.bisect_left(texts.texts, regex.prefix)
            above = _successor(regex.prefix)
            if above is not None:
                hi = bisect.bisect_left(texts.texts, above, lo)
        if lo >= hi:
            return False
        return any(
            self._matches(regex, texts.data(i)) for i in self._candidates(regex, texts, lo, hi)
        )

    def _candidates(self, regex: _Regex, texts: _Texts, lo: int, hi: int) -> Iterable[int]:
        literals = regex.literals
        if literals is None or any("\n" in option for option in literals.options):
            return range(lo, hi)
        hay = texts.folded if literals.ignore_case else texts.joined
        begin, end = texts.starts[lo], texts.starts[hi]
        found: set[int] = set()
        for option in literals.options:
            self.charge(1 + (end - begin) // 1024)
            at = hay.find(option, begin, end)
            while at != -1:
                index = bisect.bisect_right(texts.starts, at) - 1
                found.add(index)
                self.charge(1)
                at = hay.find(option, texts.starts[index + 1], end)
        if literals.ignore_case:
            found.update(i for i in texts.unfoldable if lo <= i < hi)
        return sorted(found)

    def charge(self, units: int) -> None:
        self.cost += units
        if self.cost > MAX_SEARCH_COST:
            raise _Exhausted

    def _matches(self, regex: _Regex, data: bytes) -> bool:
        weight = regex.main.cost_weight + sum(guard.cost_weight for _, guard in regex.guards)
        self.charge((1 + len(data) // 256) * weight)
        if regex.main.search_bytes(data) is None:
            return False
        return all(
            (guard.search_bytes(data) is not None) == positive for positive, guard in regex.guards
        )


def _compare(left: int | str, operator: str, right: int | str) -> bool:
    # Mixed types cannot meet: `#` leaves compare ints, the others strings.
    if operator == "=":
        return left == right
    if operator == "!=":
        return left != right
    if isinstance(left, int) and isinstance(right, int):
        a, b = left, right
        return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[operator]
    if isinstance(left, str) and isinstance(right, str):
        s, t = left, right
        return {"<": s < t, ">": s > t, "<=": s <= t, ">=": s >= t}[operator]
    return False


def _leaf(leaf: _Leaf, ctx: _Context) -> bool | None:
    if leaf.operator == "":
        result = ctx.pr.draft if leaf.attribute == "draft" else False
    elif leaf.count:
        result = _compare(ctx.count(leaf.attribute), leaf.operator, leaf.number)
    else:
        texts = ctx.texts(leaf.attribute)
        if texts.unknown:
            return None
        if leaf.regex is not None:
            if ctx.exhausted:
                return None
            try:
                result = ctx.search(leaf.regex, texts)
            except _Exhausted:
                ctx.exhausted = True
                return None
        elif leaf.operator in ("=", "!="):
            result = (leaf.value in (texts.members or ())) == (leaf.operator == "=")
        else:
            result = any(_compare(text, leaf.operator, leaf.value) for text in texts.texts)
    return not result if leaf.negate else result


def _evaluate(tree: _Tree, ctx: _Context) -> bool | None:
    if isinstance(tree, _Leaf):
        key = id(tree)
        if key in ctx.memo:
            return ctx.memo[key]
        result = _leaf(tree, ctx)
        ctx.memo[key] = result
        return result
    if isinstance(tree, _Unknown):
        return None
    if isinstance(tree, _Not):
        inner = _evaluate(tree.item, ctx)
        return None if inner is None else not inner
    decisive = isinstance(tree, _Any)  # True decides an `or`, False an `and`
    unknown = False
    for item in tree.items:
        value = _evaluate(item, ctx)
        if value is None:
            unknown = True
        elif value is decisive:
            return decisive
    return None if unknown else not decisive


def predict_labels(mergify: MergifyLabels, pr: LabelInput) -> tuple[PredictedLabel, ...]:
    """The labels Mergify's rules leave on the PR, in rule order, each with its rule."""
    ctx = _Context(pr)
    # Keyed case-folded: GitHub's label names are, and Mergify's label action compares
    # them so (`remove: [Bug]` removes `bug`).
    state: dict[str, PredictedLabel] = {}
    for rule in mergify.rules:
        result = _evaluate(rule.tree, ctx)
        if result is True:
            for label in (*rule.add, *rule.toggle):
                state.setdefault(label.casefold(), PredictedLabel(label, rule.name))
            if rule.remove_all:
                state.clear()
            for label in rule.remove:
                state.pop(label.casefold(), None)
        elif result is False:
            for label in rule.toggle:
                state.pop(label.casefold(), None)
    return tuple(state.values())
