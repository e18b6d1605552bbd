"""Needle results as frames: accuracy by length × position bucket, cells, imports, CSV.

The results frame has one row per needle record and model (:data:`RESULT_COLUMNS`
plus ``bucket`` and ``missing``). ``correct`` is ``chosen_score > rejected_score``
(strict: a tie is wrong). A record whose score is missing (skipped for being longer
than the window, or a NaN/inf from the model) keeps its row with an empty score: it
counts as wrong and stays in every denominator, as in Long-form RewardBench's scorer
(``evaluation/cal_accuracy_from_file.py``), and ``missing`` / ``n_missing`` count it.
Position bucket = ``min(int(tagged_position * 10), 9)``, so bucket 4 holds positions
in [40 %, 50 %).

Each heatmap cell carries its 95 % interval (``low``, ``high``, ``method``:
:func:`needlework.figures.stats.bootstrap_mean`): the unit is the needle *pair*. A classifier's
cell (one 0/1 row per pair) is a plain proportion and gets Wilson's interval; a judge's
cell (each pair's share of its two orders) the percentile bootstrap (1,000 resamples, seed
0), a pair's two trials resampled together and the estimate the cell's accuracy over its
trials; a cell whose pairs are all right or all wrong gets Wilson's interval on its pairs.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from needlework.figures import stats
from needlework.formats import FormatError, Problem
from needlework.formats.reader import decode, read_jsonl
from store import scores as store_scores

RESULT_COLUMNS = ["id", "chosen_score", "rejected_score", "correct", "length_tokens", "tagged_position",
                  "site_index", "needle_id", "haystack_id", "model"]
BUCKETS = 10
THIN_CELL = 5  # a cell with fewer PAIRS than this (a judge's trials do not count) is too thin to read
SELECTION = "cell"  # the altair selection parameter of the heatmaps


def position_bucket(tagged_position: float) -> int:
    """The position bucket (0–9) of a relative position in [0, 1]."""
    return min(int(tagged_position * BUCKETS), BUCKETS - 1)


def bucket_label(bucket: int) -> str:
    """``"40–50 %"`` for bucket 4."""
    step = 100 // BUCKETS
    return f"{bucket * step}–{(bucket + 1) * step} %"


def length_label(length: int) -> str:
    """``"8K"`` for 8000 tokens, ``"1.5K"`` for 1500, ``"800"`` below 1000."""
    if length < 1000:
        return str(length)
    return f"{length / 1000:g}K"


def results_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The results frame from rows holding at least ``chosen_score``, ``rejected_score``,
    ``length_tokens`` and ``tagged_position`` (other columns default to empty)."""
    frame = pd.DataFrame([{c: row.get(c) for c in RESULT_COLUMNS if c != "correct"} for row in rows],
                         columns=[c for c in RESULT_COLUMNS if c != "correct"])
    for column in ("chosen_score", "rejected_score", "tagged_position"):
        frame[column] = frame[column].astype(float)  # None → NaN; text raises
    for column in ("chosen_score", "rejected_score"):  # ±inf is a missing score too
        frame.loc[~frame[column].abs().lt(float("inf")), column] = float("nan")
    missing = frame["chosen_score"].isna() | frame["rejected_score"].isna()
    frame.insert(3, "correct", (frame["chosen_score"] > frame["rejected_score"]) & ~missing)
    frame["length_tokens"] = frame["length_tokens"].astype("int64")
    frame["bucket"] = pd.Series([position_bucket(p) for p in frame["tagged_position"]], dtype="int64",
                                index=frame.index)
    frame["model"] = frame["model"].fillna("").astype(str)
    frame["id"] = frame["id"].astype(str)
    frame["missing"] = missing
    return frame


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Results of several models in one frame (their ``model`` values must differ)."""
    return pd.concat(list(frames), ignore_index=True)


def heatmap_frame(results: pd.DataFrame, thin: int = THIN_CELL, *,
                  intervals: bool = False) -> pd.DataFrame:
    """Accuracy per (model, length, bucket): ``n`` (rows: pairs, or a judge's trials),
    ``pairs`` (distinct pairs), ``n_correct``, ``n_missing`` (rows with a missing score:
    wrong, in ``n``), ``accuracy``, ``thin`` (fewer than ``thin`` **pairs**, the one rule for
    a classifier and a judge alike), and the labels ``position`` and ``length``; with
    ``intervals``, also the 95 % bounds ``low`` and ``high`` and their ``method``
    (:func:`cell_intervals`)."""
    grouped = results.groupby(["model", "length_tokens", "bucket"], as_index=False).agg(
        n=("correct", "size"), pairs=("id", "nunique"), n_correct=("correct", "sum"),
        n_missing=("missing", "sum"))
    grouped["pairs"] = grouped["pairs"].astype(int)
    grouped["n_correct"] = grouped["n_correct"].astype(int)
    grouped["n_missing"] = grouped["n_missing"].astype(int)
    grouped["accuracy"] = grouped["n_correct"] / grouped["n"]
    grouped["thin"] = grouped["pairs"] < thin
    if intervals:
        bounds = cell_intervals(results)
        grouped["low"] = [bounds[k].low for k in _keys(grouped)]
        grouped["high"] = [bounds[k].high for k in _keys(grouped)]
        grouped["method"] = [bounds[k].method for k in _keys(grouped)]
    grouped["position"] = [bucket_label(b) for b in grouped["bucket"]]
    grouped["length"] = [length_label(n) for n in grouped["length_tokens"]]
    return grouped.sort_values(["model", "length_tokens", "bucket"]).reset_index(drop=True)


def _keys(frame: pd.DataFrame) -> list[tuple[str, int, int]]:
    return [(str(m), int(n), int(b)) for m, n, b in
            zip(frame["model"], frame["length_tokens"], frame["bucket"], strict=True)]


_INTERVALS: OrderedDict[str, dict[tuple[str, int, int], stats.Interval]] = OrderedDict()
_INTERVALS_LOCK = threading.Lock()
_INTERVALS_KEPT = 16  # result frames whose cell intervals are kept (a page redraws the same)


def cell_intervals(results: pd.DataFrame) -> dict[tuple[str, int, int], stats.Interval]:
    """``{(model, length, bucket): Interval}``: each cell's accuracy with its 95 % interval
    (Wilson's or the bootstrap, named in its ``method``), the unit the pair (a pair's rows, a judge's two orders, resampled together;
    each pair weighted by its rows, so the estimate is the cell's accuracy). Kept for the
    last few frames, by their content (the same rows give the same intervals)."""
    if results.empty:
        return {}
    columns = results[["model", "length_tokens", "bucket", "id", "correct"]]
    key = hashlib.sha256(pd.util.hash_pandas_object(columns, index=False).to_numpy().tobytes()
                         ).hexdigest()
    with _INTERVALS_LOCK:
        if key in _INTERVALS:
            _INTERVALS.move_to_end(key)
            return _INTERVALS[key]
    out = _cell_intervals(results)
    with _INTERVALS_LOCK:
        _INTERVALS[key] = out
        while len(_INTERVALS) > _INTERVALS_KEPT:
            _INTERVALS.popitem(last=False)
    return out


def _cell_intervals(results: pd.DataFrame) -> dict[tuple[str, int, int], stats.Interval]:
    per_pair = results.groupby(["model", "length_tokens", "bucket", "id"], sort=True).agg(
        right=("correct", "sum"), rows=("correct", "size")).reset_index()
    out = {}
    for (model, length, bucket), part in per_pair.groupby(["model", "length_tokens", "bucket"],
                                                          sort=True):
        rows = part["rows"].astype(float).to_numpy()
        out[(str(model), int(length), int(bucket))] = stats.bootstrap_mean(
            (part["right"].astype(float).to_numpy() / rows).tolist(), unit="pair",
            weights=rows.tolist())
    return out


def length_frame(results: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per (model, length) over all positions (missing scores count wrong)."""
    grouped = results.groupby(["model", "length_tokens"], as_index=False).agg(
        n=("correct", "size"), n_correct=("correct", "sum"), n_missing=("missing", "sum"))
    grouped["accuracy"] = grouped["n_correct"] / grouped["n"]
    return grouped


def cell_rows(results: pd.DataFrame, length: int, bucket: int, model: str | None = None) -> pd.DataFrame:
    """The result rows in one cell (optionally of one model), worst margin first."""
    mask = (results["length_tokens"] == length) & (results["bucket"] == bucket)
    if model is not None:
        mask &= results["model"] == model
    rows = results[mask].copy()
    rows["margin"] = rows["chosen_score"] - rows["rejected_score"]
    return rows.sort_values(["margin", "id"]).reset_index(drop=True)


def cell_pairs(results: pd.DataFrame, records: Iterable[Mapping[str, Any]], length: int, bucket: int,
               model: str | None = None) -> list[dict[str, Any]]:
    """The pairs in one cell with their texts: each result row plus ``prompt``, ``chosen``,
    ``rejected`` (strings) and ``needle_char`` (where the two responses start to differ)."""
    by_id = {str(r["id"]): r for r in records}
    out = []
    for row in cell_rows(results, length, bucket, model).to_dict("records"):
        record = by_id.get(str(row["id"]))
        if record is None:
            continue
        out.append(row | {"prompt": record["prompt"], "chosen": record["chosen"][0],
                          "rejected": record["rejected"][0], "needle_char": record.get("needle_char")})
    return out


def selected_cell(event: Any, name: str = SELECTION) -> tuple[int, int] | None:
    """(length_tokens, bucket) of the clicked cell in a Streamlit ``on_select`` event
    (``event.selection[name]`` = ``[{"length_tokens": ..., "bucket": ...}]``), or ``None``."""
    selection = event.get("selection") if isinstance(event, Mapping) else getattr(event, "selection", None)
    if selection is None:
        return None
    points = selection.get(name) if isinstance(selection, Mapping) else getattr(selection, name, None)
    if not points:
        return None
    point = points[0]
    try:
        return int(point["length_tokens"]), int(point["bucket"])
    except (KeyError, TypeError, ValueError):
        return None


JUDGE_COLUMNS = ["order", "trial", "judge_answer"]  # a judge's trials (:func:`judge_results`)


def results_csv(results: pd.DataFrame) -> str:
    """The results as CSV (the result columns plus ``bucket`` and ``missing``, and a
    judge's ``order``, ``trial`` and ``judge_answer``; a missing score is an empty field,
    its row is kept)."""
    columns = [c for c in RESULT_COLUMNS + ["bucket", "missing"] + JUDGE_COLUMNS
               if c in results.columns]
    return results[columns].to_csv(index=False)


def read_results_csv(source: str | Path) -> pd.DataFrame:
    """A results CSV written by :func:`results_csv`, back as a results frame (a judge's
    order columns kept, so its position bias can be stated again)."""
    raw = pd.read_csv(source, dtype={"id": str, "needle_id": str, "haystack_id": str, "model": str,
                                     "order": str, "judge_answer": str},
                      keep_default_na=False, na_values={"chosen_score": [""], "rejected_score": [""]})
    frame = results_frame(raw.to_dict("records"))
    for column in JUDGE_COLUMNS:
        if column in raw.columns:
            frame[column] = raw[column].to_numpy()
    return frame


def stored_results(db: Any, dataset: str, records: Sequence[dict[str, Any]], fingerprint: str,
                   variant: str | None = None) -> pd.DataFrame:
    """The results frame of an earlier run saved with ``run_needles(..., dataset=...)``
    (records with a missing score keep their row: wrong, counted in ``missing``)."""
    by_id = {str(r["id"]): r for r in records}
    rows = []
    for item in store_scores.item_scores(db, dataset, fingerprint, variant):
        record = by_id.get(str(item["item_key"]))
        chosen, rejected = item["chosen_scores"], item["rejected_scores"]
        if record is None:
            continue
        rows.append(dict(record, chosen_score=_worst(chosen, min), rejected_score=_worst(rejected, max),
                         model=item["model"]))
    return results_frame(rows)


# -- scores files (results from elsewhere) ------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _worst(scores: Sequence[Any] | None, pick: Any) -> float | None:
    """The lowest chosen (``pick=min``) or highest rejected (``max``) score, or ``None`` when
    any is missing (null, NaN, ±inf) or there is none: the best-of-n rule per pair."""
    if not scores or not all(_number(s) for s in scores):
        return None
    return float(pick(scores))


def _score_list(obj: Mapping[str, Any], name: str, found: list[str]) -> list[Any]:
    """The scores of one side: numbers, or null / NaN / ±Infinity for a missing score."""
    value = obj.get(name)
    if name not in obj:
        found.append(f"{name} is missing")
    elif not isinstance(value, list) or not value:
        found.append(f"{name} must be a non-empty list of numbers (null for a missing score)")
    else:
        bad = [k for k, v in enumerate(value)
               if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))]
        if bad:
            found.append(f"{name}[{bad[0]}] must be a number or null, got {value[bad[0]]!r}")
        else:
            return list(value)
    return []


