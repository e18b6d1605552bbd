"""Step 3 of the needle lab: which results, the heatmap (click a cell), the findings, the
accuracy lines, and a cell's pairs down to one pair's per-token view with the needle marked.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from components.models.per_token import render_token_pair
from components.models.picker import DTYPES, code, current_model, load_model, loaded_with
from components.needle.data import COMPARE, PRIMARY, ResultSet, model_at_hand, short_model_name
from components.text import label, render_marked_text, render_text
from needlework.figures.stats import paired_by_key
from needlework.figures.stats_text import how, percent, percent_range, signed, verdict
from needlework.needle import charts
from needlework.needle.analysis import (
    ORDER_NAMES,
    THIN_CELL,
    bucket_label,
    cell_intervals,
    cell_rows,
    combine,
    length_label,
    selected_cell,
)
from needlework.needle.findings import (
    cell_key,
    findings,
    overview,
    position_trend,
    slide_subtitle,
    wrap,
)
from needlework.rewards.errors import RewardModelError
from needlework.rewards.loading import RewardModel
from needlework.rewards.registry import ModelKey
from needlework.rewards.token_pairs import token_pair
from needlework.words import plural

NONE = "(none)"
CONTEXT_CHARS = 320  # characters of text shown either side of the needle
SIDE_NAMES = {"safety": ("chosen (harmless)", "rejected (harmful needle)"),
              "factuality": ("chosen (true)", "rejected (false needle)")}


def size(s: ResultSet) -> str:
    """``58 pairs``, or for a judge ``58 pairs, 116 trials`` (each pair in both orders)."""
    pairs = s.frame["id"].nunique() if len(s.frame) else 0
    return f"{pairs:,} pairs" + (f", {len(s.frame):,} trials" if s.kind == "judge" else "")


def pick_sets(sets: list[ResultSet], fingerprint: str | None) -> list[ResultSet]:
    """'Results of' and 'Compare with' pickers; returns one or two result sets."""
    by_name = {s.name: s for s in sets}
    names = list(by_name)
    if st.session_state.get(PRIMARY) not in by_name:
        st.session_state[PRIMARY] = next((s.name for s in sets if fingerprint and s.fingerprint == fingerprint),
                                         names[0])
    others = [NONE] + [n for n in names if n != st.session_state[PRIMARY]]
    if st.session_state.get(COMPARE) not in others:  # a judge beside a model, if there is one
        kind = by_name[st.session_state[PRIMARY]].kind
        st.session_state[COMPARE] = next((s.name for s in sets if s.kind != kind
                                          and s.name in others), NONE)
    cols = st.columns(2)
    primary = cols[0].selectbox("Results of", names, key=PRIMARY, persist_state="session",
                                format_func=lambda n: f"{n} · {by_name[n].source} · {size(by_name[n])}")
    other = cols[1].selectbox("Compare with (side by side, one colour scale)", others, key=COMPARE,
                              persist_state="session", disabled=len(others) == 1,
                              format_func=lambda n: n if n == NONE else f"{n} · {size(by_name[n])}",
                              help="Another model's or an LLM judge's results on the same needles: "
                                   "score the dataset with a second model, judge it (step 2), or "
                                   "upload scores below.")
    chosen = [by_name[primary]] + ([by_name[other]] if other in by_name else [])
    return chosen


def picked_sets(sets: list[ResultSet], fingerprint: str | None = None) -> list[ResultSet]:
    """The sets picked on the page (kept for the session), without drawing the pickers."""
    by_name = {s.name: s for s in sets}
    if not sets:
        return []
    primary = st.session_state.get(PRIMARY)
    if primary not in by_name:
        primary = next((s.name for s in sets if fingerprint and s.fingerprint == fingerprint), sets[0].name)
    other = st.session_state.get(COMPARE)
    return [by_name[primary]] + ([by_name[other]] if other in by_name and other != primary else [])


def results_of(chosen: list[ResultSet]) -> pd.DataFrame:
    """The chosen sets' frames in one (their ``model`` columns differ)."""
    return combine([s.frame for s in chosen]) if len(chosen) > 1 else chosen[0].frame


