"""Built-in demo data, written for this project and generated deterministically.

- :func:`grounding_records`: GaRAGe-format grounding records (docs/benchmarks.md §1).
- :func:`preference_records`: Long-form RewardBench records (§2).
- :func:`haystack_paragraphs`: neutral paragraphs for needle-in-a-haystack builds (§3).
- :func:`rmbench_records`: RM-Bench records, 3 chosen and 3 rejected styles (§4).
- :func:`rewardbench2_records`: RewardBench 2 records, all six subsets, Ties included (§8).
- :func:`corpus_texts`: all of the above as plain strings, e.g. to train a tokenizer.

The text is in data files under ``needlework/demo/data/`` (JSON and Markdown,
described in its README.md and read by :mod:`needlework.demo.loaders`); the
modules here build the records from it and compute what can be derived (ids,
ages, citations, figures, rejected variants). Every function returns a fresh
list with the same content on every call. The companies, people and figures in
enterprise-style passages are fictional.
"""

from __future__ import annotations

from needlework.demo.corpus import corpus_texts
from needlework.demo.grounding import DEFLECTION, grounding_records
from needlework.demo.haystack import haystack_paragraphs
from needlework.demo.preference import preference_records
from needlework.demo.rewardbench2 import rewardbench2_records
from needlework.demo.rmbench import rmbench_records

__all__ = [
    "DEFLECTION",
    "corpus_texts",
    "grounding_records",
    "haystack_paragraphs",
    "preference_records",
    "rewardbench2_records",
    "rmbench_records",
]
