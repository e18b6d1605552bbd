"""Plain preference pairs JSONL: ``prompt``/``chosen``/``rejected`` as strings, or as
TRL conversational message lists (``[{"role", "content"}]``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from needlework.formats import checks
from needlework.formats.preference import Preference

NAME = "pairs"
KIND = "preference"
CONTAINER = "jsonl"
ROLES = ("system", "user", "assistant", "tool")


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and "chosen" in obj and "rejected" in obj and (
        isinstance(obj["chosen"], str) or _is_messages(obj["chosen"])
    )


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value)


def _check_messages(obj: dict, field: str, problems: list[str], required: bool = True) -> None:
    if field not in obj:
        if required:
            problems.append(f"{field} is missing")
        return
    value = obj[field]
    if isinstance(value, str):
        return
    if not isinstance(value, list):
        problems.append(f"{field} must be a string or a list of messages, got {checks.type_name(value)}")
        return
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            problems.append(f"{field}[{i}] must be a message object, got {checks.type_name(message)}")
            continue
        if message.get("role") not in ROLES:
            problems.append(f"{field}[{i}].role is {message.get('role')!r}, expected one of "
                            + ", ".join(repr(r) for r in ROLES))
        if not isinstance(message.get("content"), str):
            problems.append(f"{field}[{i}].content must be a string")


def validate(obj: Any) -> list[str]:
    problems: list[str] = []
    if not checks.require_object(obj, problems):
        return problems
    _check_messages(obj, "prompt", problems, required=False)
    _check_messages(obj, "chosen", problems)
    _check_messages(obj, "rejected", problems)
    if not problems:
        if "prompt" not in obj and not isinstance(obj["chosen"], list):
            problems.append("prompt is missing")
        elif isinstance(obj["chosen"], str) != isinstance(obj["rejected"], str):
            problems.append("chosen and rejected must both be strings or both be message lists")
        elif not _split(obj)[0].strip():
            problems.append("prompt is empty")
    if "id" in obj and (isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int))):
        problems.append(f"id must be a string or integer, got {checks.type_name(obj['id'])}")
    return problems


def _last_assistant(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return message.get("content", "")
    return ""


def _split(obj: dict[str, Any]) -> tuple[str, str, str]:
    """(prompt, chosen, rejected) as plain text; for conversational records the
    prompt is the last user turn and the responses the last assistant turns (TRL's
    implicit-prompt form keeps the user turn inside chosen/rejected)."""
    prompt = obj.get("prompt", "")
    chosen, rejected = obj["chosen"], obj["rejected"]
    if isinstance(chosen, str):
        return (prompt if isinstance(prompt, str) else _last_user(prompt), chosen, rejected)
    if not prompt:
        prompt = [m for m in chosen if m.get("role") != "assistant"]
    text = prompt if isinstance(prompt, str) else _last_user(prompt)
    return text, _last_assistant(chosen), _last_assistant(rejected)


def _last_user(messages: list[dict]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content", "")
    return ""


def key(obj: dict[str, Any], index: int) -> str:
    return str(obj["id"]) if "id" in obj else str(index + 1)


def key_field() -> str:
    return "id"


def title(obj: dict[str, Any]) -> str:
    return _split(obj)[0]


def subset(obj: dict[str, Any], filename: str = "") -> str:
    value = obj.get("subset", "")
    return value if isinstance(value, str) else ""


def view(obj: dict[str, Any]) -> Preference:
    prompt, chosen, rejected = _split(obj)
    key_ = str(obj.get("id", ""))
    meta: dict[str, Any] = {"conversational": not isinstance(obj["chosen"], str)}
    if meta["conversational"]:
        meta["prompt_messages"] = prompt_messages(obj)
    return Preference(key_, subset(obj), prompt, [chosen], [rejected], meta)


def prompt_messages(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The whole conversation before the response of a conversational record: its
    ``prompt`` list, or (implicit prompt) the turns of ``chosen`` before its last assistant turn."""
    prompt = obj.get("prompt")
    if isinstance(prompt, list) and prompt:
        return [dict(m) for m in prompt]
    if isinstance(prompt, str) and prompt:
        return [{"role": "user", "content": prompt}]
    chosen = obj["chosen"]
    last = max((k for k, m in enumerate(chosen) if m.get("role") == "assistant"), default=len(chosen))
    return [dict(m) for m in chosen[:last]]


def from_preference(p: Preference, i: int = 0, j: int = 0, conversational: bool = False) -> dict[str, Any]:
    """One TRL preference record for comparison (chosen[i], rejected[j]); conversational
    records keep the whole prompt conversation (system and earlier turns) of an imported
    conversational pair, else the prompt becomes one user turn."""
    if conversational:
        history = (p.meta or {}).get("prompt_messages") or [{"role": "user", "content": p.prompt}]
        return {
            "prompt": [dict(m) for m in history],
            "chosen": [{"role": "assistant", "content": p.chosen[i]}],
            "rejected": [{"role": "assistant", "content": p.rejected[j]}],
        }
    return {"prompt": p.prompt, "chosen": p.chosen[i], "rejected": p.rejected[j]}


def dump_iter(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSONL, one record per line (fields in their original order), a line at a time."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


def dump(records: Iterable[dict[str, Any]]) -> str:
    """JSONL, one record per line, fields in their original order."""
    return "".join(dump_iter(records))
