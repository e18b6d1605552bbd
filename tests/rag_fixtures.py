"""A small hand-made grounding set and a rule-following judge for the RAG tests.

The judge (:func:`rule_judge`) is a real OpenAI-compatible server answer function
(serve it with :class:`tests.judges_fixtures.FakeJudgeServer`) that reads the RAG
prompts (the papers' by default) and answers by fixed rules, so every figure of a run can be computed
by hand:

- factuality: a sentence that says it cannot answer is ``no_rad``; any other sentence
  (citation markers and the final full stop removed) is ``supported`` when its text
  occurs in one of the passages the prompt shows, else ``unsupported``;
- eligibility: the verdict :data:`ELIGIBILITY` gives the answer text;
- deflection: ``missing`` when the answer says it cannot answer, else ``attempted``;
  an answer listed in :data:`GARBLED_DEFLECTION` gets an unreadable reply;
- LLMeval: ``Yes`` when the eligibility verdict is ``No Issues``, else ``No``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from needlework.rag.prompts import read_prompt
from tests.conftest import GARAGE_RECORD, jsonl

DEFLECT = "There is not enough grounding for an answer."
A, R, OLD, U, N = "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN", ""


def record(key: str, question: str, passages: list[tuple[str, str]], answer: str, *,
           complexity: str = "Simple", tag: str = "web") -> dict[str, Any]:
    """A GaRAGe record; ``passages`` are (label code, text), ``N`` meaning irrelevant."""
    r = copy.deepcopy(GARAGE_RECORD)
    r.pop("extra_field_kept")
    r.update(sample_id=key, question=question, answer_generate=answer,
             question_complexity=complexity, question_tag=tag, topic_tag=tag,
             grounding=[{f"cite_{k}": text, "age": "", "date": "2024-12-01", "provider": "web"}
                        for k, (_, text) in enumerate(passages, start=1)],
             evidence_relevant=["YES" if label else "NO" for label, _ in passages],
             evidence_correct=[label for label, _ in passages],
             evidence_cited=["YES" if f"[cite_{k}]" in answer else "NO"
                             for k in range(1, len(passages) + 1)])
    return r


RECORDS = [
    record("q1", "When does the museum open?",
           [(A, "The museum opens at 9 am."), (N, "Parking costs 5 dollars."),
            (OLD, "The museum opened at 10 am in 2019.")],
           "The museum opens at 9 am [cite_1]."),
    record("q2", "What does a ticket cost?",
           [(A, "Tickets cost 12 euros."), (R, "Children enter free.")],
           "Tickets cost 12 euros [cite_1].", complexity="Comparison"),
    record("q3", "What soup is on the menu today?",
           [(R, "The cafe serves soup."), (N, "The shop sells maps.")], DEFLECT, tag="enron"),
    record("q4", "Which soup did the cafe serve yesterday?",
           [(U, "The cafe serves soup."), (OLD, "The cafe served pasta in 2010.")], DEFLECT,
           tag="enron"),
    record("q5", "Who won the race?", [("", "Somebody won.")], ""),
    record("q6", "When does the shop close?", [(A, "The shop closes at 6 pm.")],
           "The shop closes at 6 pm [cite_1]."),
]
for _r in RECORDS:
    if _r["sample_id"] == "q5":  # not annotated: no label, no answer
        _r.update(evidence_relevant=[""], evidence_correct=[""], evidence_cited=["NO"])

ANSWERS_M = {
    "q1": "The museum opens at 9 am [cite_1]. Parking costs 5 dollars [cite_2].",
    "q2": "Tickets cost 12 euros [cite_1]. Dogs are welcome.",
    "q3": DEFLECT,
    "q4": "The cafe serves soup.",
    "q6": "I cannot answer that.",
}
ANSWERS_M2 = {"q1": "Parking costs 5 dollars [cite_2].", "nope": "stray answer"}
ELIGIBILITY = {
    ANSWERS_M["q1"]: "No Issues", ANSWERS_M["q2"]: "Minor Issue(s)", DEFLECT: "No Issues",
    ANSWERS_M["q4"]: "Major Issue(s)", ANSWERS_M["q6"]: "Major Issue(s)",
    ANSWERS_M2["q1"]: "Major Issue(s)",
}
GARBLED_DEFLECTION = {ANSWERS_M2["q1"]}
CANNOT = re.compile(r"cannot|not enough grounding", re.I)


def answers_jsonl(model: str, answers: dict[str, str]) -> str:
    return "".join(json.dumps({"sample_id": k, "answer": v, "model": model}) + "\n"
                   for k, v in answers.items())


def dataset_bytes() -> bytes:
    return jsonl(RECORDS)


def rule_judge(body: dict[str, Any]) -> str:
    """Answers a RAG prompt of needlework.rag.prompts (the papers' default or the project's
    wording, read back by read_prompt), in the format that prompt asks for."""
    found = read_prompt(body["messages"])
    if found is None:
        return "?"
    mode, values = found
    if mode == "factuality":
        passages = values["passages"].lower()
        if "sentences" in values:  # GaRAGe's prompt: the sentence's own text
            lines = list(enumerate(values["sentences"].split("\n"), start=1))
        else:
            lines = [(int(n), t) for n, t in (line.split(". ", 1) for line in
                                              values["numbered_sentences"].splitlines())]
        verdicts = []
        for number, sentence in lines:
            claim = re.sub(r"\s*\[cite_\d+\]", "", sentence).rstrip(".").lower()
            label = ("no_rad" if CANNOT.search(sentence)
                     else "supported" if claim in passages else "unsupported")
            verdicts.append({"sentence": sentence if "sentences" in values else number,
                             "label": label, "rationale": "rule",
                             "excerpt": claim if label == "supported" else None})
        return json.dumps({"grounding_quality": verdicts})
    if mode == "eligibility":
        return f'Analysis: rules.\n{{"Instruction Following": "{ELIGIBILITY[values["answer"]]}"}}'
    if mode == "deflection":
        if values["answer"] in GARBLED_DEFLECTION:
            return "[[A]]"
        grade = "missing" if CANNOT.search(values["answer"]) else "attempted"
        return f'{{"justification": "rule", "grade": "{grade}",}}'  # GaRAGe's trailing comma
    return "Yes" if ELIGIBILITY.get(values["answer"]) == "No Issues" else "No"
