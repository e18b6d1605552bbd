"""The figures of answer evaluation, from the per-answer rows of :mod:`.verdicts`.

Every GaRAGe judge figure is a **share of questions** (0 to 1; the paper prints it as a
percentage) over the evaluated questions a model was asked, a missing answer counted as
a failure:

- ``eligibility``: eligible answers (no major issue);
- ``unadjusted_factuality``: answers whose every sentence is supported or no_rad
  against all passages; ``uraf``: the same against the relevant passages;
- ``factuality`` = eligible and factual; ``raf`` = eligible and relevant-factual;
- ``deflection_tpr``: among the questions that need a deflection, the answers the judge
  grades ``missing``; ``deflection_fpr``: the same among the other questions (an
  unreadable grade counts as a miss in the first and a false alarm in the second);
- ``llmeval``: the mean LLMeval score (BERGEN), with the number of weird answers.

**Non-answers** (:mod:`.non_answers`: no claim, such as ``[B]``) stay in every figure's
denominator and count as not eligible, not factual, not a deflection, LLMeval 0 and, for
BERGEN and attribution, the empty answer; ``non_answers`` says how many. **An answer whose
judge request failed** (no answer came: refused, timed out, a server error) is *not
scored*: it is left out of every judge figure's numerator and denominator (the judge
figures are over ``scored`` questions), and ``not_scored`` / ``judge_failures`` (by kind)
say how many; BERGEN's metrics and attribution, which need no judge, keep it.

BERGEN's metrics are means over the questions (:func:`needlework.rag.bergen.mean_scores`),
attribution P/R/F1 the macro means of docs/benchmarks.md §1 over the questions whose
human answer cites a passage. Each figure comes with the number of questions it is
over (``n``), so a breakdown cell with few questions can be read as such.

``intervals`` holds each defined figure's 95 % interval
(:func:`needlework.figures.stats.bootstrap_mean`: Wilson's for the judge's 0/1 shares, the
percentile bootstrap, 1,000 resamples, seed 0, for scores; each names its ``method``), the
unit the question and the denominator the figure's own: every evaluated question, the questions
that need a deflection (TPR) or can be answered (FPR), the questions whose human answer
cites a passage (attribution). :func:`undefined_reason` says why a figure has no value,
and :func:`cell_text` writes a figure with its denominator and interval, as the page and
the CLI show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from needlework.figures import stats, stats_text
from needlework.judges.local import RULES_MODEL
from needlework.rag import bergen
from needlework.rag.questions import DIMENSIONS, GROUNDING_BINS, NOT_SET

JUDGE_FIGURES = ("eligibility", "unadjusted_factuality", "factuality", "uraf", "raf",
                 "deflection_tpr", "deflection_fpr", "llmeval")
ROW_FIELDS = {"eligibility": "eligible", "unadjusted_factuality": "factual",
              "factuality": "factuality", "uraf": "relevant_factual", "raf": "raf"}
#: Known orders of dimension values (others sort by name, ``(not set)`` last).
VALUE_ORDER: dict[str, tuple[str, ...]] = {
    "time": ("static", "slow-changing", "fast-changing"),
    "complexity": ("Simple", "Simple w. condition", "Set", "Comparison", "Aggregation",
                   "Multi-hop", "Post-processing heavy"),
    "popularity": ("Head", "Torso", "Tail"),
    "provider": ("web", "enterprise"),
    "deflection": ("answerable", "needs deflection"),
    "grounding": GROUNDING_BINS,
}


ATTRIBUTION = ("attribution_precision", "attribution_recall", "attribution_f1")
#: What a judge figure's denominator is, when it is not every evaluated question.
DENOMINATORS = {"deflection_tpr": "needing deflection", "deflection_fpr": "answerable"}


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def judge_failed(row: Mapping[str, Any]) -> bool:
    """Whether one of ``row``'s judge requests got no answer (the row is not scored)."""
    return bool(row.get("judge_failed"))


def scored_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows the judge figures are over: judged, and no judge request of theirs failed."""
    return [r for r in rows if r.get("judged") and not judge_failed(r)]


def unit_values(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Per figure (the names of :func:`flat`), one value per question of its denominator:
    1/0 for the judge's shares (judge figures only when every row was judged; over the
    scored rows, :func:`scored_rows`), BERGEN's per-question scores, attribution P/R/F1 of
    the questions whose human answer cites."""
    rows = list(rows)
    out: dict[str, list[float]] = {}
    if rows and all(r.get("judged") for r in rows):
        every, rows = rows, scored_rows(rows)
        for figure, field in ROW_FIELDS.items():
            out[figure] = [float(bool(r[field])) for r in rows]
        out["deflection_tpr"] = [float(r["deflected"] is True) for r in rows
                                 if r["needs_deflection"]]
        out["deflection_fpr"] = [float(r["deflected"] is not False) for r in rows
                                 if not r["needs_deflection"]]
        out["llmeval"] = [float(int(r["llmeval"])) for r in rows]
        rows = every
    for name in bergen.METRICS:
        out[name] = [float(r["bergen"][name]) for r in rows]
    scored = [r["attribution"] for r in rows if r["attribution"] is not None]
    for name in ATTRIBUTION:
        out[name] = [float(a[name.removeprefix("attribution_")]) for a in scored]
    return out


