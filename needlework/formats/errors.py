"""Validation problems: each names the file, the line (or record) and the field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem in an input file."""

    file: str
    line: int | None
    message: str
    record: int | None = None  # 0-based record index, for JSON arrays

    def __str__(self) -> str:
        where = self.file
        if self.record is not None and self.line is not None:
            where += f" record {self.record} (line {self.line})"
        elif self.line is not None:
            where += f" line {self.line}"
        return f"{where}: {self.message}"


class FormatError(ValueError):
    """An input file failed validation; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
