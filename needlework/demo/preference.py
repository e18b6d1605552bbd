"""Build the Long-form RewardBench demo records (docs/benchmarks.md section 2).

Short records come from the recipe banks ``data/preference/<subset>.json``; long
records (several thousand words per response) come from the ``long_*`` modules.
Every rejected response is worse in one visible way: a factual error, an unsafe
suggestion, an incomplete answer, off-topic drift or excessive verbosity.

A bank entry has a prompt, the chosen response (a list of paragraphs) and one
recipe per rejected response, applied by :func:`apply_recipe`:

- ``swap``: a near-copy of the chosen response with one or two sentences
  changed (``edits``: ``[old, new]`` pairs; a factual error or an unsafe
  suggestion);
- ``cut``: only the first ``keep`` paragraphs (an incomplete answer);
- ``drift``: the first ``keep`` paragraphs, then off-topic ``text``;
- ``verbose``: the chosen content buried in padding and repetition;
- ``text``: a response written out in full (``text``), e.g. a Reasoning answer
  with one wrong step.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from needlework.demo import long_japan, long_marathon, long_plants, long_sorting, long_warehouse
from needlework.demo._util import apply_edits
from needlework.demo.filler import pad_verbosely
from needlework.demo.loaders import load_json, paragraphs
from needlework.formats.lfrb import SUBSETS


class _RecipeFields(TypedDict):
    kind: Literal["swap", "cut", "drift", "verbose", "text"]


class Recipe(_RecipeFields, total=False):
    """How to derive one rejected response from the chosen one (see the module doc)."""

    edits: list[list[str]]
    keep: int
    text: list[str]


class PreferenceEntry(TypedDict):
    """A short bank entry: prompt, chosen paragraphs, one recipe per rejected response."""

    prompt: str
    chosen: list[str]
    rejected: list[Recipe]


def preference_bank(subset: str) -> list[PreferenceEntry]:
    """The short entries of one Long-form RewardBench subset (``QA``, ``RAG``, ...)."""
    return load_json(f"preference/{subset.lower()}.json", list[PreferenceEntry])


def apply_recipe(chosen: str, recipe: Recipe, seed: str) -> str:
    """Derive one rejected response from ``chosen`` following a bank recipe."""
    kind = recipe["kind"]
    parts = chosen.split("\n\n")
    if kind == "swap":
        return apply_edits(chosen, recipe["edits"], seed)
    if kind == "cut":
        return "\n\n".join(parts[:recipe["keep"]])
    if kind == "drift":
        return "\n\n".join([*parts[:recipe["keep"]], paragraphs(recipe["text"])])
    if kind == "verbose":
        return pad_verbosely(chosen, seed)
    if kind == "text":
        return paragraphs(recipe["text"])
    raise ValueError(f"unknown recipe kind {kind!r}")


def _short(subset: str) -> list[dict]:
    out = []
    for entry in preference_bank(subset):
        chosen = paragraphs(entry["chosen"])
        seed = f"{subset}:{entry['prompt'][:40]}"
        rejected = [apply_recipe(chosen, r, seed) for r in entry["rejected"]]
        out.append({"subset": subset, "prompt": entry["prompt"], "chosen": chosen,
                    "rejected": rejected})
    return out


#: The long records of each subset, listed after its short ones.
LONG = {
    "QA": (long_sorting.record, long_plants.record),
    "RAG": (long_warehouse.record,),
    "Chat": (long_japan.record,),
    "Writing": (long_marathon.record,),
    "Reasoning": (),
}


def preference_records() -> list[dict]:
    """Return the Long-form RewardBench demo records (identical on every call).

    Each record is ``{"id": "QA_1", "subset": ..., "prompt": str, "chosen": [str],
    "rejected": [str, str, str]}``; Reasoning records have exactly one rejected
    response. Five records (one per subset except Reasoning, two in QA) have
    responses of roughly 2,500 to 6,300 words, i.e. well over 3,000 tokens.
    """
    records = []
    for subset in SUBSETS:
        items = _short(subset) + [build() for build in LONG[subset]]
        for i, item in enumerate(items, start=1):
            records.append({
                "id": f"{subset}_{i}",
                "subset": subset,
                "prompt": item["prompt"],
                "chosen": [item["chosen"]],
                "rejected": list(item["rejected"]),
            })
    return records
