"""One-line findings computed from needle results, for the presentation mode.

Every number in a finding comes from the results frame: the weakest and the
strongest cell of the length × position grid among cells with at least
``min_n`` pairs, and the accuracy in the first, middle and last third of the
response.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pandas as pd

from needlework.figures.stats_text import round_half_up
from needlework.needle.analysis import (
    BUCKETS,
    THIN_CELL,
    bucket_label,
    counted,
    heatmap_frame,
    length_label,
)
from needlework.needle.order_bias import PositionBias, position_bias, wilson_interval


def pct(value: float) -> int:
    """A share in whole percent, rounded half up on its exact value
    (:mod:`needlework.figures.stats`)."""
    return int(round_half_up(Fraction(float(value)) * 100, 0))


def _where(cell: pd.Series) -> str:
    return f"{length_label(int(cell['length_tokens']))} tokens, positions {bucket_label(int(cell['bucket']))}"


def _runs(buckets: list[int]) -> list[str]:
    """Position buckets as ranges: [3, 4, 5, 8] → ["30–60 %", "80–90 %"]."""
    step = 100 // BUCKETS
    spans: list[list[int]] = []  # [first, last] bucket of each run
    for b in sorted(buckets):
        if spans and b == spans[-1][1] + 1:
            spans[-1][1] = b
        else:
            spans.append([b, b])
    out = [f"{a * step}–{(b + 1) * step} %" for a, b in spans]
    return out


def and_join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _places(cells: pd.DataFrame, most: int = 3) -> str:
    """Where tied cells are, by length, adjacent positions joined:
    ``1K tokens, positions 30–80 %; 2K tokens, positions 50–60 %`` (at most ``most``
    lengths named, then how many more)."""
    lengths = sorted(cells["length_tokens"].unique())
    named = [f"{length_label(int(n))} tokens, positions "
             + and_join(_runs(cells.loc[cells["length_tokens"] == n, "bucket"].astype(int).tolist()))
             for n in lengths[:most]]
    more = len(lengths) - most
    return "; ".join(named) + (f"; and at {more} more length{'s' if more > 1 else ''}" if more > 0 else "")


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}–{high}"


def _sizes(cells: pd.DataFrame) -> str:
    """``n=10``, ``n=10 each`` or ``n=6–10`` (pairs); for a judge's cells, whose rows are
    trials, ``n=12 trials, 6 pairs``."""
    low, high = int(cells["n"].min()), int(cells["n"].max())
    each = " each" if len(cells) > 1 and low == high else ""
    if "pairs" in cells and (cells["pairs"] != cells["n"]).any():
        pairs = _span(int(cells["pairs"].min()), int(cells["pairs"].max()))
        return f"n={_span(low, high)} trials, {pairs} pairs{each}"
    return f"n={_span(low, high)}{each}"


MOST_RUNS = 4  # tied cells are named when they make at most this many runs of positions


def _extreme(cells: pd.DataFrame, word: str, total: int) -> str:
    """``lowest at 8K tokens, positions 40–50 % (60 %, n=10)``, or for ties
    ``lowest, 50 %, in 5 tied cells: 1K tokens, positions 30–80 % (n=10 each)``, or, when
    they are too scattered to name (more than :data:`MOST_RUNS` runs of adjacent
    positions), ``highest, 100 %, in 25 of the 36 cells (n=5–11)``."""
    value = pct(cells["accuracy"].iloc[0])
    if len(cells) == 1:
        return f"{word} at {_where(cells.iloc[0])} ({value} %, {_sizes(cells)})"
    runs = sum(len(_runs(group.astype(int).tolist()))
               for _, group in cells.groupby("length_tokens")["bucket"])
    if runs > MOST_RUNS:
        return f"{word}, {value} %, in {len(cells)} of the {total} cells ({_sizes(cells)})"
    return f"{word}, {value} %, in {len(cells)} tied cells: {_places(cells)} ({_sizes(cells)})"


def _chance(low: pd.DataFrame, high: pd.DataFrame, unit: str) -> str:
    """A caveat when the lowest and highest cells' pooled 95 % intervals overlap."""
    lo = wilson_interval(int(low["n_correct"].sum()), int(low["n"].sum()))
    hi = wilson_interval(int(high["n_correct"].sum()), int(high["n"].sum()))
    if lo[1] < hi[0]:
        return ""
    return (f" With so few {unit} the gap "
            f"may be chance: the 95 % intervals overlap ({pct(lo[0])}–{pct(lo[1])} % and "
            f"{pct(hi[0])}–{pct(hi[1])} %).")