def for_page(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Ready for ``st.altair_chart``: SVG in the browser (crisp, each cell an element with an
    aria label) and autosize ``pad``, so width and height are the plot's own, as in the PNG and
    SVG exports. (Streamlit's theme fits axes and legend into them instead, which squeezes a
    heatmap of two or three lengths to a few pixels.)"""
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"),
                            usermeta={"embedOptions": {"renderer": "svg"}})


def _text_size(chart: alt.TopLevelMixin, size: int) -> None:
    """Set the font size of the cell labels (the text layers of a heatmap; a readable
    cell's two lines stay centred on it)."""
    spec = getattr(chart, "spec", chart)
    for layer in getattr(spec, "layer", []) or []:
        mark = layer.mark
        if getattr(mark, "type", mark) != "text":
            continue
        if getattr(mark, "description", None) == charts.TWO_LINES:
            layer.mark = alt.MarkDef(type="text", fontSize=size, lineBreak="\n", lineHeight=size,
                                     dy=-round(size / 2), description=charts.TWO_LINES)
        else:
            layer.mark = alt.MarkDef(type="text", fontSize=size, lineBreak="\n")


def heatmap_chart(chosen: list[ResultSet], *, select: bool = True, large: bool = False,
                  title: str | None = None, notes: list[str] | None = None) -> alt.TopLevelMixin:
    """The heatmap of one set, or two side by side on one colour scale, at a fixed size: the
    PNG, SVG and PDF downloads (large: for presenting). ``title`` on top, wrapped to the
    chart's width (Vega never wraps a title); ``notes`` (model, finding, date) below it,
    each wrapped, so a file read alone says what it shows."""
    frame = results_of(chosen)
    lengths = max(1, frame["length_tokens"].nunique())
    if large:
        width, row, font = (900 if len(chosen) == 1 else 620), 76, 17
    else:
        width, row, font = (600 if len(chosen) == 1 else 430), 40, 11
    chart = charts.heatmap(frame, select=select, width=width, height=max(3 * row, row * lengths))
    _text_size(chart, font)
    chart = chart.configure_axis(labelFontSize=font, titleFontSize=font + 1).configure_axisX(
        labelAngle=0 if width / 10 >= 5 * font else -40, labelOverlap=False).configure_axisY(
        labelExpr=charts.LENGTH_LABEL).configure_legend(
        labelFontSize=font - 1, titleFontSize=font, gradientLength=max(3 * row, row * lengths) - 20)
    if large:
        chart = chart.configure_header(labelFontSize=19, labelFontWeight="bold")
    if title or notes:
        span = width * len(chosen) + 140  # the panels and the legend beside them
        size, small = font + 9, font
        lines = wrap(title or "", int(span / (0.56 * size))) if title else [""]
        below = [line for note in notes or [] for line in wrap(note, int(span / (0.5 * small)))]
        extra: dict[str, Any] = ({"subtitle": below, "subtitleFontSize": small,
                                  "subtitleColor": "#333", "subtitlePadding": 8} if below else {})
        chart = chart.properties(title=alt.TitleParams(lines, fontSize=size, anchor="start",
                                                       offset=14, **extra))
    return for_page(chart)


def notes_of(chosen: list[ResultSet]) -> dict[str, str]:
    """``{set name: what explains a judge at chance}`` for the sets that carry such a note."""
    return {s.name: s.note for s in chosen if s.note}


def export_notes(chosen: list[ResultSet], when: str) -> list[str]:
    """What a downloaded heatmap says under its title: the models and what was counted,
    the finding of each model (a judge's position bias, and whether it is at chance), and
    the date it was made."""
    frame = results_of(chosen)
    return [slide_subtitle(frame), *findings(frame, why=notes_of(chosen)), cell_key(frame),
            f"Made {when} with Needlework."]


LAST = "nw_heat_last"  # each panel's selection at the last run, to tell which was clicked
CELL = "nw_heat_cell"  # (set name, length, bucket) of the last cell clicked


def panel_key(prefix: str, s: ResultSet) -> str:
    return f"{prefix}|{s.name}"


def render_heatmaps(chosen: list[ResultSet], *, large: bool = False, prefix: str = "nw_heat",
                    height: int | None = None,
                    font: int | None = None) -> tuple[ResultSet, tuple[int, int]] | None:
    """One clickable heatmap per result set, side by side, each as wide as its column (they
    fit the page at any width down to 1024 px, and each fills its own fullscreen view), all on
    the one 0–100 % colour scale. ``large``: the slide's, ``height`` tall with its axes and
    legend and labels ``font`` px (24 at least). Returns the set and cell (length, bucket)
    clicked last."""
    cols = st.columns(len(chosen), gap="medium") if len(chosen) > 1 else [st.container()]
    # on the slide: 24-px labels at least (readable at 3 m); the model is in the subtitle, so
    # a single panel has no title of its own
    row, font = (52, max(24, font or 24)) if large else (40, 11)
    cells: dict[str, tuple[int, int] | None] = {}
    for col, s in zip(cols, chosen, strict=True):
        name = s.name + (" (both orders)" if s.kind == "judge" else "")
        chart = for_panel(charts.heatmap_panel(s.frame, title=name if len(chosen) > 1 else None,
                                               row_height=row, font=font,
                                               height=height if large else None, slide=large))
        event = col.altair_chart(chart, on_select="rerun", width="stretch",
                                 key=panel_key(prefix, s))
        cells[s.name] = selected_cell(event)
    last = st.session_state.get(f"{LAST}|{prefix}") or {}
    changed = [(n, c) for n, c in cells.items() if c is not None and c != last.get(n)]
    st.session_state[f"{LAST}|{prefix}"] = cells
    picked = st.session_state.get(f"{CELL}|{prefix}")
    if changed:
        picked = (changed[-1][0], *changed[-1][1])
    elif picked is not None and cells.get(picked[0]) is None:
        picked = None  # its panel was cleared (double-click) or is no longer shown
    st.session_state[f"{CELL}|{prefix}"] = picked
    if picked is None:
        return None
    by_name = {s.name: s for s in chosen}
    return by_name[picked[0]], (int(picked[1]), int(picked[2]))


def for_panel(chart: alt.LayerChart) -> alt.LayerChart:
    """A page panel: SVG in the browser (each cell an element with an aria label), no
    Streamlit theme sizing (the panel sets its own)."""
    return chart.properties(usermeta={"embedOptions": {"renderer": "svg"}})


def heatmap_caption(chosen: list[ResultSet]) -> None:
    """What the heatmap shows: rows, columns, colour, missing and thin cells, a judge's trials."""
    missing = sum(int(s.frame["missing"].sum()) for s in chosen if "missing" in s.frame)
    judged = [s for s in chosen if s.kind == "judge"]
    st.caption("Rows: response length; columns: where the needle sits (share of the response). "
               "Colour and label: accuracy (chosen scored strictly above rejected; ties are wrong), "
               "one colour scale for every panel. "
               + (f"**{missing} pair(s) have a missing score** (skipped as too long, or NaN/inf): "
                  "they count as wrong and stay in every cell's n, as in Long-form RewardBench's "
                  "scorer. " if missing else "")
               + ("A judge's cells count trials, each pair twice (chosen shown first, then "
                  "second): right = it named the chosen response; an invalid answer is wrong. "
                  if judged else "")
               + "Under each accuracy, its n in pairs (a judge's too: its two trials of a pair "
               "are one pair; on a narrow panel in the tooltip only). Grey with only its "
               f"count: too few to read, fewer than {THIN_CELL} pairs (one rule for a reward "
               "model and a judge: a judge's two trials of a pair count as one pair); "
               "blank: none there. Hover for counts and the cell's 95 % interval "
               f"({how()}, the pair the unit: a judge's two orders of a pair together); "
               "**click a cell to see its pairs** (double-click clears).")
    if len(chosen) == 2:
        render_text(paired_words(chosen[0], chosen[1]), key="nw-paired")


def paired_words(first: ResultSet, second: ResultSet) -> str:
    """The two sets compared on the pairs both scored: each pair's outcome (a judge's share
    of its two orders), who is ahead, the difference's interval and the test that fits the
    outcomes (McNemar's exact test for 0/1, Wilcoxon's signed-rank test for shares), in one
    sentence (:func:`needlework.figures.stats_text.verdict`)."""
    def per_pair(s: ResultSet) -> dict[str, float]:
        if s.frame.empty:
            return {}
        return {str(k): float(v) for k, v in s.frame.groupby("id")["correct"].mean().items()}

    return verdict(paired_by_key(per_pair(first), per_pair(second), unit="pair"),
                   first.name, second.name)


def render_findings(frame: pd.DataFrame, why: dict[str, str] | None = None) -> list[str]:
    """The one-line finding per model (computed from the data; for a judge, its position
    bias and whether it is at chance, with ``why`` per set name) and the position trend."""
    lines = findings(frame, why=why)
    for k, line in enumerate(lines):
        render_text(line, key=f"nw-finding-lab-{k}")
    for model in dict.fromkeys(frame["model"]):  # the panels' order
        st.caption(f"{label(model, 60)}: {label(overview(frame, model), 400)} "
                   f"{label(position_trend(frame, model), 300)}")
    return lines


def render_lines(chosen: list[ResultSet]) -> None:
    """Accuracy against position, one line per length: a chart per result set, side by
    side, each as wide as its column (they fit the page down to 1024 px)."""
    cols = st.columns(len(chosen), gap="medium") if len(chosen) > 1 else [st.container()]
    for col, s in zip(cols, chosen, strict=True):
        chart = charts.accuracy_lines(s.frame, title=s.name if len(chosen) > 1 else None,
                                      width="container", height=240)
        chart = chart.properties(autosize=alt.AutoSizeParams(type="fit", contains="padding"),
                                 height=300, usermeta={"embedOptions": {"renderer": "svg"}}
                                 ).configure_legend(orient="bottom", direction="horizontal")
        col.altair_chart(chart, width="stretch", key=panel_key("nw_lines", s))


# -- one cell, one pair -------------------------------------------------------------------


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
