"""Does a signature change break its callers? Read from the patch's text of the signature
before and after, parsed with the index's own parser (bounded: a few kB of text).

Compatible: parameters added with a default (anywhere after the required positional
ones), keyword-only with a default, or `*args` / `**kwargs` added; annotations changed.
Breaking: a parameter removed or renamed, a required positional one moved, one that lost
its default, a new one without a default, a positional one made keyword-only.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.repo_index.parse import parse_signature

MAX_SIGNATURE_CHARS = 8_000


@dataclass(frozen=True)
class SignatureChange:
    compatible: bool
    reasons: tuple[str, ...] = ()  # what breaks the callers, e.g. "removed `port`"


def read_params(text: str, *, partial: bool) -> tuple[str, ...] | None:
    """Parameters of the `def` in `text` (`partial`: lines from inside the parameter list,
    without the `def` line), or None when the text is not a signature."""
    if len(text) > MAX_SIGNATURE_CHARS:
        return None
    if partial:
        body = text.rstrip()
        closed = body.endswith(":")
        text = "def _(\n" + body + ("\n    pass\n" if closed else "\n): pass\n")
    else:
        text = text.strip() + "\n    pass\n"
    return parse_signature(text)


def compare(old: tuple[str, ...], new: tuple[str, ...]) -> SignatureChange:
    """`old` and `new` in FunctionRecord.params' notation (`x=` has a default)."""
    reasons: list[str] = []
    old_pos, _ = _split(old)
    new_pos, new_kw = _split(new)
    new_by_name = {_name(p): p for p in new if _name(p)}
    old_names = {_name(p) for p in old if _name(p)}
    for p in old:
        name = _name(p)
        if not name:
            continue
        if name not in new_by_name:
            reasons.append(f"removed `{p.rstrip('=')}`")
        elif p.endswith("=") and not _optional(new_by_name[name]):
            reasons.append(f"`{name}` lost its default")
    old_pos_names = [_name(p) for p in old_pos]
    new_pos_names = [_name(p) for p in new_pos]
    kw_names = {_name(p) for p in new_kw}
    for name in old_pos_names:
        if name in kw_names:
            reasons.append(f"`{name}` became keyword-only")
    # A required positional parameter must keep its place; one with a default is
    # passed by keyword in practice, so a new default before it breaks nobody.
    required = [_name(p) for p in old_pos if not _optional(p)]
    if any(n in new_pos_names and new_pos_names.index(n) != old_pos_names.index(n)
           for n in required):
        reasons.append("positional parameters moved")
    for p in new:
        name = _name(p)
        if name and name not in old_names and not _optional(p):
            reasons.append(f"new required `{name}`")
    return SignatureChange(compatible=not reasons, reasons=tuple(dict.fromkeys(reasons)))


def _name(param: str) -> str:
    """`x=` -> x; `*args` -> args; a bare `*` separator -> ""."""
    return param.rstrip("=").lstrip("*")


def _optional(param: str) -> bool:
    return param.endswith("=") or param.startswith("*")


def _split(params: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(positional parameters, keyword-only ones): the split is at `*` or `*args`."""
    for i, p in enumerate(params):
        if p.startswith("*") and not p.startswith("**"):
            return list(params[:i]), [q for q in params[i + 1:] if not q.startswith("**")]
        if p.startswith("**"):
            return list(params[:i]), []
    return list(params), []
