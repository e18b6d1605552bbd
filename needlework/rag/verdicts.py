"""One model answer's judge requests and what their answers say.

For a question ``q`` and a model answer ``a`` (docs/rag.md has every rule):

- **eligibility** (GaRAGe B.2): ``a`` against the human answer; eligible unless the
  verdict is ``Major Issue(s)``;
- **unadjusted factuality** (B.3): every sentence of ``a`` labelled against *all*
  passages; factual when every sentence is ``supported`` or ``no_rad``;
- **relevant factuality** (uRAF's verdict): the same against the *relevant* passages
  only (:data:`needlework.rag.questions.RELEVANT_LABELS`);
- **factuality** = eligible and factual; **RAF** = eligible and relevant-factual;
- **deflection** (B.4): ``missing`` (the answer declines) or ``attempted``;
- **LLMeval** (BERGEN): 1 when the judge says yes, else 0.

**Invalid judge answers count as failures (our rule, as for every judge here):** an
unreadable eligibility verdict is not eligible, an unreadable factuality answer is not
factual, an unreadable deflection grade counts against the model in whichever rate the
question belongs to (not a true positive; a false positive). **A question the model did
not answer** (no line, or blank text) is not sent to the judge and fails every figure:
not eligible, not factual, not a deflection, LLMeval 0, BERGEN metrics of the empty
answer. **A non-answer** (:func:`needlework.rag.non_answers.is_non_answer`: no claim, such as
``[B]`` or only citation markers) is not sent either and counts the same way, marked
``non_answer``. **A judge request that failed** (refused, timed out, a server error after
the retries: no answer came) leaves the answer *not scored*: ``judge_failed`` names each
failed check with the endpoint's sentence, and the figures leave the answer out of their
numerators and denominators (:mod:`.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from needlework.grounding.answer import cited_numbers
from needlework.grounding.attribution import score as attribution_score
from needlework.judges.parse import Parsed
from needlework.judges.templates import Template
from needlework.rag import bergen
from needlework.rag.calls import Outcome, Request
from needlework.rag.non_answers import is_non_answer
from needlework.rag.parse import (
    parse_deflection,
    parse_eligibility,
    parse_factuality,
    parse_llmeval,
)
from needlework.rag.prompts import (
    deflection_messages,
    eligibility_messages,
    factuality_messages,
    llmeval_messages,
    template_set,
)
from needlework.rag.questions import RagQuestion, strip_markers
from needlework.rag.sentences import Sentence, split_sentences

JUDGE_CHECKS = ("eligibility", "factuality", "relevant_factuality", "deflection", "llmeval")
GROUNDED = ("supported", "no_rad")
MAJOR = "Major Issue(s)"
SEP = "\x1f"


@dataclass(frozen=True)
class AnswerCase:
    """A model's answer to one question (``answer`` is ``None`` when there is none)."""

    model: str
    question: RagQuestion
    answer: str | None

    @property
    def answered(self) -> bool:
        return self.answer is not None and bool(self.answer.strip())

    @property
    def non_answer(self) -> bool:
        """An answer (blank included) that makes no claim: never judged, never grounded."""
        return self.answer is not None and is_non_answer(self.answer)

    @property
    def judgeable(self) -> bool:
        """Whether the answer goes to the judge: given, and not a non-answer."""
        return self.answered and not self.non_answer

    def request_id(self, check: str) -> str:
        return SEP.join((self.model, self.question.key, check))

    def sentences(self) -> list[Sentence]:
        return split_sentences(self.answer or "")


def requests_for(case: AnswerCase,
                 templates: Mapping[str, Template] | None = None) -> list[Request]:
    """The judge requests of one answer (none for a missing answer or a non-answer), with
    ``templates`` (mode -> template; the default for a mode not given)."""
    if not case.judgeable:
        return []
    t = template_set(templates)
    q, answer = case.question, case.answer or ""
    texts = [s.text for s in case.sentences()]

    def facts(text: str) -> Parsed:
        return parse_factuality(text, texts)

    return [
        Request(case.request_id("eligibility"),
                eligibility_messages(q.question, answer, q.reference, q.question_date,
                                     t["eligibility"]),
                parse_eligibility),
        Request(case.request_id("factuality"),
                factuality_messages(q.question, q.passages, texts, q.question_date,
                                    t["factuality"]), facts),
        Request(case.request_id("relevant_factuality"),
                factuality_messages(q.question, q.relevant, texts, q.question_date,
                                    t["factuality"]), facts),
        Request(case.request_id("deflection"),
                deflection_messages(q.question, answer, t["deflection"]), parse_deflection),
        Request(case.request_id("llmeval"),
                llmeval_messages(q.question, strip_markers(q.reference), answer, t["llmeval"]),
                parse_llmeval),
    ]


