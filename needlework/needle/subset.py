"""Part of a needle set for a first judge run: a seeded sample stratified over the cells.

A judge is slow on long prompts, so the lab (and ``judge --per-subset N`` on a needle
dataset) lets one judge ``N`` pairs of each length first. Taking the first ``N`` pairs of
each length in import order takes the needles near the start of the responses (a
builder writes each haystack's sites in order), which skews a comparison with the
classifier, whose heatmap covers every position. :func:`stratified_needles` spreads the
``N`` pairs of each length over its position buckets (the heatmap's 10 columns):

- every bucket of that length gets ``N // B`` pairs (``B``: buckets holding pairs), and
  the ``N mod B`` left over go one each to buckets drawn in a seeded order; a bucket with
  too few pairs gives what it has, and the shortfall is spread over the others the same
  way, so the sample is as even over positions as the set allows;
- within a bucket the pairs are drawn by a generator seeded with (seed, length, bucket)
  from the bucket's pairs sorted by id: the same set gives the same sample whatever the
  import order, and a larger ``N`` keeps every pair a smaller one took.

The sample is returned in the set's import order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from needlework.needle.analysis import position_bucket

T = TypeVar("T")

__all__ = ["is_needle_meta", "quotas", "stratified_needles"]


def is_needle_meta(meta: Mapping[str, Any] | None) -> bool:
    """Whether an item's record carries a needle's length and position."""
    if not meta:
        return False
    return meta.get("tagged_position") is not None and meta.get("length_tokens") is not None


def quotas(sizes: Mapping[int, int], wanted: int, rng: random.Random) -> dict[int, int]:
    """How many pairs each bucket gives (``sizes``: pairs per bucket): as even as the
    buckets allow, the remainders to buckets in ``rng``'s order; at most ``wanted`` in all."""
    out = {b: 0 for b in sizes}
    order = sorted(sizes)
    rng.shuffle(order)  # one seeded order of the buckets for every remainder
    left = min(wanted, sum(sizes.values()))
    while left > 0:
        open_ = [b for b in order if out[b] < sizes[b]]
        share = left // len(open_)
        if share == 0:
            for b in open_[:left]:
                out[b] += 1
            break
        for b in open_:
            take = min(share, sizes[b] - out[b])
            out[b] += take
            left -= take
    return out


def stratified_needles(items: Sequence[tuple[str, T]], meta: Sequence[Mapping[str, Any]],
                       per_length: int, seed: int = 0) -> list[tuple[str, T]]:
    """At most ``per_length`` of ``items`` (``(key, item)``, ``meta[k]`` the needle record of
    item ``k``: ``id``, ``length_tokens``, ``tagged_position``) for each length, spread over
    its position buckets (see the module), in the items' order."""
    if per_length < 1:
        raise ValueError(f"pairs per length must be at least 1, got {per_length}")
    cells: dict[int, dict[int, list[int]]] = {}
    for k, record in enumerate(meta):
        length = int(record["length_tokens"])
        bucket = position_bucket(float(record["tagged_position"]))
        cells.setdefault(length, {}).setdefault(bucket, []).append(k)
    keep: set[int] = set()
    for length, buckets in sorted(cells.items()):
        rng = random.Random(f"{seed}:{length}")
        wanted = quotas({b: len(v) for b, v in buckets.items()}, per_length, rng)
        for bucket, members in sorted(buckets.items()):
            ordered = sorted(members, key=lambda k: (str(meta[k].get("id") or items[k][0]),
                                                     items[k][0]))
            random.Random(f"{seed}:{length}:{bucket}").shuffle(ordered)
            keep.update(ordered[:wanted[bucket]])
    return [item for k, item in enumerate(items) if k in keep]