def of_model(results: pd.DataFrame, model: str | None) -> pd.DataFrame:
    return results if model is None else results[results["model"] == model]


def finding(results: pd.DataFrame, model: str | None = None, min_n: int = THIN_CELL) -> str:
    """What the grid supports, for one model (or all rows), from cells with at least
    ``min_n`` pairs (pairs, not a judge's trials: the one rule of :data:`THIN_CELL`): the lowest and the highest accuracy, each with every cell at that
    value (ties are named as ties), the gap in points, and a caveat when the two could
    differ by chance (their pooled 95 % Wilson intervals overlap). E.g. "Accuracy is lowest
    at 8K tokens, positions 40–50 % (62 %, n=10), 31 points below the highest, at 2K
    tokens, positions 90–100 % (93 %, n=10)." A thinner cell lower than the lowest named
    is mentioned as left out."""
    rows = of_model(results, model)
    unit = counted(rows)  # a judge's cells count trials (each pair in both orders)
    every = heatmap_frame(rows, min_n)
    cells = every[~every["thin"]]
    if cells.empty:
        return f"Not enough data for a finding: no cell has at least {min_n} pairs."
    shown = cells["accuracy"].map(pct)
    low = cells[shown == shown.min()].sort_values(["length_tokens", "bucket"])
    high = cells[shown == shown.max()].sort_values(["length_tokens", "bucket"])
    worst = low.iloc[0]
    if shown.min() == shown.max():
        return (f"Accuracy is {shown.min()} % in every cell with at least {min_n} pairs "
                f"({len(cells)} cells): no position or length stands out."
                + _thin_note(every, worst, min_n, unit))
    gap = shown.max() - shown.min()
    return (f"Accuracy is {_extreme(low, 'lowest', len(cells))}, {gap} points below the "
            f"{_extreme(high, 'highest', len(cells))}."
            + _chance(low, high, unit) + _thin_note(every, worst, min_n, unit))


def _thin_note(every: pd.DataFrame, worst: pd.Series, min_n: int, unit: str = "pairs") -> str:
    """When a thin cell (fewer than ``min_n`` pairs, left out of the finding) is lower than
    the lowest cell named, say so: it is on screen, and the reader would wonder."""
    thin = every[every["thin"] & (every["accuracy"] < worst["accuracy"])]
    if thin.empty:
        return ""
    low = thin.sort_values(["accuracy", "n"], ascending=[True, False]).iloc[0]
    size = (f"n={int(low['n'])} trials, {int(low['pairs'])} pairs" if unit == "trials"
            else f"n={int(low['n'])}")
    return (f" Cells with fewer than {min_n} pairs are left out: the lowest of them, "
            f"{pct(low['accuracy'])} % at {_where(low)} ({size}), is too thin to say.")


def position_trend(results: pd.DataFrame, model: str | None = None) -> str:
    """Accuracy in the first, middle and last third of the responses, in one line."""
    rows = of_model(results, model)
    if rows.empty:
        return "No results."
    thirds = pd.cut(rows["tagged_position"], [-0.01, 1 / 3, 2 / 3, 1.01], labels=["first", "middle", "last"])
    parts = []
    for name, group in rows.groupby(thirds, observed=True)["correct"]:
        parts.append(f"{pct(group.mean())} % in the {name} third (n={len(group)})")
    return f"Accuracy {', '.join(parts)}; {pct(rows['correct'].mean())} % overall over {len(rows)} {counted(rows)}."


def length_trend(results: pd.DataFrame, model: str | None = None) -> str:
    """Accuracy per response length over all positions, in one line."""
    rows = of_model(results, model)
    if rows.empty:
        return "No results."
    parts = [f"{pct(group.mean())} % at {length_label(int(n))} tokens (n={len(group)})"
             for n, group in rows.groupby("length_tokens")["correct"]]
    return f"Accuracy by length: {', '.join(parts)}."