def _grounded(parsed: Parsed | None) -> bool:
    return bool(parsed is not None and parsed.valid
                and all(v["label"] in GROUNDED for v in parsed.value))


def answer_row(case: AnswerCase, outcomes: dict[str, Outcome] | None, *,
               with_related: bool = False) -> dict[str, Any]:
    """Everything measured on one answer: BERGEN and attribution scores always, the judge
    verdicts when ``outcomes`` (from :func:`needlework.rag.calls.run_requests`) is given;
    with the question, the reference (human) answer and the passage labels it was
    judged against (``labels``: passage number as text -> adjudicated label or
    ``None``), so the answer can be shown beside the human one later. JSON-ready."""
    q = case.question
    answer = case.answer or ""
    empty = case.non_answer  # scored as the empty answer, citing nothing
    gold = set(cited_numbers(q.reference))
    pred = set() if empty else set(cited_numbers(answer))
    attribution = None
    if gold:
        p, r, f = attribution_score(gold, pred)
        attribution = {"precision": p, "recall": r, "f1": f}
    row: dict[str, Any] = {
        "model": case.model, "item_key": q.key, "answered": case.answered,
        "answer": case.answer, "question": q.question, "reference": q.reference,
        "labels": {str(p.number): p.label for p in q.passages},
        "needs_deflection": q.needs_deflection, "dims": dict(q.dims),
        "non_answer": case.non_answer,
        "bergen": bergen.answer_scores("" if empty else strip_markers(answer),
                                       q.references(with_related)).as_dict(),
        "attribution": attribution,
        "judged": outcomes is not None,
    }
    if outcomes is None:
        return row
    sentences = case.sentences()
    got = {check: outcomes.get(case.request_id(check)) for check in JUDGE_CHECKS}
    parsed = {check: (o.parsed if o is not None else None) for check, o in got.items()}
    eligibility = parsed["eligibility"]
    label = eligibility.value if eligibility is not None and eligibility.valid else None
    judged = case.judgeable
    eligible = judged and label is not None and label != MAJOR
    factual = judged and _grounded(parsed["factuality"])
    relevant_factual = judged and _grounded(parsed["relevant_factuality"])
    grade = parsed["deflection"]
    deflected: bool | None = False
    if judged:
        deflected = (grade.value == "missing") if grade is not None and grade.valid else None
    llm = parsed["llmeval"]
    row.update({
        "eligibility": label, "eligible": eligible, "factual": factual,
        "relevant_factual": relevant_factual, "factuality": eligible and factual,
        "raf": eligible and relevant_factual,
        "deflection": grade.value if grade is not None and grade.valid else None,
        "deflected": deflected,
        "llmeval": llm.value["score"] if llm is not None and llm.valid else 0,
        "llmeval_weird": bool(llm is not None and llm.valid and llm.value["weird"]),
        "sentences": _sentence_rows(sentences, parsed["factuality"],
                                    parsed["relevant_factuality"]),
        "invalid": {check: (o.parsed.reason or "invalid") for check, o in got.items()
                    if o is not None and not o.parsed.valid and o.failure is None},
        "judge_failed": {check: {"kind": o.failure, "message": o.error}
                         for check, o in got.items() if o is not None and o.failure is not None},
        "calls": {check: o.as_dict() for check, o in got.items() if o is not None},
    })
    return row


def _verdict(parsed: Parsed | None, k: int) -> dict[str, Any] | None:
    if parsed is None or not parsed.valid:
        return None
    return parsed.value[k]


def _sentence_rows(sentences: list[Sentence], everything: Parsed | None,
                   relevant: Parsed | None) -> list[dict[str, Any]]:
    return [{"text": s.text, "start": s.start, "end": s.end,
             "all": _verdict(everything, k), "relevant": _verdict(relevant, k)}
            for k, s in enumerate(sentences)]
