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

BERGEN's metrics are means over the questions (:func:`needlework.rag.bergen.mean_scores`),
attribution P/R/F1 the macro means of docs/benchmarks.md §1 over the questions whose
human answer cites a passage. Each figure comes with the number of questions it is
over (``n``), so a breakdown cell with few questions can be read as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from needlework.rag import bergen
from needlework.rag.questions import DIMENSIONS, NOT_SET

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
}


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of one model over ``rows`` (its answers to some questions)."""
    rows = list(rows)
    n = len(rows)
    out: dict[str, Any] = {"n": n, "answered": sum(1 for r in rows if r["answered"]),
                           "no_answer": sum(1 for r in rows if not r["answered"])}
    judged = [r for r in rows if r.get("judged")]
    out["judged"] = bool(judged) and len(judged) == n
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
    out["bergen"] = bergen.mean_scores(r["bergen"] for r in rows)
    scored = [r["attribution"] for r in rows if r["attribution"] is not None]
    out["attribution"] = {
        "n": len(scored),
        **{k: (sum(a[k] for a in scored) / len(scored) if scored else None)
           for k in ("precision", "recall", "f1")}}
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
