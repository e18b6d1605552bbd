"""Build the RewardBench 2 demo records (docs/benchmarks.md §8): our own text in the
release's shape, every subset present.

The text is in ``data/rewardbench2/items.json`` (:class:`Bank`): for Factuality, Precise IF,
Math, Safety and Focus, a prompt with one correct completion and three incorrect ones (a
wrong fact, a broken instruction, a wrong step, the wrong side of a safety line, an answer
to another question); for Ties, a prompt with several equally correct short answers and
some incorrect ones. A Ties prompt gives two records, as the release has them: ``ref:N``
with the first correct answer only, and ``tied:N`` with all of them, both with the same
incorrect answers (the Ties score compares the two).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from needlework.demo.loaders import DemoDataError, load_json

FILE = "rewardbench2/items.json"
WRITER = "needlework-demo"  # the release's ``models`` field names each completion's writer


class BestOf4Entry(TypedDict):
    """A non-Ties prompt: one correct completion, three incorrect ones."""

    id: str
    subset: Literal["Factuality", "Precise IF", "Math", "Safety", "Focus"]
    prompt: str
    correct: str
    incorrect: list[str]


class TiesEntry(TypedDict):
    """A Ties prompt: several equally correct answers and some incorrect ones."""

    prompt_id: int
    prompt: str
    correct: list[str]
    incorrect: list[str]


class Bank(TypedDict):
    best_of_4: list[BestOf4Entry]
    ties: list[TiesEntry]


def bank() -> Bank:
    """The data file, checked against :class:`Bank`."""
    return load_json(FILE, Bank)


def _record(rid: str, subset: str, prompt: str, correct: list[str], incorrect: list[str],
            source: str) -> dict[str, Any]:
    total = len(correct) + len(incorrect)
    return {"id": rid, "prompt": prompt, "chosen": list(correct), "rejected": list(incorrect),
            "num_correct": len(correct), "num_incorrect": len(incorrect),
            "total_completions": total, "models": [WRITER] * total, "subset": subset,
            "additional_metadata": {"source": source}}


def rewardbench2_records() -> list[dict[str, Any]]:
    """The demo records (identical on every call), in the release's field order: the
    best-of-4 prompts in file order, then each Ties prompt's ``ref:N`` and ``tied:N`` rows."""
    data = bank()
    records = []
    for entry in data["best_of_4"]:
        if len(entry["incorrect"]) != 3:
            raise DemoDataError(f"{FILE}: {entry['id']}: three incorrect completions")
        if entry["correct"] in entry["incorrect"]:
            raise DemoDataError(f"{FILE}: {entry['id']}: the correct completion is also incorrect")
        records.append(_record(entry["id"], entry["subset"], entry["prompt"], [entry["correct"]],
                               entry["incorrect"], "written for Needlework's demo"))
    for tie in data["ties"]:
        where = f"ties prompt {tie['prompt_id']}"
        if len(tie["correct"]) < 2 or not tie["incorrect"]:
            raise DemoDataError(f"{FILE}: {where}: at least 2 correct and 1 incorrect answers")
        if set(tie["correct"]) & set(tie["incorrect"]):
            raise DemoDataError(f"{FILE}: {where}: an answer is both correct and incorrect")
        n = tie["prompt_id"]
        records.append(_record(f"ref:{n}", "Ties", tie["prompt"], tie["correct"][:1],
                               tie["incorrect"], "written for Needlework's demo (reference)"))
        records.append(_record(f"tied:{n}", "Ties", tie["prompt"], tie["correct"],
                               tie["incorrect"], "written for Needlework's demo (tied)"))
    return records
