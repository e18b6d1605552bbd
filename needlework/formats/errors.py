"""Validation problems: each names the file, the line (or record, or Parquet row) and the
field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem in an input file."""

    file: str
    line: int | None
    message: str
    record: int | None = None  # 0-based record index, for JSON arrays
    unit: str = "line"  # what ``line`` counts: a line of text, or a Parquet file's row

    def __str__(self) -> str:
        where = self.file
        if self.record is not None and self.line is not None:
            where += f" record {self.record} (line {self.line})"
        elif self.line is not None:
            where += f" {self.unit} {self.line}"
        return f"{where}: {self.message}"


class FormatError(ValueError):
    """An input file failed validation; ``problems`` lists the problems found (the
    first :data:`ProblemList.LIMIT` of them) and ``total`` counts them all."""

    def __init__(self, problems: list[Problem], total: int | None = None):
        self.problems = problems
        self.total = max(total or 0, len(problems))
        lines = [str(p) for p in problems]
        if self.total > len(problems):
            lines.append(f"... and {self.total - len(problems)} more problem(s)")
        super().__init__("\n".join(lines))


class ProblemList:
    """Problems collected while reading a file: the first :attr:`LIMIT` are kept, the
    rest only counted, so a file with millions of bad lines cannot fill the memory."""

    LIMIT = 1000

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.total = 0

    def add(self, problem: Problem) -> None:
        self.total += 1
        if len(self.problems) < self.LIMIT:
            self.problems.append(problem)

    def __bool__(self) -> bool:
        return self.total > 0

    def error(self) -> FormatError:
        return FormatError(self.problems, self.total)

    def raise_if_any(self) -> None:
        if self.total:
            raise self.error()
