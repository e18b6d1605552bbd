"""The slide's headline for a needle run (the presentation mode and its files): the
overall finding with its interval, one line per model (:func:`headline`,
:func:`headlines`: the accuracy in the first and the last third of the response, their
difference with Newcombe's interval, the weakest readable region), and the slide's foot
words: how sparse the grid is, the judge's position bias, the chance level
(:func:`sparse_words`, :func:`bias_words`, :func:`chance_words`). The sentences of
one finding each are :mod:`needlework.needle.findings`.
"""

from __future__ import annotations

import pandas as pd

from needlework.needle.analysis import (
    BUCKETS,
    THIN_CELL,
    bucket_label,
    counted,
    heatmap_frame,
    length_label,
)
from needlework.needle.findings import (
    and_join,
    chance_level,
    chance_sentence,
    in_points,
    of_model,
    pct,
)
from needlework.needle.order_bias import PositionBias, position_bias

_Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def _wilson(share: float, n: int) -> tuple[float, float]:
    """Wilson's score interval (95 %) of a mean ``share`` over ``n`` units (a judge's pair
    counts its share of its two orders: the same formula on the mean of the shares)."""
    if n <= 0:
        return 0.0, 1.0
    z2 = _Z95 * _Z95
    denom = 1 + z2 / n
    centre = (share + z2 / (2 * n)) / denom
    half = _Z95 / denom * (share * (1 - share) / n + z2 / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(first: float, n_first: int, last: float, n_last: int) -> tuple[float, float]:
    """The 95 % interval of ``last − first`` (two shares of different units) by Newcombe's
    hybrid score method: each share's Wilson interval, the difference's bounds
    ``d − √((last − l_last)² + (u_first − first)²)`` and ``d + √((u_last − last)² +
    (first − l_first)²)``."""
    l1, u1 = _wilson(first, n_first)
    l2, u2 = _wilson(last, n_last)
    d = last - first
    return (d - ((last - l2) ** 2 + (u1 - first) ** 2) ** 0.5,
            d + ((u2 - last) ** 2 + (first - l1) ** 2) ** 0.5)


def _per_pair(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per pair: its share right (0/1 for a reward model, a judge's share of its two
    orders), its length and needle position."""
    return rows.groupby("id", as_index=False).agg(
        correct=("correct", "mean"), length_tokens=("length_tokens", "first"),
        tagged_position=("tagged_position", "first"))


def _weakest(rows: pd.DataFrame, pairs: pd.DataFrame, min_n: int) -> str:
    """The weakest readable region: the length whose pairs score lowest (lengths of at least
    ``min_n`` pairs), or with one length, the lowest cell of at least ``min_n`` pairs."""
    by_length = pairs.groupby("length_tokens")["correct"].agg(["mean", "size"])
    by_length = by_length[by_length["size"] >= min_n]
    if len(by_length) >= 2:
        shown = by_length["mean"].map(pct)
        if shown.min() == shown.max():
            return f"every length {shown.min()} %"
        worst = by_length[shown == shown.min()].index.tolist()
        return f"lowest at {and_join([length_label(int(n)) for n in worst])} tokens, {shown.min()} %"
    cells = heatmap_frame(rows, min_n)
    cells = cells[~cells["thin"]]
    if cells.empty:
        return ""
    worst = cells.sort_values(["accuracy", "length_tokens", "bucket"]).iloc[0]
    return f"lowest at positions {bucket_label(int(worst['bucket']))}, {pct(worst['accuracy'])} %"


def _signed(points: int | str) -> str:
    """Points with their sign: ``+3``, ``−22``, ``0``."""
    value = int(str(points).replace("−", "-"))
    return f"−{-value}" if value < 0 else (f"+{value}" if value > 0 else "0")


def headline(results: pd.DataFrame, model: str | None = None, min_n: int = THIN_CELL) -> str:
    """The slide's one-line finding for one model (or all rows): the trend over position,
    accuracy in the first third of the response against the last, with the 95 % interval of
    the change in points (Newcombe's hybrid score interval; the unit the pair), then the
    weakest readable region (:func:`_weakest`). E.g. "83 % → 61 % first to last third
    (−22 points, 95 % CI −35 to −8); lowest at 1K tokens, 60 %". Without pairs in both
    thirds: the overall accuracy with its Wilson interval. Thin cells never lead it."""
    rows = of_model(results, model)
    if rows.empty:
        return "No results."
    pairs = _per_pair(rows)
    position = pairs["tagged_position"].astype(float)
    first, last = pairs[position < 1 / 3]["correct"], pairs[position >= 2 / 3]["correct"]
    weakest = _weakest(rows, pairs, min_n)
    if len(first) and len(last):
        low, high = newcombe_difference(float(first.mean()), len(first), float(last.mean()), len(last))
        change = pct(last.mean()) - pct(first.mean())
        lead = (f"{pct(first.mean())} % → {pct(last.mean())} % first to last third "
                f"({_signed(change)} point{'' if abs(change) == 1 else 's'}, 95 % CI "
                f"{_signed(in_points(low))} to "
                f"{_signed(in_points(high))})")
    else:
        low, high = _wilson(float(pairs["correct"].mean()), len(pairs))
        lead = (f"Accuracy {pct(pairs['correct'].mean())} % (95 % CI {pct(low)}–{pct(high)} %, "
                f"{len(pairs)} pairs)")
    return lead + (f"; {weakest}" if weakest else "")


def headlines(results: pd.DataFrame, min_n: int = THIN_CELL) -> list[str]:
    """:func:`headline` per model, in the panels' order, prefixed with the model when there
    are several (one line each)."""
    models = list(dict.fromkeys(results["model"]))
    if len(models) <= 1:
        return [headline(results, None, min_n)]
    return [f"{m}: {headline(results, m, min_n)}" for m in models]


def sparse_words(results: pd.DataFrame, min_n: int = THIN_CELL) -> str:
    """The grid's gaps said plainly, for the slide's foot: how many cells are empty (no pair
    of that length with its needle at that position in the data) and how many thin (fewer
    than ``min_n`` pairs, marked grey and dashed), and the sparsest length's readable cells,
    e.g. "12 of 40 cells are empty: the data has no pair of that length with the needle
    there; 6 are thin (grey, dashed: under 5 pairs). 250 tokens: 4 of 10 cells readable."
    When every cell is readable: "Every cell holds at least 5 pairs." """
    every = heatmap_frame(results, min_n)
    models = max(1, every["model"].nunique())
    lengths = sorted(int(n) for n in every["length_tokens"].unique())
    if models > 1:
        return _sparse_per_model(every, list(dict.fromkeys(results["model"])),
                                 len(lengths) * BUCKETS, min_n)
    total = len(lengths) * BUCKETS * models
    empty, thin = total - len(every), int(every["thin"].sum())
    if not empty and not thin:
        return f"Every cell holds at least {min_n} pairs."
    parts = []
    if empty:
        parts.append(f"{empty} of {total} cells {'is' if empty == 1 else 'are'} empty: the data "
                     "has no pair of that length with the needle there")
    if thin:
        parts.append(f"{thin}{'' if empty else f' of {total} cells'} "
                     f"{'is' if thin == 1 else 'are'} thin (grey, dashed: under {min_n} pairs)")
    text = "; ".join(parts) + "."
    readable = every[~every["thin"]].groupby("length_tokens").size()
    counts = {n: int(readable.get(n, 0)) for n in lengths}
    sparsest = min(lengths, key=lambda n: (counts[n], n))
    if counts[sparsest] < BUCKETS * models:
        text += (f" {length_label(sparsest)} tokens: {counts[sparsest]} of {BUCKETS * models} "
                 "cells readable.")
    return text[0].upper() + text[1:]


def _sparse_per_model(every: pd.DataFrame, models: list[str], cells: int, min_n: int) -> str:
    """:func:`sparse_words` for panels side by side, for a file's foot: each model's own
    grid of ``cells`` (:func:`panel_cells`), model by model in the panels' order, e.g.
    "rm: 4 of 20 cells empty, 1 thin (grey, dashed: under 5 pairs). judge j: 1 of 20 cells
    empty." (never a count over both grids together)."""
    counts = [(str(m), *_empty_thin(every[every["model"] == m], cells)) for m in models]
    if not any(empty or thin for _, empty, thin in counts):
        return f"Every cell holds at least {min_n} pairs."
    return " ".join(f"{model}: {panel_cells(empty, thin, cells, min_n, key=k == 0)}"
                    for k, (model, empty, thin) in enumerate(counts))


def _empty_thin(cells_of_model: pd.DataFrame, cells: int) -> tuple[int, int]:
    """A model's empty cells of its grid of ``cells`` and its thin ones."""
    return cells - len(cells_of_model), int(cells_of_model["thin"].sum())


def panel_cells(empty: int, thin: int, cells: int, min_n: int = THIN_CELL, key: bool = True) -> str:
    """One panel's gaps in a few plain words: "3 of 30 cells empty, 10 thin (grey, dashed:
    under 5 pairs)." (``key``: with what a thin cell is and how it looks; the first panel's
    note says it for the slide, the others say "10 thin.")."""
    look = f" (grey, dashed: under {min_n} pairs)" if key else ""
    if empty and thin:
        return f"{empty} of {cells} cells empty, {thin} thin{look}."
    if empty:
        return f"{empty} of {cells} cells empty."
    if thin:
        return f"{thin} of {cells} cells thin{look}."
    return f"Every cell holds at least {min_n} pairs."


def panel_notes(results: pd.DataFrame, min_n: int = THIN_CELL) -> list[str]:
    """The slide's foot for panels side by side: one note per model, in the panels' order,
    each under its own panel and so without the model's name: its own empty and thin cells
    (:func:`panel_cells`, the grid of every length shown), and for a judge its position
    bias and whether it is above chance, in the fewest words (two lines of a half-width
    column at 1280 px), e.g. "3 of 30 cells empty, 10 thin. Favours the first shown (right
    100 % vs 0 %); at chance." (or "not shown above chance": :func:`chance_sentence`)."""
    every = heatmap_frame(results, min_n)
    cells = every["length_tokens"].nunique() * BUCKETS
    notes = []
    for k, model in enumerate(dict.fromkeys(results["model"])):
        text = panel_cells(*_empty_thin(every[every["model"] == model], cells), cells, min_n,
                           key=k == 0)
        rows = of_model(results, model)
        if counted(rows) == "trials":
            bias = position_bias(rows)
            chance = chance_level(bias)
            if bias is not None:
                text += " " + _bias_short(bias)[:-1] + (f"; {chance}." if chance else ".")
            elif chance:
                text += f" {chance[0].upper()}{chance[1:]}."
        notes.append(text)
    return notes


def foot_words(results: pd.DataFrame, min_n: int = THIN_CELL) -> str:
    """The slide's foot in one paragraph, for its files: one model's gaps
    (:func:`sparse_words`), its position bias and chance level when it is a judge; with
    several models each model's note (:func:`panel_notes`) after its name."""
    models = list(dict.fromkeys(results["model"]))
    if len(models) > 1:
        return " ".join(f"{m}: {note}" for m, note in zip(models, panel_notes(results, min_n),
                                                          strict=True))
    return " ".join(part for part in (sparse_words(results, min_n), bias_words(results),
                                      chance_words(results)) if part)


def chance_words(results: pd.DataFrame) -> str:
    """For the slide's foot: each judge not shown above chance with both orders
    (:func:`chance_sentence`), in one short sentence, so its heatmap is not read as where it
    finds the needle; ``""`` when none."""
    out = []
    for model in dict.fromkeys(results["model"]):
        rows = of_model(results, model)
        if counted(rows) == "trials" and chance_sentence(rows):
            out.append(f"{model} is not shown above chance with both orders: its cells may not "
                       "show where it finds the needle.")
    return " ".join(out)


def bias_words(results: pd.DataFrame) -> str:
    """For the slide's foot: each judge's position bias (:func:`bias_sentence`), prefixed
    with the judge, so a heatmap is not read without it; ``""`` when no judge was judged
    in both orders."""
    out = []
    for model in dict.fromkeys(results["model"]):
        rows = of_model(results, model)
        if counted(rows) == "trials" and (bias := position_bias(rows)) is not None:
            out.append(f"{model}: {_bias_short(bias)}")
    return " ".join(out)


def _bias_short(bias: PositionBias) -> str:
    """:func:`~needlework.needle.findings.bias_sentence` in the few words a slide's foot
    has room for: the side the judge favours when the gap's 95 % interval excludes no
    difference, and its accuracy with the chosen response shown first and second, e.g.
    "Favours the first shown (right 100 % vs 0 %)."."""
    head = ("No position bias shown" if not bias.biased
            else f"Favours the {'first' if bias.gap > 0 else 'second'} shown")
    return f"{head} (right {pct(bias.first)}\u00a0% vs {pct(bias.second)}\u00a0%)."  # "0 %" kept whole
