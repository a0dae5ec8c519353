"""The digest's "Around the change" section: what the symbol index says about the code
the PR lands in. At most two short lines per kind, only when found; nothing at all when
there is no index. Callers a signature change leaves unaffected (it only added
parameters with defaults) are one count in a collapsed line, never a list. Names come
from repository code: escaped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bot.core.findings import Digest
from bot.core.render.escape import escape_code, sanitize_trusted
from bot.core.render.i18n import t
from bot.core.repo_index.findings import CallerFinding, OverrideFinding, SiblingFinding
from bot.core.vocabulary import Lang

_NAMES_SHOWN = 4
_FILES_SHOWN = 4


def repo_context_lines(digest: Digest) -> Iterator[str]:
    context = digest.repo_context
    if context is None:
        return
    lang = digest.lang
    yield from (f"- {_sibling(s, lang)}" for s in context.siblings)
    yield from (f"- {_override(o, lang)}" for o in context.overrides)
    yield from (f"- {_caller(c, lang)}" for c in context.breaking_callers)
    unaffected = context.unaffected_callers
    if unaffected:
        summary = t(lang, "render.context.unaffected.summary", count=len(unaffected))
        yield ""  # an HTML block after a list item: on its own, not inside the item
        yield f"<details><summary>{sanitize_trusted(summary)}</summary>"
        yield ""
        yield from (f"- {_unaffected(c, lang)}" for c in unaffected)
        yield ""
        yield "</details>"


def _listed(items: Sequence[str], shown: int, lang: Lang) -> str:
    text = ", ".join(escape_code(item, 80) for item in items[:shown])
    if len(items) > shown:
        text += " " + t(lang, "render.more", count=len(items) - shown)
    return text


def _short_paths(paths: Sequence[str]) -> list[str]:
    """File names without their directory when that stays unambiguous."""
    names = [p.rsplit("/", 1)[-1] for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def _sibling(s: SiblingFinding, lang: Lang) -> str:
    kind, _, value = s.shape.partition(":")
    shape = t(lang, f"render.context.shape.{kind}", value=escape_code(value, 80))
    return t(
        lang, "render.context.siblings",
        changed=escape_code(s.changed, 80), file=escape_code(s.file, 160),
        names=_listed(s.siblings, _NAMES_SHOWN, lang), shape=shape,
    )


def _override(o: OverrideFinding, lang: Lang) -> str:
    paths = list(dict.fromkeys(path for path, _ in o.overriders))
    count = len(o.overriders)
    key = "render.context.overrides.one" if count == 1 else "render.context.overrides"
    line = t(
        lang, key, count=count, method=escape_code(f"{o.class_name}.{o.method}", 120),
        files=_listed(_short_paths(paths), _FILES_SHOWN, lang),
    )
    if o.nested:
        line += t(lang, "render.context.overrides.nested",
                  names=", ".join(escape_code(n, 80) for n in o.nested[:_NAMES_SHOWN]))
    if o.named_by_tests is not None:
        line += t(lang, "render.context.overrides.tests", named=o.named_by_tests)
    return line


def _caller(c: CallerFinding, lang: Lang) -> str:
    key = "render.context.callers.one" if c.call_sites == 1 else "render.context.callers"
    return t(
        lang, key, function=escape_code(f"{c.function}()", 80), count=c.call_sites,
        files=_listed(list(c.files), _FILES_SHOWN, lang),
    )


def _unaffected(c: CallerFinding, lang: Lang) -> str:
    key = "render.context.unaffected.one" if c.call_sites == 1 else "render.context.unaffected"
    return t(lang, key, function=escape_code(f"{c.function}()", 80), count=c.call_sites)
