"""A needle dataset's stored results, every run in one frame: what ``needle report
--dataset NAME`` charts, named as the needle lab names its panels.

Reward models' runs (``store.scores``) by the model folder's last part (with the dtype
where one model scored the set twice), judges' selection runs (``store.judges``) by
:func:`needlework.needle.labels.judge_run_labels`; a name taken twice gets `` (2)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from needlework.needle.analysis import combine, judge_results, stored_results
from needlework.needle.labels import judge_run_labels
from store import judges as store_judges
from store.datasets import get_dataset, iter_items
from store.scores import scored_models


def _short(model: str) -> str:
    """A model path's last component (``/x/data/demo-model`` → ``demo-model``)."""
    model = model.rstrip("/")
    return Path(model).name if "/" in model and Path(model).name else model or "model"


def _unique(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name} ({k})"
    taken.add(out)
    return out


def dataset_results(db: Any, dataset: str) -> pd.DataFrame:
    """Every stored run of the needle dataset ``dataset`` (reward models, then judges'
    selection runs, newest first), each with its own ``model`` name. Raises
    ``LookupError`` when there is no such dataset and ``ValueError`` when it is not a
    needle dataset; an empty frame when nothing has been scored or judged."""
    row = get_dataset(db, dataset)
    if row is None:
        raise LookupError(f"no dataset named {dataset!r}")
    if row["kind"] != "needle":
        raise ValueError(f"{dataset} is a {row['kind']} dataset, not a needle dataset")
    records = [item["record"] for item in iter_items(db, dataset)]
    runs = scored_models(db, dataset)
    shorts = [_short(str(r["model"])) for r in runs]
    taken: set[str] = set()
    frames = []
    for run, short in zip(runs, shorts, strict=True):
        frame = stored_results(db, dataset, records, run["fingerprint"], run["variant"])
        if frame.empty:
            continue
        dtype = str(run["variant"]).split("|")[0]
        frame["model"] = _unique(short if shorts.count(short) == 1 else f"{short} · {dtype}", taken)
        frames.append(frame)
    judged = [r for r in store_judges.finished_runs(db, dataset) if r["mode"] == "selection"]
    for run, named in zip(judged, judge_run_labels(judged), strict=True):
        name = _unique(named, taken)
        frame = judge_results(records, store_judges.run_results(db, run["run_key"]), name)
        if not frame.empty:
            frames.append(frame)
    return combine(frames) if frames else pd.DataFrame()
