"""The rules judge: GaRAGe's RAG prompts answered by fixed word-overlap rules, not an LLM.

The demo LLM judge (:mod:`needlework.judges.demo`) is a tiny model trained on the
selection prompt; it cannot read several passages and label sentences. So that the
RAG answers page shows every figure offline, this module answers the four RAG prompts
of :mod:`needlework.rag.prompts` (GaRAGe's and BERGEN's, or the project's wording; not an
edited template) with rules anyone can check by hand. It is served over
the same OpenAI-compatible HTTP protocol as any judge (:mod:`needlework.rag.rules_server`),
so a run with it goes through the judge engine, its cache and its parsers unchanged.

It is a **baseline**, never a stand-in for a real judge: it sees words, not meaning. It
misses paraphrase and arithmetic (a sum of two cited figures is "unsupported") and
takes a sentence that repeats a passage's words with a changed number or a negation
for a contradiction. The rules, on lower-cased words with citation markers removed
and a short list of function words left out (:data:`STOPWORDS`):

- **Deflection** (:func:`deflection`): ``missing`` when one of :data:`DECLINES` occurs
  in an answer of at most two sentences, else ``attempted``.
- **Factuality** (:func:`sentence_label`), per sentence:
  ``no_rad`` when it makes no claim (fewer than two content words, a question, a
  courtesy such as "I hope this helps", or a declining sentence);
  ``contradictory`` when the passage sentence sharing most of its content words shares
  at least :data:`CLOSE` of them but states another number where the answer has one
  the passages do not, or negates where the answer does not (or the reverse);
  ``supported`` when at least :data:`SUPPORTED` of its content words occur in the
  passages and every number it states occurs there too;
  ``unsupported`` otherwise. The excerpt is the passage sentence sharing most words.
- **Eligibility** (:func:`eligibility`), the answer against the human answer:
  ``Major Issue(s)`` when one declines and the other does not, or when they open with
  opposite yes/no; else by the share of the human answer's content words the answer
  has (its recall): at least :data:`NO_ISSUES` ``No Issues``, at least :data:`MINOR`
  ``Minor Issue(s)``, below that ``Major Issue(s)``.
- **LLMeval** (:func:`llmeval`): ``Yes`` when the eligibility rule says ``No Issues``,
  else ``No``.

It also answers the suggestion prompts of :mod:`needlework.suggest.prompts`, so that the
demo data gets suggested labels offline:

- **Passage label** (:func:`passage_label`): ``irrelevant`` when the passage has fewer
  than :data:`RELEVANT` of the question's content words; else ``UNKNOWN`` when the
  passage has neither a date nor an age, ``OUTDATED`` when it is more than
  :data:`OLD_YEARS` years older than the question, ``ANSWER-THE-QUESTION`` when it has at
  least :data:`ANSWERS` of the question's content words, ``RELATED-INFORMATION`` otherwise.
- **Dimensions** (:func:`question_dimensions`): a valid question without a false premise,
  seeking facts; time-sensitive and fast-changing when it names *latest*, *current*,
  *today*, *now*, *recent* or *this year*; its complexity from a few cue words
  (*compare*/*versus*/*difference between*: Comparison; *how many*/*total*/*average*:
  Aggregation; *list*/*which ... are*: Set; else Simple). Popularity is not guessed.

Any other prompt (selection, scoring) gets a sentence saying what this judge answers,
which the parsers read as an invalid answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from needlework.figures.stats_text import percent
from needlework.rag.prompts import read_prompt
from needlework.rag.sentences import split_sentences

SUPPORTED = 0.8
CLOSE = 0.5
NO_ISSUES = 0.5
MINOR = 0.3
RELEVANT = 0.25
ANSWERS = 0.5
OLD_YEARS = 2
STOPWORDS = frozenset("""
a an the and or but if then so of to in on at by for with from as into about over under
is are was were be been being am do does did has have had having it its this that these
those there their they them he she his her we our you your i me my which who whom whose
what when where why how than also very just can could would should will shall may might
must not no yes between while whereas after before during per each both all any some
such own same other more most only up down out off again further once here
""".split())
NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "cannot", "without", "neither"})
#: Phrases by which an answer declines to answer (lower case, after the contraction
#: "n't" is read as " not").
DECLINES = ("not enough information", "not enough grounding", "not enough evidence",
            "could not find", "can not find", "cannot find", "unable to find",
            "unable to answer", "cannot answer", "can not answer", "do not know",
            "not sure", "no information", "not able to answer", "insufficient information")
COURTESIES = ("i hope this helps", "hope this helps", "let me know", "happy to help",
              "glad to help", "feel free to ask")
ONLY_RAG = ("This rules judge answers the RAG evaluation prompts (eligibility, "
            "factuality, deflection, LLMeval) and the suggestion prompts (passage label, "
            "dimensions) only.")
FAST = ("latest", "current", "currently", "today", "now", "recent", "recently", "this year")

_CITE = re.compile(r"\[(?:cite_)?\d+\]")
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[a-z]+")
_NUMBER = re.compile(r"^\d")


def _block(prompt: str, name: str) -> str | None:
    """The text of the ``[name]`` block of a prompt (:mod:`needlework.rag.prompts`)."""
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)\n\[End of {re.escape(name.lower())}\]",
                      prompt, re.S | re.M)
    return match.group(1) if match else None


def _plain(text: str) -> str:
    return _CITE.sub(" ", text).lower().replace("n't", " not").replace("’", "'")


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers of ``text``, citation markers left out; a number
    loses its thousands commas (``299,792`` is ``299792``) and a final point."""
    out = []
    for token in _TOKEN.findall(_plain(text)):
        if _NUMBER.match(token):
            token = token.replace(",", "").rstrip(".")
        out.append(token)
    return out


