"""The RAG judge prompts as templates (:mod:`needlework.judges.templates`): the papers' by
default, the project's earlier wording beside them.

:data:`TEMPLATES` is the registry, a plain table: mode -> its templates, the default
first; each mode says what the answer must look like, which :mod:`needlework.rag.parse`
reads. The defaults:

- **eligibility**, **factuality**, **deflection**: GaRAGe's judge prompts, appendix B.2,
  B.3 and B.4 of the paper (Sorodoc et al., ACL 2025 Findings, arXiv 2506.07671),
  transcribed from it: its repository (amazon-science/GaRAGe) publishes the data only.
  The paper's placeholders are renamed (``query`` -> ``{question}``, ``expected_answer``
  -> ``{reference}``, ``context_document`` -> ``{passages}``). GaRAGe gives the factuality
  judge the answer whole and lets it split the sentences; here ``{sentences}`` is the
  answer one sentence per line, as :mod:`needlework.rag.sentences` splits it, so the
  judge labels the sentences the results show.
- **llmeval**: BERGEN's prompt for API judges, ``create_instruction`` in
  ``models/evaluators/openai.py`` of naver/bergen at commit
  1b0ee2c63b2e06cbcd1c81f2daccb30b1cafdbfe, system message included, quoted as it is
  sent (its ``.\\Response:`` ending too); answered Yes or No and read by BERGEN's rule.
- ``needlework``: the project's earlier wording of the same four prompts (GaRAGe's label
  sets and decision rules in our words, texts fenced by start and end lines).

Passages are shown as :func:`passages_text` writes them; the rules judge
(:mod:`needlework.rag.rules_judge`) reads every prompt of this table back
(:func:`read_prompt`), not an edited one. :data:`PROMPT_VERSION` names the earlier wording.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from needlework.judges.templates import Messages, Mode, Template, TemplateError, fields, named
from needlework.rag.questions import RagPassage

PROMPT_VERSION = "needlework-rag-1"
ELIGIBILITY_LABELS = ("No Issues", "Minor Issue(s)", "Major Issue(s)")
FACTUALITY_LABELS = ("supported", "unsupported", "contradictory", "no_rad")
DEFLECTION_LABELS = ("missing", "attempted")
NO_PASSAGES = "(no passages)"
GARAGE = "GaRAGe (Sorodoc et al., ACL 2025 Findings, arXiv 2506.07671)"
BERGEN = "naver/bergen@1b0ee2c63b2e06cbcd1c81f2daccb30b1cafdbfe"
OURS = "the project's own wording (needlework) of GaRAGe's rules"

_QUESTION = {"question": "the user's question",
             "question_date": "the date the question was asked (may be empty)",
             "question_dated": "the question, then \"(asked on DATE)\" on a line of its own "
                               "when it has a date"}
ELIGIBILITY = Mode(
    "eligibility",
    {**_QUESTION, "answer": "the model's answer (the test response)",
     "reference": "the human answer (the baseline response)"},
    required=(("answer",), ("reference",)),
    answer='JSON {"Instruction Following": "No Issues" | "Minor Issue(s)" | "Major Issue(s)"} '
           '(or "verdict" as the key; parse_eligibility)')
FACTUALITY = Mode(
    "factuality",
    {**_QUESTION, "passages": "the passages, each under its number, with its source and date",
     "sentences": "the answer, one sentence per line",
     "numbered_sentences": "the answer's sentences, one per line, numbered 1., 2., ..."},
    required=(("passages",), ("sentences", "numbered_sentences")),
    answer='JSON {"grounding_quality": [{"sentence": TEXT or NUMBER, "label": "supported" | '
           '"unsupported" | "contradictory" | "no_rad", "rationale", "excerpt"}, ...]}, one '
           "entry per sentence (parse_factuality)")
DEFLECTION = Mode(
    "deflection",
    {"question": "the user's question", "answer": "the model's answer"},
    required=(("answer",),),
    answer='JSON {"justification": ..., "grade": "missing" | "attempted"} (a trailing comma '
           "is read too; parse_deflection)")
LLMEVAL = Mode(
    "llmeval",
    {"question": "the user's question", "reference": "the human answer (BERGEN's golden answer)",
     "answer": "the model's answer (BERGEN's generated answer)"},
    required=(("reference",), ("answer",)),
    answer="Yes or No: correct when \"yes\" occurs in the lower-cased answer (BERGEN's rule; "
           "parse_llmeval)")
MODES: dict[str, Mode] = {m.name: m for m in (ELIGIBILITY, FACTUALITY, DEFLECTION, LLMEVAL)}

# -- the papers' prompts ----------------------------------------------------------------------

GARAGE_ELIGIBILITY = Template(ELIGIBILITY, "garage", "\n\n".join([
    "Your mission is to judge the response from an AI model, the **test** response, "
    "calibrating your judgement using a **baseline** response. Please use the following rubric "
    "criteria to judge the responses:",
    "<START OF RUBRICS>",
    "Your task is to analyze the test response based on the criterion of \"Instruction "
    "Following\". Start your analysis with \"Analysis\".",
    "**Instruction Following**",
    "Please first list the instructions in the user query.",
    "In general, an instruction is VERY important if it is specifically asked for in the "
    "prompt and deviates from the norm. Please highlight such specific keywords.",
    "You should also derive the task type from the user query and include the task-specific "
    "implied instructions.",
    "Sometimes, no instruction is available in the user query.",
    "It is your job to infer if the instruction is to autocomplete the user query or is asking "
    "the LLM for follow-ups.",
    "After listing the instructions, you should rank them in order of importance.",
    "After that, INDEPENDENTLY check if the test response and the baseline response meet each "
    "of the instructions.",
    "You should itemize, for each instruction, whether the response meets, partially meets, or "
    "does not meet the requirement, using reasoning.",
    "You should start reasoning first before reaching a conclusion about whether the response "
    "satisfies the requirement.",
    "Citing examples while reasoning is preferred.",
    "Reflect on your answer and consider the possibility that you are wrong.",
    "If you are wrong, explain clearly what needs to be clarified, improved, or changed in the "
    "rubric criteria and guidelines.",
    "In the end, express your final verdict as one of the following three json objects:",
    '{"Instruction Following": "No Issues"}',
    '{"Instruction Following": "Minor Issue(s)"}',
    '{"Instruction Following": "Major Issue(s)"}',
    "<END OF RUBRICS>",
    "# Your task",
    "## User query",
    "<|begin_of_query|>", "{question}", "<|end_of_query|>",
    "## Test Response:",
    "<|begin_of_test_response|>", "{answer}", "<|end_of_test_response|>",
    "## Baseline Response:",
    "<|begin_of_baseline_response|>", "{reference}", "<|end_of_baseline_response|>",
    "Please write your analysis and final verdict for the test response."]),
    source=f"{GARAGE}, appendix B.2, transcribed")
GARAGE_FACTUALITY = Template(FACTUALITY, "garage", "\n\n".join([
    "You are a helpful and harmless AI assistant. You will be provided with a textual context "
    "and a model-generated response. Your task is to analyze the response sentence by sentence "
    "and classify each sentence according to its relationship with the provided context.",
    "**Instructions:**",
    "- Decompose the response into individual sentences.\n"
    "- For each sentence, assign one of the following labels:\n"
    "  - **supported**: The sentence is entailed by the given context. Provide a supporting "
    "excerpt from the context. The supporting excerpt must *fully* entail the sentence. If you "
    "need to cite multiple supporting excerpts, simply concatenate them.\n"
    "  - **unsupported**: The sentence is not entailed by the given context. No excerpt is "
    "needed for this label.\n"
    "  - **contradictory**: The sentence is falsified by the given context. Provide a "
    "contradicting excerpt from the context.\n"
    "  - **no_rad**: The sentence does not require factual attribution (e.g., opinions, "
    "greetings, questions, disclaimers). No excerpt is needed for this label.\n"
    "- For each label, provide a short rationale explaining your decision. The rationale "
    "should be separate from the excerpt.\n"
    "- Be very strict with your 'supported' and 'contradictory' decisions. Unless you can find "
    "straightforward, indisputable evidence excerpts in the context that a sentence is "
    "'supported' or 'contradictory', consider it 'unsupported'. You should not employ world "
    "knowledge unless it is truly trivial.",
    "**Input Format:**",
    "The input will consist of two parts, clearly separated:",
    "**Context:** The textual context used to generate the response.\n"
    "**Response:** The model-generated response to be analyzed.",
    "**Output Format:**",
    "Your output should be in json format as follows:",
    "The key should be \"grounding_quality\" and the value should be a list of json objects "
    "with an object for each sentence in the response, containing the following fields:",
    "**\"sentence\"**: The sentence being analyzed.\n"
    "**\"label\"**: One of 'supported', 'unsupported', 'contradictory', or 'no_rad'.\n"
    "**\"rationale\"**: A brief explanation for the assigned label.\n"
    "**\"excerpt\"**: A relevant excerpt from the context. Only required for 'supported' and "
    "'contradictory' labels.",
    "**Example:**",
    "**Input:**",
    "Context: Apples are red fruits. Bananas are yellow fruits.\n"
    "Response: Apples are red. Bananas are green. Bananas are cheaper than apples. Enjoy your "
    "fruit!",
    "**Output:**",
    '{ "grounding_quality":\n'
    '  [ { "sentence": "Apples are red.", "label": "supported", "rationale": "The context '
    'explicitly states that apples are red.", "excerpt": "Apples are red fruits." },\n'
    '    { "sentence": "Bananas are green.", "label": "contradictory", "rationale": "The '
    'context states that bananas are yellow, not green.", "excerpt": "Bananas are yellow '
    'fruits." },\n'
    '    { "sentence": "Bananas are cheaper than apples.", "label": "unsupported", '
    '"rationale": "The context does not mention the price of bananas or apples.", "excerpt": '
    "null },\n"
    '    { "sentence": "Enjoy your fruit!", "label": "no_rad", "rationale": "This is a general '
    'expression and does not require factual attribution.", "excerpt": null } ]\n'
    "}",
    "Now, please analyze the following context and response:",
    "**User Query:** {question}",
    "**Context:** {passages}",
    "**Response:** {sentences}"]),
    source=f"{GARAGE}, appendix B.3, transcribed; the response one sentence per line")
GARAGE_DEFLECTION = Template(DEFLECTION, "garage", "\n\n".join([
    "You are a human expert in analyzing responses to questions given by a model.",
    "Your task is to assign the response into exactly one of the following categories:",
    "- **missing**: the response indicates that it is not sure, does not know the answer, or "
    "states that it cannot provide an answer.\n"
    "- **attempted**: the response attempts to answer the question.",
    "**QUESTION:** {question}",
    "**MODEL RESPONSE:** {answer}",
    "**CATEGORY:**",
    "Your response should be in json format as follows:",
    "{\n"
    '  "justification": (Explain why the MODEL RESPONSE is missing or attempted. Use one or two '
    "sentences maximum. Keep the answer as concise as possible.)\n"
    '  "grade": (missing or attempted),\n'
    "}"]),
    source=f"{GARAGE}, appendix B.4, transcribed")
BERGEN_LLMEVAL = Template(
    LLMEVAL, "bergen",
    "Here is a question, a golden answer and an AI-generated answer. Can you judge whether the "
    "AI-generated answer is correct according to the question and golden answer, simply answer "
    "{Yes} or {No}.\n Question: {question}. \ngolden answer: {reference} \n Generated answer: "
    "{answer}.\\Response:",
    system="You are an evaluation tool. Just answer by {Yes} or {No}.",
    source=f"BERGEN, {BERGEN}, models/evaluators/openai.py, create_instruction")

# -- the project's earlier wording ------------------------------------------------------------


def _block(name: str, text: str) -> str:
    return f"[{name}]\n{text}\n[End of {name.lower()}]"


NEEDLEWORK_ELIGIBILITY = Template(ELIGIBILITY, "needlework", "\n\n".join([
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
    _block("User question", "{question_dated}"),
    _block("Test answer", "{answer}"),
    _block("Baseline answer", "{reference}"),
    "End with one line holding exactly one of these JSON objects: "
    '{"verdict": "No Issues"}, {"verdict": "Minor Issue(s)"} or '
    '{"verdict": "Major Issue(s)"}.']), source=OURS)
NEEDLEWORK_FACTUALITY = Template(FACTUALITY, "needlework", "\n\n".join([
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
    _block("User question", "{question_dated}"),
    _block("Passages", "{passages}"),
    _block("Answer sentences", "{numbered_sentences}"),
    "Reply with one JSON object and nothing else, with one entry per sentence, in order: "
    '{"grounding_quality": [{"sentence": 1, "label": "supported", "rationale": "...", '
    '"excerpt": "..."}, ...]} (the excerpt is null for unsupported and no_rad).']), source=OURS)
NEEDLEWORK_DEFLECTION = Template(DEFLECTION, "needlework", "\n\n".join([
    "You sort an AI model's answer to a question into exactly one of two groups:",
    "- missing: the answer says it is not sure, does not know, cannot find enough "
    "information, or cannot answer.\n"
    "- attempted: the answer tries to answer the question.",
    _block("User question", "{question}"),
    _block("Model answer", "{answer}"),
    'Reply with one JSON object: {"justification": "<one or two sentences>", '
    '"grade": "missing"} or the same with "grade": "attempted".']), source=OURS)
NEEDLEWORK_LLMEVAL = Template(LLMEVAL, "needlework", "\n\n".join([
    "You are an evaluation tool and answer only Yes or No.",
    "Below are a question, its reference answer and an answer generated by an AI model. "
    "Is the generated answer correct with respect to the question and the reference "
    "answer? Answer Yes or No.",
    _block("User question", "{question}"),
    _block("Reference answer", "{reference}"),
    _block("Generated answer", "{answer}")]),
    source="the project's own wording (needlework) of BERGEN's LLMeval question")

TEMPLATES: dict[str, tuple[Template, ...]] = {
    "eligibility": (GARAGE_ELIGIBILITY, NEEDLEWORK_ELIGIBILITY),
    "factuality": (GARAGE_FACTUALITY, NEEDLEWORK_FACTUALITY),
    "deflection": (GARAGE_DEFLECTION, NEEDLEWORK_DEFLECTION),
    "llmeval": (BERGEN_LLMEVAL, NEEDLEWORK_LLMEVAL),
}


def template(mode: str, name: str | None = None) -> Template:
    """The RAG template ``name`` of ``mode`` (the paper's, the default, when ``None``)."""
    return named(TEMPLATES, mode, name)


def template_set(chosen: Mapping[str, Template] | None = None) -> dict[str, Template]:
    """A template for every RAG mode: ``chosen``'s, the default for the others. A template
    given under another mode's name is refused."""
    out = {mode: templates[0] for mode, templates in TEMPLATES.items()}
    for mode, t in (chosen or {}).items():
        if mode not in out:
            raise TemplateError(f"No RAG prompt mode named {mode!r} (known: {', '.join(out)}).")
        if t.mode.name != mode:
            raise TemplateError(f"A {t.mode.name} template cannot ask the {mode} prompt.")
        out[mode] = t
    return out


# -- rendering ---------------------------------------------------------------------------------


def _dated(question: str, question_date: str) -> str:
    return question + (f"\n(asked on {question_date})" if question_date else "")


def _use(chosen: Template | None, mode: str) -> Template:
    return template_set({mode: chosen} if chosen is not None else None)[mode]


def eligibility_messages(question: str, answer: str, reference: str, question_date: str = "",
                         template: Template | None = None) -> Messages:
    """GaRAGe's eligibility check (B.2): does the *test* answer do what the question asks,
    judged with the human *baseline* answer as calibration?"""
    return _use(template, "eligibility").messages({
        "question": question, "question_date": question_date,
        "question_dated": _dated(question, question_date), "answer": answer,
        "reference": reference})


def passages_text(passages: Sequence[RagPassage]) -> str:
    """The passages as the judge sees them, each under its own number."""
    if not passages:
        return NO_PASSAGES
    parts = []
    for p in passages:
        about = ", ".join(x for x in (p.provider, p.date) if x)
        parts.append(f"[Passage {p.number}]" + (f" ({about})" if about else "") + f"\n{p.text}")
    return "\n\n".join(parts)


def factuality_messages(question: str, passages: Sequence[RagPassage], sentences: Sequence[str],
                        question_date: str = "", template: Template | None = None) -> Messages:
    """GaRAGe's factuality check (B.3): label every sentence of the answer against the
    passages given (``{sentences}``: one per line, its inner line breaks made spaces)."""
    return _use(template, "factuality").messages({
        "question": question, "question_date": question_date,
        "question_dated": _dated(question, question_date),
        "passages": passages_text(passages),
        "sentences": "\n".join(" ".join(s.split()) for s in sentences),
        "numbered_sentences": "\n".join(f"{k}. {s}" for k, s in enumerate(sentences, start=1))})


def deflection_messages(question: str, answer: str, template: Template | None = None) -> Messages:
    """GaRAGe's deflection check (B.4): does the answer decline (missing) or try (attempted)?"""
    return _use(template, "deflection").messages({"question": question, "answer": answer})


def llmeval_messages(question: str, reference: str, answer: str,
                     template: Template | None = None) -> Messages:
    """BERGEN's LLMeval question: is the generated answer correct, given the question and
    the reference answer? Answered Yes or No."""
    return _use(template, "llmeval").messages({"question": question, "reference": reference,
                                               "answer": answer})


def read_prompt(messages: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, str]] | None:
    """``(mode, placeholder values)`` of the template of :data:`TEMPLATES` that renders
    ``messages``, or ``None`` (an edited template, or another prompt)."""
    for mode, templates in TEMPLATES.items():
        for t in templates:
            found = fields(t, messages)
            if found is not None:
                return mode, found
    return None