def _length_extreme(rows: pd.DataFrame, word: str) -> str:
    """``lowest at 1K tokens (60 %, n=100)`` or ``lowest, 60 %, at 1K and 2K tokens (n=100 each)``
    (``rows``: accuracy ``mean`` and ``size`` by length)."""
    value = pct(rows["mean"].iloc[0])
    sizes = sorted({int(n) for n in rows["size"]})
    n = f"n={sizes[0]}" if len(sizes) == 1 else f"n={sizes[0]}–{sizes[-1]}"
    if len(rows) == 1:
        return f"{word} at {length_label(int(rows.index[0]))} tokens ({value} %, {n})"
    lengths = and_join([length_label(int(x)) for x in rows.index])
    return f"{word}, {value} %, at {lengths} tokens ({n}{' each' if len(sizes) == 1 else ''})"


def overview(results: pd.DataFrame, model: str | None = None) -> str:
    """The pattern over whole rows and thirds, where the counts are large: "By position,
    accuracy goes from 83 % in the first third of the answer to 61 % in the last (n=116 and
    87); by length it is lowest at 1K tokens (60 %, n=100) and highest at 500 (84 %, n=76)."
    Equal first and last thirds read "accuracy is flat: 50 % in the first third of the
    answer and in the last", never "goes from 50 % … to 50 %"."""
    rows = of_model(results, model)
    if rows.empty:
        return "No results."
    thirds = pd.cut(rows["tagged_position"], [-0.01, 1 / 3, 2 / 3, 1.01], labels=["first", "middle", "last"])
    by_third = rows.groupby(thirds, observed=True)["correct"].agg(["mean", "size"])
    parts = []
    if len(by_third) >= 2:
        first, last = by_third.iloc[0], by_third.iloc[-1]
        counts = f"(n={int(first['size'])} and {int(last['size'])})"
        if pct(first["mean"]) == pct(last["mean"]):  # "from 50 % … to 50 %" reads as a change
            parts.append(f"By position, accuracy is flat: {pct(first['mean'])} % in the "
                         f"{by_third.index[0]} third of the answer and in the "
                         f"{by_third.index[-1]} {counts}")
        else:
            parts.append(f"By position, accuracy goes from {pct(first['mean'])} % in the "
                         f"{by_third.index[0]} third of the answer to {pct(last['mean'])} % in "
                         f"the {by_third.index[-1]} {counts}")
    by_length = rows.groupby("length_tokens")["correct"].agg(["mean", "size"])
    if len(by_length) >= 2:
        shown = by_length["mean"].map(pct)
        low, high = by_length[shown == shown.min()], by_length[shown == shown.max()]
        if shown.min() == shown.max():
            parts.append(f"by length it is {shown.min()} % at every length")
        else:
            parts.append(f"by length it is {_length_extreme(low, 'lowest')} and "
                         f"{_length_extreme(high, 'highest')}")
    if not parts:
        return ""
    text = "; ".join(parts) + "."
    return text[0].upper() + text[1:]


def in_points(value: float) -> str:
    """A difference of proportions in points, signed when negative (``−12``)."""
    shown = int(round_half_up(Fraction(float(value)) * 100, 0))
    return f"−{-shown}" if shown < 0 else f"{shown}"


def bias_sentence(bias: PositionBias | None) -> str:
    """A judge's position bias in one sentence, from its figures: the accuracy with the
    chosen response shown first (A) and second (B), the gap with its 95 % interval, and
    "Position bias" when that interval excludes 0 (no difference), else "No position bias
    shown". ``""`` for no bias figures (not a judge, or no pair judged in both orders)."""
    if bias is None:
        return ""
    figures = (f"right {pct(bias.first)} % of the time with the chosen response shown first "
               f"(A) and {pct(bias.second)} % with it shown second (B), over {bias.pairs} "
               f"pair{'s' if bias.pairs != 1 else ''} judged in both orders")
    gap = (f"a gap of {in_points(bias.gap)} points (95 % interval {in_points(bias.low)} to "
           f"{in_points(bias.high)} points, Newcombe's paired Wilson interval)")
    if bias.biased:
        side = "the first response shown (A)" if bias.gap > 0 else "the second response shown (B)"
        return (f"Position bias: {figures}, {gap}. The interval excludes no difference: the "
                f"judge favours {side}, so its verdicts depend on the order shown, not only "
                "on the needle.")
    return (f"No position bias shown: {figures}, {gap}. The interval includes no difference, "
            "so these pairs do not show the order changing its verdicts.")


