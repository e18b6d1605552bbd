"""Every answer-evaluation metric's definition, in one place: the texts the UI shows
next to each figure and docs/rag.md repeats (a test checks that the two agree).

Keys are the names the figures carry in :mod:`needlework.rag.metrics` (BERGEN's keep
BERGEN's own spelling).
"""

from __future__ import annotations

DEFINITIONS: dict[str, str] = {
    "eligibility": (
        "Share of questions whose answer the judge finds has no major issue: it compares "
        "the answer with the human answer for what the question asks and says No Issues, "
        "Minor Issue(s) or Major Issue(s) (GaRAGe B.2). Eligible = not Major."),
    "unadjusted_factuality": (
        "Share of questions whose answer is fully grounded: the answer is split into "
        "sentences and the judge labels each supported, unsupported, contradictory or "
        "no_rad (needs no attribution) against all the question's passages (GaRAGe B.3); "
        "factual when every sentence is supported or no_rad."),
    "factuality": "Share of questions whose answer is both eligible and factual (all passages).",
    "uraf": (
        "Unadjusted relevance-aware factuality: the factuality check against the passages "
        "annotated relevant and current only (ANSWER-THE-QUESTION, RELATED-INFORMATION, "
        "UNKNOWN; adjudicated labels first). An answer backed only by an irrelevant or "
        "outdated passage fails it."),
    "raf": "Relevance-aware factuality: share of questions whose answer is eligible and "
           "factual against the relevant passages only.",
    "deflection_tpr": (
        "Deflection true-positive rate: among the questions that need a deflection (no "
        "passage is ANSWER-THE-QUESTION), the share whose answer the judge grades missing "
        "(it says it cannot answer) rather than attempted (GaRAGe B.4)."),
    "deflection_fpr": (
        "Deflection false-positive rate: among the questions the passages can answer, the "
        "share whose answer declines (graded missing; an unreadable grade counts here too)."),
    "llmeval": (
        "LLMeval (BERGEN): the judge sees the question, the human answer and the model "
        "answer and is asked whether the answer is correct; 1 when its reply contains "
        "'yes', else 0 (BERGEN's rule for API judges), averaged over questions."),
    "M": "Match (BERGEN): 1 when the normalised reference occurs inside the normalised "
         "answer (lower case, no punctuation, no a/an/the, single spaces).",
    "EM": "Exact match (BERGEN): 1 when the normalised answer equals the normalised reference.",
    "F1": "Token F1 (BERGEN): harmonic mean of token precision and recall over the words "
          "the normalised answer and reference share (0 when none).",
    "Precision": "Token precision (BERGEN): shared words / words of the normalised answer.",
    "Recall": "Token recall (BERGEN): shared words / words of the normalised reference.",
    "Recall_char3gram": "Character-3-gram recall (BERGEN): the token recall with every "
                        "word cut into its overlapping 3-letter pieces (shorter words whole).",
    "Rouge-1": "ROUGE-1 F-measure of the `rouge` package (unigram overlap), as BERGEN "
               "takes it; 0 for an empty answer.",
    "Rouge-2": "ROUGE-2 F-measure of the `rouge` package (bigram overlap), as BERGEN takes it.",
    "Rouge-L": "ROUGE-L F-measure of the `rouge` package (longest common subsequence), "
               "as BERGEN takes it.",
    "attribution_precision": "Attribution precision (GaRAGe): passages cited by both the "
                             "answer and the human answer / passages the answer cites.",
    "attribution_recall": "Attribution recall (GaRAGe): passages cited by both / passages "
                          "the human answer cites.",
    "attribution_f1": "Attribution F1 (GaRAGe): harmonic mean of attribution precision and recall.",
}

#: Short column titles for tables and charts.
TITLES: dict[str, str] = {
    "eligibility": "Eligibility", "unadjusted_factuality": "Unadjusted factuality",
    "factuality": "Factuality", "uraf": "uRAF", "raf": "RAF",
    "deflection_tpr": "Deflection TPR", "deflection_fpr": "Deflection FPR",
    "llmeval": "LLMeval", "M": "M", "EM": "EM", "F1": "F1", "Precision": "Precision",
    "Recall": "Recall", "Recall_char3gram": "Recall (char 3-gram)", "Rouge-1": "ROUGE-1",
    "Rouge-2": "ROUGE-2", "Rouge-L": "ROUGE-L", "attribution_precision": "Attribution P",
    "attribution_recall": "Attribution R", "attribution_f1": "Attribution F1",
}

#: The sentence labels of the factuality check, with their meaning.
SENTENCE_LABELS: dict[str, str] = {
    "supported": "the passages fully entail the sentence (the judge quotes the excerpt)",
    "unsupported": "the passages do not entail it",
    "contradictory": "the passages say it is false (the judge quotes the excerpt)",
    "no_rad": "needs no attribution: a greeting, an opinion, a disclaimer, a deflection",
}


def definition(name: str) -> str:
    """The definition of metric ``name`` (``KeyError`` for an unknown one)."""
    return DEFINITIONS[name]