def intervals(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each figure's 95 % bootstrap interval over the questions of its denominator (see
    the module docstring), as :class:`needlework.figures.stats.Interval` dicts; a figure with no
    question in its denominator has ``n`` 0 and no bounds."""
    return {name: stats.bootstrap_mean(values, unit="question").as_dict()
            for name, values in unit_values(rows).items()}


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of one model over ``rows`` (its answers to some questions)."""
    rows = list(rows)
    n = len(rows)
    out: dict[str, Any] = {"n": n, "answered": sum(1 for r in rows if r["answered"]),
                           "no_answer": sum(1 for r in rows if not r["answered"]),
                           "non_answers": sum(1 for r in rows if r.get("non_answer"))}
    judged = [r for r in rows if r.get("judged")]
    out["judged"] = bool(judged) and len(judged) == n
    failed = [r for r in judged if judge_failed(r)]
    out["not_scored"] = len(failed)
    out["judge_failures"] = {}
    for r in failed:
        kinds = {v.get("kind") or "failed" for v in r["judge_failed"].values()}
        for kind in sorted(kinds):
            out["judge_failures"][kind] = out["judge_failures"].get(kind, 0) + 1
    everything = rows
    rows = scored_rows(rows) if out["judged"] else rows
    out["scored"] = len(rows) if out["judged"] else 0
    n = len(rows)
    if out["judged"]:
        for figure, field in ROW_FIELDS.items():
            out[figure] = _share(sum(1 for r in rows if r[field]), n)
        need = [r for r in rows if r["needs_deflection"]]
        other = [r for r in rows if not r["needs_deflection"]]
        out["deflection_tpr"] = _share(sum(1 for r in need if r["deflected"] is True), len(need))
        out["deflection_fpr"] = _share(sum(1 for r in other if r["deflected"] is not False),
                                       len(other))
        out["deflection_n"] = {"needs deflection": len(need), "answerable": len(other)}
        out["llmeval"] = _share(sum(int(r["llmeval"]) for r in rows), n)
        out["llmeval_weird"] = sum(1 for r in rows if r["llmeval_weird"])
        out["invalid"] = {check: sum(1 for r in rows if check in r["invalid"])
                          for check in ("eligibility", "factuality", "relevant_factuality",
                                        "deflection")}
    else:
        out.update({figure: None for figure in JUDGE_FIGURES})
    rows = everything
    out["bergen"] = bergen.mean_scores(r["bergen"] for r in rows)
    scored = [r["attribution"] for r in rows if r["attribution"] is not None]
    out["attribution"] = {
        "n": len(scored),
        **{k: (sum(a[k] for a in scored) / len(scored) if scored else None)
           for k in ("precision", "recall", "f1")}}
    out["intervals"] = intervals(rows)
    return out


def _value_key(dimension: str, value: str) -> tuple[int, int, str]:
    order = VALUE_ORDER.get(dimension, ())
    if value == NOT_SET:
        return (2, 0, value)
    if value in order:
        return (0, order.index(value), value)
    return (1, 0, value.casefold())


def breakdown(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{dimension: {value: figures}}`` over one model's rows, for every dimension of
    :data:`needlework.rag.questions.DIMENSIONS` (values in a fixed order)."""
    rows = list(rows)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for dimension in DIMENSIONS:
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for r in rows:
            groups.setdefault(r["dims"].get(dimension, NOT_SET), []).append(r)
        out[dimension] = {value: summarize(groups[value])
                          for value in sorted(groups, key=lambda v: _value_key(dimension, v))}
    return out


def flat(figures: Mapping[str, Any]) -> dict[str, Any]:
    """One table row of figures: judge figures, BERGEN's and attribution's, by name."""
    row = {"n": figures["n"], "no_answer": figures["no_answer"]}
    row.update({name: figures.get(name) for name in JUDGE_FIGURES})
    row.update(figures["bergen"])
    row.update({f"attribution_{k}": figures["attribution"][k] for k in ("precision", "recall", "f1")})
    return row


def side_by_side(per_model: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Several models' overall figures as table rows (one per model)."""
    return [{"model": model, **flat(figures)} for model, figures in per_model.items()]


def breakdown_table(per_model: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]]
                    ) -> list[dict[str, Any]]:
    """Long-form rows ``{dimension, value, model, n, <figures>}`` of every model's
    breakdown: one table (or one faceted chart) with the models side by side."""
    out = []
    for dimension in DIMENSIONS:
        values: list[str] = []
        for parts in per_model.values():
            values += [v for v in parts.get(dimension, {}) if v not in values]
        values.sort(key=lambda v: _value_key(dimension, v))
        for value in values:
            for model, parts in per_model.items():
                figures = parts.get(dimension, {}).get(value)
                if figures is not None:
                    out.append({"dimension": dimension, "value": value, "model": model,
                                **flat(figures)})
    return out