def _scores_row(obj: Any, record: Mapping[str, Any] | None, found: list[str]) -> dict[str, Any] | None:
    if not isinstance(obj, dict):
        found.append(f"record must be a JSON object, got {type(obj).__name__}")
        return None
    if "id" not in obj or isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
        found.append("id is missing" if "id" not in obj else "id must be a string or integer")
    chosen = _score_list(obj, "chosen_scores", found)
    rejected = _score_list(obj, "rejected_scores", found)
    merged = dict(record or {}) | obj
    position, length = merged.get("tagged_position"), merged.get("length_tokens")
    if position is None:
        found.append("tagged_position is missing")
    elif not _number(position) or not 0 <= position <= 1:
        found.append(f"tagged_position must be a number in [0, 1], got {position!r}")
    if length is None:
        found.append("length_tokens is missing")
    elif isinstance(length, bool) or not isinstance(length, int) or length <= 0:
        found.append(f"length_tokens must be a positive integer, got {length!r}")
    if found or position is None or length is None:  # either missing is in found
        return None
    return {k: merged.get(k) for k in ("id", "site_index", "needle_id", "haystack_id", "model")} | {
        "chosen_score": _worst(chosen, min), "rejected_score": _worst(rejected, max),
        "tagged_position": float(position), "length_tokens": int(length)}


