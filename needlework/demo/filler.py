"""Padding for the "excessive verbosity" rejected responses.

The padding wraps the chosen content in a long preamble, restatements after
each paragraph and a rambling conclusion, so the flaw is visible in a diff view.
The sentences are in ``data/filler.json``.
"""

from __future__ import annotations

import random
from typing import TypedDict

from needlework.demo.loaders import load_json


class Filler(TypedDict):
    """Padding sentences: one opener, restatements between paragraphs, one closer."""

    openers: list[str]
    restatements: list[str]
    closers: list[str]


def filler_sentences() -> Filler:
    """The padding sentences of ``data/filler.json``."""
    return load_json("filler.json", Filler)


def pad_verbosely(text: str, seed: str) -> str:
    """Return ``text`` buried in padding (a deterministic function of ``seed``)."""
    filler = filler_sentences()
    rng = random.Random(seed)
    paragraphs = text.split("\n\n")
    out = [rng.choice(filler["openers"])]
    restatements = filler["restatements"][:]
    rng.shuffle(restatements)
    for i, paragraph in enumerate(paragraphs):
        out.append(paragraph)
        if i < len(paragraphs) - 1 and len(paragraph.split()) > 12:
            out.append(restatements[i % len(restatements)])
    out.append(rng.choice(filler["closers"]))
    return "\n\n".join(out)
