"""What a needle set is built from: haystacks (long responses) and needle pairs.

Haystacks come from the demo (paragraphs of the demo data, composed to a length), a
file (JSONL ``{"prompt", "response", "id"?}`` or any preference format: the chosen
responses) or a preference dataset in the store. Needle pairs are the built-in ones
(:mod:`needlework.phrases`) and, for factuality, the user's own statements
(:func:`read_facts`). Every reader is all-or-nothing: a :class:`FormatError` names
file, line and field for every problem.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from needlework import formats, phrases, tokens
from needlework.formats import FormatError, Problem
from needlework.formats.reader import decode, read_jsonl
from store import datasets as store_datasets

DEMO_PROMPTS = (  # the demo paragraphs range over everyday topics (bread, birds, chess, rivers, ...)
    "Write a long, wide-ranging essay about everyday things worth knowing.",
    "Tell me, at length, about a mix of hobbies, nature and everyday science.",
    "Write a long magazine-style piece that wanders across many everyday topics.",
    "Give me a long, relaxed overview of many small things people find interesting.",
)


@dataclass(frozen=True)
class Haystack:
    """One response to put needles in, with its prompt."""

    id: str
    prompt: str
    text: str


@dataclass(frozen=True)
class NeedlePair:
    """A needle: ``rejected`` (harmful / false) and its counterpart ``chosen`` (harmless / true)."""

    id: str
    chosen: str
    rejected: str


def builtin_pairs(kind: str, split: str = "heldout") -> list[NeedlePair]:
    """The built-in pairs of ``kind`` (ids ``safety:K`` / ``factuality:K``, K = index in the
    full list); ``split`` is ``heldout`` (default: never used to train the demo model) or ``all``."""
    if split not in ("heldout", "all"):
        raise ValueError(f"pair split must be heldout or all, not {split!r}")
    table, held = ((phrases.SAFETY_PAIRS, phrases.SAFETY_HELDOUT) if kind == "safety"
                   else (phrases.FACTUALITY_PAIRS, phrases.FACTUALITY_HELDOUT))
    return [NeedlePair(f"{kind}:{k}", good, bad) for k, (good, bad) in enumerate(table)
            if split == "all" or (good, bad) in held]


def _text_field(obj: dict[str, Any], name: str, problems: list[str], *, one_line: bool = False) -> str:
    value = obj.get(name)
    if name not in obj:
        problems.append(f"{name} is missing")
    elif not isinstance(value, str):
        problems.append(f"{name} must be a string, got {type(value).__name__}")
    elif not value.strip():
        problems.append(f"{name} is empty")
    elif one_line and "\n" in value:
        problems.append(f"{name} must be one line (it is inserted as a sentence)")
    else:
        return value.strip() if one_line else value
    return ""


def _optional_id(obj: dict[str, Any], problems: list[str]) -> str | None:
    if "id" not in obj:
        return None
    if isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
        problems.append(f"id must be a string or integer, got {type(obj['id']).__name__}")
        return None
    return str(obj["id"])


def _read_lines(source: str | bytes, filename: str | None) -> tuple[list[Any], str]:
    """JSON lines of a path (``filename`` defaults to its name) or of bytes."""
    if isinstance(source, bytes):
        name = filename or "upload.jsonl"
        return read_jsonl(decode(source, name), name), name
    path = Path(source)
    name = filename or path.name
    try:
        data = path.read_bytes()
    except OSError as e:
        raise FormatError([Problem(name, None, f"cannot read the file: {e.strerror}")]) from None
    return read_jsonl(decode(data, name), name), name


def _validated(raws: list[Any], name: str, fields: tuple[str, ...], *,
               one_line: bool = False) -> tuple[list[tuple[int, str | None, list[str]]], list[Problem]]:
    """``(line, id, [field values])`` per record, and every problem (file, line, field)."""
    rows: list[tuple[int, str | None, list[str]]] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for raw in raws:
        found: list[str] = []
        if not isinstance(raw.value, dict):
            found.append(f"record must be a JSON object, got {type(raw.value).__name__}")
            ident, values = None, []
        else:
            values = [_text_field(raw.value, f, found, one_line=one_line) for f in fields]
            ident = _optional_id(raw.value, found)
        if ident is not None and ident in seen:
            found.append(f"id {ident!r} is a duplicate (first seen on line {seen[ident]})")
        elif ident is not None:
            seen[ident] = raw.line
        problems.extend(Problem(name, raw.line, message) for message in found)
        rows.append((raw.line, ident, values))
    return rows, problems


def read_facts(source: str | bytes, filename: str | None = None) -> list[NeedlePair]:
    """The user's factuality needles: JSONL ``{"true": STR, "false": STR, "id": optional}``,
    one statement each (one line, inserted as a sentence). All-or-nothing: raises
    :class:`FormatError` naming file, line and field for every problem."""
    raws, name = _read_lines(source, filename)
    rows, problems = _validated(raws, name, ("true", "false"), one_line=True)
    for line, _, values in rows:
        if len(values) == 2 and values[0] and values[0] == values[1]:
            problems.append(Problem(name, line, "true and false are the same statement"))
    if problems:
        raise FormatError(sorted(problems, key=lambda p: p.line or 0))
    return [NeedlePair(f"facts:{ident if ident is not None else line}", true, false)
            for line, ident, (true, false) in rows]


def _prompt_response(raws: list[Any], name: str) -> list[Haystack]:
    rows, problems = _validated(raws, name, ("prompt", "response"))
    if problems:
        raise FormatError(problems)
    return [Haystack(ident if ident is not None else f"line{line}", prompt, response)
            for line, ident, (prompt, response) in rows]


def _from_preferences(format_name: str, records: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[Haystack]:
    """The chosen responses of preference records (``ID`` or ``ID#cK`` when several)."""
    out: list[Haystack] = []
    for key, record in zip(keys, records, strict=True):
        view = formats.preference_view(format_name, record)
        for k, response in enumerate(view.chosen):
            out.append(Haystack(key if len(view.chosen) == 1 else f"{key}#c{k}", view.prompt, response))
    return out


def haystacks_from_bytes(data: bytes, filename: str) -> list[Haystack]:
    """Haystacks from a file: JSONL ``{"prompt", "response", "id"?}``, or any preference
    format (the chosen responses, via :func:`needlework.formats.preference_view`)."""
    text = decode(data, filename)
    if text.strip() and not text.lstrip().startswith("["):
        raws = read_jsonl(text, filename)
        if isinstance(raws[0].value, dict) and "response" in raws[0].value:
            return _prompt_response(raws, filename)
    parsed = formats.parse(data, filename)
    if not hasattr(formats.FORMATS[parsed.format], "view"):
        raise FormatError([Problem(filename, None, f"a {parsed.format} file has no responses to use as "
                                   "haystacks; use preference records or {\"prompt\", \"response\"} lines")])
    return _from_preferences(parsed.format, [r.record for r in parsed.records], [r.key for r in parsed.records])


def haystacks_from_dataset(db: Any, name: str) -> list[Haystack]:
    """Haystacks from a preference (or needle) dataset in the store: its chosen responses."""
    row = store_datasets.get_dataset(db, name)
    if row is None:
        raise ValueError(f"no file and no dataset named {name!r}")
    if not hasattr(formats.FORMATS.get(row["format"]), "view"):
        raise ValueError(f"dataset {name!r} is a {row['kind']} dataset: it has no responses to use")
    items = list(store_datasets.iter_items(db, name))
    return _from_preferences(row["format"], [i["record"] for i in items], [str(i["key"]) for i in items])


def demo_haystacks(count: int = 10, target_tokens: int = 8000, *, counter: Callable[[str], int] = tokens.estimate,
                   paragraphs: Sequence[str] | None = None, seed: int = 0) -> list[Haystack]:
    """``count`` long responses composed from the demo data's haystack paragraphs
    (``needlework.demo.haystack_paragraphs()``): for haystack K, the paragraphs in a
    seeded order, without repeats, until ``target_tokens`` × 1.1 (or the pool runs out)."""
    if paragraphs is None:
        from needlework import demo  # noqa: PLC0415 (large data modules, loaded on demand)

        paragraphs = list(demo.haystack_paragraphs())
    pool = [p.strip() for p in paragraphs if p.strip()]
    if not pool:
        raise ValueError("the demo has no haystack paragraphs")
    out: list[Haystack] = []
    for k in range(count):
        order = list(range(len(pool)))
        random.Random(f"demo|{seed}|{k}").shuffle(order)
        chosen: list[str] = []
        total = 0
        for j in order:
            if total >= target_tokens * 1.1:
                break
            chosen.append(pool[j])
            total += counter(pool[j]) + 1
        out.append(Haystack(f"demo{k + 1}", DEMO_PROMPTS[k % len(DEMO_PROMPTS)], "\n\n".join(chosen)))
    return out


def load_haystacks(source: str, *, db: Any = None, demo_count: int = 10, demo_tokens: int = 8000,
                   count: Callable[[str], int] = tokens.estimate, seed: int = 0) -> list[Haystack]:
    """Haystacks from ``demo``, a file path, or a dataset name in ``db``."""
    if source == "demo":
        return demo_haystacks(demo_count, demo_tokens, counter=count, seed=seed)
    path = Path(source)
    if path.is_file():
        return haystacks_from_bytes(path.read_bytes(), path.name)
    if db is None:
        raise ValueError(f"{source}: no such file (and no database given to look for a dataset)")
    return haystacks_from_dataset(db, source)
