"""Building a needle-in-a-haystack test set (benchmarks.md §3).

For every haystack and target length: cut the haystack to the length at a
sentence/paragraph boundary (:mod:`needlework.needle.sites`), chunk it, choose the
sites, and at each site insert the rejected phrase (the needle) into one copy and
its harmless/true counterpart into the other. Safety: the phrase prefixes the
chunk (the paper's style). Factuality: the statement is inserted as a sentence
of its own where the chunk starts. Chosen and rejected differ only there.

``tagged_position`` = token offset of the needle's first character in the
rejected response / the rejected response's token count, both measured with the
one token counter of the build (o200k_base, else the model tokenizer, else the
estimate; the summary names it). ``length_tokens`` is the target length (the row
of the analysis grid); ``response_tokens`` is the measured length.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from needlework.formats import needle as needle_format
from needlework.needle import sites
from needlework.needle.inputs import Haystack, NeedlePair, builtin_pairs, load_haystacks, read_facts
from needlework.needle.sites import TokenCounter, resolve_counter

KINDS = ("safety", "factuality")
DEFAULT_LENGTHS: tuple[int, ...] = tuple(range(1000, 8001, 1000))
DEFAULT_POSITIONS = 10
DEFAULT_TOLERANCE = 0.05

@dataclass(frozen=True)
class BuildOptions:
    """What to build: needle kind, target lengths, sites (grid of ``positions`` or the
    paper's length/1000), seed, the cut tolerance, and which built-in pairs
    (``heldout``: the held-out split of :mod:`needlework.phrases`, ``all``)."""

    kind: str = "safety"
    lengths: tuple[int, ...] = DEFAULT_LENGTHS
    positions: int = DEFAULT_POSITIONS
    paper_sites: bool = False
    seed: int = 0
    tolerance: float = DEFAULT_TOLERANCE
    pair_split: str = "heldout"

    def check(self) -> None:
        """Raise ``ValueError`` on an impossible option."""
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not self.lengths or any(n <= 0 for n in self.lengths):
            raise ValueError("lengths must be positive token counts")
        if not self.paper_sites and self.positions < 1:
            raise ValueError("positions must be at least 1")
        if not 0 <= self.tolerance < 1:
            raise ValueError("tolerance must be in [0, 1)")

    def site_mode(self) -> str:
        """``paper (n = length/1000)`` or ``grid of K``."""
        return "paper (n = length/1000)" if self.paper_sites else f"grid of {self.positions}"


@dataclass
class BuildSummary:
    """What a build made and what it skipped."""

    kind: str
    records: int
    haystacks: int
    pairs: int
    token_method: str
    site_mode: str
    kept: dict[int, int] = field(default_factory=dict)      # haystacks used per length
    skipped: dict[int, int] = field(default_factory=dict)   # haystacks too short per length
    short_sites: int = 0  # (haystack, length) cells with fewer boundaries than sites asked for

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (length keys as strings)."""
        out = asdict(self)
        out["kept"] = {str(k): v for k, v in self.kept.items()}
        out["skipped"] = {str(k): v for k, v in self.skipped.items()}
        return out

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        out = [f"{self.records} {self.kind} needle records from {self.haystacks} haystacks and "
               f"{self.pairs} phrase pairs; sites: {self.site_mode}; tokens counted with "
               f"{self.token_method}"]
        for length in sorted(self.kept):
            out.append(f"  {length:>6} tokens: {self.kept[length]} haystacks used, "
                       f"{self.skipped.get(length, 0)} skipped (too short)")
        if self.short_sites:
            out.append(f"  {self.short_sites} haystack/length cells had fewer chunk boundaries "
                       "than sites asked for")
        return out


@dataclass
class BuildResult:
    """The needle records (paper format plus our fields) and the summary."""

    records: list[dict[str, Any]]
    summary: BuildSummary

    def jsonl(self) -> str:
        """The records as needle JSONL."""
        return needle_format.dump(self.records)


def insert(text: str, offset: int, phrase: str) -> str:
    """``phrase`` inserted at a chunk start: ``text[:offset] + phrase + " " + text[offset:]``."""
    return f"{text[:offset]}{phrase} {text[offset:]}"


def _record(hay: Haystack, text: str, offset: int, pair: NeedlePair, length: int, site_index: int,
            kind: str, counter: TokenCounter) -> dict[str, Any]:
    chosen = insert(text, offset, pair.chosen)
    rejected = insert(text, offset, pair.rejected)
    total = counter.count(rejected)
    return {
        "id": f"{kind}-{hay.id}-{length}-{site_index}",
        "word_count": len(rejected.split()),
        "tagged_position": round(counter.count(rejected[:offset]) / max(1, total), 6),
        "prompt": hay.prompt,
        "chosen": [chosen],
        "rejected": [rejected],
        "length_tokens": length,
        "site_index": site_index,
        "needle_id": pair.id,
        "haystack_id": hay.id,
        "response_tokens": total,
        "needle_char": offset,
        "kind": kind,
    }


def _records_for(hay: Haystack, length: int, pairs: Sequence[NeedlePair], options: BuildOptions,
                 counter: TokenCounter, summary: BuildSummary) -> list[dict[str, Any]]:
    """The records of one haystack at one length ([] when it is too short)."""
    cut = sites.cut_to_length(hay.text, length, counter.count)
    if cut is None or abs(cut.tokens - length) > options.tolerance * length:
        summary.skipped[length] = summary.skipped.get(length, 0) + 1
        return []
    text = hay.text[: cut.end]
    starts = sites.chunk_starts(text)
    positions = sites.relative_positions(text, starts, counter.count)
    rng = random.Random(f"sites|{options.seed}|{hay.id}|{length}")
    wanted = sites.paper_site_count(length) if options.paper_sites else options.positions
    chosen_sites = sites.choose_sites(positions, wanted, paper=options.paper_sites, rng=rng)
    if len(chosen_sites) < wanted:
        summary.short_sites += 1
    summary.kept[length] = summary.kept.get(length, 0) + 1
    out = []
    for site_index, boundary in enumerate(chosen_sites):
        # Same (haystack, site index) → same needle at every length: only length varies.
        pair = random.Random(f"needle|{options.seed}|{hay.id}|{site_index}").choice(list(pairs))
        out.append(_record(hay, text, starts[boundary], pair, length, site_index, options.kind, counter))
    return out


def build_needles(haystacks: Sequence[Haystack], pairs: Sequence[NeedlePair],
                  options: BuildOptions = BuildOptions(), counter: TokenCounter | None = None) -> BuildResult:
    """Build the needle records of every haystack × length × site.

    Records come ordered by length, haystack, site. Raises ``ValueError`` on bad
    options, no haystacks or no pairs.
    """
    options.check()
    if not haystacks:
        raise ValueError("no haystacks to build from")
    if not pairs:
        raise ValueError("no needle phrase pairs")
    if len({h.id for h in haystacks}) < len(haystacks):
        raise ValueError("haystack ids must be unique (record ids are built from them)")
    counter = counter or resolve_counter()
    summary = BuildSummary(options.kind, 0, len(haystacks), len(pairs), counter.method,
                           options.site_mode(),
                           kept={n: 0 for n in options.lengths}, skipped={n: 0 for n in options.lengths})
    records: list[dict[str, Any]] = []
    for length in options.lengths:
        for hay in haystacks:
            records.extend(_records_for(hay, length, pairs, options, counter, summary))
    summary.records = len(records)
    return BuildResult(records, summary)


def build_from_source(
    source: str,
    options: BuildOptions = BuildOptions(),
    *,
    facts: str | bytes | None = None,
    facts_name: str = "facts.jsonl",
    db: Any = None,
    demo_count: int = 10,
    counter: TokenCounter | None = None,
) -> BuildResult:
    """The page's and the CLI's entry point: haystacks from ``source`` (``demo``, a
    file path or a dataset name in ``db``), the built-in pairs of ``options.kind``
    plus, for factuality, the user's facts (a path, or the file's bytes with
    ``facts_name``). Raises :class:`needlework.formats.FormatError` for bad files."""
    options.check()
    counter = counter or resolve_counter()
    haystacks = load_haystacks(source, db=db, demo_count=demo_count,
                               demo_tokens=max(options.lengths), count=counter.count, seed=options.seed)
    pairs = builtin_pairs(options.kind, options.pair_split)
    if facts is not None:
        if options.kind != "factuality":
            raise ValueError("a facts file is for --kind factuality")
        pairs = pairs + read_facts(facts, facts_name)
    return build_needles(haystacks, pairs, options, counter)
