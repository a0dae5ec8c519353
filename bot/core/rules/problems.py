"""What is wrong with a set of rule files: every problem, each with file, line and rule id."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleProblem:
    file: str
    line: int  # 1-based; 1 when the problem concerns the whole file
    rule: str | None  # the area id when the file declares one
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.rule is not None:
            return f"{where}: rule {self.rule!r}: {self.message}"
        return f"{where}: {self.message}"


class RuleFileError(ValueError):
    """Raised with *all* problems found, so one `check-rules` run lists every fix needed."""

    def __init__(self, problems: list[RuleProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))
