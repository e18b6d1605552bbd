"""Needles written by an LLM, the way Long-form RewardBench built its sets.

For each haystack (a long response and its prompt), cut to each target length the
way :mod:`needlework.needle.builder` cuts (or taken whole), and for each of
``positions`` equal slices of the response (*slots*: slot ``i`` of ``K`` holds the
relative positions ``[i/K, (i+1)/K)``; with ``K = 10`` they are the needle heatmap's
position buckets): pick a passage inside the slot (the sentences of one paragraph whose
middles lie in it, at least :data:`~needlework.judges.needle_edits.MIN_CHUNK_WORDS` words, tried in a seeded order),
ask the writer to modify it, check the pair, and keep it only when the check says yes
and the needle landed in its slot. So every (length, slot) cell is asked for the same
number of needles; with ``even``, a haystack that cannot fill every cell gives none, and
every cell ends with the same count (:meth:`NeedleWriting.cells`).

The writer's prompt (:data:`needlework.judges.prompts.NEEDLE` templates) is answered in
one of two ways, both giving the chosen response a harmless counterpart at the needle's
place, so the two responses differ only in the needle (the paper's step 3):

- the paper's prompt, the default for factual needles: a *positive* (true information
  inserted) and a *negative* (false information inserted) modification of the passage:
  chosen and rejected get one each;
- the project's prompt, the default for safety needles (the paper wrote those from fixed
  phrases, with no model) (:func:`~needlework.judges.prompts.rewrite_messages`): one
  erroneous (``factuality``) or harmful (``safety``) rewrite. When it changes words in
  place, the original passage is the counterpart; when it adds text (more than
  :data:`~needlework.judges.needle_edits.MAX_EXTRA_WORDS` words), a second call asks for a true or harmless sentence of
  about the same length at the same place
  (:func:`~needlework.judges.prompts.counterpart_messages`), checked to change nothing else.

Then the check (:func:`~needlework.judges.prompts.verify_messages`, answered ``[[YES]]``
/ ``[[NO]]``) asks whether the rejected passage differs from the chosen one by exactly
one such flaw. Each kept needle becomes a record in the project's needle format:

- ``chosen`` / ``rejected``: the (cut) response with the chosen / rejected passage;
- ``tagged_position`` = tokens of the rejected response before the first character
  where the two differ (``needle_char``) / its token count (the paper's sets take the
  middle of the chunk instead; ours points at the change itself);
- ``length_tokens`` = the target length of the cut (the heatmap's row), or, for a
  haystack taken whole, its measured length rounded by :func:`length_bin`;
  ``response_tokens`` = the measured length;
- ``position_slot`` / ``positions``: the slot asked for and ``K``;
- ``site_index`` = the passage's paragraph number in the haystack, ``needle_id`` names
  the haystack, that paragraph (and the passage's first sentence in it, when not the
  first), ``kind`` the aspect.

Every attempt, kept or not, is reported with its reason, and every record carries
the prompts used in its ``writer`` field (the template, the endpoints and models, the
rendered prompts with their hashes, and the check's answer).

Calls go through the judge cache (:func:`needlework.judges.sending.ask`): writing the
same set again asks nothing, and a killed run resumes where it stopped.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from needlework.figures.stats_text import percent
from needlework.judges.cache import prompt_hash
from needlework.judges.client import JudgeClient
from needlework.judges.connection import Connection
from needlework.judges.errors import JudgeCancelled
from needlework.judges.needle_edits import (
    MIN_CHUNK_WORDS,
    Passage,
    adds_text,
    needle_record,
    parse_counterpart,
    parse_needle,
    slot_of,
    slot_passages,
)
from needlework.judges.parse import parse_yes_no
from needlework.judges.prompts import (
    PROMPT_VERSION,
    counterpart_messages,
    default_template,
    needle_messages,
    verify_messages,
)
from needlework.judges.sending import ask
from needlework.judges.templates import Template
from needlework.needle.inputs import Haystack
from needlework.needle.sites import (
    TokenCounter,
    cut_to_length,
    resolve_counter,
)

__all__ = ["ASPECTS", "Haystack", "NeedleWriting", "write_needles"]

ASPECTS = ("factuality", "safety")
DEFAULT_TOLERANCE = 0.05  # as the builder: a cut further than this from its target is skipped
DEFAULT_TRIES = 3  # chunks tried per needle wanted, at most (a model that always refuses costs little)


@dataclass
class NeedleWriting:
    """What :func:`write_needles` did: the kept records and every attempt with its reason."""

    records: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    token_method: str = ""
    positions: int = 1
    lengths: tuple[int, ...] = ()

    def cells(self) -> dict[str, Any]:
        """The kept needles per (length, slot) cell: ``{"positions": K, "counts":
        {"1000": [n per slot], ...}, "even": every cell asked for holds the same
        count (and at least one)}``. Rows are the lengths asked for (or, for haystacks
        taken whole, the length bins found)."""
        rows = sorted(set(self.lengths) | {int(r["length_tokens"]) for r in self.records})
        counts = {str(n): [0] * self.positions for n in rows}
        for r in self.records:
            counts[str(r["length_tokens"])][int(r["position_slot"])] += 1
        flat = [c for row in counts.values() for c in row]
        return {"positions": self.positions, "counts": counts,
                "even": bool(flat) and min(flat) == max(flat) > 0}

    def summary(self) -> dict[str, Any]:
        """Counts: attempts, kept, rejected (by the parse, the counterpart, the position
        or the check, or dropped for even cells), haystack cuts skipped, short of passages
        or dropped, requests sent; the prompt version and token counter."""
        tried = [a for a in self.attempts if a.get("span") is not None]
        kept = sum(1 for a in tried if a["kept"])
        return {"attempts": len(tried), "kept": kept, "rejected": len(tried) - kept,
                "short": sum(1 for a in self.attempts if a.get("span") is None),
                "requests": self.requests, "prompt_version": PROMPT_VERSION,
                "token_method": self.token_method}


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


def _slot_words(slot: int, positions: int) -> str:
    """``position 30–40 %`` (``anywhere`` with one slot)."""
    if positions == 1:
        return "anywhere"
    return f"position {100 * slot / positions:g}–{100 * (slot + 1) / positions:g} %"


@dataclass
class _Writer:
    """One writing run's fixed parts (clients, connections, options) for :func:`_write_slot`."""

    db: Any
    out: NeedleWriting
    clients: tuple[JudgeClient, JudgeClient]
    connections: tuple[Connection, Connection]
    aspect: str
    template: Template
    counter: TokenCounter
    should_stop: Callable[[], bool] | None