AT_CHANCE, NOT_ABOVE_CHANCE = "at chance", "not shown above chance"


def _weakest_order(bias: PositionBias) -> tuple[str, float, tuple[float, float]]:
    """The order whose accuracy's 95 % interval reaches 50 % with the lower accuracy (the
    lower of the two when neither does): its name, accuracy and interval."""
    orders = (("first (A)", bias.first, bias.first_interval),
              ("second (B)", bias.second, bias.second_interval))
    weak = [o for o in orders if o[2][0] <= 0.5] or list(orders)
    return min(weak, key=lambda o: o[1])


def chance_level(bias: PositionBias | None) -> str:
    """:data:`AT_CHANCE` when, with one order, the 95 % interval of a judge's accuracy lies
    below 50 %; :data:`NOT_ABOVE_CHANCE` when it reaches 50 % with one order; ``""`` when
    above 50 % with both orders, or no judge judged in both orders
    (:func:`chance_sentence` says why in full)."""
    if bias is None or min(bias.first_interval[0], bias.second_interval[0]) > 0.5:
        return ""
    return AT_CHANCE if _weakest_order(bias)[2][1] < 0.5 else NOT_ABOVE_CHANCE


def chance_sentence(frame: pd.DataFrame, why: str = "") -> str:
    """For a judge's frame, a warning when it is not shown above chance (50 % for two
    responses) with both orders: when the 95 % Wilson interval of its accuracy with the
    chosen shown first, or shown second, reaches 50 %. "At chance" when that interval lies
    below 50 % (a judge that names one letter whatever the needle: right with one order,
    wrong with the other, about half the time over both); "Not shown above chance" when it
    merely reaches 50 % (too few pairs, or a weak judge). ``why``: what explains it, added
    as said. ``""`` when above chance with both orders, or not a judge's frame."""
    bias = position_bias(frame)
    level = chance_level(bias)
    if bias is None or not level:
        return ""
    name, value, (low, high) = _weakest_order(bias)
    figures = (f"with the chosen response shown {name} this judge is right {pct(value)} % of "
               f"the time (95 % interval {pct(low)}–{pct(high)} %, over {bias.pairs} pairs)")
    if level == AT_CHANCE:  # below a coin toss with one order: it follows the position
        text = (f"At chance: {figures}, {pct(max(bias.first, bias.second))} % with the other "
                "order: it names one position whatever the needle, so over both orders it is "
                "right about as often as a coin toss, and its heatmap does not show where it "
                "finds the needle.")
    else:
        text = (f"Not shown above chance: {figures}, an interval that reaches 50 %, a coin "
                "toss's rate, so its heatmap may not show where it finds the needle.")
    return text + (f" {why}" if why else "")


def judge_lines(results: pd.DataFrame, model: str | None = None, why: str = "") -> list[str]:
    """For a judge's rows (each pair in both orders): its position-bias sentence and, when
    it is at chance, the warning (:func:`chance_sentence`); empty for a reward model's."""
    rows = of_model(results, model)
    if counted(rows) != "trials":
        return []
    return [line for line in (bias_sentence(position_bias(rows)), chance_sentence(rows, why))
            if line]


def findings(results: pd.DataFrame, min_n: int = THIN_CELL,
             why: dict[str, str] | None = None) -> list[str]:
    """:func:`finding` for every model in the frame (in the frame's order: the panels'),
    prefixed with the model when there are several; for a judge, its position bias and,
    when at chance, a warning (:func:`judge_lines`; ``why``: per model, what explains it)."""
    models = list(dict.fromkeys(results["model"]))
    why = why or {}
    if len(models) <= 1:
        model = models[0] if models else None
        return [finding(results, None, min_n), *judge_lines(results, None, why.get(model or "", ""))]
    out = []
    for m in models:
        out.append(f"{m}: {finding(results, m, min_n)}")
        out += [f"{m}: {line}" for line in judge_lines(results, m, why.get(m, ""))]
    return out


