"""The needle lab's data: the selected needle dataset, its records, and the result sets
(runs stored for the dataset, and scores files uploaded from elsewhere).

A *result set* is one model's results frame (:func:`needlework.needle.analysis.results_frame`)
under a short display name that is unique on the page (its ``model`` column holds
that name, so charts, tooltips and facet headers show it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import pandas as pd
import streamlit as st

from components.callbacks import uninterrupted
from components.state import DATASET_KEY
from components.text import label, render_text
from needlework.formats import FormatError
from needlework.judges.local import is_demo_judge, read_report
from needlework.needle.analysis import judge_results, read_scores, stored_results
from needlework.needle.labels import demo_limitation, judge_run_details, judge_run_labels
from store import judges as store_judges
from store.datasets import get_dataset, iter_items, list_datasets
from store.scores import scored_models

UPLOADS = "nw_uploads"  # {display name: ResultSet} uploaded in this session
PRIMARY = "nw_results"
COMPARE = "nw_compare"


@dataclass
class ResultSet:
    """One model's results on the page."""

    name: str
    frame: pd.DataFrame
    source: str  # "scored here", "judged here, both orders[, part of the set …]", "uploaded FILE"
    fingerprint: str | None = None
    kind: str = "model"  # or "judge": one row per trial, each pair in both orders
    run_key: str | None = None  # a judge run's key
    variant: str | None = None  # a stored run's variant (dtype, device): with the fingerprint, its key
    note: str = ""  # what explains a judge at chance (the demo judge's limitation), said with it
    path: str | None = None  # a stored run's model, as it was loaded (a folder or a hub id)


def needle_row(db: Any, dataset: str | None) -> dict[str, Any] | None:
    """The dataset row when ``dataset`` is a needle dataset, else ``None``."""
    row = get_dataset(db, dataset) if dataset else None
    return row if row is not None and row["kind"] == "needle" else None


@uninterrupted
def _select(name: str) -> None:
    """Button callback: select ``name`` in the sidebar picker."""
    st.session_state[DATASET_KEY] = name


def render_needle_switch(db: Any, current: str | None) -> None:
    """Buttons that select one of the needle datasets in the sidebar picker."""
    names = [r["name"] for r in list_datasets(db) if r["kind"] == "needle" and r["name"] != current]
    if not names:
        return
    st.caption("Needle datasets in this database (click to select):")
    cols = st.columns(min(len(names), 4))
    for k, name in enumerate(names[:8]):
        cols[k % len(cols)].button(label(name, 60), key=f"nw_pick_{k}", on_click=_select, args=(name,),
                                   icon="🧵", width="stretch")


@st.cache_resource(max_entries=3, show_spinner="Reading the needle records …")
def _records(_db: Any, name: str, created_at: str | None, items: int) -> list[dict[str, Any]]:
    """The records of one version of a dataset (kept for the process, shared read only)."""
    return [item["record"] for item in iter_items(_db, name)]