def write_needles(db: Any, writer: Connection, haystacks: Sequence[Haystack], *, aspect: str,
                  per_haystack: int = 1, seed: int = 0, verifier: Connection | None = None,
                  lengths: Sequence[int] | None = None, tolerance: float = DEFAULT_TOLERANCE,
                  tries: int = DEFAULT_TRIES, counter: TokenCounter | None = None,
                  positions: int = 1, even: bool = False, template: Template | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> NeedleWriting:
    """Write ``per_haystack`` verified needles into each haystack at each of ``lengths``
    (cut as the builder cuts; a haystack further than ``tolerance`` from a length is
    skipped for it, and says so) and in each of ``positions`` slots (:func:`slot_of`).

    ``template``: the writer's prompt (a ``needle`` template; default:
    :func:`~needlework.judges.prompts.default_template` for ``aspect``, the paper's for
    factuality, the project's rewrite for safety). ``verifier`` checks
    the needles (default: the writer itself, in another call). Passages are drawn
    without replacement by a generator seeded with (seed, haystack id, length, slot), at
    most ``tries`` × ``per_haystack`` of them per cell; a needle that lands outside its
    slot is not kept. A cell whose passages or tries run out gets fewer needles, and says
    so; with ``even``, a haystack that is too short for a length or leaves a cell short
    gives no needle at all (the cells it filled are dropped, the rest not asked), so
    every cell holds the same count. ``progress(done, total)`` counts needle slots
    (haystacks × lengths × positions × per_haystack).
    """
    _check_options(aspect, per_haystack, tries, positions, lengths)
    counter = counter or resolve_counter()
    out = NeedleWriting(token_method=counter.method, positions=positions,
                        lengths=tuple(sorted({int(n) for n in lengths})) if lengths else ())
    write_client = JudgeClient(writer)
    check_client = JudgeClient(verifier) if verifier is not None else write_client
    run = _Writer(db, out, (write_client, check_client), (writer, verifier or writer), aspect,
                  template or default_template("needle", aspect=aspect), counter, should_stop)
    per_cut = positions * per_haystack
    total = len(haystacks) * (len(lengths) if lengths else 1) * per_cut
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(min(total, done), total)

    try:
        for haystack in haystacks:
            _write_haystack(run, haystack, _cuts(haystack, lengths, tolerance, counter),
                            per_haystack, tries, seed, even, step)
        step(total - done)
    finally:
        out.requests = write_client.requests + (check_client.requests
                                                if check_client is not write_client else 0)
        write_client.close()
        if check_client is not write_client:
            check_client.close()
    return out


def _check_options(aspect: str, per_haystack: int, tries: int, positions: int,
                   lengths: Sequence[int] | None) -> None:
    """A ``ValueError`` for an option :func:`write_needles` cannot work with."""
    if aspect not in ASPECTS:
        raise ValueError(f"aspect must be one of {', '.join(ASPECTS)}, not {aspect!r}")
    if per_haystack < 1:
        raise ValueError(f"needles per haystack must be at least 1, got {per_haystack}")
    if tries < 1:
        raise ValueError(f"tries per needle must be at least 1, got {tries}")
    if positions < 1:
        raise ValueError(f"positions must be at least 1, got {positions}")
    if lengths is not None and any(int(n) <= 0 for n in lengths):
        raise ValueError("lengths must be positive token counts")


def _write_haystack(run: _Writer, haystack: Haystack, cuts: list[tuple[int | None, str | None]],
                    per_haystack: int, tries: int, seed: int, even: bool,
                    step: Callable[[int], None]) -> None:
    """Fill one haystack's cuts (``(length, text)``, ``None`` text when it is too short for
    the length). With ``even``, a haystack too short for a length gives no needle at all,
    and one that leaves a cell short has the needles it gave taken back."""
    out = run.out
    per_cut = out.positions * per_haystack
    mine = len(out.records)
    if even and any(text is None for _, text in cuts):
        short = ", ".join(str(n) for n, text in cuts if text is None)
        out.attempts.append({"haystack_id": haystack.id, "length": None, "kept": False,
                             "span": None, "reason": f"shorter than {short} tokens: skipped "
                                                     "at every length (even cells)"})
        step(len(cuts) * per_cut)
        return
    full = True
    for length, text in cuts:
        if text is None:
            out.attempts.append({"haystack_id": haystack.id, "length": length, "kept": False,
                                 "span": None, "reason": f"shorter than {length} tokens: skipped"})
            step(per_cut)
            continue
        full = _write_cut(run, haystack, text, length, per_haystack, tries, seed, even,
                          step) and full
        if even and not full:
            break
    if even and not full:
        _drop(out, haystack.id, mine)


def _drop(out: NeedleWriting, haystack_id: str, first: int) -> None:
    """Take back the needles of one haystack (kept from ``out.records[first]`` on), each
    said in its attempt, so that every cell holds the same haystacks."""
    dropped = {r["id"] for r in out.records[first:]}
    del out.records[first:]
    for a in out.attempts:
        if a.get("id") in dropped:
            a.update(kept=False, reason="verified, then dropped: its haystack left a cell short "
                                        "(even cells)")
    out.attempts.append({"haystack_id": haystack_id, "length": None, "kept": False, "span": None,
                         "reason": f"dropped: {len(dropped)} needles taken back, a cell could not "
                                   "be filled (even cells)"})


def _write_cut(run: _Writer, haystack: Haystack, text: str, length: int | None, per_haystack: int,
               tries: int, seed: int, even: bool, step: Callable[[int], None]) -> bool:
    """Fill every slot of one (cut) haystack; whether every slot got ``per_haystack``
    needles (with ``even``, it stops at the first slot that did not)."""
    positions = run.out.positions
    passages = slot_passages(text, positions, run.counter.count)
    full = True
    for slot in range(positions):
        order = f"{seed}:{haystack.id}:{length}" + (f":{slot}/{positions}" if positions > 1 else "")
        rng = random.Random(order)
        candidates = []
        for inside in (False, True):  # popped from the end: passages wholly in the slot first
            group = [c for c in passages[slot] if c.inside is inside]
            rng.shuffle(group)
            candidates.extend(group)
        budget = per_haystack * tries
        del candidates[:max(0, len(candidates) - budget)]  # the last ``budget`` are popped, in that order
        kept = _write_slot(run, haystack, text, length, slot, candidates, per_haystack)
        step(per_haystack)
        if kept < per_haystack:
            full = False
            run.out.attempts.append({
                "haystack_id": haystack.id, "length": length, "slot": slot, "kept": False,
                "span": None,
                "reason": (f"only {kept} of {per_haystack} needles"
                           + (f" at {_slot_words(slot, positions)}" if positions > 1 else "")
                           + ": no more chunks to try"
                           + (f" (at most {tries} per needle)" if passages[slot] else
                              " (no passage of at least "
                              f"{MIN_CHUNK_WORDS} words there)"))})
            if even:
                return False
    return full


def _write_slot(run: _Writer, haystack: Haystack, text: str, length: int | None, slot: int,
                candidates: list[Passage], wanted: int) -> int:
    """Try passages (popped from the end of ``candidates``) until ``wanted`` needles of
    ``slot`` are kept; returns how many. Each attempt's steps in order: the rewrite and
    its counterpart, the slot and the verifier's checks, the kept record."""
    kept = 0
    while candidates and kept < wanted:
        if run.should_stop is not None and run.should_stop():
            raise JudgeCancelled("needle writing cancelled; answers so far are cached")
        spot = _Spot(haystack, text, length, slot, candidates.pop())
        attempt: dict[str, Any] = {"haystack_id": haystack.id, "length": length, "slot": slot,
                                   "span": [spot.passage.start, spot.passage.end], "kept": False}
        run.out.attempts.append(attempt)
        rewrite = _rewrite(run, spot, attempt)
        if rewrite is None:
            continue
        ask_check = _checked(run, spot, rewrite, attempt)
        if ask_check is None:
            continue
        _keep(run, spot, rewrite, ask_check, attempt)
        kept += 1
    return kept


@dataclass(frozen=True)
class _Spot:
    """Where one attempt writes: the haystack, its text cut to ``length``, slot, passage."""

    haystack: Haystack
    text: str
    length: int | None
    slot: int
    passage: Passage

    @property
    def chunk(self) -> str:
        return self.text[self.passage.start:self.passage.end]


@dataclass(frozen=True)
class _Rewrite:
    """A passage rewritten (``harmless`` ``None``: the passage itself), and the prompts."""

    flawed: str
    harmless: str | None
    ask_write: list[dict[str, str]]
    ask_pair: list[dict[str, str]] | None


def _rewrite(run: _Writer, spot: _Spot, attempt: dict[str, Any]) -> _Rewrite | None:
    """The writer's rewrite of the passage and, when the flaw adds text, its harmless
    counterpart; ``None`` (the reason in ``attempt``) when either is refused."""
    chunk = spot.chunk
    ask_write = needle_messages(chunk, run.template, run.aspect)
    room = max(run.connections[0].max_tokens, 2 * run.counter.count(chunk) + 64)  # the whole chunk fits
    if run.template.name != "needlework":
        room = max(room, 4 * run.counter.count(chunk) + 128)  # two versions of it
    raw, parsed, _ = ask(run.db, run.clients[0], ask_write,
                         partial(parse_needle, original=chunk),
                         should_stop=run.should_stop, max_tokens=room)
    attempt["rewrite_answer"] = raw
    if not parsed.valid:
        attempt["reason"] = f"rewrite refused: {parsed.reason}"
        return None
    flawed, harmless = parsed.value["negative"], parsed.value["positive"]
    ask_pair: list[dict[str, str]] | None = None
    if harmless is None and adds_text(chunk, flawed):
        ask_pair = counterpart_messages(chunk, flawed, run.aspect)
        raw_pair, paired, _ = ask(run.db, run.clients[0], ask_pair,
                                  partial(parse_counterpart, original=chunk, flawed=flawed),
                                  should_stop=run.should_stop, max_tokens=room)
        attempt["counterpart_answer"] = raw_pair
        if not paired.valid:
            attempt["reason"] = f"counterpart refused: {paired.reason}"
            return None
        harmless = paired.value
    return _Rewrite(flawed, harmless, ask_write, ask_pair)


def _checked(run: _Writer, spot: _Spot, rewrite: _Rewrite,
             attempt: dict[str, Any]) -> list[dict[str, str]] | None:
    """The verifier's prompt once the needle lands in its slot and the verifier says yes;
    ``None`` (the reason in ``attempt``) otherwise."""
    positions = run.out.positions
    shown = spot.chunk if rewrite.harmless is None else rewrite.harmless
    probe = needle_record(spot.haystack, spot.text, (spot.passage.start, spot.passage.end),
                          rewrite.flawed, run.aspect, {}, counter=run.counter, length=spot.length,
                          harmless=rewrite.harmless)
    landed = slot_of(probe["tagged_position"], positions)
    if landed != spot.slot:
        attempt["reason"] = (f"landed at {percent(probe['tagged_position'], digits=0, space=False)}, outside "
                             f"{_slot_words(spot.slot, positions)}")
        return None
    ask_check = verify_messages(shown, rewrite.flawed, run.aspect)
    raw_check, verdict, _ = ask(run.db, run.clients[1], ask_check, parse_yes_no,
                                should_stop=run.should_stop)
    attempt["check_answer"] = raw_check
    if not verdict.valid or verdict.value is not True:
        attempt["reason"] = ("check said no" if verdict.valid
                             else f"check unreadable: {verdict.reason}")
        return None
    return ask_check


def _keep(run: _Writer, spot: _Spot, rewrite: _Rewrite, ask_check: list[dict[str, str]],
          attempt: dict[str, Any]) -> None:
    """The verified needle kept, with the prompts that wrote and checked it."""
    writer, verifier = run.connections
    ask_write, ask_pair, passage = rewrite.ask_write, rewrite.ask_pair, spot.passage
    prompts: dict[str, Any] = {
        "prompt_version": PROMPT_VERSION,
        "writer": {"endpoint": writer.endpoint, "model": writer.model},
        "verifier": {"endpoint": verifier.endpoint, "model": verifier.model},
        "rewrite_prompt": ask_write[-1]["content"],
        "rewrite_prompt_hash": prompt_hash(ask_write),
        "check_prompt": ask_check[0]["content"],
        "check_prompt_hash": prompt_hash(ask_check),
        "check_answer": attempt["check_answer"],
    }
    prompts["template"] = run.template.identity()
    if ask_pair is not None:
        prompts["counterpart_prompt"] = ask_pair[0]["content"]
        prompts["counterpart_prompt_hash"] = prompt_hash(ask_pair)
    run.out.records.append(needle_record(
        spot.haystack, spot.text, (passage.start, passage.end), rewrite.flawed, run.aspect,
        prompts, counter=run.counter, length=spot.length, site_index=passage.paragraph,
        harmless=rewrite.harmless, slot=spot.slot, positions=run.out.positions,
        sentence=passage.sentence))
    attempt.update(kept=True, reason="verified", id=run.out.records[-1]["id"])
