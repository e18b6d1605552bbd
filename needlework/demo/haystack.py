"""Neutral haystack paragraphs for the needle-in-a-haystack builder.

Paragraphs are composed deterministically from the sentence banks in
:mod:`needlework.demo.haystack_bank`: one opener, three or four body sentences
and sometimes a closer, all from the same topic. Topics are interleaved so that
consecutive paragraphs change subject, as in a long, wide-ranging response.
"""

from __future__ import annotations

import random

from needlework.demo.haystack_bank import TOPICS

#: Paragraphs composed per topic.
PER_TOPIC = 13
#: Word-count bounds every paragraph satisfies.
MIN_WORDS, MAX_WORDS = 40, 120
SEED = 20250114


def _topic_paragraphs(name: str, rng: random.Random) -> list[str]:
    openers, bodies, closers = TOPICS[name]
    seen: set[str] = set()
    out: list[str] = []
    attempts = 0
    while len(out) < PER_TOPIC:
        attempts += 1
        if attempts > 10_000:
            raise RuntimeError(f"cannot compose enough paragraphs for {name!r}")
        opener = openers[len(out) % len(openers)]
        chosen = rng.sample(bodies, rng.choice((3, 4)))
        parts = [opener, *chosen]
        if rng.random() < 0.6:
            parts.append(rng.choice(closers))
        text = " ".join(parts)
        while len(text.split()) > MAX_WORDS and len(parts) > 3:
            parts.pop()
            text = " ".join(parts)
        if not MIN_WORDS <= len(text.split()) <= MAX_WORDS or text in seen:
            continue
        seen.add(text)
        out.append(text)
    return out


def haystack_paragraphs() -> list[str]:
    """Return 312 distinct neutral English paragraphs of 40 to 120 words each.

    The list is identical on every call. Consecutive paragraphs come from
    different topics (24 topics, 13 paragraphs each, interleaved).
    """
    rng = random.Random(SEED)
    per_topic = [_topic_paragraphs(name, rng) for name in TOPICS]
    return [group[i] for i in range(PER_TOPIC) for group in per_topic]
