"""One line where a part of the digest would be when its read failed this time.

The handlers say which parts (`Digest.unavailable`, bot/core/vocabulary.py `Part`); the
words are the catalogue's (`render.unavailable.<part>`), and the job re-runs later to
fill the part in, so the line says so.
"""

from __future__ import annotations

from collections.abc import Iterator

from bot.core.findings import Digest
from bot.core.render.escape import sanitize_trusted
from bot.core.render.i18n import t
from bot.core.vocabulary import Part


def unavailable_lines(digest: Digest, part: Part) -> Iterator[str]:
    if part in digest.unavailable:
        yield f"_{sanitize_trusted(t(digest.lang, f'render.unavailable.{part}'), 300)}_"