def needle_records(db: Any, row: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The needle records of a dataset row (cached per dataset version; read only)."""
    if row is None:
        return []
    return _records(db, row["name"], row.get("created_at"), int(row.get("items") or 0))


def short_model_name(model: str) -> str:
    """A model path's last component (``/x/data/demo-model`` → ``demo-model``)."""
    model = model.rstrip("/")
    return Path(model).name if "/" in model and Path(model).name else model or "model"


def model_at_hand(path: str | None) -> TypeGuard[str]:
    """Whether the model a run was scored with can be loaded here: a folder on this machine,
    or a hub id (not a path); an absolute or relative path that is not a folder here (a run
    scored on another machine, or a model since removed) cannot."""
    if not path:
        return False
    folder = Path(path).expanduser()
    if folder.is_dir():
        return True
    return not (folder.is_absolute() or path.startswith(("./", "../", "~")))


def newest_model_path(sets: list[ResultSet]) -> str | None:
    """The model of the newest stored run among ``sets`` that can be loaded here (what the
    picker opens with)."""
    return next((s.path for s in sets if s.kind == "model" and model_at_hand(s.path)), None)


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)`` … when taken; the result is added to ``taken``."""
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name} ({k})"
    taken.add(out)
    return out


def stored_sets(db: Any, row: dict[str, Any] | None, records: list[dict[str, Any]]) -> list[ResultSet]:
    """Every stored run of the needle dataset (newest first), one result set each."""
    if row is None or not records:
        return []
    runs = scored_models(db, row["name"])
    counts: dict[str, int] = {}
    for run in runs:
        short = short_model_name(run["model"])
        counts[short] = counts.get(short, 0) + 1
    taken: set[str] = set()
    out = []
    for run in runs:
        frame = stored_results(db, row["name"], records, run["fingerprint"], run["variant"])
        if frame.empty:
            continue
        short = short_model_name(run["model"])
        dtype = run["variant"].split("|")[0]
        name = _unique(short if counts[short] == 1 else f"{short} · {dtype}", taken)
        frame["model"] = name
        out.append(ResultSet(name, frame, "scored here", run["fingerprint"], variant=run["variant"],
                             path=str(run["model"])))
    return out


def judge_sets(db: Any, row: dict[str, Any] | None, records: list[dict[str, Any]],
               taken: set[str]) -> list[ResultSet]:
    """Every finished LLM-judge run of the needle dataset (newest first), one result set each
    (one row per trial: each pair in both orders)."""
    if row is None or not records:
        return []
    out = []
    runs = [run for run in store_judges.finished_runs(db, row["name"]) if run["mode"] == "selection"]
    for run, named in zip(runs, judge_run_labels(runs), strict=True):
        name = _unique(named, taken)
        frame = judge_results(records, store_judges.run_results(db, run["run_key"]), name)
        if frame.empty:
            continue
        judged = frame["id"].nunique()
        source = ("judged here, both orders" + (f", part of the set ({judged} of {len(records)} "
                                                "pairs)" if judged < len(records) else "")
                  + f" · {judge_run_details(run)}")
        out.append(ResultSet(name, frame, source, None, "judge", run["run_key"],
                             note=demo_judge_note(str(run.get("model") or ""), records)))
    return out


def demo_judge_note(model: str, records: list[dict[str, Any]]) -> str:
    """Why the demo judge may be at chance on these needles ('' for any other judge)."""
    if not is_demo_judge(model):
        return ""
    lengths = sorted({int(r["length_tokens"]) for r in records if r.get("length_tokens")})
    return demo_limitation(read_report(model), lengths)


def uploaded_sets() -> list[ResultSet]:
    """Result sets uploaded in this session."""
    return list((st.session_state.get(UPLOADS) or {}).values())


def all_sets(db: Any, row: dict[str, Any] | None, records: list[dict[str, Any]]) -> list[ResultSet]:
    """Stored runs of the dataset, its LLM-judge runs, then uploads (names unique across all)."""
    stored = stored_sets(db, row, records)
    taken = {s.name for s in stored}
    out = list(stored) + judge_sets(db, row, records, taken)
    for s in uploaded_sets():
        name = _unique(s.name, taken)
        out.append(s if name == s.name else ResultSet(name, s.frame.assign(model=name), s.source,
                                                       s.fingerprint, s.kind, s.run_key, s.variant,
                                                       s.note, s.path))
    return out


@uninterrupted
def _on_upload(records: list[dict[str, Any]]) -> None:
    """Read the uploaded scores file into a result set, or keep its problems."""
    upload = st.session_state.get("nw_scores_file")
    st.session_state.pop("nw_scores_errors", None)
    if upload is None:
        return
    name = (st.session_state.get("nw_scores_model") or "").strip() or Path(upload.name).stem
    try:
        frame = read_scores(upload.getvalue(), upload.name, model=name, records=records or None)
    except FormatError as exc:
        st.session_state["nw_scores_errors"] = [str(p) for p in exc.problems[:200]]
        return
    if frame.empty:
        st.session_state["nw_scores_errors"] = [f"{upload.name}: no score lines"]
        return
    frame["model"] = f"{name} (uploaded)"
    uploads = dict(st.session_state.get(UPLOADS) or {})
    uploads[frame["model"].iloc[0]] = ResultSet(frame["model"].iloc[0], frame, f"uploaded {upload.name}")
    st.session_state[UPLOADS] = uploads
    st.session_state[PRIMARY] = frame["model"].iloc[0]


def render_upload(records: list[dict[str, Any]], expanded: bool) -> None:
    """Results from elsewhere: a scores file in, the same charts out; problems with file/line/field."""
    with st.expander("Results from elsewhere: upload a scores file", expanded=expanded, icon="📤"):
        st.caption('Long-form RewardBench output, one line per pair: {"id", "chosen_scores": [...], '
                   '"rejected_scores": [...], "tagged_position", "length_tokens"}. Positions and '
                   "lengths may be left out when the ids are those of the needle dataset selected "
                   "in the sidebar. Several scores per side: the lowest chosen must beat the "
                   "highest rejected.")
        cols = st.columns([3, 2], vertical_alignment="bottom")
        cols[1].text_input("Model name", key="nw_scores_model", placeholder="default: the file's name")
        cols[0].file_uploader("Scores JSONL", type=["jsonl", "json"], key="nw_scores_file",
                              on_change=_on_upload, args=(records,))
        problems = st.session_state.get("nw_scores_errors")
        if problems:
            st.error(f"Nothing loaded: {len(problems)} problem(s), each with file, line and field.",
                     icon="🚫")
            render_text("\n".join(problems), mono=True, box=True, max_height=240, key="nw-score-errors")
        for s in uploaded_sets():
            st.caption(f"Loaded {label(s.name, 80)}: {len(s.frame):,} pairs from "
                       f"{label(s.source, 80)}.")
