"""Where a model fails: the checks an answer failed and its failing sentences.

Read from one answer row of :func:`needlework.rag.verdicts.answer_row` (as stored by
``store.rag``), by the same rules the figures use (:mod:`needlework.rag.metrics`), so
every failure listed is one a figure counted:

- ``no answer``: the question got no answer (or a blank one): it fails every check;
- ``not eligible``: the eligibility verdict is Major Issue(s), or unreadable;
- ``not factual``: a sentence is not supported or no_rad against all passages (or the
  judge's answer is unreadable); ``not factual (relevant)``: the same against the
  relevant passages only (uRAF);
- ``missed deflection``: the question needs a deflection and the answer attempts it;
  ``false deflection``: the passages answer it and the answer declines (an unreadable
  grade is the failure of whichever case applies);
- ``LLMeval no``: the LLMeval judge did not say yes;
- ``non-answer``: the answer makes no claim (:mod:`.non_answers`); listed with the checks
  it fails by that rule (not eligible, not factual, ...).

An answer whose judge request failed is **not scored** (no figure counts it): it fails no
check here.

A **failing sentence** is one whose label (against all passages, or the relevant ones)
is neither ``supported`` nor ``no_rad``, including a sentence left without a label
because the judge's answer was unreadable: invalid answers count as failures.
Without a judge only ``no answer`` applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from needlework.grounding.answer import cited_numbers
from needlework.rag.verdicts import GROUNDED

NO_ANSWER = "no answer"
NON_ANSWER = "non-answer"
NOT_ELIGIBLE = "not eligible"
NOT_FACTUAL = "not factual"
NOT_RELEVANT_FACTUAL = "not factual (relevant)"
MISSED_DEFLECTION = "missed deflection"
FALSE_DEFLECTION = "false deflection"
LLMEVAL_NO = "LLMeval no"
#: Every failure, in the order lists show them.
FAILURES: tuple[str, ...] = (NO_ANSWER, NON_ANSWER, NOT_ELIGIBLE, NOT_FACTUAL, NOT_RELEVANT_FACTUAL,
                             MISSED_DEFLECTION, FALSE_DEFLECTION, LLMEVAL_NO)
#: The two passage sets a sentence is judged against.
SIDES: dict[str, str] = {"all": "all passages", "relevant": "relevant passages"}


def answer_failures(row: Mapping[str, Any]) -> list[str]:
    """The checks ``row`` failed, in :data:`FAILURES` order (``[]``: none)."""
    if not row["answered"]:
        return [NO_ANSWER]
    if not row.get("judged") or row.get("judge_failed"):
        return []
    out = [NON_ANSWER] if row.get("non_answer") else []
    if not row["eligible"]:
        out.append(NOT_ELIGIBLE)
    if not row["factual"]:
        out.append(NOT_FACTUAL)
    if not row["relevant_factual"]:
        out.append(NOT_RELEVANT_FACTUAL)
    if row["needs_deflection"] and row["deflected"] is not True:
        out.append(MISSED_DEFLECTION)
    if not row["needs_deflection"] and row["deflected"] is not False:
        out.append(FALSE_DEFLECTION)
    if not row["llmeval"]:
        out.append(LLMEVAL_NO)
    return out


def sentence_label(sentence: Mapping[str, Any], side: str) -> str | None:
    """The sentence's label against ``side`` (``all`` or ``relevant``), ``None`` when
    the judge's answer gave none."""
    verdict = sentence.get(side)
    return verdict.get("label") if isinstance(verdict, Mapping) else None


def sentence_fails(sentence: Mapping[str, Any], side: str) -> bool:
    """True when the sentence is not grounded against ``side`` (no label counts)."""
    return sentence_label(sentence, side) not in GROUNDED


def failing_sentences(row: Mapping[str, Any]) -> list[int]:
    """0-based indices of the sentences of ``row`` that fail against all passages or
    the relevant ones (``[]`` without a judge)."""
    if not row.get("judged") or not row["answered"] or row.get("judge_failed") \
            or row.get("non_answer"):
        return []
    return [k for k, s in enumerate(row.get("sentences") or [])
            if any(sentence_fails(s, side) for side in SIDES)]


def cited_passage(row: Mapping[str, Any], sentence: int | None = None) -> int | None:
    """The passage an answer's link is about: the first passage of the question that
    sentence ``sentence`` (0-based) cites, else the first one the whole answer cites;
    ``None`` when it cites none that exists (1-based numbers)."""
    count = len(row.get("labels") or {})
    sentences = row.get("sentences") or []
    texts = [sentences[sentence]["text"]] if sentence is not None and \
        0 <= sentence < len(sentences) else []
    for text in [*texts, row.get("answer") or ""]:
        found = next((n for n in cited_numbers(text) if 1 <= n <= count), None)
        if found is not None:
            return found
    return None


def failure_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per failing answer: ``model``, ``item_key``, ``question``,
    ``failures`` (names), ``sentences`` (failing sentence indices)."""
    out = []
    for row in rows:
        failed = answer_failures(row)
        if failed:
            out.append({"model": row["model"], "item_key": row["item_key"],
                        "question": row.get("question", ""), "failures": failed,
                        "sentences": failing_sentences(row)})
    return out


def sentence_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per failing sentence: ``model``, ``item_key``, ``question``, ``index``
    (0-based), ``text``, ``all`` and ``relevant`` labels, and the judge's ``rationale``."""
    out = []
    for row in rows:
        for k in failing_sentences(row):
            s = row["sentences"][k]
            why = next((s[side].get("rationale") for side in SIDES
                        if isinstance(s.get(side), Mapping) and s[side].get("rationale")), None)
            out.append({"model": row["model"], "item_key": row["item_key"],
                        "question": row.get("question", ""), "index": k, "text": s["text"],
                        "all": sentence_label(s, "all"), "relevant": sentence_label(s, "relevant"),
                        "rationale": why})
    return out
