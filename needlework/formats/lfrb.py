"""Long-form RewardBench JSONL (benchmarks.md §2)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from needlework.formats import checks
from needlework.formats.preference import Preference

NAME = "lfrb"
KIND = "preference"
CONTAINER = "jsonl"
SUBSETS = ("QA", "RAG", "Chat", "Writing", "Reasoning")


def looks_like(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("chosen"), list)
        and all(isinstance(c, str) for c in obj["chosen"])
        and "subset" in obj
    )


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    if "id" not in obj:
        problems.append("id is missing")
    elif isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
        problems.append(f"id must be a string, got {checks.type_name(obj['id'])}")
    checks.enum(obj, "subset", SUBSETS, problems, required=True)
    checks.string(obj, "prompt", problems, non_empty=True)
    checks.string_list(obj, "chosen", problems, min_count=1)
    checks.string_list(obj, "rejected", problems, min_count=1)
    if obj.get("subset") == "Reasoning":
        for field in ("chosen", "rejected"):
            if isinstance(obj.get(field), list) and len(obj[field]) != 1:
                problems.append(
                    f"{field} has {len(obj[field])} entries, the Reasoning subset has exactly 1"
                )
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
    extra = {k: v for k, v in obj.items() if k not in ("id", "subset", "prompt", "chosen", "rejected")}
    return Preference(str(obj["id"]), obj["subset"], obj["prompt"], list(obj["chosen"]),
                      list(obj["rejected"]), extra)


def from_preference(p: Preference) -> dict[str, Any]:
    return {"id": p.id, "subset": p.subset, "prompt": p.prompt, "chosen": p.chosen,
            "rejected": p.rejected}


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL, one record per line (fields in their original order), a line at a time."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    """JSONL, one record per line, fields in their original order."""
    return "".join(dump_iter(records))
