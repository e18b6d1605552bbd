"""Small field checks shared by the format validators.

Each check appends a message that starts with the field name to ``problems``
and returns whether the field passed, so callers can skip dependent checks.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def type_name(value: Any) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def require_object(value: Any, problems: list[str]) -> bool:
    if not isinstance(value, dict):
        problems.append(f"record must be a JSON object, got {type_name(value)}")
        return False
    return True


def string(
    obj: dict, field: str, problems: list[str], *, required: bool = True, non_empty: bool = False
) -> bool:
    if field not in obj:
        if required:
            problems.append(f"{field} is missing")
        return not required
    value = obj[field]
    if not isinstance(value, str):
        problems.append(f"{field} must be a string, got {type_name(value)}")
        return False
    if non_empty and not value.strip():
        problems.append(f"{field} is empty")
        return False
    return True


def enum(
    obj: dict, field: str, allowed: Collection[str], problems: list[str], *, required: bool = False
) -> bool:
    if not string(obj, field, problems, required=required):
        return False
    if field in obj and obj[field] not in allowed:
        problems.append(
            f"{field} is {obj[field]!r}, expected one of " + ", ".join(repr(a) for a in allowed)
        )
        return False
    return True


def string_list(
    obj: dict,
    field: str,
    problems: list[str],
    *,
    required: bool = True,
    count: int | None = None,
    min_count: int = 0,
    allowed: Collection[str] | None = None,
) -> bool:
    if field not in obj:
        if required:
            problems.append(f"{field} is missing")
        return not required
    value = obj[field]
    if not isinstance(value, list):
        problems.append(f"{field} must be a list, got {type_name(value)}")
        return False
    ok = True
    if count is not None and len(value) != count:
        problems.append(f"{field} has {len(value)} entries, expected exactly {count}")
        ok = False
    elif len(value) < min_count:
        problems.append(f"{field} has {len(value)} entries, expected at least {min_count}")
        ok = False
    for i, entry in enumerate(value):
        if not isinstance(entry, str):
            problems.append(f"{field}[{i}] must be a string, got {type_name(entry)}")
            ok = False
        elif allowed is not None and entry not in allowed:
            problems.append(
                f"{field}[{i}] is {entry!r}, expected one of " + ", ".join(repr(a) for a in allowed)
            )
            ok = False
    return ok


def number(obj: dict, field: str, problems: list[str], *, required: bool = True,
           low: float | None = None, high: float | None = None, integer: bool = False) -> bool:
    if field not in obj:
        if required:
            problems.append(f"{field} is missing")
        return not required
    value = obj[field]
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        problems.append(f"{field} must be {'an integer' if integer else 'a number'}, got {type_name(value)}")
        return False
    if (low is not None and value < low) or (high is not None and value > high):
        problems.append(f"{field} is {value}, expected a value in [{low}, {high}]")
        return False
    return True
