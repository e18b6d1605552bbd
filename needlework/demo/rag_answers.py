"""The demo's model answers for the demo grounding set (``data/rag/answers.json``).

Two made-up models answer the demo questions so that every answer-evaluation figure
has something to show (docs/rag.md): ``demo-careful`` answers from the passages that
answer the question and deflects when none does; ``demo-hasty`` mixes in a fact from
an irrelevant passage (factual against all passages, not against the relevant ones),
outdated and made-up facts, answers where it should deflect, deflects once where it
should answer, and skips a question. Answers name questions by their bank ``key``; the
records' ``sample_id`` is derived from it as for the grounding records.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo._util import stable_uuid
from needlework.demo.grounding import GROUPS, grounding_bank
from needlework.demo.loaders import DemoDataError, load_json

FILE = "rag/answers.json"


class DemoAnswer(TypedDict):
    key: str
    answer: str


class DemoModel(TypedDict):
    """One demo model: its name, what it does (for people) and its answers."""

    model: str
    about: str
    answers: list[DemoAnswer]


def demo_models() -> list[DemoModel]:
    """The demo models as written in the data file (checked against the question bank)."""
    models = load_json(FILE, list[DemoModel])
    keys = {entry["key"] for group, _ in GROUPS for entry in grounding_bank(group)}
    for i, model in enumerate(models):
        for j, answer in enumerate(model["answers"]):
            if answer["key"] not in keys:
                raise DemoDataError(f"{FILE}: [{i}].answers[{j}].key: no demo question "
                                    f"{answer['key']!r}")
    return models


def demo_answer_sets() -> list[tuple[str, dict[str, str]]]:
    """``[(model, {sample_id: answer})]``: the demo answers keyed like the demo records."""
    return [(m["model"], {stable_uuid(a["key"]): a["answer"] for a in m["answers"]})
            for m in demo_models()]
