"""The demo's output is byte-identical to what it was when its text moved into data files.

Each part of what the demo produces is serialised to bytes in a fixed way and
hashed; the expected digests were recorded from the code as it stood before the
text moved out of Python literals (issue 12, point 3). A failure names the part
that changed. If a change to the demo text is intended, record the new digest
(``python -m pytest tests/test_demo_identity.py -q`` prints the actual one) and
say so in the commit.

Parts:

- ``grounding``, ``preference``: the records of :mod:`needlework.demo`, and the
  JSONL bytes ``seed_demo`` imports (GaRAGe and Long-form RewardBench dumps);
- ``seeded``: a fresh database seeded with :func:`needlework.seeding.demo.seed_demo`,
  every dataset's name, kind and format and every item's key, position, subset,
  title and record, in order;
- ``haystack``, ``corpus``: the haystack paragraphs and the flat corpus, which
  are also the demo model's training text (``needlework.rewards.demo_model``
  trains its tokenizer and model on exactly these two lists);
- ``demo_haystacks``, ``needles``: the needle lab's demo haystacks and a needle
  build from them (safety and factuality, estimate token counter, so the result
  does not depend on whether tiktoken's encoding is available).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

import store
from needlework import demo, tokens
from needlework.formats import garage, lfrb
from needlework.needle import builder, inputs
from needlework.seeding.demo import seed_demo
from store.datasets import iter_items, list_datasets

ESTIMATE = builder.TokenCounter(tokens.estimate, "estimate")

#: Recorded from commit 550e560 (the demo text still written as Python literals).
EXPECTED = {
    "grounding": "2012bf27a5761fd3bbd6d0043b7433601c1085b3feaf64359989199fc3295196",
    "preference": "265b126750b217aa98c0c07a8ade07021e751bd9ca911d527d37bd266108f7eb",
    "seeded": "c975c91657f738599e2f41d1e3cc39bb573a0601dd719009f17efb3798d99870",
    "haystack": "e641bdd95f226ba255ee48f55f568d1ae4699b598218e98c1701133de5c66a18",
    "corpus": "f4b143fcbceb6b9e59fd60fd3114b36b826647215b1027adca2bc7e44f81aeca",
    "demo_haystacks": "96a7167e6c6cdd7fd0e55b9b4315c5095b385709d4a6e16a1696212ea628c7ce",
    "needles": "f81265a9011a920383879b605325b0155d96c0f76ba6a7b8a7ebdd9859a7241d",
    "rmbench": "13819314dbad07abdc710157498823446da83a389c65e96be39c468d7efd8c47",  # recorded when the RM-Bench demo set was added (issue 48)
    "rewardbench2": "788d40f00eef1167e8ff54b5156b78dce11322c16df3598680f4c8c60e5abf10",  # recorded when the RewardBench 2 demo set was added (issue 62)
}


def digest(value: Any) -> str:
    """sha256 of ``value`` as canonical JSON (key order kept, UTF-8, no ASCII escaping)."""
    data = value if isinstance(value, bytes) else json.dumps(
        value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def seeded_dump(names: tuple[str, ...] = ("demo-grounding", "demo-preference")) -> list[Any]:
    """The seeded datasets ``names`` (those of the recorded digest; the RM-Bench demo set,
    added later, has its own part)."""
    db = store.connect(":memory:")
    seed_demo(db)
    out: list[Any] = []
    for row in sorted(list_datasets(db), key=lambda r: r["name"]):
        if row["name"] not in names:
            continue
        out.append([row["name"], row["kind"], row["format"]])
        out.extend([i["key"], i["position"], i["subset"], i["title"], i["record"]]
                   for i in iter_items(db, row["name"]))
    return out


def needle_dump() -> list[Any]:
    hays = inputs.demo_haystacks(3, 4000, counter=tokens.estimate)
    out: list[Any] = []
    for kind in builder.KINDS:
        options = builder.BuildOptions(kind=kind, lengths=(1000, 2000, 4000), positions=5)
        result = builder.build_needles(hays, inputs.builtin_pairs(kind), options, ESTIMATE)
        out.append(result.records)
    return out


PARTS = {
    "grounding": lambda: [demo.grounding_records(),
                          garage.dump(demo.grounding_records()), demo.DEFLECTION],
    "preference": lambda: [demo.preference_records(), lfrb.dump(demo.preference_records())],
    "seeded": seeded_dump,
    "haystack": demo.haystack_paragraphs,
    "corpus": demo.corpus_texts,
    "demo_haystacks": lambda: [[h.id, h.prompt, h.text] for h in
                               inputs.demo_haystacks(10, 8000, counter=tokens.estimate)],
    "needles": needle_dump,
    "rmbench": lambda: [demo.rmbench_records(), seeded_dump(("demo-rmbench",))],
    "rewardbench2": lambda: [demo.rewardbench2_records(), seeded_dump(("demo-rewardbench2",))],
}


@pytest.mark.parametrize("part", list(PARTS))
def test_demo_output_is_unchanged(part):
    actual = digest(PARTS[part]())
    assert actual == EXPECTED[part], f"demo part {part!r} changed: sha256 is now {actual}"


def test_seeded_database_is_not_empty():
    """The seeded dump really holds the two demo datasets (a guard on the hash above)."""
    dump = seeded_dump()
    assert ["demo-grounding", "grounding", "garage"] in dump
    assert ["demo-preference", "preference", "lfrb"] in dump
    assert len(dump) == 2 + len(demo.grounding_records()) + len(demo.preference_records())
