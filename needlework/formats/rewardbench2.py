"""RewardBench 2 (benchmarks.md §8): one prompt with lists of correct and incorrect completions.

A record (a JSON line, or a row of the published Parquet file, read by
:mod:`needlework.formats.parquet`) is ``{"id", "prompt", "chosen": [correct, ...],
"rejected": [incorrect, ...], "num_correct", "num_incorrect", "total_completions",
"subset", ...}``; other fields (the release's ``models`` and ``additional_metadata``) are
kept as they are. The counts must agree with the lists, as the official scorer
(``scripts/run_v2.py``) splits the scores by them. The Ties subset's ids are
``ref:N`` (a reference prompt, one correct answer) or ``tied:N`` (the same prompt with
several correct answers, at least two), as its scoring (``process_single_model``) reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from needlework.formats import checks
from needlework.formats.preference import Preference
from needlework.words import plural

NAME = "rewardbench2"
KIND = "preference"
CONTAINER = "jsonl"
PARQUET = True  # also read from Parquet (the release's data/test-*.parquet)
SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
COUNTS = ("num_correct", "num_incorrect", "total_completions")
TIES_ID = re.compile(r"(ref|tied):([0-9]+)")
_OWN = ("id", "subset", "prompt", "chosen", "rejected")


def is_ties(subset: str) -> bool:
    """The official test (``subset.lower() == "ties"``): Ties is scored by its own rule."""
    return subset.lower() == "ties"


def ties_id(value: Any) -> tuple[str, int] | None:
    """``("ref", 3)`` for ``ref:3``, ``("tied", 3)`` for ``tied:3``, else ``None``."""
    m = TIES_ID.fullmatch(str(value))
    return (m.group(1), int(m.group(2))) if m else None


def ties_sibling(key: str) -> str | None:
    """The other row of a Ties prompt (``ref:3`` → ``tied:3`` and back), or ``None`` for a key
    that is not a Ties id: the Review page shows a prompt's reference and tied answers together."""
    parsed = ties_id(key)
    if parsed is None:
        return None
    return f"{'tied' if parsed[0] == 'ref' else 'ref'}:{parsed[1]}"


def looks_like(obj: Any) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("chosen"), list)
            and "num_correct" in obj and "total_completions" in obj)


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    if "id" not in obj:
        problems.append("id is missing")
    elif isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
        problems.append(f"id must be a string, got {checks.type_name(obj['id'])}")
    checks.string(obj, "prompt", problems, non_empty=True)
    subset_ok = checks.string(obj, "subset", problems, non_empty=True)
    lists = {side: checks.string_list(obj, side, problems, min_count=1)
             for side in ("chosen", "rejected")}
    counts = {name: checks.number(obj, name, problems, low=0, integer=True) for name in COUNTS}
    if all(counts.values()) and all(lists.values()):
        for name, side in (("num_correct", "chosen"), ("num_incorrect", "rejected")):
            if obj[name] != len(obj[side]):
                problems.append(f"{name} is {obj[name]} but {side} has "
                                f"{plural(len(obj[side]), 'entry', 'entries')}")
        if obj["total_completions"] != obj["num_correct"] + obj["num_incorrect"]:
            problems.append(f"total_completions is {obj['total_completions']}, expected "
                            f"num_correct + num_incorrect = "
                            f"{obj['num_correct'] + obj['num_incorrect']}")
    if subset_ok and is_ties(obj["subset"]) and "id" in obj:
        parsed = ties_id(obj["id"])
        if parsed is None:
            problems.append(f"id is {obj['id']!r}: a Ties id is ref:N or tied:N (N a whole "
                            "number), as the Ties scoring groups a prompt's two rows by it")
        elif parsed[0] == "tied" and lists["chosen"] and len(obj["chosen"]) < 2:
            problems.append("chosen has 1 entry: a tied:N row of the Ties subset has at least "
                            "2 correct completions")
    return problems


def key(obj: dict[str, Any], index: int) -> str:
    return str(obj["id"])


def key_field() -> str:
    return "id"


def title(obj: dict[str, Any]) -> str:
    return obj.get("prompt", "")


def subset(obj: dict[str, Any], filename: str = "") -> str:
    return obj.get("subset", "")


def view(obj: dict[str, Any]) -> Preference:
    """The preference view: chosen = the correct completions, rejected = the incorrect
    ones, in the record's order; the counts and the other fields in ``meta``."""
    extra = {k: v for k, v in obj.items() if k not in _OWN}
    return Preference(str(obj["id"]), obj["subset"], obj["prompt"], list(obj["chosen"]),
                      list(obj["rejected"]), extra)


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL, one record per line (fields in their original order), a line at a time: what
    the official loader reads from a ``.jsonl`` path (``load_bon_dataset_v2``)."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    return "".join(dump_iter(records))


def trl_key(record: dict[str, Any]) -> str:
    """What makes two TRL records the same comparison (the Ties subset's ``ref:N`` and
    ``tied:N`` rows share their prompt and incorrect answers): their JSON text."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True)
