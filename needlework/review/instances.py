"""A RewardBench 2 instance on the Review page (docs/review.md, "RewardBench 2";
docs/benchmarks.md §8).

A RewardBench 2 row is one prompt with its correct completions (the preference view's
``chosen``) and its incorrect ones (``rejected``). Review judges it as every other
preference record, one comparison at a time, ``verdict:I:J`` = correct I vs incorrect J
(0-based), with the same keys, verdicts and TRL export rules; a best-of-4 row is 1 × 3
comparisons, a Ties row k × m (correct answers are never compared with each other: they are
equally good). This module says what the page says about the instance:

- the sides as the benchmark names them, ``Correct 1`` and ``Incorrect 2`` (:func:`named`,
  :func:`side_names`), for everyone but a blind annotator, who reads Response A / B
  (:mod:`needlework.review.sides`: the words never reach that page);
- the instance's shape (:func:`shape`): its subset, best-of-4 or Ties, and for a Ties row
  which completions are correct and which row of its prompt it is (``ref:N``, the reference
  answer alone; ``tied:N``, every correct answer), with the other row's key
  (:func:`needlework.formats.rewardbench2.ties_sibling`);
- where a reward model scored it, its figures under the official rules
  (:mod:`needlework.figures.rewardbench2`): a best-of-4 instance's credit, 1 / k when the top is a
  k-way tie (:func:`credit`), a Ties row's accuracy, gap and spread and its prompt's
  preferred / preferred (hard) / margin term (:func:`ties_row`, :func:`ties_prompt`);
- the same comparison in the prompt's other Ties row (:func:`twin`): the ``ref:N`` and
  ``tied:N`` rows share the prompt and its incorrect answers, so correct 1 vs incorrect j
  can come twice, and the TRL export writes a record identical to one already written once.

Everything here returns plain text of ours with the file's numbers; nothing of the data's
text is in it (the page escapes what it draws anyway).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from needlework.figures import metrics
from needlework.figures.rewardbench2 import instance_credit, prompt_stats, ties_units
from needlework.formats.preference import Preference
from needlework.formats.rewardbench2 import NAME as FORMAT
from needlework.formats.rewardbench2 import is_ties, ties_id, ties_sibling
from needlework.review.sides import Sides

#: what RewardBench 2 calls the two sides of a comparison
WORDS = ("correct", "incorrect")


def applies(fmt: str) -> bool:
    """Whether a dataset of format ``fmt`` is shown as RewardBench 2 instances."""
    return fmt == FORMAT


def named(sides: Sides, fmt: str) -> Sides:
    """``sides`` with the benchmark's words (correct / incorrect) for a RewardBench 2
    dataset; a blind annotator's neutral sides name positions only, whatever the words."""
    return replace(sides, words=WORDS) if applies(fmt) else sides


def side_names(pref: Preference) -> tuple[list[str], list[str]]:
    """The completions' numbers, from 1, on both sides, one completion too (``Correct 1``,
    ``Incorrect 2``: the benchmark's lists are lists)."""
    return ([str(k + 1) for k in range(len(pref.chosen))],
            [str(k + 1) for k in range(len(pref.rejected))])


def span(word: str, n: int) -> str:
    """``Correct 1`` for one, ``Incorrect 1–3`` for several."""
    return f"{word.capitalize()} 1" if n == 1 else f"{word.capitalize()} 1–{n}"


def completion_names(n_correct: int, n_incorrect: int) -> list[str]:
    """The completions in the official order (correct first, then incorrect)."""
    return ([f"Correct {k + 1}" for k in range(n_correct)]
            + [f"Incorrect {k + 1}" for k in range(n_incorrect)])


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _numbers(*values: float) -> list[str]:
    """``values`` with 3 decimals, or as many more as it takes for different values to
    read differently (a tie is a tie only when the scores are equal)."""
    for digits in range(3, 18):
        shown = [f"{v:.{digits}f}" for v in values]
        if all((a == b) == (x == y) for a, x in zip(shown, values, strict=True)
               for b, y in zip(shown, values, strict=True)):
            return shown
    return [repr(v) for v in values]


# -- the instance's shape -----------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """One RewardBench 2 row as the page names it."""

    key: str
    subset: str
    n_correct: int
    n_incorrect: int
    ties: bool
    part: str | None = None  # Ties: "ref" (the reference answer alone) or "tied"
    prompt: int | None = None  # Ties: the prompt's number N
    sibling: str | None = None  # Ties: the prompt's other row

    @property
    def comparisons(self) -> int:
        return self.n_correct * self.n_incorrect

    def words(self) -> str:
        """``Factuality · best-of-4: Correct 1 against Incorrect 1–3 (3 comparisons)``;
        Ties: which completions are correct and which row of its prompt this is."""
        against = (f"against {span('incorrect', self.n_incorrect)} "
                   f"({self.comparisons} comparison{'' if self.comparisons == 1 else 's'})")
        if not self.ties:
            head = f"{self.subset} · best-of-4: {span('correct', self.n_correct)} {against}"
            if self.n_correct > 1:  # the official score takes the first as the reference
                head += " · the official credit takes Correct 1 as the reference"
            return head
        where = f"Ties, prompt {self.prompt}"
        if self.part == "ref":
            return (f"{where}, reference row: Correct 1 is the reference answer, {against}")
        return (f"{where}, every correct answer: {span('correct', self.n_correct)} are "
                f"equally correct (not compared with each other), each {against}")