# -- figures in words --------------------------------------------------------------------


def is_rules_judge(judge: Mapping[str, Any] | None) -> bool:
    """Whether a run's judge (``summary["judge"]``) is the rules judge: fixed word-overlap
    rules, not an LLM (:mod:`needlework.rag.rules_judge`)."""
    return bool(judge) and str((judge or {}).get("model") or "") == RULES_MODEL


RULES_CAVEAT = ("from the rules judge: fixed word-overlap rules, not an LLM. They check the "
                "pipeline end to end; they are not GaRAGe's judge figures and do not compare "
                "with the paper's.")


def undefined_reason(figures: Mapping[str, Any], name: str) -> str | None:
    """Why figure ``name`` has no value in ``figures`` (:func:`summarize`'s output), in a
    few words; ``None`` when it has one."""
    if flat(figures).get(name) is not None:
        return None
    if not figures.get("n"):
        return "no question here"
    if name in JUDGE_FIGURES and not figures.get("judged"):
        return "no judge in this run"
    if name in JUDGE_FIGURES and not figures.get("scored", figures.get("n")):
        return f"no judge answer here ({figures.get('not_scored', 0)} failed)"
    split = figures.get("deflection_n") or {}
    if name == "deflection_tpr" and not split.get("needs deflection"):
        return "no question here needs a deflection"
    if name == "deflection_fpr" and not split.get("answerable"):
        return "every question here needs a deflection"
    if name in ATTRIBUTION and not (figures.get("attribution") or {}).get("n"):
        return "no human answer here cites a passage"
    return "no value"


def denominator(figures: Mapping[str, Any], name: str) -> int:
    """How many questions figure ``name`` is over."""
    if name in ATTRIBUTION:
        return int((figures.get("attribution") or {}).get("n") or 0)
    split = figures.get("deflection_n") or {}
    if name == "deflection_tpr":
        return int(split.get("needs deflection") or 0)
    if name == "deflection_fpr":
        return int(split.get("answerable") or 0)
    if name in JUDGE_FIGURES:
        return int(figures.get("scored", figures.get("n")) or 0)
    return int(figures.get("n") or 0)


def cell_text(figures: Mapping[str, Any], name: str) -> str:
    """Figure ``name`` as a table cell: the value with its denominator and 95 % interval
    (``60.0 % (3/5) CI 23.1–88.2 %``; a mean ``0.412 (n=13) CI 0.350–0.470``; attribution
    ``0.500 (9 of 13 cite) CI …``), or ``n/a: why`` (:func:`undefined_reason`)."""
    why = undefined_reason(figures, name)
    if why is not None:
        return f"n/a: {why}"
    value = float(flat(figures)[name])
    n = denominator(figures, name)
    interval = (figures.get("intervals") or {}).get(name)
    if name in JUDGE_FIGURES:
        hits = round(value * n)
        what = f" {DENOMINATORS[name]}" if name in DENOMINATORS else ""
        ci = f" CI {stats_text.percent_range(interval)}" if interval else ""
        return f"{stats_text.percent(value)} ({hits}/{n}{what}){ci}"
    ci = f" CI {stats_text.number_range(interval)}" if interval else ""
    if name in ATTRIBUTION:
        return f"{value:.3f} ({n} of {int(figures.get('n') or 0)} cite){ci}"
    return f"{value:.3f} (n={n}){ci}"


def text_row(figures: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """One table row as the page shows it: ``n``, ``no_answer`` and each of ``names`` as
    :func:`cell_text`."""
    return {"n": figures["n"], "no_answer": figures["no_answer"],
            **{name: cell_text(figures, name) for name in names}}


def interval_columns(figures: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """For a CSV: each figure's denominator and 95 % bounds as numbers
    (``<name> n``, ``<name> low``, ``<name> high``)."""
    out: dict[str, Any] = {}
    bounds = figures.get("intervals") or {}
    for name in names:
        part = bounds.get(name) or {}
        out[f"{name} n"] = denominator(figures, name)
        out[f"{name} low"] = part.get("low")
        out[f"{name} high"] = part.get("high")
    return out