def content(text: str) -> set[str]:
    """The content words of ``text``: :func:`tokens` less :data:`STOPWORDS`."""
    return {t for t in tokens(text) if t not in STOPWORDS}


def numbers(text: str) -> set[str]:
    """The numbers ``text`` states."""
    return {t for t in tokens(text) if _NUMBER.match(t)}


def declines(text: str) -> bool:
    """Whether ``text`` says it cannot answer (one of :data:`DECLINES`)."""
    plain = " ".join(_plain(text).split())
    return any(phrase in plain for phrase in DECLINES)


def _negated(text: str) -> bool:
    return bool(NEGATIONS & set(tokens(text)))


def deflection(answer: str) -> str:
    """``missing`` or ``attempted`` (see the module docstring)."""
    return "missing" if declines(answer) and len(split_sentences(answer)) <= 2 else "attempted"


@dataclass(frozen=True)
class SentenceVerdict:
    label: str
    rationale: str
    excerpt: str | None = None


@dataclass(frozen=True)
class _Passages:
    """The passages' text read once for all the sentences of a prompt."""

    words: frozenset[str]
    numbers: frozenset[str]
    sentences: tuple[tuple[str, frozenset[str]], ...]  # (sentence, its content words)


@lru_cache(maxsize=8)
def _read_passages(passages: str) -> _Passages:
    lines = [line for line in passages.splitlines() if not re.match(r"^\[Passage \d+\]", line)]
    sentences = tuple((s.text, frozenset(content(s.text)))
                      for s in split_sentences("\n".join(lines)) if s.text.strip())
    return _Passages(frozenset(content(passages)), frozenset(numbers(passages)), sentences)


