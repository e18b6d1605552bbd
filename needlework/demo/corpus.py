"""All demo text as a flat list of strings, e.g. to train a small tokenizer."""

from __future__ import annotations

from needlework.demo.grounding import grounding_records
from needlework.demo.haystack import haystack_paragraphs
from needlework.demo.preference import preference_records


def corpus_texts() -> list[str]:
    """Return every demo text once, in a stable order.

    Includes the grounding questions, passages, answers and comments, the
    preference prompts and every chosen and rejected response, and the haystack
    paragraphs. Empty strings and exact duplicates are dropped.
    """
    texts: list[str] = []
    for record in grounding_records():
        texts.append(record["question"])
        for i, passage in enumerate(record["grounding"], start=1):
            texts.append(passage[f"cite_{i}"])
        texts += [record["answer_generate"], record["answer_related_info"], record["comments"]]
    for record in preference_records():
        texts.append(record["prompt"])
        texts += record["chosen"]
        texts += record["rejected"]
    texts += haystack_paragraphs()
    seen: set[str] = set()
    out = []
    for text in texts:
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out
