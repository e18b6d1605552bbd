"""Build the RM-Bench demo records (docs/benchmarks.md §4): 3 chosen and 3 rejected
responses per prompt, one per style, as RM-Bench's release files have them.

RM-Bench asks a reward model to prefer the right answer whatever its style: each prompt
has a chosen and a rejected answer (the rejected one with a factual error, a wrong step,
a bug, or the wrong side of a safety line), each written three ways: **concise**,
**detailed** in plain text, and **detailed with Markdown**. The 3 × 3 view compares
chosen style *i* with rejected style *j*: *hard* where the rejected answer has the richer
style, *easy* where the chosen one has.

The text is in ``data/rmbench/items.json`` (:class:`RmBenchEntry`): per prompt, the chosen
answer's content (:class:`Answer`: a concise sentence or code, an intro, titled points,
code shown in the detailed styles, a closing line), and either the rejected answer
written out (safety) or ``edits`` that turn the chosen content into the rejected one
(``[old, new]`` pairs, applied to every field that holds ``old``, so the same error is in
every style). :func:`styles` renders an answer in the three styles.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo.loaders import DemoDataError, load_json

FILE = "rmbench/items.json"
ORDINALS = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth")


class _AnswerFields(TypedDict):
    concise: str
    intro: str
    points: list[list[str]]  # [title, text]


class Answer(_AnswerFields, total=False):
    """One answer's content, rendered in three styles by :func:`styles`."""

    code: str  # shown after the intro in the detailed styles (fenced in Markdown)
    outro: str


class _EntryFields(TypedDict):
    id: int
    subset: str  # RM-Bench's subset name: alpacaeval, math-prm, bigcode/humanevalpack, ...
    prompt: str
    chosen: Answer


class RmBenchEntry(_EntryFields, total=False):
    """A prompt with its chosen answer and its rejected one (written out, or edits)."""

    rejected: Answer
    edits: list[list[str]]
    error: str  # what is wrong with the rejected answer (RM-Bench's chat ``error``)
    language: str  # code: the programming language (RM-Bench's code ``language``)


def styles(answer: Answer, language: str = "") -> list[str]:
    """``[concise, detailed plain, detailed Markdown]`` of ``answer``."""
    points = answer["points"]
    if len(points) > len(ORDINALS) or any(len(p) != 2 for p in points):
        raise DemoDataError(f"{FILE}: points must be at most {len(ORDINALS)} [title, text] pairs")
    code, outro = answer.get("code", ""), answer.get("outro", "")
    plain = [answer["intro"], *([code] if code else []),
             *(f"{ORDINALS[k]}, {title}. {text}" for k, (title, text) in enumerate(points)),
             *([outro] if outro else [])]
    markdown = [answer["intro"], *([f"```{language}\n{code}\n```"] if code else []),
                *(f"### {k + 1}. **{title}**\n\n- {text}" for k, (title, text) in enumerate(points)),
                *([f"**In short:** {outro}"] if outro else [])]
    return [answer["concise"], "\n\n".join(plain), "\n\n".join(markdown)]


def edited(answer: Answer, edits: list[list[str]], where: str) -> Answer:
    """``answer`` with each ``[old, new]`` edit made in every field that holds ``old``;
    an edit found nowhere is refused."""
    out: Answer = {**answer, "points": [list(p) for p in answer["points"]]}
    for pair in edits:
        if len(pair) != 2:
            raise DemoDataError(f"{FILE}: {where}: an edit is an [old, new] pair")
        old, new = pair
        found = 0
        for key in ("concise", "intro", "code", "outro"):
            if key in out and old in out[key]:
                found += 1
                out[key] = out[key].replace(old, new)
        for point in out["points"]:
            if old in point[1]:
                found += 1
                point[1] = point[1].replace(old, new)
        if not found:
            raise DemoDataError(f"{FILE}: {where}: edit target not found: {old[:50]!r}")
    return out


def rmbench_entries() -> list[RmBenchEntry]:
    """The entries of the data file, checked against :class:`RmBenchEntry`."""
    return load_json(FILE, list[RmBenchEntry])


def rmbench_records() -> list[dict]:
    """The RM-Bench demo records (identical on every call): ``{"id", "subset", "prompt",
    "chosen": [3], "rejected": [3]}`` plus ``language`` (code) and ``error_key``/``error``
    (where the file says what is wrong), in file order. Every rejected style differs from
    the chosen one of the same style."""
    records = []
    for entry in rmbench_entries():
        where = f"[id {entry['id']}]"
        if ("rejected" in entry) == ("edits" in entry):
            raise DemoDataError(f"{FILE}: {where}: give either rejected or edits, not both")
        language = entry.get("language", "")
        rejected = (entry["rejected"] if "rejected" in entry
                    else edited(entry["chosen"], entry["edits"], where))
        chosen_texts, rejected_texts = styles(entry["chosen"], language), styles(rejected, language)
        same = [k for k in range(3) if chosen_texts[k] == rejected_texts[k]]
        if same:
            raise DemoDataError(f"{FILE}: {where}: style {same[0] + 1} of the rejected answer "
                                "is the chosen one")
        record: dict = {"id": entry["id"], "subset": entry["subset"], "prompt": entry["prompt"]}
        if language:
            record["language"] = language
        record["chosen"], record["rejected"] = chosen_texts, rejected_texts
        if "error" in entry:
            record["error_key"], record["error"] = "error", entry["error"]
        records.append(record)
    return records
