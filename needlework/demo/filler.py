"""Padding sentences for the "excessive verbosity" rejected responses.

The padding wraps the chosen content in a long preamble, restatements after
each paragraph and a rambling conclusion, so the flaw is visible in a diff view.
"""

from __future__ import annotations

import random

OPENERS = [
    "Great question! This is something that a lot of people wonder about, and it is "
    "definitely worth taking the time to think it through carefully before jumping to any "
    "conclusions, because there are quite a few different aspects to consider.",
    "Thank you so much for asking this. Before I answer, it is important to say that there "
    "are many different ways to look at this, and the right answer can depend on a wide "
    "range of factors, some of which may or may not apply to your particular situation.",
    "That is a really interesting thing to ask about, and I am glad you did, because it "
    "touches on a number of points that are worth unpacking one at a time, slowly and "
    "carefully, so that nothing important gets missed along the way.",
    "Absolutely, I would be happy to help with this. Let me start by saying that this is a "
    "topic with many layers, and in order to give a complete and thorough answer it makes "
    "sense to begin with some general context before getting into the details.",
]

RESTATEMENTS = [
    "In other words, to put it another way, the point above is an important one and it is "
    "well worth keeping in mind as we continue.",
    "To say the same thing slightly differently, this is a key consideration that really "
    "should not be overlooked under any circumstances.",
    "It is worth pausing here for a moment to emphasise that this point really does matter, "
    "as was mentioned just above.",
    "As noted, and as is certainly worth repeating, this is one of the central ideas to take "
    "away from all of this.",
    "Again, this is important, so it bears repeating once more before moving on to the next "
    "point in the discussion.",
    "So, just to recap what was said in the previous paragraph: the details above matter, "
    "and they matter quite a lot.",
    "Put simply, and without going into too much further detail, this is something to keep "
    "firmly in mind.",
]

CLOSERS = [
    "In conclusion, to sum up everything that has been said above, there are several points "
    "to consider, each of them matters in its own way, and taking all of them into account "
    "together is the best way to reach a good result. I hope this helps, and please do not "
    "hesitate to ask if you have any further questions, comments or concerns about any of "
    "the points mentioned above, or indeed about anything else at all.",
    "To wrap up this rather long answer: everything mentioned above is relevant, some points "
    "are more relevant than others, and it is ultimately up to you to decide which of them "
    "apply to your situation. Of course, every situation is different, so it is always a "
    "good idea to do your own research as well. I really hope this has been useful!",
]


def pad_verbosely(text: str, seed: str) -> str:
    """Return ``text`` buried in padding (a deterministic function of ``seed``)."""
    rng = random.Random(seed)
    paragraphs = text.split("\n\n")
    out = [rng.choice(OPENERS)]
    restatements = RESTATEMENTS[:]
    rng.shuffle(restatements)
    for i, paragraph in enumerate(paragraphs):
        out.append(paragraph)
        if i < len(paragraphs) - 1 and len(paragraph.split()) > 12:
            out.append(restatements[i % len(restatements)])
    out.append(rng.choice(CLOSERS))
    return "\n\n".join(out)
