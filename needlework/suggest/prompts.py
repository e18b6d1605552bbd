"""The judge prompts behind suggested passage labels and question dimensions.

**Passage labels.** One prompt per passage: the question (with the day it was asked) and
one passage (with its date and age), and the five labels defined in our words after
GaRAGe's annotation guidelines (appendix A.2): first whether the passage is relevant to
the question at all, then, for a relevant one, whether it is current and answers the
question, only adds related detail, is outdated, or of unknown age. The judge answers
with a JSON object ``{"label": ..., "confidence": ...}`` (how likely, from 0 to 1, its
label is right: kept as the suggestion's confidence, :func:`stated_confidence`);
:func:`parse_label` also reads a label named alone on the answer's last line.

**Dimensions.** One prompt per question for the dimensions with a fixed list of values
(:data:`needlework.formats.garage.DIMENSIONS`), answered as one JSON object.

Data texts are fenced by ``[Name]`` / ``[End of name]`` markers, like the RAG prompts
(:mod:`needlework.rag.prompts`), so the rules judge and a reader can tell them from the
instructions. :data:`PROMPT_VERSION` names the wording; it is stored with every
suggestion, and the call cache is keyed by the prompt text itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

from needlework.formats.garage import DIMENSIONS
from needlework.grounding.item import Passage
from needlework.grounding.labels import ANSWER, IRRELEVANT, OUTDATED, RELATED, UNKNOWN
from needlework.judges.parse import Parsed, invalid, json_objects

PROMPT_VERSION = "needlework-suggest-2"
Messages = list[dict[str, str]]

#: The labels as the prompt names them (``IRRELEVANT`` upper-case, like the others).
PROMPT_LABELS: dict[str, str] = {
    "IRRELEVANT": IRRELEVANT, ANSWER: ANSWER, RELATED: RELATED, OUTDATED: OUTDATED,
    UNKNOWN: UNKNOWN,
}

_DEFINITIONS = (
    "IRRELEVANT: the passage holds nothing about the question's topic that could help "
    "write an answer.\n"
    f"{ANSWER}: relevant, current and answers the question correctly. Compare the day "
    "the question was asked with the passage's date before choosing it.\n"
    f"{RELATED}: relevant, but does not answer the question by itself; it holds details "
    "or context an answer could use.\n"
    f"{OUTDATED}: relevant, but its information is from an earlier time and no longer "
    "current for the question.\n"
    f"{UNKNOWN}: relevant, but how old its information is cannot be told from the "
    "passage or its date."
)


def _block(name: str, text: str) -> str:
    return f"[{name}]\n{text}\n[End of {name.lower()}]"


def label_messages(question: str, question_date: str, passage: Passage) -> Messages:
    """The prompt asking for one passage's label."""
    when = f"\n(asked on {question_date})" if question_date else ""
    dated = ", ".join(part for part in (
        f"dated {passage.date}" if passage.date else "",
        f"{passage.age} old when the question was asked" if passage.age else "") if part)
    text = (
        "You label the grounding passages of a question for a retrieval-augmented "
        "generation dataset. Decide first whether the passage is relevant to the question "
        "at all; if it is, decide which kind of relevant it is. The labels:\n\n"
        f"{_DEFINITIONS}\n\n"
        f"{_block('User question', question + when)}\n\n"
        f"{_block('Passage', passage.text)}\n"
        f"(passage {passage.number}{', ' + dated if dated else ', date unknown'})\n\n"
        "Think briefly if you need to, then end with one JSON object on its own line: "
        '{"label": "<one of IRRELEVANT, ANSWER-THE-QUESTION, RELATED-INFORMATION, '
        'OUTDATED, UNKNOWN>", "confidence": <how likely your label is right, from 0 to 1>}'
    )
    return [{"role": "user", "content": text}]


#: The answer's JSON schema (structured output, where the connection asks for it).
LABEL_SCHEMA: dict[str, Any] = {"name": "passage_label", "schema": {
    "type": "object", "properties": {"label": {"type": "string", "enum": list(PROMPT_LABELS)},
                                     "confidence": {"type": "number"}},
    "required": ["label", "confidence"], "additionalProperties": False}}

