"""Schema of rules/risks.yaml: the choices behind the risk checklist (phrases, paths, sizes)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RiskSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # gitignore-style globs: which changed files are tests, and which are source
    # code that ought to come with a test change.
    test_paths: list[str] = Field(default_factory=lambda: ["tests/**", "**/test_*.py"])
    source_paths: list[str] = Field(default_factory=lambda: ["vllm/**", "csrc/**"])
    large_diff_lines: int = Field(default=1000, ge=1)
    large_diff_files: int = Field(default=40, ge=1)
    release_branch_pattern: str = r"^releases?/"
