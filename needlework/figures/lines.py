"""Figures as plain text lines, with their counts and intervals, for the commands' text output.

One format everywhere a command prints an accuracy: ``61.5 % (16/26), 95 % Wilson
42.5–77.6 %``: the share rounded half up (:func:`needlework.figures.stats_text.percent`),
the counts it is made of, then the interval with its method named
(:func:`needlework.figures.stats_text.method_label` and
:func:`needlework.figures.stats_text.percent_range`). ``metrics`` and ``metrics --leaderboard``
print through these functions, and so can ``judge`` (:func:`judge_lines` takes the summary
``needlework.judges.engine.run_judge`` returns). Pure functions: nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from needlework.figures import stats, stats_text


def method_words(interval: Mapping[str, Any] | stats.Interval | None,
                 counted: int | None = None) -> str:
    """``95 % Wilson`` (:func:`needlework.figures.stats_text.method_label`); when the interval
    counts other units than the figure beside it (a judge's trials shown, its items resampled; pairs
    shown, items resampled), ``counted`` (the figure's count) differs from the interval's
    ``n`` and its units are named: ``95 % Wilson over 4 items``."""
    label = stats_text.method_label(interval)
    if interval is None or label in ("–", "not estimable"):
        return label
    got = interval.get("n") if isinstance(interval, Mapping) else interval.n
    unit = interval.get("unit") if isinstance(interval, Mapping) else interval.unit
    if counted is not None and got is not None and int(got) != counted:
        label += f" over {got} {unit or 'unit'}{'s' if int(got) != 1 else ''}"
    return label


def interval_words(interval: Mapping[str, Any] | stats.Interval | None,
                   counted: int | None = None) -> str:
    """``95 % Wilson 42.5–77.6 %`` (``95 % Wilson over 4 items 30.1–95.4 %``: see
    :func:`method_words`); when there is none, ``no interval`` and why (``(no item
    counted)``, or ``(every resample of the 4 items gives the same mean …)``:
    :func:`needlework.figures.stats_text.no_interval`)."""
    label = method_words(interval, counted)
    spread = stats_text.percent_range(interval)
    if interval is None or spread == "–":
        why = stats_text.no_interval(interval)
        return "no interval" + (f" ({why})" if why else "")
    return f"{label} {spread}"


def share_words(value: float | None, right: int | None = None, n: int | None = None,
                interval: Mapping[str, Any] | stats.Interval | None = None, *,
                unit: str = "") -> str:
    """``61.5 % (16/26), 95 % Wilson 42.5–77.6 %``: with counts the share is rounded from
    them exactly (``right``/``n``), else from ``value``; ``unit`` names what ``n`` counts
    (``(16/26 trials)``); with only ``n`` known, ``(n=26)``. ``–`` for no value."""
    if n is not None and right is not None and n > 0:
        head = f"{stats_text.percent(right, n)} ({right}/{n}{' ' + unit if unit else ''})"
    elif value is None:
        return "– (nothing counted)" if not n else f"– (n={n})"
    else:
        head = stats_text.percent(value) + (f" (n={n}{' ' + unit if unit else ''})" if n else "")
    if interval is None:
        return head
    return f"{head}, {interval_words(interval, n)}"


def judge_lines(summary: Mapping[str, Any]) -> list[str]:
    """The accuracy of a judge run's summary as text: the headline line, then one line per
    subset, each ``accuracy 61.5 % (16/26 trials), 95 % Wilson 42.5–77.6 %`` (selection counts
    trials, scoring items; the counts are the answered ones, failed requests left out).
    The intervals are the summary's own (``summary["intervals"]``)."""
    mode = str(summary.get("mode") or "selection")
    unit = "trials" if mode == "selection" else "items"
    bon = (summary.get("metrics") or {}).get("bon") or {}
    intervals = summary.get("intervals") or {}
    overall = intervals.get("overall")
    lines = ["accuracy " + share_words(summary.get("accuracy"), bon.get("correct"), bon.get("n"),
                                       overall, unit=unit)]
    subsets = summary.get("subsets") or {}
    for name, part in subsets.items():
        ci = (intervals.get("subsets") or {}).get(name)
        lines.append(f"  {name}: " + share_words(part.get("accuracy"), part.get("correct"),
                                                   part.get("n"), ci, unit=unit))
    note = trials_note(overall, intervals.get("trials_per_item")) if mode == "selection" else ""
    if note:
        lines.append(f"  ({note})")
    return lines


def trials_note(interval: Mapping[str, Any] | None, trials_per_item: str | None) -> str:
    """How a judge's bootstrap over items treats their trials, for after its method's name
    (which says it once): ``an item's trials resampled together`` (``, items of unequal
    size weighted by their trials``); ``""`` for Wilson's interval or none, which resample
    nothing."""
    if not interval or interval.get("method") != stats.BOOTSTRAP:
        return ""
    return "an item's trials resampled together" + (
        ", items of unequal size weighted by their trials" if trials_per_item == "unequal" else "")


def judge_interval_words(interval: Mapping[str, Any] | None, trials_per_item: str | None,
                         selection: bool = True) -> str:
    """A judge run's interval method in one phrase, the same on the page as in the
    command's lines: ``95 % Wilson score interval over 28 items``, or ``95 % percentile
    bootstrap, 1,000 resamples, seed 0, over 28 items, an item's trials resampled
    together``; without an interval, ``no interval`` and why."""
    if not interval or interval.get("low") is None:
        why = stats_text.no_interval(interval)
        return "no interval" + (f" ({why})" if why else "")
    n = int(interval.get("n") or 0)
    note = trials_note(interval, trials_per_item) if selection else ""
    return (f"{stats_text.how(interval)} over {n:,} item{'s' if n != 1 else ''}"
            + (f", {note}" if note else ""))


def leaderboard_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The leaderboard (:func:`needlework.results.leaderboard.as_dicts`) as a text table: rank, run,
    kind, accuracy with counts and interval, items answered, failed requests, date, then
    one indented line per subset."""
    if not rows:
        return ["no scored model or judge run on this dataset yet"]
    lines = []
    for rank, row in enumerate(rows, start=1):
        failed = row.get("failed")
        lines.append(
            f"{rank:>2}. {row['name']} [{row['kind']}, {row['mode']}] {row['metric']} "
            + share_words(row.get("accuracy"), row.get("right"), row.get("n"),
                          row.get("interval"), unit=str(row.get("unit") or ""))
            + f"; {row['items']} items answered"
            + ("" if failed is None else f", {failed} failed request{'s' if failed != 1 else ''}")
            + f"; {str(row.get('date') or '')[:16].replace('T', ' ')}")
        for name, part in (row.get("subsets") or {}).items():
            lines.append(f"      {name}: " + share_words(part.get("accuracy"), part.get("right"),
                                                        part.get("n"), part.get("interval"),
                                                        unit=str(row.get("unit") or "")))
    return lines


RMBENCH_STYLES = ("concise", "detailed plain", "detailed markdown")  # rows and columns' order


def rmbench_part_words(share: float | None, counts: Sequence[int] | None,
                       interval: Mapping[str, Any] | None = None) -> str:
    """Hard, normal or easy with the comparisons behind it and its interval: ``75.0 %
    (27/36 comparisons), 95 % bootstrap over 12 items 60.1–88.2 %``; where the share is a
    mean over domains of unequal size (the overall figure), ``75.0 % (the mean over
    domains; 26/36 comparisons in all)``."""
    if share is None:
        return "–"
    head = stats_text.percent(share)
    if counts:
        won, made = int(counts[0]), int(counts[1])
        exact = made and stats_text.percent(won, made) == head
        head += (f" ({won}/{made} comparisons)" if exact
                 else f" (the mean over domains; {won}/{made} comparisons in all)")
    if interval is None:
        return head
    return f"{head}, {interval_words(interval, int(counts[1]) if counts else None)}"


def rmbench_matrix_lines(matrix: Sequence[Sequence[float]] | None,
                         wins: Sequence[Sequence[int]] | None, n: int, indent: str = "    ",
                         ) -> list[str]:
    """The 3 × 3 RM-Bench matrix as a text table, rows the chosen style and columns the
    rejected one, each cell its share and the comparisons won (``75.0 % (9/12)``)."""
    if not matrix:
        return []
    cells = [[stats_text.percent(matrix[i][j])
              + (f" ({wins[i][j]}/{n})" if wins is not None else "") for j in range(3)]
             for i in range(3)]
    first = max(len(f"chosen {s}") for s in RMBENCH_STYLES)
    width = max(max(len(c) for row in cells for c in row),
                max(len(f"rejected {s}") for s in RMBENCH_STYLES))
    lines = [indent + " " * first + "  " + "  ".join(f"{'rejected ' + s:<{width}}"
                                                      for s in RMBENCH_STYLES).rstrip()]
    for style, row in zip(RMBENCH_STYLES, cells, strict=True):
        lines.append(indent + f"{'chosen ' + style:<{first}}  "
                     + "  ".join(f"{c:<{width}}" for c in row).rstrip())
    return lines


def rmbench_lines(result: Mapping[str, Any], bounds: Mapping[str, Any] | None = None) -> list[str]:
    """RM-Bench's hard, normal and easy with their counts and intervals, then the overall
    3 × 3 matrix (the lines after the headline of ``metrics --kind rmbench``)."""
    parts = (bounds or {}).get("parts") or {}
    counts = result.get("counts") or {}
    lines = [f"  {key}: " + rmbench_part_words(result.get(key), counts.get(key),
                                               (parts.get(key) or {}).get("overall"))
             for key in ("hard", "normal", "easy")]
    if result.get("matrix"):
        lines.append("  matrix (share of entries where the chosen style, by row, scores above "
                     "the rejected style, by column; each cell the mean over domains, its "
                     "comparisons won in brackets):")
        lines += rmbench_matrix_lines(result["matrix"], result.get("wins"), int(result["n"]))
    return lines