def read_scores(source: str | Path | bytes, filename: str | None = None, *, model: str | None = None,
                records: Iterable[Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """A results frame from a scores file: Long-form RewardBench output lines
    ``{"id", "subset", "chosen_scores": [...], "rejected_scores": [...]}`` plus
    ``tagged_position`` and ``length_tokens`` (or taken from ``records`` by id).

    With several scores per side, ``chosen_score`` is the lowest chosen and
    ``rejected_score`` the highest rejected, so ``correct`` is the strict best-of-n
    rule; a null, NaN or Infinity score is missing (the pair is wrong and counted in
    ``missing``). ``model`` fills the model column where lines have none. All-or-nothing:
    raises :class:`FormatError` naming file, line and field for every problem.
    """
    if isinstance(source, bytes):
        name, data = filename or "scores.jsonl", source
    else:
        name = filename or Path(source).name
        try:
            data = Path(source).read_bytes()
        except OSError as e:
            raise FormatError([Problem(name, None, f"cannot read the file: {e.strerror}")]) from None
    by_id = {str(r["id"]): r for r in records or []}
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for raw in read_jsonl(decode(data, name), name):
        found: list[str] = []
        key = str(raw.value.get("id")) if isinstance(raw.value, dict) else ""
        row = _scores_row(raw.value, by_id.get(key), found)
        if row is not None and key in seen:
            found.append(f"id {key!r} is a duplicate (first seen on line {seen[key]})")
        problems.extend(Problem(name, raw.line, message) for message in found)
        if row is not None and not found:
            seen[key] = raw.line
            rows.append(row | {"model": row.get("model") or model or ""})
    if problems:
        raise FormatError(problems)
    return results_frame(rows)


# -- an LLM judge's needle run -------------------------------------------------------------

ORDER_NAMES = ("chosen shown first (A)", "chosen shown second (B)")


def judge_results(records: Sequence[Mapping[str, Any]], trials: Iterable[Mapping[str, Any]],
                  model: str) -> pd.DataFrame:
    """The results frame of a judge's selection run on a needle set: **one row per trial**
    (each pair is judged in both orders, so a cell's n counts trials, two per pair).

    A trial's ``chosen_score`` is 1 when the judge named the chosen response and
    ``rejected_score`` 1 when it named the rejected one; an invalid answer names neither
    (0 and 0: a tie, wrong); a trial skipped as too long has no scores (missing, wrong); a
    trial whose request failed (no answer) has no row. ``trials`` are ``store.judges.run_results`` rows (``entry`` and the judge's ``raw``
    answer). Extra columns: ``order`` (:data:`ORDER_NAMES`), ``trial`` and ``judge_answer``.
    """
    by_id = {str(r["id"]): r for r in records}
    rows, orders, numbers, answers = [], [], [], []
    for row in trials:
        entry = row["entry"]
        record = by_id.get(str(entry["item_key"]))
        if record is None or entry.get("failed") or len(entry.get("members") or []) != 2:
            continue  # a failed request has no answer: no row (counted apart by the run)
        chosen_at = (entry.get("chosen_positions") or [0])[0]
        if entry.get("skipped"):
            chosen_score = rejected_score = None
        elif entry.get("valid") and entry.get("picked") is not None:
            chosen_score = 1.0 if entry["picked"] == chosen_at else 0.0
            rejected_score = 1.0 - chosen_score
        else:
            chosen_score = rejected_score = 0.0
        rows.append(dict(record, chosen_score=chosen_score, rejected_score=rejected_score,
                         model=model))
        orders.append(ORDER_NAMES[0] if chosen_at == 0 else ORDER_NAMES[1])
        numbers.append(int(entry.get("trial", 0)))
        answers.append(row.get("raw") if row.get("raw") is not None else entry.get("reason") or "")
    frame = results_frame(rows)
    frame["order"] = orders
    frame["trial"] = numbers
    frame["judge_answer"] = answers
    return frame


def counted(results: pd.DataFrame) -> str:
    """What a results frame's rows are: ``"trials"`` for a judge's (each pair in both
    orders, rows with an ``order``), else ``"pairs"``."""
    judged = "order" in results.columns and bool(results["order"].notna().any())
    return "trials" if judged else "pairs"
