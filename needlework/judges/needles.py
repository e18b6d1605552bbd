"""Needles written by an LLM, the way Long-form RewardBench built its sets.

For each haystack (a long response and its prompt): pick a chunk (a paragraph,
chosen by a seeded generator), ask the writer for a *minimal* erroneous
(``factuality``) or harmful (``safety``) rewrite of it
(:func:`~needlework.judges.prompts.rewrite_messages`), then ask a second time, as a
check, whether the rewrite differs from the original by exactly one such flaw
(:func:`~needlework.judges.prompts.verify_messages`, answered ``[[YES]]`` /
``[[NO]]``). Only verified rewrites are kept. Each kept needle becomes a record in
the project's needle format: ``chosen`` is the original response, ``rejected`` the
response with the chunk rewritten, ``tagged_position`` the token offset where the
two first differ over the rejected response's token count. Every attempt, kept or
not, is reported with its reason, and every record carries the prompts used (the
template version and the exact messages' hashes, with the rendered text of both).

Calls go through the judge cache (:func:`needlework.judges.engine.ask`): writing the
same set again asks nothing.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework import tokens
from needlework.formats import needle as needle_format
from needlework.judges.cache import prompt_hash
from needlework.judges.client import JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.engine import ask
from needlework.judges.errors import JudgeCancelled
from needlework.judges.parse import Parsed, invalid, parse_yes_no
from needlework.judges.prompts import PROMPT_VERSION, rewrite_messages, verify_messages
from needlework.needle.sites import paragraph_spans

ASPECTS = ("factuality", "safety")
MIN_SIMILARITY = 0.6  # a rewrite further from the original than this is not minimal
MIN_CHUNK_WORDS = 12
_REWRITE = re.compile(r"<rewrite>\s*(.*?)\s*</rewrite>", re.S | re.I)


@dataclass(frozen=True)
class Haystack:
    """A response to write a needle into, with its prompt."""

    id: str
    prompt: str
    text: str


@dataclass
class NeedleWriting:
    """What :func:`write_needles` did: the kept records and every attempt with its reason."""

    records: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0

    def summary(self) -> dict[str, Any]:
        kept = sum(1 for a in self.attempts if a["kept"])
        return {"attempts": len(self.attempts), "kept": kept,
                "rejected": len(self.attempts) - kept, "requests": self.requests,
                "prompt_version": PROMPT_VERSION}


def parse_rewrite(text: str, original: str) -> Parsed:
    """The rewritten chunk between ``<rewrite>`` tags, or invalid (missing, empty,
    unchanged, or too different to be a minimal change)."""
    found = _REWRITE.findall(text or "")
    if len(found) != 1:
        return invalid("no <rewrite>...</rewrite> block" if not found else "several rewrite blocks")
    rewrite = found[0].strip()
    if not rewrite:
        return invalid("empty rewrite")
    if rewrite == original.strip():
        return invalid("the rewrite is the original")
    ratio = difflib.SequenceMatcher(None, original, rewrite, autojunk=False).ratio()
    if ratio < MIN_SIMILARITY:
        return invalid(f"not a minimal change (similarity {ratio:.2f} < {MIN_SIMILARITY})")
    return Parsed(True, rewrite, "tags")


def first_difference(a: str, b: str) -> int:
    """The offset of the first character where ``a`` and ``b`` differ."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return min(len(a), len(b))


def candidate_chunks(text: str) -> list[tuple[int, int]]:
    """Paragraph spans long enough to hold a needle."""
    return [(s, e) for s, e in paragraph_spans(text) if len(text[s:e].split()) >= MIN_CHUNK_WORDS]


