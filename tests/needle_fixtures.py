"""Needle sets for browser tests: built from the demo haystacks, imported, and scored by a
stand-in reward model that misses the needle in the middle of the longest responses."""

from __future__ import annotations

from needlework.datasets.transfer import import_bytes
from needlework.needle import builder, inputs
from needlework.needle.builder import needle_format
from store.scores import save_item_scores


def import_scored_needles(db, name: str, haystacks: int, words: int, lengths: tuple[int, ...],
                          fingerprint: str, model: str) -> list[dict]:
    """Build needles at ``lengths`` in ``haystacks`` demo haystacks of ``words`` words,
    import them as ``name`` and store ``model``'s scores (``fingerprint``): right (1 over 0)
    everywhere except at the longest length with the needle between 30 % and 70 %.
    Returns the records."""
    records = builder.build_needles(inputs.demo_haystacks(haystacks, words),
                                    inputs.builtin_pairs("safety"),
                                    builder.BuildOptions(lengths=lengths)).records
    import_bytes(db, needle_format.dump(records).encode(), f"{name}.jsonl", format="needle",
                 dataset=name)
    longest = max(lengths)
    save_item_scores(db, name, fingerprint, "fp32|full", model, [
        {"item_key": r["id"], "subset": str(r["length_tokens"]),
         "chosen_scores": [-1.0 if r["length_tokens"] >= longest
                           and 0.3 <= r["tagged_position"] < 0.7 else 1.0],
         "rejected_scores": [0.0]} for r in records])
    return records
