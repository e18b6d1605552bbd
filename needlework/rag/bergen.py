"""BERGEN's answer metrics, as small pure functions (docs/benchmarks.md §5).

BERGEN (naver/bergen, ``modules/metrics.py``) scores a generated answer against a
list of reference answers. The steps, which these functions reproduce exactly:

- **normalisation** (:func:`normalize`): lowercase, drop ASCII punctuation, replace
  the whole words *a*, *an*, *the* with a space, collapse white space, in that order;
- **match** (``M``): the normalised reference occurs inside the normalised answer;
  **exact match** (``EM``): the two are equal;
- **token precision / recall / F1**: over the multiset of whitespace tokens the two
  normalised texts share (all 0 when they share none);
- **character-3-gram recall**: the same recall over each normalised word cut into its
  overlapping 3-grams (a word shorter than 3 characters stays whole);
- **ROUGE-1 / 2 / L**: the F-measures of the ``rouge`` package (pinned in
  requirements.txt; its figures differ from ``rouge-score``'s) on the raw texts;
  empty references are dropped, and an empty answer, no reference left or an error
  of the package scores 0;
- with several references every metric takes **its own** maximum over them
  (precision and recall may come from different references).

BERGEN averages each metric over the questions with ``numpy.mean`` (:func:`mean_scores`
does the same, so even the last digit agrees).
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import regex
from rouge import Rouge

#: The metric names, as BERGEN writes them in its ``eval_*_metrics.json``.
METRICS: tuple[str, ...] = ("M", "EM", "F1", "Precision", "Recall", "Recall_char3gram",
                            "Rouge-1", "Rouge-2", "Rouge-L")

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = regex.compile(r"\b(a|an|the)\b")
_ROUGE = Rouge()

Tokenizer = Callable[[str], list[str]]


def normalize(text: str) -> str:
    """BERGEN's normalisation: lowercase, drop ASCII punctuation, articles to a space,
    white space collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def words(normalized: str) -> list[str]:
    """The whitespace tokens of a normalised text."""
    return normalized.split()


def char_ngrams(normalized: str, n: int = 3) -> list[str]:
    """Each word of ``normalized`` cut into its overlapping ``n``-grams; a word shorter
    than ``n`` stays whole (BERGEN's ``ngrams``, applied to a normalised text)."""
    text = "".join(" " if ch in _PUNCTUATION else ch for ch in normalized.lower())
    grams: list[str] = []
    for word in text.split():
        if len(word) < n:
            grams.append(word)
        else:
            grams.extend(word[i:i + n] for i in range(len(word) - n + 1))
    return grams


def overlap(prediction: str, reference: str, tokenize: Tokenizer = words) -> tuple[float, float, float]:
    """``(f1, precision, recall)`` of the tokens the two normalised texts share
    (``0, 0, 0`` when they share none)."""
    pred = tokenize(normalize(prediction))
    gold = tokenize(normalize(reference))
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision = same / len(pred)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall), precision, recall


def match(prediction: str, reference: str) -> float:
    """1.0 when the normalised reference occurs in the normalised prediction."""
    return float(normalize(reference) in normalize(prediction))


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when the normalised prediction equals the normalised reference."""
    return float(normalize(prediction) == normalize(reference))


def rouge(prediction: str, reference: str) -> tuple[float, float, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures from the ``rouge`` package; 0 when the
    package refuses the pair (e.g. a prediction with no word: "Hypothesis is empty")."""
    try:
        scores = _ROUGE.get_scores(prediction, reference, avg=True)
    except Exception:  # BERGEN scores any failure of the package as 0
        return 0.0, 0.0, 0.0
    return scores["rouge-1"]["f"], scores["rouge-2"]["f"], scores["rouge-l"]["f"]


def best_rouge(prediction: str, references: Sequence[str]) -> tuple[float, float, float]:
    """Each ROUGE F-measure's maximum over the non-empty references (0 for an empty
    prediction or when no reference is left)."""
    kept = [r for r in references if len(r) > 0]
    if len(prediction) == 0 or not kept:
        return 0.0, 0.0, 0.0
    scores = [rouge(prediction, r) for r in kept]
    return tuple(max(s[k] for s in scores) for k in range(3))  # type: ignore[return-value]


@dataclass(frozen=True)
class AnswerScores:
    """BERGEN's metrics of one answer (each the maximum over the references)."""

    M: float
    EM: float
    F1: float
    Precision: float
    Recall: float
    Recall_char3gram: float
    Rouge_1: float
    Rouge_2: float
    Rouge_L: float

    def as_dict(self) -> dict[str, float]:
        """``{metric name as BERGEN writes it: value}``."""
        return {name.replace("Rouge_", "Rouge-"): value for name, value in asdict(self).items()}


def answer_scores(prediction: str, references: Sequence[str]) -> AnswerScores:
    """Score ``prediction`` against ``references`` (at least one; BERGEN fails on none)."""
    if not references:
        raise ValueError("no reference answer to score against")
    tokens = [overlap(prediction, r) for r in references]
    grams = [overlap(prediction, r, char_ngrams) for r in references]
    r1, r2, rl = best_rouge(prediction, references)
    return AnswerScores(
        M=max(match(prediction, r) for r in references),
        EM=max(exact_match(prediction, r) for r in references),
        F1=max(t[0] for t in tokens), Precision=max(t[1] for t in tokens),
        Recall=max(t[2] for t in tokens), Recall_char3gram=max(g[2] for g in grams),
        Rouge_1=r1, Rouge_2=r2, Rouge_L=rl)


def mean_scores(rows: Iterable[Mapping[str, float]]) -> dict[str, float | None]:
    """The mean of each metric over ``rows``, as BERGEN takes it (``numpy.mean``);
    ``None`` for no row."""
    rows = list(rows)
    if not rows:
        return {name: None for name in METRICS}
    return {name: float(np.mean([float(r[name]) for r in rows])) for name in METRICS}