def sentence_label(sentence: str, passages: str) -> SentenceVerdict:
    """One sentence of an answer against the passages' text (see the module docstring)."""
    words = content(sentence)
    lowered = " ".join(_plain(sentence).split())
    if len(words) < 2 or sentence.rstrip().endswith("?"):
        return SentenceVerdict("no_rad", "rule: no claim (fewer than two content words, or a question)")
    if any(c in lowered for c in COURTESIES):
        return SentenceVerdict("no_rad", "rule: a courtesy, no claim")
    if declines(sentence):
        return SentenceVerdict("no_rad", "rule: the sentence declines to answer")
    read = _read_passages(passages)
    shared = len(words & read.words) / len(words)
    missing_numbers = numbers(sentence) - read.numbers
    best, best_share = None, 0.0
    for candidate, candidate_words in read.sentences:
        share = len(words & candidate_words) / len(words)
        if share > best_share:
            best, best_share = candidate, share
    if best is not None and best_share >= CLOSE:
        other_number = missing_numbers and numbers(best)
        flipped = _negated(sentence) != _negated(best)
        if other_number or flipped:
            why = (f"states {', '.join(sorted(missing_numbers))} where the passage says "
                   f"{', '.join(sorted(numbers(best)))}" if other_number
                   else "negates what the passage says" if _negated(sentence)
                   else "the passage negates it")
            return SentenceVerdict("contradictory", f"rule: close to a passage sentence "
                                   f"({percent(best_share, digits=0, space=False)} of its words) but {why}", best)
    if shared >= SUPPORTED and not missing_numbers:
        return SentenceVerdict("supported", f"rule: {percent(shared, digits=0, space=False)} of its content words and all its "
                               "numbers are in the passages", best)
    reason = (f"numbers not in the passages: {', '.join(sorted(missing_numbers))}"
              if missing_numbers and shared >= SUPPORTED
              else f"only {percent(shared, digits=0, space=False)} of its content words are in the passages")
    return SentenceVerdict("unsupported", f"rule: {reason}")


def _polarity(text: str) -> str | None:
    first = tokens(text)[:1]
    return first[0] if first and first[0] in ("yes", "no") else None


def recall(answer: str, reference: str) -> float:
    """The share of the reference's content words that the answer has (1.0 for none)."""
    wanted = content(reference)
    return len(wanted & content(answer)) / len(wanted) if wanted else 1.0


def eligibility(answer: str, reference: str) -> tuple[str, str]:
    """``(label, reason)``: ``No Issues``, ``Minor Issue(s)`` or ``Major Issue(s)``."""
    if declines(answer) != declines(reference):
        return "Major Issue(s)", ("rule: the answer declines and the human answer does not"
                                  if declines(answer) else
                                  "rule: the human answer declines and the answer does not")
    if declines(answer):
        return "No Issues", "rule: both decline"
    mine, theirs = _polarity(answer), _polarity(reference)
    if mine and theirs and mine != theirs:
        return "Major Issue(s)", f"rule: the answer opens with {mine!r}, the human answer with {theirs!r}"
    share = recall(answer, reference)
    label = ("No Issues" if share >= NO_ISSUES else
             "Minor Issue(s)" if share >= MINOR else "Major Issue(s)")
    return label, f"rule: the answer has {percent(share, digits=0, space=False)} of the human answer's content words"


def llmeval(answer: str, reference: str) -> str:
    """``Yes`` when :func:`eligibility` finds no issue, else ``No``."""
    return "Yes" if eligibility(answer, reference)[0] == "No Issues" else "No"


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def passage_label(question: str, asked: str, passage: str, dated: str, aged: bool) -> tuple[str, str]:
    """``(label, reason)`` for one passage (see the module docstring); ``asked`` and
    ``dated``: the question's and the passage's days (``""`` when unknown); ``aged``:
    whether the passage has an age."""
    share = recall(passage, question)
    if share < RELEVANT:
        return "irrelevant", f"rule: the passage has {percent(share, digits=0, space=False)} of the question's content words"
    start, end = _day(dated), _day(asked)
    if start is None and not aged:
        return "UNKNOWN", "rule: relevant, and the passage has no date or age"
    if start is not None and end is not None and (end - start).days > 365 * OLD_YEARS:
        return "OUTDATED", f"rule: relevant, and over {OLD_YEARS} years older than the question"
    if share >= ANSWERS:
        return "ANSWER-THE-QUESTION", f"rule: the passage has {percent(share, digits=0, space=False)} of the question's content words"
    return "RELATED-INFORMATION", f"rule: the passage has {percent(share, digits=0, space=False)} of the question's content words"


