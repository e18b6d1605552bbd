"""One-line findings computed from needle results, for the presentation mode.

Every number in a finding comes from the results frame: the weakest and the
strongest cell of the length × position grid among cells with at least
``min_n`` pairs, and the accuracy in the first, middle and last third of the
response.
"""

from __future__ import annotations

import pandas as pd

from needlework.needle.analysis import THIN_CELL, bucket_label, counted, heatmap_frame, length_label


def _pct(value: float) -> int:
    return int(round(value * 100))


def _where(cell: pd.Series) -> str:
    return f"{length_label(int(cell['length_tokens']))} tokens, positions {bucket_label(int(cell['bucket']))}"


def _of_model(results: pd.DataFrame, model: str | None) -> pd.DataFrame:
    return results if model is None else results[results["model"] == model]


def finding(results: pd.DataFrame, model: str | None = None, min_n: int = THIN_CELL) -> str:
    """E.g. "Accuracy is lowest at 8K tokens, positions 40–50 % (62 %, n=10), 31 points below
    the best cell (93 % at 2K tokens, positions 90–100 %)." for one model (or all rows)."""
    rows = _of_model(results, model)
    unit = counted(rows)  # a judge's cells count trials (each pair in both orders)
    every = heatmap_frame(rows)
    cells = every[every["n"] >= min_n]
    if cells.empty:
        return f"Not enough data for a finding: no cell has at least {min_n} {unit}."
    ranked = cells.sort_values(["accuracy", "n", "length_tokens", "bucket"],
                               ascending=[True, False, False, True])
    worst = ranked.iloc[0]
    best = cells.sort_values(["accuracy", "n", "length_tokens", "bucket"],
                             ascending=[False, False, True, True]).iloc[0]
    if _pct(best["accuracy"]) == _pct(worst["accuracy"]):
        return (f"Accuracy is {_pct(worst['accuracy'])} % in every cell with at least {min_n} {unit} "
                f"({len(cells)} cells): no position or length stands out."
                + _thin_note(every, worst, min_n, unit))
    gap = _pct(best["accuracy"]) - _pct(worst["accuracy"])
    return (f"Accuracy is lowest at {_where(worst)} ({_pct(worst['accuracy'])} %, n={int(worst['n'])}), "
            f"{gap} points below the best cell ({_pct(best['accuracy'])} % at {_where(best)})."
            + _thin_note(every, worst, min_n, unit))


def _thin_note(every: pd.DataFrame, worst: pd.Series, min_n: int, unit: str = "pairs") -> str:
    """When a thin cell (fewer than ``min_n`` pairs, left out of the finding) is lower than
    the lowest cell named, say so: it is on screen, and the reader would wonder."""
    thin = every[(every["n"] < min_n) & (every["accuracy"] < worst["accuracy"])]
    if thin.empty:
        return ""
    low = thin.sort_values(["accuracy", "n"], ascending=[True, False]).iloc[0]
    return (f" Cells with fewer than {min_n} {unit} are left out: the lowest of them, "
            f"{_pct(low['accuracy'])} % at {_where(low)} (n={int(low['n'])}), is too thin to say.")


def position_trend(results: pd.DataFrame, model: str | None = None) -> str:
    """Accuracy in the first, middle and last third of the responses, in one line."""
    rows = _of_model(results, model)
    if rows.empty:
        return "No results."
    thirds = pd.cut(rows["tagged_position"], [-0.01, 1 / 3, 2 / 3, 1.01], labels=["first", "middle", "last"])
    parts = []
    for name, group in rows.groupby(thirds, observed=True)["correct"]:
        parts.append(f"{_pct(group.mean())} % in the {name} third (n={len(group)})")
    return f"Accuracy {', '.join(parts)}; {_pct(rows['correct'].mean())} % overall over {len(rows)} {counted(rows)}."


def findings(results: pd.DataFrame, min_n: int = THIN_CELL) -> list[str]:
    """:func:`finding` for every model in the frame (in the frame's order: the panels'),
    prefixed with the model when there are several."""
    models = list(dict.fromkeys(results["model"]))
    if len(models) <= 1:
        return [finding(results, None, min_n)]
    return [f"{m}: {finding(results, m, min_n)}" for m in models]


# -- the slide's title, kept with the needle dataset ------------------------------------------

SLIDE_TITLE = "slide_title"  # the key in a needle dataset's ``meta``


def slide_title_of(meta: dict | None) -> str:
    """The presenter's title kept in a needle dataset's ``meta`` ('' when none)."""
    kept = (meta or {}).get(SLIDE_TITLE) or {}
    return str(kept.get("text") or "") if isinstance(kept, dict) else ""


def with_slide_title(meta: dict | None, title: str, by: str, at: str) -> dict:
    """``meta`` with the presenter's title (stripped) recorded with who set it and when
    (an empty title removes it); the other keys are kept."""
    out = dict(meta or {})
    title = title.strip()
    if title:
        out[SLIDE_TITLE] = {"text": title, "by": by, "at": at}
    else:
        out.pop(SLIDE_TITLE, None)
    return out