def grid_words(records: list[dict]) -> str:
    """What a needle set's grid holds, as it is: pairs, cells filled of lengths × position
    buckets, thin cells (fewer than :data:`THIN_CELL` pairs), and the thinnest length, e.g.
    "314 pairs in 38 of the 40 cells (4 lengths × 10 positions); 5 cells hold fewer than 5
    pairs; 250 tokens has the fewest, 38 pairs (the other lengths 76–100)." """
    if not records:
        return "no pairs"
    counts: dict[tuple[int, int], int] = {}
    for r in records:
        key = (int(r["length_tokens"]), min(int(float(r["tagged_position"]) * BUCKETS), BUCKETS - 1))
        counts[key] = counts.get(key, 0) + 1
    lengths = sorted({n for n, _ in counts})
    cells = len(lengths) * BUCKETS
    thin = sum(1 for c in counts.values() if c < THIN_CELL)
    per_length = {n: sum(c for (m, _), c in counts.items() if m == n) for n in lengths}
    grid = (f"{len(lengths)} length{'s' if len(lengths) != 1 else ''} × {BUCKETS} positions")
    if len(counts) == cells and len(set(counts.values())) == 1:
        return (f"{len(records):,} pairs, every one of the {cells} cells filled ({grid}, "
                f"{next(iter(counts.values()))} pairs each)")
    text = f"{len(records):,} pairs in {len(counts)} of the {cells} cells ({grid})"
    if thin:
        text += f"; {thin} cell{'s hold' if thin != 1 else ' holds'} fewer than {THIN_CELL} pairs"
    fewest = min(lengths, key=lambda n: (per_length[n], n))
    if len(set(per_length.values())) > 1:
        others = [per_length[n] for n in lengths if n != fewest]
        span = f"{min(others)}" if min(others) == max(others) else f"{min(others)}–{max(others)}"
        text += (f"; {length_label(fewest)} tokens has the fewest, {per_length[fewest]} pairs "
                 f"(the other lengths {span})")
    return text


# -- the slide's subtitle, in the audience's words --------------------------------------------

def slide_subtitle(frame: pd.DataFrame, rule: bool = True) -> str:
    """``demo-model · 90 pairs · answers of 250 to 2K tokens · accuracy: …`` in the audience's
    words (a judge's rows are trials, each pair asked in both orders); without ``rule``, what
    accuracy is in a few words (the slide's one line)."""
    lengths = sorted(int(n) for n in frame["length_tokens"].unique())
    span = (f"{length_label(lengths[0])} tokens" if len(lengths) == 1
            else f"{length_label(lengths[0])} to {length_label(lengths[-1])} tokens")
    models = list(dict.fromkeys(frame["model"]))  # the panels' order
    sizes = [f"{int((frame['model'] == m).sum()):,} {counted(frame[frame['model'] == m])}"
             for m in models]
    size = sizes[0] + (" each" if len(sizes) > 1 else "") if len(set(sizes)) == 1 else " / ".join(sizes)
    judged = counted(frame) == "trials"
    words = ("accuracy: how often the model scores the answer without the inserted error higher "
             "(a tie counts as a miss)")
    if judged:
        words += ("; a judge is asked each pair twice, in both orders, and an unreadable "
                  "verdict counts as a miss")
    if not rule:
        words = "accuracy: the answer without the error scored higher" + (
            "; a judge is asked each pair twice, in both orders" if judged else "")
    return f"{' vs '.join(models)} · {size} · answers of {span} · {words}"


def cell_key(frame: pd.DataFrame, min_n: int = THIN_CELL) -> str:
    """What a heatmap's cells, grey cells and blank cells are, in one line."""
    unit = counted(frame)
    return (f"Each cell: accuracy over the {unit} with the error at that place, its n (pairs) "
            f"under it (95 % intervals in the interactive chart). Grey: fewer than {min_n} pairs, "
            "too few to read" + (" (a judge's two trials of a pair count as one)"
                                 if unit == "trials" else "")
            + ". Blank: no pair has its error there.")


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words (a longer
    word is cut), for chart titles, which Vega never wraps."""
    return textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
