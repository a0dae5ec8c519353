"""An error made of problem lines, each `file:line: message`, printed as they are (exit 2).
Its own module so that `digest-bot` can catch it without importing the rules engine."""

from __future__ import annotations


class BadOverride(Exception):
    """The override, or the bundled rules under it, cannot be applied."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines
