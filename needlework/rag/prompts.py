"""The RAG judge prompts: the project's own wording of GaRAGe's appendix B prompts
(eligibility B.2, factuality B.3, deflection B.4) and of BERGEN's LLMeval question.

The label sets and decision rules are the papers'; the wording is ours. Each prompt is
one user message (it works with any chat template) and asks for the answer format
:mod:`needlework.rag.parse` reads first (a JSON object). Texts from the data are fenced
by start and end markers so a judge can tell them from the instructions.

:data:`PROMPT_VERSION` is part of every run's identity: change it whenever a wording
changes (the call cache is keyed by the prompt text itself anyway).
"""

from __future__ import annotations

from collections.abc import Sequence

from needlework.rag.questions import RagPassage

PROMPT_VERSION = "needlework-rag-1"
ELIGIBILITY_LABELS = ("No Issues", "Minor Issue(s)", "Major Issue(s)")
FACTUALITY_LABELS = ("supported", "unsupported", "contradictory", "no_rad")
DEFLECTION_LABELS = ("missing", "attempted")
NO_PASSAGES = "(no passages)"

Messages = list[dict[str, str]]


def _block(name: str, text: str) -> str:
    return f"[{name}]\n{text}\n[End of {name.lower()}]"


def _question(question: str, question_date: str = "") -> str:
    when = f"\n(asked on {question_date})" if question_date else ""
    return _block("User question", question + when)


def eligibility_messages(question: str, answer: str, reference: str,
                         question_date: str = "") -> Messages:
    """GaRAGe's eligibility check (B.2): does the *test* answer do what the question asks,
    judged with the human *baseline* answer as calibration?"""
    content = "\n\n".join([
        "You are grading how well an AI model's answer (the test answer) follows what a user "
        "asked. A baseline answer written by a person is given to calibrate your judgement: it "
        "shows what a good answer covers, not the only right wording.",
        "First list what the question asks for, explicit requests first (mark the ones that "
        "are unusual or specific), then what the kind of task implies. Rank them by "
        "importance. Then check, for each one and independently, whether the test answer and "
        "the baseline answer meet it fully, partly or not at all, giving your reasons before "
        "each conclusion and quoting where useful. Consider whether you could be wrong.",
        "Then give your verdict on the test answer: \"No Issues\" when it meets every "
        "important request, \"Minor Issue(s)\" when it misses only details, \"Major Issue(s)\" "
        "when it fails an important request (it does not answer, answers another question, or "
        "leaves out what matters most).",
        _question(question, question_date),
        _block("Test answer", answer),
        _block("Baseline answer", reference),
        "End with one line holding exactly one of these JSON objects: "
        '{"verdict": "No Issues"}, {"verdict": "Minor Issue(s)"} or '
        '{"verdict": "Major Issue(s)"}.',
    ])
    return [{"role": "user", "content": content}]


def passages_text(passages: Sequence[RagPassage]) -> str:
    """The passages as the judge sees them, each under its own number."""
    if not passages:
        return NO_PASSAGES
    parts = []
    for p in passages:
        about = ", ".join(x for x in (p.provider, p.date) if x)
        parts.append(f"[Passage {p.number}]" + (f" ({about})" if about else "") + f"\n{p.text}")
    return "\n\n".join(parts)


def factuality_messages(question: str, passages: Sequence[RagPassage],
                        sentences: Sequence[str], question_date: str = "") -> Messages:
    """GaRAGe's factuality check (B.3): label every numbered sentence of the answer
    against the passages given."""
    numbered = "\n".join(f"{k}. {s}" for k, s in enumerate(sentences, start=1))
    content = "\n\n".join([
        "You check whether an AI model's answer is backed by the passages it was given. The "
        "answer has been split into numbered sentences. Give every sentence exactly one label:",
        "- supported: the passages entail the sentence fully; quote the excerpt that does "
        "(join several excerpts if needed).\n"
        "- unsupported: the passages do not entail it.\n"
        "- contradictory: the passages say it is false; quote the excerpt that does.\n"
        "- no_rad: the sentence needs no backing: a greeting, an opinion, a question, a "
        "disclaimer, or a statement that the passages do not allow an answer.",
        "Be strict: label a sentence supported or contradictory only when an excerpt shows it "
        "plainly, and unsupported otherwise. Do not use what you know yourself unless it is "
        "truly trivial. Citation markers such as [cite_2] are not part of the claim.",
        _question(question, question_date),
        _block("Passages", passages_text(passages)),
        _block("Answer sentences", numbered),
        "Reply with one JSON object and nothing else, with one entry per sentence, in order: "
        '{"grounding_quality": [{"sentence": 1, "label": "supported", "rationale": "...", '
        '"excerpt": "..."}, ...]} (the excerpt is null for unsupported and no_rad).',
    ])
    return [{"role": "user", "content": content}]


def deflection_messages(question: str, answer: str) -> Messages:
    """GaRAGe's deflection check (B.4): does the answer decline (missing) or try (attempted)?"""
    content = "\n\n".join([
        "You sort an AI model's answer to a question into exactly one of two groups:",
        "- missing: the answer says it is not sure, does not know, cannot find enough "
        "information, or cannot answer.\n"
        "- attempted: the answer tries to answer the question.",
        _question(question),
        _block("Model answer", answer),
        'Reply with one JSON object: {"justification": "<one or two sentences>", '
        '"grade": "missing"} or the same with "grade": "attempted".',
    ])
    return [{"role": "user", "content": content}]


def llmeval_messages(question: str, reference: str, answer: str) -> Messages:
    """BERGEN's LLMeval question (appendix G): is the generated answer correct, given the
    question and the reference answer? Answered Yes or No."""
    content = "\n\n".join([
        "You are an evaluation tool and answer only Yes or No.",
        "Below are a question, its reference answer and an answer generated by an AI model. "
        "Is the generated answer correct with respect to the question and the reference "
        "answer? Answer Yes or No.",
        _question(question),
        _block("Reference answer", reference),
        _block("Generated answer", answer),
    ])
    return [{"role": "user", "content": content}]