def shape(key: str, subset: str, pref: Preference) -> Shape:
    """The shape of the row ``key`` (subset as stored) with its view ``pref``."""
    ties = is_ties(subset or pref.subset)
    parsed = ties_id(key) if ties else None
    return Shape(key, subset or pref.subset, len(pref.chosen), len(pref.rejected), ties,
                 parsed[0] if parsed else None, parsed[1] if parsed else None,
                 ties_sibling(key) if parsed else None)


def twin(pref: Preference, i: int, j: int, other: Preference) -> tuple[int, int] | None:
    """The comparison of ``other`` (the prompt's other Ties row) with the same two texts as
    correct ``i`` vs incorrect ``j`` of ``pref``, or ``None``."""
    try:
        return other.chosen.index(pref.chosen[i]), other.rejected.index(pref.rejected[j])
    except (ValueError, IndexError):
        return None


# -- a reward model's figures -----------------------------------------------------------------


def _scores(entry: Any) -> tuple[list[Any], list[Any]] | None:
    if not isinstance(entry, dict):
        return None
    chosen, rejected = entry.get("chosen_scores"), entry.get("rejected_scores")
    if not isinstance(chosen, list) or not isinstance(rejected, list) or not chosen or not rejected:
        return None
    return chosen, rejected


@dataclass(frozen=True)
class Credit:
    """A best-of-4 instance's credit (``reroll_and_score_dataset``) and why: ``top`` the
    completions at the highest score, ``tied`` how many share it with Correct 1."""

    credit: float
    words: str
    top: tuple[str, ...] = ()
    missing: bool = False


def credit(entry: Any) -> Credit | None:
    """The official credit of a best-of-4 instance scored ``entry`` (``chosen_scores``,
    ``rejected_scores``), with its reason in words; ``None`` when it is not scored."""
    scores = _scores(entry)
    if scores is None:
        return None
    chosen, rejected = scores
    value = instance_credit(chosen, rejected)
    every = [*chosen, *rejected]
    if any(metrics.missing(s) for s in every):
        return Credit(value, "credit 0: a score is missing (the official code gives 0)",
                      missing=True)
    names = completion_names(len(chosen), len(rejected))
    high = max(every)
    top = tuple(n for n, s in zip(names, every, strict=True) if s == high)
    if every[0] != high:
        shown = _numbers(high, every[0])
        return Credit(value, f"credit 0: {_and(top)} scored highest ({shown[0]}, above "
                             f"Correct 1's {shown[1]})", top)
    if len(top) == 1:
        runner = max(every[1:])
        shown = _numbers(high, runner)
        return Credit(value, f"credit 1: Correct 1 scored highest ({shown[0]}; next "
                             f"{shown[1]})", top)
    shown = _numbers(high)
    return Credit(value, f"credit 1/{len(top)} = {value:.3g}: Correct 1 tied at the top "
                         f"({shown[0]}) with {_and(top[1:])} (the official tie rule)", top)


def ties_row(entry: Any) -> str | None:
    """A scored Ties row's figures (``_compute_prompt_stats``): accurate or not, its gap and,
    with several correct answers, their spread; ``None`` when it is not scored."""
    scores = _scores(entry)
    if scores is None:
        return None
    chosen, rejected = scores
    stats = prompt_stats(chosen, rejected)
    if math.isnan(stats.gap):
        return ("not accurate: a score is missing, so this row has no gap or spread "
                "(our rule, benchmarks.md §8)")
    low, high = _numbers(min(chosen), max(rejected))
    words = (f"{'accurate' if stats.accurate else 'not accurate'}: lowest correct {low} "
             f"{'>' if stats.accurate else '≤'} highest incorrect {high} (gap {stats.gap:+.3f})")
    if stats.spread is not None:
        words += f"; spread of the correct scores {stats.spread:.3f}"
    return words


def ties_prompt(prompt: int, ref: Any, tied: Any) -> str | None:
    """A Ties prompt's part of the score when both its rows are scored (``ref`` and
    ``tied`` their entries): preferred (tied gap > spread), preferred (hard) (the smaller
    gap > spread) and the margin term; ``None`` when a row is not scored."""
    ref_scores, tied_scores = _scores(ref), _scores(tied)
    if ref_scores is None or tied_scores is None:
        return None
    units = ties_units([
        {"id": f"ref:{prompt}", "chosen_scores": ref_scores[0], "rejected_scores": ref_scores[1]},
        {"id": f"tied:{prompt}", "chosen_scores": tied_scores[0],
         "rejected_scores": tied_scores[1]}])
    unit = units[0]
    if unit.tied is None or unit.ref is None or unit.tied.spread is None:
        return None
    preferred, hard, margin = unit.comparisons()
    if math.isnan(unit.tied.gap) or math.isnan(unit.ref.gap):
        return (f"prompt {prompt}: a score is missing: preferred no, preferred (hard) no, "
                "margin term 0 (our rule, benchmarks.md §8)")
    spread = unit.tied.spread
    smaller = min(unit.ref.gap, unit.tied.gap)
    return (f"prompt {prompt}: preferred {'yes' if preferred else 'no'} (tied gap "
            f"{unit.tied.gap:+.3f} {'>' if preferred else '≤'} spread {spread:.3f}) · "
            f"preferred (hard) {'yes' if hard else 'no'} (smaller gap {smaller:+.3f} "
            f"{'>' if hard else '≤'} {spread:.3f}) · margin term {margin:+.3f}")
