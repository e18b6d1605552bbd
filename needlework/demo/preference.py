"""Build the Long-form RewardBench demo records (docs/benchmarks.md section 2).

Short records come from recipe banks (:mod:`needlework.demo.preference_bank`
and :mod:`needlework.demo.preference_bank_b`); long records (several thousand
words per response) come from the ``long_*`` modules. Every rejected response
is worse in one visible way: a factual error, an unsafe suggestion, an
incomplete answer, off-topic drift or excessive verbosity.
"""

from __future__ import annotations

from needlework.demo import long_japan, long_marathon, long_plants, long_sorting, long_warehouse
from needlework.demo.filler import pad_verbosely
from needlework.demo.preference_bank import QA_SHORT, RAG_SHORT
from needlework.demo.preference_bank_b import (
    CHAT_SHORT,
    REASONING_SHORT,
    WRITING_SHORT,
)

#: Subsets in the order the records are listed.
SUBSETS = ("QA", "RAG", "Chat", "Writing", "Reasoning")


def apply_recipe(chosen: str, recipe: dict, seed: str) -> str:
    """Derive one rejected response from ``chosen`` following a bank recipe."""
    kind = recipe["kind"]
    paragraphs = chosen.split("\n\n")
    if kind == "swap":
        text = chosen
        for old, new in recipe["edits"]:
            if text.count(old) != 1:
                raise ValueError(f"{seed}: edit target not found once: {old[:50]!r}")
            text = text.replace(old, new)
        return text
    if kind == "cut":
        return "\n\n".join(paragraphs[:recipe["keep"]])
    if kind == "drift":
        return "\n\n".join([*paragraphs[:recipe["keep"]], recipe["text"]])
    if kind == "verbose":
        return pad_verbosely(chosen, seed)
    if kind == "text":
        return recipe["text"]
    raise ValueError(f"unknown recipe kind {kind!r}")


def _short(subset: str, entries: list[dict]) -> list[dict]:
    out = []
    for entry in entries:
        seed = f"{subset}:{entry['prompt'][:40]}"
        rejected = [apply_recipe(entry["chosen"], r, seed) for r in entry["rejected"]]
        out.append({"subset": subset, "prompt": entry["prompt"], "chosen": entry["chosen"],
                    "rejected": rejected})
    return out


def preference_records() -> list[dict]:
    """Return the Long-form RewardBench demo records (identical on every call).

    Each record is ``{"id": "QA_1", "subset": ..., "prompt": str, "chosen": [str],
    "rejected": [str, str, str]}``; Reasoning records have exactly one rejected
    response. Five records (one per subset except Reasoning, two in QA) have
    responses of roughly 2,500 to 6,300 words, i.e. well over 3,000 tokens.
    """
    by_subset = {
        "QA": _short("QA", QA_SHORT) + [long_sorting.record(), long_plants.record()],
        "RAG": _short("RAG", RAG_SHORT) + [long_warehouse.record()],
        "Chat": _short("Chat", CHAT_SHORT) + [long_japan.record()],
        "Writing": _short("Writing", WRITING_SHORT) + [long_marathon.record()],
        "Reasoning": _short("Reasoning", REASONING_SHORT),
    }
    records = []
    for subset in SUBSETS:
        for i, item in enumerate(by_subset[subset], start=1):
            records.append({
                "id": f"{subset}_{i}",
                "subset": subset,
                "prompt": item["prompt"],
                "chosen": [item["chosen"]],
                "rejected": list(item["rejected"]),
            })
    return records