def needle_record(haystack: Haystack, span: tuple[int, int], rewrite: str, aspect: str,
                  prompts: dict[str, Any]) -> dict[str, Any]:
    """The needle-format record of one verified rewrite of ``haystack.text[span]``."""
    start, end = span
    rejected = haystack.text[:start] + rewrite + haystack.text[end:]
    offset = start + first_difference(haystack.text[start:end], rewrite)
    before = tokens.count_tokens(rejected[:offset])
    total = tokens.count_tokens(rejected)
    record = {
        "id": f"{haystack.id}:{aspect}:{start}",
        "word_count": len(rejected.split()),
        "tagged_position": round(before.tokens / max(1, total.tokens), 6),
        "prompt": haystack.prompt,
        "chosen": [haystack.text],
        "rejected": [rejected],
        "haystack_id": haystack.id,
        "needle_id": f"llm:{aspect}:{start}",
        "aspect": aspect,
        "token_count_method": total.method,
        "writer": prompts,
    }
    problems = needle_format.validate(record)
    if problems:  # a bug here, not bad input: the record is built from checked parts
        raise ValueError(f"needle record {record['id']}: {'; '.join(problems)}")
    return record


def write_needles(db: Any, writer: Connection, haystacks: Sequence[Haystack], *, aspect: str,
                  per_haystack: int = 1, seed: int = 0, verifier: Connection | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> NeedleWriting:
    """Write up to ``per_haystack`` verified needles into each haystack.

    ``verifier`` checks the rewrites (default: the writer itself, in a second call).
    Chunks are drawn without replacement by a generator seeded with (seed, haystack
    id); a haystack whose chunks run out yields fewer needles, and says so.
    """
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
    out = NeedleWriting()
    write_client = JudgeClient(writer)
    check_client = JudgeClient(verifier) if verifier is not None else write_client
    total = len(haystacks) * per_haystack
    try:
        for h_index, haystack in enumerate(haystacks):
            spans = candidate_chunks(haystack.text)
            random.Random(f"{seed}:{haystack.id}").shuffle(spans)
            kept = 0
            while spans and kept < per_haystack:
                if should_stop is not None and should_stop():
                    raise JudgeCancelled("needle writing cancelled; answers so far are cached")
                span = spans.pop()
                chunk = haystack.text[span[0]:span[1]]
                attempt: dict[str, Any] = {"haystack_id": haystack.id, "span": list(span),
                                           "kept": False}
                ask_rewrite = rewrite_messages(chunk, aspect)
                raw, parsed, _ = ask(db, write_client, ask_rewrite,
                                     lambda text, c=chunk: parse_rewrite(text, c),
                                     should_stop=should_stop)
                attempt["rewrite_answer"] = raw
                if not parsed.valid:
                    attempt["reason"] = f"rewrite refused: {parsed.reason}"
                    out.attempts.append(attempt)
                    continue
                ask_check = verify_messages(chunk, parsed.value, aspect)
                raw_check, verdict, _ = ask(db, check_client, ask_check, parse_yes_no,
                                            should_stop=should_stop)
                attempt["check_answer"] = raw_check
                if not verdict.valid or verdict.value is not True:
                    attempt["reason"] = ("check said no" if verdict.valid
                                         else f"check unreadable: {verdict.reason}")
                    out.attempts.append(attempt)
                    continue
                prompts = {
                    "prompt_version": PROMPT_VERSION,
                    "writer": {"endpoint": writer.endpoint, "model": writer.model},
                    "verifier": {"endpoint": (verifier or writer).endpoint,
                                 "model": (verifier or writer).model},
                    "rewrite_prompt": ask_rewrite[0]["content"],
                    "rewrite_prompt_hash": prompt_hash(ask_rewrite),
                    "check_prompt": ask_check[0]["content"],
                    "check_prompt_hash": prompt_hash(ask_check),
                    "check_answer": raw_check,
                }
                out.records.append(needle_record(haystack, span, parsed.value, aspect, prompts))
                attempt.update(kept=True, reason="verified", id=out.records[-1]["id"])
                out.attempts.append(attempt)
                kept += 1
                if progress is not None:
                    progress(min(total, h_index * per_haystack + kept), total)
            if kept < per_haystack:
                out.attempts.append({"haystack_id": haystack.id, "kept": False, "span": None,
                                     "reason": f"only {kept} of {per_haystack} needles: "
                                               "no more chunks to try"})
            if progress is not None:
                progress(min(total, (h_index + 1) * per_haystack), total)
    finally:
        out.requests = write_client.requests + (check_client.requests
                                                if check_client is not write_client else 0)
        write_client.close()
        if check_client is not write_client:
            check_client.close()
    return out
