"""One heatmap cell opened: its pairs and trials, each needle in its context, and one
pair's per-token view (drawn under the Needle lab's heatmap and on the slide)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from components.models.per_token import render_token_pair
from components.models.picker import DTYPES, code, current_model, load_model, loaded_with
from components.needle.data import ResultSet, model_at_hand, short_model_name
from components.text import label, render_marked_text, render_text
from needlework.figures.stats_text import percent, percent_range, signed
from needlework.needle.analysis import (
    ORDER_NAMES,
    bucket_label,
    cell_intervals,
    cell_rows,
    length_label,
)
from needlework.rewards.errors import RewardModelError
from needlework.rewards.loading import RewardModel
from needlework.rewards.registry import ModelKey
from needlework.rewards.token_pairs import token_pair
from needlework.words import plural

CONTEXT_CHARS = 320  # characters of text shown either side of the needle
SIDE_NAMES = {"safety": ("chosen (harmless)", "rejected (harmful needle)"),
              "factuality": ("chosen (true)", "rejected (false needle)")}


def needle_spans(chosen: str, rejected: str, start: int | None = None) -> tuple[int, int, int]:
    """``(start, chosen_end, rejected_end)`` of the span where the two responses differ,
    widened to whole words (everything before ``start`` and after the ends is identical)."""
    p = 0
    limit = min(len(chosen), len(rejected))
    while p < limit and chosen[p] == rejected[p]:
        p += 1
    if start is not None:
        p = min(p, start)
    while p > 0 and not chosen[p - 1].isspace():
        p -= 1
    s = 0
    while s < limit - p and chosen[-1 - s] == rejected[-1 - s]:
        s += 1
    ec, er = len(chosen) - s, len(rejected) - s
    while 0 < ec < len(chosen) and not chosen[ec].isspace() and not chosen[ec - 1].isspace():
        ec, er = ec + 1, er + 1
    return p, ec, er


def _context(text: str, start: int, end: int, mark: str) -> list[tuple[str, str | None, str | None]]:
    """Segments: up to CONTEXT_CHARS before and after ``text[start:end]``, which is marked."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    while 0 < lo < start and not text[lo - 1].isspace():
        lo += 1
    while end < hi < len(text) and not text[hi].isspace():
        hi -= 1
    return [(("… " if lo > 0 else "") + text[lo:start], None, None), (text[start:end], mark, None),
            (text[end:hi] + (" …" if hi < len(text) else ""), None, None)]


def render_needle_context(record: dict[str, Any], names: tuple[str, str]) -> None:
    """The needle in its paragraph: rejected (the needle, nw-needle) and chosen (its counterpart)."""
    chosen, rejected = record["chosen"][0], record["rejected"][0]
    start, ec, er = needle_spans(chosen, rejected, record.get("needle_char"))
    cols = st.columns(2)
    with cols[0]:
        st.caption(f"**{names[1]}**: the needle, at {percent(record['tagged_position'], digits=0, space=False)} of "
                   f"{record.get('response_tokens', '?')} tokens")
        render_marked_text(_context(rejected, start, er, "nw-needle"), box=True, key="nw-needle-rejected")
    with cols[1]:
        st.caption(f"**{names[0]}**: the same text with the counterpart")
        render_marked_text(_context(chosen, start, ec, "nw-ins"), box=True, key="nw-needle-chosen")


def pairs_frame(rows: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """A cell's pairs as shown: worst margin first (scores to ``digits`` decimals)."""
    return pd.DataFrame({
        "pair": rows["id"], "haystack": rows["haystack_id"], "needle": rows["needle_id"],
        "position": [percent(p, space=False) for p in rows["tagged_position"]],
        "chosen score": rows["chosen_score"].round(digits),
        "rejected score": rows["rejected_score"].round(digits),
        "margin": [signed(m, digits) if pd.notna(m) else "–" for m in rows["margin"]],
        "result": ["✗ missing score (wrong)" if m else "✓ correct" if c else "✗ wrong"
                   for c, m in zip(rows["correct"], rows.get("missing", [False] * len(rows)), strict=True)]})


def trials_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """A judge cell's trials as shown: wrong first."""
    named = ["(skipped: too long)" if m else "chosen" if c == 1 else "rejected (the needle)"
             if r == 1 else "nothing readable (invalid)"
             for c, r, m in zip(rows["chosen_score"], rows["rejected_score"], rows["missing"], strict=True)]
    words = [" ".join(str(w or "").split()) for w in rows["judge_answer"]]
    return pd.DataFrame({
        "pair": rows["id"], "order shown": rows["order"],
        "position": [percent(p, space=False) for p in rows["tagged_position"]], "the judge named": named,
        "result": ["✓ correct" if c else "✗ wrong" for c in rows["correct"]],
        "its answer": [w if len(w) <= 80 else w[:79] + "…" for w in words]})


def render_cell(picked: ResultSet, cell: tuple[int, int], records: list[dict[str, Any]],
                audience: bool = False) -> str | None:
    """The pairs of the clicked cell of ``picked``'s heatmap (pick one) and that pair's view
    (a judge's words, or the reward token by token); returns the pair's id. ``audience``:
    on the slide, in the room's words (no steps of the lab, scores to 2 decimals)."""
    length, bucket = cell
    rows = cell_rows(picked.frame, length, bucket)
    judge = picked.kind == "judge"
    if judge:
        rows = rows.sort_values(["correct", "id", "order"]).reset_index(drop=True)
    right = int(rows["correct"].sum()) if len(rows) else 0
    pairs = rows["id"].nunique() if len(rows) else 0
    counts = (f"{plural(len(rows), 'trial')} of {plural(pairs, 'pair')}" if judge
              else plural(len(rows), "pair"))
    interval = cell_intervals(rows).get((str(rows["model"].iloc[0]), length, bucket)) \
        if len(rows) else None
    st.markdown(f"**{length_label(length)} tokens, {'error' if audience else 'needle'} at "
                f"{bucket_label(bucket)}** · {label(picked.name, 60)} · {counts}, {right} "
                + ("right" if audience else "correct")
                + (f" (95 % interval {percent_range(interval, 0)})" if interval is not None else "")
                + (f", {int(rows['missing'].sum())} with a missing score (wrong)"
                   if "missing" in rows and rows["missing"].any() else ""))
    if rows.empty:
        st.caption("No pairs of this model in that cell.")
        return None
    table = trials_frame(rows) if judge else pairs_frame(rows, 2 if audience else 4)
    event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key=f"nw_pairs|{picked.name}|{length}|{bucket}",
                         height=min(36 * (len(rows) + 1) + 4, 260))
    chosen_row = event.selection.rows[0] if event is not None and event.selection.rows else 0
    pair_id = str(rows.iloc[chosen_row]["id"])
    if audience:
        st.caption("The misses first; pick a row to see that error in its answer.")
    else:
        st.caption("Wrong first; pick a row for the judge's own words and the needle in context "
                   "(default: the first)." if judge else
                   "Worst margin first; pick a row for its per-token view (default: the first).")
    render_pair(pair_id, records, picked, rows.iloc[chosen_row] if judge else None, audience)
    return pair_id


