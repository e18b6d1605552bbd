"""The prompt that asks a model to answer a grounding question: GaRAGe's generation setting
in the project's own wording.

Where it comes from: GaRAGe's appendix B.1 ("Example Inference Prompt for Baseline
Models"): the model gets the time the question is asked, the question and the search
results, and is told to answer from the search results only (briefly for a simple
question, with some detail for a yes/no one, reasoning over several results when the
question needs it), to cite the results inline next to the claims they support rather
than in a list at the end, and to say it cannot find enough information when the results
do not answer. What is ours:

- the citation marker is GaRAGe's data format's ``[cite_N]`` (the human answers use it,
  and attribution is scored on it), not the paper's ``%[N]%``;
- every search result carries its date and provider, and the model is told that results
  may be irrelevant or out of date and to compare their dates with the question's (the
  paper gives the dates to the annotators and measures exactly this: uRAF, RAF);
- the deflection is the dataset's own sentence (:data:`needlework.formats.garage.DEFLECTION`,
  "There is not enough grounding for an answer."), asked for verbatim, so a deflection
  can be told from an attempt without a judge;
- one user message (it works with any chat template), data fenced by start and end
  markers as in the judge prompts (:mod:`.prompts`).

:data:`GENERATION_PROMPT_VERSION` names this wording: it is recorded with every answer
set generated with it (the call cache is keyed by the prompt text itself anyway).
"""

from __future__ import annotations

from collections.abc import Sequence

from needlework.formats.garage import DEFLECTION
from needlework.rag.questions import RagPassage, RagQuestion

GENERATION_PROMPT_VERSION = "needlework-generate-1"
NO_RESULTS = "(no search results)"

Messages = list[dict[str, str]]

INSTRUCTIONS = (
    "You answer a user's question from the search results given below, and from nothing "
    "else.",
    "- Use only what the search results say. Do not add facts from your own knowledge.\n"
    "- Not every search result is relevant or current. Use the results that answer the "
    "question; compare each result's date with the date the question was asked, and when "
    "results disagree about something that changes over time, trust the most recent.\n"
    "- Answer a simple question briefly; for a yes/no question say yes or no and give the "
    "details that support it. When the answer needs several steps, find the facts in the "
    "results and reason from them.\n"
    "- Cite the search results each claim comes from right after the claim, with their "
    "markers written exactly as shown, for example [cite_2], or [cite_1][cite_3] for two. "
    "Do not list the sources at the end.\n"
    f"- If the search results do not answer the question, reply with exactly this "
    f"sentence and nothing else: {DEFLECTION}",
)


def _block(name: str, text: str) -> str:
    return f"[{name}]\n{text}\n[End of {name.lower()}]"


def search_results_text(passages: Sequence[RagPassage]) -> str:
    """The passages as the model sees them: each under its ``[cite_N]`` marker, with its
    date and provider when known."""
    if not passages:
        return NO_RESULTS
    parts = []
    for p in passages:
        about = ", ".join(x for x in (f"dated {p.date}" if p.date else "date unknown",
                                      p.provider) if x)
        parts.append(f"[cite_{p.number}] ({about})\n{p.text}")
    return "\n\n".join(parts)


def generation_messages(question: RagQuestion) -> Messages:
    """The chat messages that ask for an answer to ``question`` from its passages."""
    asked = f"\n(asked on {question.question_date})" if question.question_date else ""
    content = "\n\n".join([
        *INSTRUCTIONS,
        _block("User question", question.question + asked),
        _block("Search results", search_results_text(question.passages)),
        "Your answer:",
    ])
    return [{"role": "user", "content": content}]
