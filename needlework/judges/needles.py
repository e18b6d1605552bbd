"""Needles written by an LLM, the way Long-form RewardBench built its sets.

For each haystack (a long response and its prompt), cut to each target length the
way :mod:`needlework.needle.builder` cuts (or taken whole): pick a chunk (a
paragraph, chosen by a seeded generator), ask the writer for a *minimal* erroneous
(``factuality``) or harmful (``safety``) rewrite of it
(:func:`~needlework.judges.prompts.rewrite_messages`), then ask a second time, as a
check, whether the rewrite differs from the original by exactly one such flaw
(:func:`~needlework.judges.prompts.verify_messages`, answered ``[[YES]]`` /
``[[NO]]``). Only verified rewrites are kept. Each kept needle becomes a record in
the project's needle format, with the fields the needle lab charts by:

- ``chosen`` is the (cut) original response, ``rejected`` the same with the chunk
  rewritten;
- ``tagged_position`` = tokens of the rejected response before the first character
  where the two differ (``needle_char``) / its token count (the paper's sets take the
  middle of the chunk instead; ours points at the change itself);
- ``length_tokens`` = the target length of the cut (the heatmap's row), or, for a
  haystack taken whole, its measured length rounded by :func:`length_bin`;
  ``response_tokens`` = the measured length;
- ``site_index`` = the chunk's paragraph number in the haystack, ``needle_id`` names
  the haystack and that paragraph, ``kind`` the aspect.

Every attempt, kept or not, is reported with its reason, and every record carries
the prompts used in its ``writer`` field (the template version, the endpoints and
models, the rendered rewrite and check prompts with their hashes, and the check's
answer).

Calls go through the judge cache (:func:`needlework.judges.engine.ask`): writing the
same set again asks nothing, and a killed run resumes where it stopped.
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from needlework.formats import needle as needle_format
from needlework.judges.cache import prompt_hash
from needlework.judges.client import JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.engine import ask
from needlework.judges.errors import JudgeCancelled
from needlework.judges.parse import Parsed, invalid, parse_yes_no
from needlework.judges.prompts import PROMPT_VERSION, rewrite_messages, verify_messages
from needlework.needle.inputs import Haystack
from needlework.needle.sites import TokenCounter, cut_to_length, paragraph_spans, resolve_counter

__all__ = ["ASPECTS", "Haystack", "NeedleWriting", "candidate_chunks", "length_bin", "needle_record",
           "parse_rewrite", "write_needles"]

ASPECTS = ("factuality", "safety")
MIN_SIMILARITY = 0.6  # a rewrite further from the original than this is not minimal
MIN_CHUNK_WORDS = 12
DEFAULT_TOLERANCE = 0.05  # as the builder: a cut further than this from its target is skipped
DEFAULT_TRIES = 3  # chunks tried per needle wanted, at most (a model that always refuses costs little)
_REWRITE = re.compile(r"<rewrite>\s*(.*?)\s*</rewrite>", re.S | re.I)


@dataclass
class NeedleWriting:
    """What :func:`write_needles` did: the kept records and every attempt with its reason."""

    records: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    token_method: str = ""

    def summary(self) -> dict[str, Any]:
        """Counts: attempts, kept, rejected (by the parse or the check), haystack cuts
        skipped or short of chunks, requests sent; the prompt version and token counter."""
        tried = [a for a in self.attempts if a.get("span") is not None]
        kept = sum(1 for a in tried if a["kept"])
        return {"attempts": len(tried), "kept": kept, "rejected": len(tried) - kept,
                "short": sum(1 for a in self.attempts if a.get("span") is None),
                "requests": self.requests, "prompt_version": PROMPT_VERSION,
                "token_method": self.token_method}


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


def length_bin(tokens: int) -> int:
    """The heatmap row of a haystack taken whole: its length rounded to the nearest 1000
    tokens (to the nearest 100 below 950), never 0. ``length_bin(2380) == 2000``."""
    step = 1000 if tokens >= 950 else 100
    return max(step, round(tokens / step) * step)


def candidate_chunks(text: str) -> list[tuple[int, int]]:
    """Paragraph spans long enough to hold a needle."""
    return [(s, e) for s, e in paragraph_spans(text) if len(text[s:e].split()) >= MIN_CHUNK_WORDS]


def needle_record(haystack: Haystack, text: str, span: tuple[int, int], rewrite: str, aspect: str,
                  prompts: dict[str, Any], *, counter: TokenCounter, length: int | None = None,
                  site_index: int = 0) -> dict[str, Any]:
    """The needle-format record of one verified rewrite of ``text[span]`` (``text``: the
    haystack's text, cut to ``length`` tokens; ``None``: taken whole and binned)."""
    start, end = span
    rejected = text[:start] + rewrite + text[end:]
    offset = start + first_difference(text[start:end], rewrite)
    total = counter.count(rejected)
    row = length if length is not None else length_bin(counter.count(text))
    record = {
        "id": f"llm-{aspect}-{haystack.id}-{row}-{site_index}",
        "word_count": len(rejected.split()),
        "tagged_position": round(counter.count(rejected[:offset]) / max(1, total), 6),
        "prompt": haystack.prompt,
        "chosen": [text],
        "rejected": [rejected],
        "length_tokens": row,
        "site_index": site_index,
        "needle_id": f"llm:{aspect}:{haystack.id}:{site_index}",
        "haystack_id": haystack.id,
        "response_tokens": total,
        "needle_char": offset,
        "kind": aspect,
        "token_count_method": counter.method,
        "writer": prompts,
    }
    problems = needle_format.validate(record)
    if problems:  # a bug here, not bad input: the record is built from checked parts
        raise ValueError(f"needle record {record['id']}: {'; '.join(problems)}")
    return record


def _cuts(haystack: Haystack, lengths: Sequence[int] | None, tolerance: float,
          counter: TokenCounter) -> list[tuple[int | None, str | None]]:
    """``(length, text cut to it)`` per target length (text ``None``: too short), or
    ``[(None, whole text)]`` when no lengths are given."""
    if not lengths:
        return [(None, haystack.text)]
    out: list[tuple[int | None, str | None]] = []
    for length in lengths:
        cut = cut_to_length(haystack.text, length, counter.count)
        fits = cut is not None and abs(cut.tokens - length) <= tolerance * length
        out.append((length, haystack.text[: cut.end] if fits and cut is not None else None))
    return out


def write_needles(db: Any, writer: Connection, haystacks: Sequence[Haystack], *, aspect: str,
                  per_haystack: int = 1, seed: int = 0, verifier: Connection | None = None,
                  lengths: Sequence[int] | None = None, tolerance: float = DEFAULT_TOLERANCE,
                  tries: int = DEFAULT_TRIES, counter: TokenCounter | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> NeedleWriting:
    """Write up to ``per_haystack`` verified needles into each haystack (at each of
    ``lengths``, cut as the builder cuts; a haystack further than ``tolerance`` from a
    length is skipped for it, and says so).

    ``verifier`` checks the rewrites (default: the writer itself, in a second call).
    Chunks are drawn without replacement by a generator seeded with (seed, haystack
    id, length), at most ``tries`` × ``per_haystack`` of them per haystack and length; a
    haystack whose chunks or tries run out yields fewer needles, and says so.
    ``progress(done, total)`` counts needle slots (haystacks × lengths × per_haystack).
    """
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
    if per_haystack < 1:
        raise ValueError(f"needles per haystack must be at least 1, got {per_haystack}")
    if tries < 1:
        raise ValueError(f"tries per needle must be at least 1, got {tries}")
    if lengths is not None and any(int(n) <= 0 for n in lengths):
        raise ValueError("lengths must be positive token counts")
    counter = counter or resolve_counter()
    out = NeedleWriting(token_method=counter.method)
    write_client = JudgeClient(writer)
    check_client = JudgeClient(verifier) if verifier is not None else write_client
    slots = len(lengths) if lengths else 1
    total = len(haystacks) * slots * per_haystack
    done = 0
    try:
        for haystack in haystacks:
            index = {start: k for k, (start, _) in enumerate(paragraph_spans(haystack.text))}
            for length, text in _cuts(haystack, lengths, tolerance, counter):
                if text is None:
                    out.attempts.append({"haystack_id": haystack.id, "length": length, "kept": False,
                                         "span": None, "reason": f"shorter than {length} tokens: skipped"})
                else:
                    kept = _write_into(db, out, haystack, text, length, aspect, per_haystack,
                                       per_haystack * tries, seed,
                                       (write_client, check_client), (writer, verifier or writer),
                                       index, counter, should_stop)
                    if kept < per_haystack:
                        out.attempts.append({"haystack_id": haystack.id, "length": length,
                                             "kept": False, "span": None,
                                             "reason": f"only {kept} of {per_haystack} needles: "
                                                       f"no more chunks to try (at most {tries} "
                                                       "per needle)"})
                done += per_haystack
                if progress is not None:
                    progress(min(total, done), total)
    finally:
        out.requests = write_client.requests + (check_client.requests
                                                if check_client is not write_client else 0)
        write_client.close()
        if check_client is not write_client:
            check_client.close()
    return out


def _write_into(db: Any, out: NeedleWriting, haystack: Haystack, text: str, length: int | None,
                aspect: str, per_haystack: int, budget: int, seed: int, clients: tuple[JudgeClient, JudgeClient],
                connections: tuple[Connection, Connection], index: dict[int, int],
                counter: TokenCounter, should_stop: Callable[[], bool] | None) -> int:
    """Try chunks of one (cut) haystack until ``per_haystack`` are kept; returns how many."""
    write_client, check_client = clients
    writer, verifier = connections
    spans = candidate_chunks(text)
    random.Random(f"{seed}:{haystack.id}:{length}").shuffle(spans)
    del spans[:max(0, len(spans) - budget)]  # the last ``budget`` are popped, in that order
    kept = 0
    while spans and kept < per_haystack:
        if should_stop is not None and should_stop():
            raise JudgeCancelled("needle writing cancelled; answers so far are cached")
        span = spans.pop()
        chunk = text[span[0]:span[1]]
        attempt: dict[str, Any] = {"haystack_id": haystack.id, "length": length, "span": list(span),
                                   "kept": False}
        ask_rewrite = rewrite_messages(chunk, aspect)
        room = max(writer.max_tokens, 2 * counter.count(chunk) + 64)  # the whole chunk fits
        raw, parsed, _ = ask(db, write_client, ask_rewrite,
                             lambda answer, c=chunk: parse_rewrite(answer, c),
                             should_stop=should_stop, max_tokens=room)
        attempt["rewrite_answer"] = raw
        if not parsed.valid:
            attempt["reason"] = f"rewrite refused: {parsed.reason}"
            out.attempts.append(attempt)
            continue
        ask_check = verify_messages(chunk, parsed.value, aspect)
        raw_check, verdict, _ = ask(db, check_client, ask_check, parse_yes_no, should_stop=should_stop)
        attempt["check_answer"] = raw_check
        if not verdict.valid or verdict.value is not True:
            attempt["reason"] = ("check said no" if verdict.valid
                                 else f"check unreadable: {verdict.reason}")
            out.attempts.append(attempt)
            continue
        prompts = {
            "prompt_version": PROMPT_VERSION,
            "writer": {"endpoint": writer.endpoint, "model": writer.model},
            "verifier": {"endpoint": verifier.endpoint, "model": verifier.model},
            "rewrite_prompt": ask_rewrite[0]["content"],
            "rewrite_prompt_hash": prompt_hash(ask_rewrite),
            "check_prompt": ask_check[0]["content"],
            "check_prompt_hash": prompt_hash(ask_check),
            "check_answer": raw_check,
        }
        out.records.append(needle_record(haystack, text, span, parsed.value, aspect, prompts,
                                         counter=counter, length=length,
                                         site_index=index[span[0]]))
        attempt.update(kept=True, reason="verified", id=out.records[-1]["id"])
        out.attempts.append(attempt)
        kept += 1
    return kept
