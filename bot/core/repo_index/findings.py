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
    # How they look alike: "prefix:_checked_" (the prefix and most parameters),
    # "decorator:@register" (the decorator and most parameters), "signature:(x, y)".
    shape: str
    siblings: tuple[str, ...]  # qualnames, in file order


class OverrideFinding(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    class_name: str
    method: str
    overriders: tuple[tuple[str, str], ...]  # (path, class), by path
    # Overriding files the PR's own test files name; None when the PR changes no test.
    named_by_tests: int | None = None
    # Nested defs inside the method whose lines changed (the method is what overriders
    # override; the nested ones say where in it the change is).
    nested: tuple[str, ...] = ()


class CallerFinding(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    file: str
    function: str
    call_sites: int
    files: tuple[str, ...]  # calling files outside the PR, by path
    # False: the change only adds parameters with defaults (or *args/**kwargs): the
    # callers are unaffected, and the digest only counts them in its collapsed part.
    breaking: bool = True
    reasons: tuple[str, ...] = ()  # what breaks them: "removed `port`", ...


class RepoContext(BaseModel):
    """Found in the index at `commit`; empty lists when nothing was. `base` is the PR's
    base commit when the changed files were read there (exactly), "" when their lines
    were re-anchored onto the index's commit."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    commit: str
    base: str = ""
    # (path, qualname) of each base function the patch changes, where every hunk of its
    # file was placed: the method a hunk header names only by its class.
    changed_functions: tuple[tuple[str, str], ...] = ()
    siblings: tuple[SiblingFinding, ...] = ()
    overrides: tuple[OverrideFinding, ...] = ()
    callers: tuple[CallerFinding, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.siblings or self.overrides or self.callers)

    @property
    def breaking_callers(self) -> tuple[CallerFinding, ...]:
        return tuple(c for c in self.callers if c.breaking)

    @property
    def unaffected_callers(self) -> tuple[CallerFinding, ...]:
        return tuple(c for c in self.callers if not c.breaking)