def render_pair(pair_id: str, records: list[dict[str, Any]], scored: ResultSet,
                trial: pd.Series | None = None, audience: bool = False) -> None:
    """One pair: the needle in context, then (a judge's trial) the judge's own words, or the
    reward token by token (the loaded model; on the slide, only when one is loaded)."""
    record = next((r for r in records if str(r.get("id")) == pair_id), None)
    st.markdown(f"##### Pair {label(pair_id, 80)}")
    if record is None:
        st.info("The texts of this pair are not here: select the needle dataset these scores come "
                "from in the sidebar.", icon="ℹ️")
        return
    names = SIDE_NAMES.get(record.get("kind", "safety"), SIDE_NAMES["safety"])
    render_needle_context(record, names)
    if trial is not None:
        first = "the chosen" if str(trial["order"]) == ORDER_NAMES[0] else "the rejected (the needle)"
        st.caption(f"{label(scored.name, 60)} saw {first} response as A: its own words")
        render_text(str(trial.get("judge_answer") or "(no answer)"), mono=True, box=True,
                    max_height=200, key="nw-judge-words")
        return
    loaded = _token_model(scored, pair_id, audience)
    if loaded is None:
        return
    try:
        with st.spinner("One forward pass per response …"):
            pair = token_pair(loaded[1], record["prompt"], record["chosen"][0], record["rejected"][0])
    except RewardModelError as exc:
        st.error(label(str(exc), 1500), icon="🚫")
        return
    own = scored.fingerprint is not None and scored.fingerprint == loaded[1].facts.fingerprint
    st.caption(f"Per-token view with {label(loaded[1].facts.name, 80)}"
               + (", the model that scored these pairs." if own else
                  f" (the loaded model). The scores in the table are {label(scored.name, 60)}'s"
                  + (": its curves may not match them." if not model_at_hand(scored.path) else
                     ": load that model to follow those.")))
    render_token_pair(pair, names, key=f"nw-tok-{pair_id}")


def _token_model(scored: ResultSet, pair_id: str,
                 audience: bool) -> tuple[ModelKey, RewardModel] | None:
    """The model whose reward the per-token view follows: the one that scored ``scored``
    when it is loaded; else (not on the slide) a button that loads it, and the loaded
    model's view only when asked for, its scores not being the table's. An uploaded
    result set (no model known), or a run whose model is not on this machine
    (:func:`~components.needle.data.model_at_hand`), is followed with the loaded model,
    and the caption says whose scores the table holds."""
    own = loaded_with(scored.fingerprint)
    if own is not None:
        return own
    loaded = current_model()
    if not model_at_hand(scored.path) or audience:
        # uploaded scores, or a run whose model is not on this machine: the loaded model
        if loaded is None and not audience:
            st.info("Load a model in step 2 to follow its reward token by token.", icon="🔬")
        return loaded if not model_at_hand(scored.path) else None
    st.info(f"The per-token view follows the model that scored these pairs, "
            f"{code(scored.path, 120)}: load it to see its reward token by token"
            + (f" (the loaded model, {code(loaded[1].facts.name, 80)}, scored other numbers)."
               if loaded is not None else "."), icon="🔬")
    if st.button(f"Load {label(short_model_name(scored.path), 60)}", key=f"nw-tok-load-{pair_id}",
                 icon=":material/upload:", type="primary"):
        dtype = str(scored.variant or "").split("|")[0]
        key = ModelKey.of(scored.path, dtype if dtype in DTYPES else "auto")
        if load_model(key) is not None:
            st.rerun()
    if loaded is not None and st.toggle(
            f"Follow the loaded model instead ({label(short_model_name(loaded[1].facts.name), 60)})",
            key=f"nw-tok-other-{pair_id}",
            help="Its reward token by token; its scores are not the table's."):
        return loaded
    return None
