"""Long preference record: a guide to twelve sorting algorithms (QA).

Each algorithm has a handwritten explanation (``data/long/sorting_how.md``) and
usage note (``data/long/sorting.json``); its worked example is a computed trace
(:mod:`needlework.demo.sorting_traces`) or written out in the JSON. The
complexity paragraphs and the summary table are generated from the attribute
table, so the factual-error variant changes the table and the matching
sentences together.
"""

from __future__ import annotations

from typing import TypedDict, cast

from needlework.demo.filler import pad_verbosely
from needlework.demo.loaders import DemoDataError, load_json, load_sections
from needlework.demo.sorting_traces import TRACES


class _AlgorithmFields(TypedDict):
    name: str
    best: str
    average: str
    worst: str
    space: str
    stable: bool
    in_place: bool
    use: str


class Algorithm(_AlgorithmFields, total=False):
    """One algorithm; ``example`` is given where no computed trace exists."""

    example: str


class SortingGuide(TypedDict):
    """The record's data: prompt, algorithms, where the drift starts, the factual errors."""

    prompt: str
    algorithms: list[Algorithm]
    drift_after: int
    factual_overrides: dict[str, dict[str, str | bool]]


#: The attributes a factual override may change.
ATTRIBUTES = ("best", "average", "worst", "space", "stable", "in_place")


def _override(algo: Algorithm, changes: dict[str, str | bool]) -> Algorithm:
    """``algo`` with some attributes replaced (the factual-error variant)."""
    out = dict(algo)
    for key, value in changes.items():
        if key not in ATTRIBUTES or type(value) is not type(out[key]):
            raise DemoDataError(f"long/sorting.json: factual_overrides.{algo['name']}.{key}: "
                                "not an attribute, or not of the attribute's type")
        out[key] = value
    return cast(Algorithm, out)


def _example(algo: Algorithm) -> str:
    trace = TRACES.get(algo["name"])
    return trace() if trace is not None else algo["example"]


def _complexity(i: int, algo: Algorithm) -> str:
    name, best, avg, worst, space = (algo["name"], algo["best"], algo["average"], algo["worst"],
                                     algo["space"])
    stable_text = ("stable, so equal keys keep their original order" if algo["stable"]
                   else "not stable: equal keys can change their relative order")
    place_text = "it sorts in place" if algo["in_place"] else "it does not sort in place"
    if i % 3 == 0:
        return (f"Complexity: {name} takes {best} time in the best case, {avg} on average "
                f"and {worst} in the worst case, with {space} extra space. It is "
                f"{stable_text}, and {place_text}.")
    if i % 3 == 1:
        return (f"Complexity: the worst case is {worst} and the average case {avg}; the best "
                f"case is {best}. Extra memory: {space}. The algorithm is {stable_text}; "
                f"{place_text}.")
    return (f"Complexity: expect {avg} on typical inputs, {best} at best and {worst} at "
            f"worst. It uses {space} additional memory, is {stable_text}, and {place_text}.")


def _table(algos: list[Algorithm]) -> str:
    lines = ["4. Summary table", "",
             "Algorithm       | Best        | Average             | Worst        | Space   "
             "| Stable"]
    for a in algos:
        avg_short = "varies" if a["average"].startswith("depends") else a["average"]
        worst_short = "O(n^(3/2))" if "Knuth" in a["worst"] else a["worst"]
        lines.append(f"{a['name']:<15} | {a['best']:<11} | {avg_short:<19} | {worst_short:<12} | "
                     f"{a['space'].replace(' stack', ''):<7} | {'yes' if a['stable'] else 'no'}")
    return "\n".join(lines)


def _sections(algos: list[Algorithm], how: dict[str, str]) -> list[str]:
    return ["\n\n".join([f"3.{i + 1} {a['name']}", how[a["name"]], _example(a),
                         _complexity(i, a), a["use"]])
            for i, a in enumerate(algos)]


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    data: SortingGuide = load_json("long/sorting.json", SortingGuide)
    text = load_sections("long/sorting.md")
    how = load_sections("long/sorting_how.md")
    algos = data["algorithms"]
    chosen = "\n\n".join([text["intro"], *_sections(algos, how), _table(algos),
                          text["libraries"]])
    wrong = [_override(a, data["factual_overrides"].get(a["name"], {})) for a in algos]
    factual = "\n\n".join([text["intro"], *_sections(wrong, how), _table(wrong),
                           text["libraries"]])
    drift = "\n\n".join([text["intro"], *_sections(algos[:data["drift_after"]], how),
                         text["drift"]])
    return {
        "subset": "QA",
        "prompt": data["prompt"],
        "chosen": chosen,
        "rejected": [factual, pad_verbosely(chosen, "sorting-guide"), drift],
    }
