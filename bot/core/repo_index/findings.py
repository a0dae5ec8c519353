"""What the index adds to a digest: untouched siblings, overrides and outside callers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


# defer_build (each model here): a digest without a symbol index never validates one,
# so `digest-bot digest` does not build their validators at import.
class SiblingFinding(BaseModel):
    """`changed` was touched; `siblings` share its shape in the same file and scope."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    changed: str  # qualname
    shape: str  # "prefix:_checked_" | "decorator:@register" | "signature:(x, y)"
    siblings: tuple[str, ...]  # qualnames, in file order


class OverrideFinding(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    class_name: str
    method: str
    overriders: tuple[tuple[str, str], ...]  # (path, class), by path
    # Overriding files the PR's own test files name; None when the PR changes no test.
    named_by_tests: int | None = None


class CallerFinding(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    function: str
    call_sites: int
    files: tuple[str, ...]  # calling files outside the PR, by path


class RepoContext(BaseModel):
    """Found in the index of the default branch at `commit`; empty lists when nothing was."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    commit: str
    siblings: tuple[SiblingFinding, ...] = ()
    overrides: tuple[OverrideFinding, ...] = ()
    callers: tuple[CallerFinding, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.siblings or self.overrides or self.callers)