def question_dimensions(question: str) -> dict[str, str]:
    """The dimensions the rules give a question (see the module docstring)."""
    plain = " " + " ".join(tokens(question)) + " "
    fast = any(f" {cue} " in plain for cue in FAST)
    if any(f" {cue} " in plain for cue in ("compare", "versus", "vs", "difference between")):
        complexity = "Comparison"
    elif any(f" {cue} " in plain for cue in ("how many", "how much", "total", "average", "sum")):
        complexity = "Aggregation"
    elif plain.startswith(" list ") or (plain.startswith(" which ") and " are " in plain):
        complexity = "Set"
    else:
        complexity = "Simple"
    return {"question_valid": "YES", "question_false_premise": "NO", "question_seeking": "NO",
            "question_sensitive": "YES" if fast else "NO",
            "question_type": "FAST-CHANGING" if fast else "SLOW-CHANGING",
            "question_complexity": complexity}


_ASKED = re.compile(r"\n\(asked on ([^)]*)\)$")
_DATED = re.compile(r"^\(passage \d+(?:, dated ([0-9-]+))?(, [^)]* old when)?")


def _numbered(text: str) -> list[str]:
    return [re.sub(r"^\d+\.\s", "", line, count=1) for line in text.splitlines()
            if re.match(r"^\d+\.\s", line)]


def reply(messages: Sequence[dict[str, str]]) -> str:
    """The rules judge's answer to a chat: a RAG prompt of :data:`needlework.rag.prompts.TEMPLATES`
    (the papers' or the project's wording, read back by :func:`~needlework.rag.prompts.read_prompt`;
    not an edited template) or a suggestion prompt (the last user message)."""
    found = read_prompt(messages)
    if found is not None:
        return _rag_reply(*found)
    prompt = next((str(m.get("content") or "") for m in reversed(messages)
                   if m.get("role") == "user"), "")
    question, passage = _block(prompt, "User question"), _block(prompt, "Passage")
    if question is not None and passage is not None:
        asked = _ASKED.search(question)
        after = prompt.split("[End of passage]", 1)[1].strip()
        dated = _DATED.match(after)
        label, why = passage_label(_ASKED.sub("", question), asked.group(1) if asked else "",
                                   passage, (dated.group(1) or "") if dated else "",
                                   bool(dated and dated.group(2)))
        return why + "\n" + json.dumps({"label": label.upper() if label == "irrelevant" else label})
    if question is not None and "choose one value for each dimension" in prompt:
        return json.dumps(question_dimensions(_ASKED.sub("", question)))
    return ONLY_RAG


def _rag_reply(mode: str, values: dict[str, str]) -> str:
    """The answer to one RAG judge prompt, from its placeholder values."""
    if mode == "factuality":
        sentences = (values["sentences"].split("\n") if "sentences" in values
                     else _numbered(values["numbered_sentences"]))
        verdicts = [sentence_label(s, values["passages"]) for s in sentences]
        return json.dumps({"grounding_quality": [
            {"sentence": k, "label": v.label, "rationale": v.rationale, "excerpt": v.excerpt}
            for k, v in enumerate(verdicts, start=1)]})
    if mode == "eligibility":
        label, why = eligibility(values["answer"], values["reference"])
        return why + "\n" + json.dumps({"verdict": label})
    if mode == "llmeval":
        return llmeval(values["answer"], values["reference"])
    grade = deflection(values["answer"])
    why = ("it says it cannot answer" if grade == "missing" else
           "it does not say it cannot answer (or says more than that)")
    return json.dumps({"justification": f"rule: {why}", "grade": grade})
