"""Neutral haystack paragraphs for the needle-in-a-haystack builder.

Paragraphs are composed deterministically from the sentence banks of
``data/haystack_topics.md``: one opener, three or four body sentences and
sometimes a closer, all from the same topic. Topics are interleaved so that
consecutive paragraphs change subject, as in a long, wide-ranging response.
"""

from __future__ import annotations

import random
from typing import Literal, TypedDict

from needlework.demo.loaders import DemoDataError, read_text

#: The sentence banks, one ``## topic`` section each.
TOPICS_FILE = "haystack_topics.md"
#: Paragraphs composed per topic.
PER_TOPIC = 13
#: Word-count bounds every paragraph satisfies.
MIN_WORDS, MAX_WORDS = 40, 120
SEED = 20250114


class Topic(TypedDict):
    """A topic's sentences: a paragraph starts with an ``opener``, takes ``body``
    sentences in any order and may end with a ``closer``."""

    opener: list[str]
    body: list[str]
    closer: list[str]


#: The parts of a :class:`Topic`, as its keys.
PARTS: tuple[Literal["opener", "body", "closer"], ...] = ("opener", "body", "closer")


def haystack_topics() -> dict[str, Topic]:
    """The sentence banks of ``data/haystack_topics.md`` by topic, in file order."""
    return parse_topics(read_text(TOPICS_FILE), TOPICS_FILE)


def parse_topics(text: str, name: str) -> dict[str, Topic]:
    """Read sentence banks: below each ``## topic`` heading, every non-blank line is
    ``- opener: ``, ``- body: `` or ``- closer: `` followed by one sentence."""
    topics: dict[str, Topic] = {}
    current: Topic | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("## "):
            current = topics.setdefault(line[3:].strip(), {"opener": [], "body": [], "closer": []})
        elif current is not None and line.strip():
            kind, sep, sentence = line.removeprefix("- ").partition(": ")
            part = next((p for p in PARTS if p == kind), None)
            if not line.startswith("- ") or not sep or part is None or not sentence:
                raise DemoDataError(f"{name} line {number}: expected '- opener: ', "
                                    "'- body: ' or '- closer: ' and a sentence")
            current[part].append(sentence)
    return topics


def _topic_paragraphs(name: str, topic: Topic, rng: random.Random) -> list[str]:
    openers, bodies, closers = topic["opener"], topic["body"], topic["closer"]
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
    per_topic = [_topic_paragraphs(name, topic, rng) for name, topic in haystack_topics().items()]
    return [group[i] for i in range(PER_TOPIC) for group in per_topic]