_BARE = re.compile(r"\b(IRRELEVANT|ANSWER-THE-QUESTION|RELATED-INFORMATION|OUTDATED|UNKNOWN)\b")


def parse_label(text: str) -> Parsed:
    """The label of an answer to :func:`label_messages`: the last JSON object's
    ``label``, else the one label named on the last line that names any; our label
    names as values (``irrelevant`` lower-case, like every stored label)."""
    for obj in reversed(json_objects(text)):
        raw = obj.get("label")
        if isinstance(raw, str):
            label = PROMPT_LABELS.get(raw.strip().upper())
            if label is not None:
                return Parsed(True, label, "json")
            return invalid(f"label {raw.strip()[:40]!r} is not one of the five", "json")
    for line in reversed(text.strip().splitlines()):
        found = set(_BARE.findall(line.upper()))
        if len(found) == 1:
            return Parsed(True, PROMPT_LABELS[found.pop()], "named")
        if found:
            return invalid("the last line naming a label names several", "named")
    return invalid("no label in the answer")


def stated_confidence(text: str | None) -> float | None:
    """The confidence the judge gave with its label: the ``confidence`` of the last JSON
    object with a ``label``, when it is a number from 0 to 1 (``None``: none given, or
    out of range)."""
    for obj in reversed(json_objects(text or "")):
        if "label" in obj:
            raw = obj.get("confidence")
            ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and 0 <= raw <= 1
            return float(raw) if ok else None
    return None


#: The dimensions a judge is asked for: every one with a fixed list of values.
ASKED_DIMS: tuple[str, ...] = tuple(DIMENSIONS)

_DIM_HELP = {
    "question_valid": "is it a real, answerable information-seeking question",
    "question_false_premise": "does it assume something false",
    "question_seeking": "does it seek an opinion or advice rather than facts",
    "question_sensitive": "does its answer depend on when it is asked",
    "question_type": "how fast its answer changes (empty when it does not change)",
    "question_complexity": "what answering it takes",
    "question_popularity": "how commonly its topic is asked about",
}


def dimension_messages(question: str, question_date: str) -> Messages:
    """The prompt asking for a question's dimensions, one JSON object."""
    when = f"\n(asked on {question_date})" if question_date else ""
    lines = [f"- {dim}: {_DIM_HELP[dim]}; one of "
             + ", ".join(json.dumps(v) for v in DIMENSIONS[dim]) for dim in ASKED_DIMS]
    text = (
        "You tag questions of a retrieval-augmented generation dataset. For the question "
        "below, choose one value for each dimension:\n" + "\n".join(lines) + "\n\n"
        f"{_block('User question', question + when)}\n\n"
        "End with one JSON object on its own line whose keys are the dimension names and "
        "whose values are taken from the lists above."
    )
    return [{"role": "user", "content": text}]


DIMS_SCHEMA: dict[str, Any] = {"name": "question_dimensions", "schema": {
    "type": "object",
    "properties": {dim: {"type": "string", "enum": list(DIMENSIONS[dim])} for dim in ASKED_DIMS},
    "required": list(ASKED_DIMS), "additionalProperties": False}}


def parse_dimensions(text: str) -> Parsed:
    """The dimensions of an answer to :func:`dimension_messages`: ``{dim: value}`` for
    each dimension the last JSON object sets to an allowed, non-empty value; invalid
    when it sets none."""
    for obj in reversed(json_objects(text)):
        found: dict[str, Any] = {}
        for dim in ASKED_DIMS:
            raw = obj.get(dim)
            if isinstance(raw, str) and raw and raw in DIMENSIONS[dim]:
                found[dim] = raw
            elif isinstance(raw, str):
                match = [v for v in DIMENSIONS[dim] if v and v.lower() == raw.strip().lower()]
                if match:
                    found[dim] = match[0]
        if found:
            return Parsed(True, found, "json")
    return invalid("no JSON object with a dimension value")
