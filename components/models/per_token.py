"""The per-token view of one item: where in a long response the reward moves.

The reward at token t is the model's score if the text ended at t: the score head read
at every position in one pass (causal models, checked), or one pass per prefix
(encoders, custom heads); the view says which method drew the curve and marks the
token whose value was checked against the model's score. The chart shows both curves
and their difference on the tokens the two texts share; the text is shaded by the
change in reward at each token, computed from numbers only, and drawn through
:func:`components.text.render_marked_text` (literal text).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from components.text import label, render_marked_text
from needlework.figures.stats_text import signed
from needlework.rewards.curves import DiffSpan, PerTokenResult
from needlework.rewards.token_pairs import TokenPair

WINDOWS = (1, 5, 25, 100, 250)  # smoothing choices, tokens
MAX_POINTS = 3000  # per curve; longer curves keep each bucket's min and max
MIN_ALPHA = 0.08
TIGHT = "padding:0;border-radius:0"  # marks sit flush, so tokens do not look like words
Segment = tuple[str, str | None, str | None]


def deltas(rewards: Sequence[float]) -> list[float]:
    """Change in reward at each token (the first token: 0)."""
    return [0.0] + [b - a for a, b in zip(rewards, rewards[1:], strict=False)]


def shade(delta: float, scale: float) -> str | None:
    """Inline background for a reward change: green up, red down, stronger for bigger moves."""
    if scale <= 0 or delta == 0:
        return None
    alpha = min(1.0, abs(delta) / scale) * 0.9
    if alpha < MIN_ALPHA:
        return None
    rgb = "34,160,70" if delta > 0 else "220,40,40"
    return f"background:rgba({rgb},{alpha:.2f});{TIGHT}"


def changed_positions(spans: Sequence[DiffSpan], side: str) -> set[int]:
    """Token indices of ``side`` (chosen / rejected) inside a span where the texts differ."""
    out: set[int] = set()
    for s in spans:
        a, b = (s.chosen_start, s.chosen_end) if side == "chosen" else (s.rejected_start, s.rejected_end)
        out.update(range(a, b))
    return out


def _pieces(tokens: Sequence[str], text: str) -> tuple[list[str], str]:
    """Each token's share of ``text`` (a piece repeated for a split character is empty) and
    the text after the last token; the tokens themselves when they do not line up."""
    if not tokens or not text.startswith(tokens[0]):
        return list(tokens), ""
    pieces, cursor = [], 0
    for tok in tokens:
        if tok and text.startswith(tok, cursor):
            pieces.append(tok)
            cursor += len(tok)
        else:
            pieces.append("")
    return pieces, text[cursor:]


def segments(result: PerTokenResult, text: str, changed: set[int], scale: float, *,
             first_only: bool = False) -> list[Segment]:
    """``(text, class, style)`` segments: shading per token, ``nw-chg`` where the texts differ
    (with ``first_only``, only the first differing token that is not blank)."""
    pieces, rest = _pieces(result.tokens, text)
    out: list[Segment] = []
    outlined_once = False
    for k, (piece, d) in enumerate(zip(pieces, deltas(result.rewards), strict=True)):
        if not piece:
            continue
        style = shade(d, scale)
        # an outlined line break only draws a stray bar: blank tokens are never outlined
        if k in changed and piece.strip() and not (first_only and outlined_once):
            outlined_once = True
            out.append((piece, "nw-chg", (style or TIGHT) + ";outline:1px solid #b58900"))
        elif style:
            out.append((piece, None, style))
        elif out and out[-1][1] is None and out[-1][2] is None:
            out[-1] = (out[-1][0] + piece, None, None)
        else:
            out.append((piece, None, None))
    if rest:
        out.append((rest, None, None))
    return out


def downsample(values: Sequence[float], limit: int = MAX_POINTS) -> list[tuple[int, float]]:
    """``(position, value)`` points; above ``limit`` each bucket keeps its min and max."""
    if len(values) <= limit:
        return list(enumerate(values))
    size = math.ceil(len(values) / (limit // 2))
    out: list[tuple[int, float]] = []
    for start in range(0, len(values), size):
        chunk = range(start, min(start + size, len(values)))
        lo, hi = min(chunk, key=values.__getitem__), max(chunk, key=values.__getitem__)
        out.extend((k, values[k]) for k in sorted({lo, hi}))
    return out


def smooth(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over ``window`` tokens (the first ones over what there is)."""
    if window <= 1:
        return list(values)
    return pd.Series(values, dtype=float).rolling(window, min_periods=1).mean().tolist()


def default_window(n_tokens: int) -> int:
    """A smoothing window that keeps about 200 independent steps on the chart."""
    return next((w for w in reversed(WINDOWS) if w <= n_tokens // 200), 1)


def curves_chart(pair: TokenPair, names: tuple[str, str],
                 window: int = 1) -> alt.LayerChart | alt.FacetChart:
    """Reward against token position for both responses, first difference marked."""
    rows = [{"token": k, "reward": v, "response": name, "order": side}
            for side, (name, res) in enumerate(zip(names, (pair.chosen, pair.rejected), strict=True))
            for k, v in downsample(smooth(res.rewards, window))]
    # Where the texts are the same the curves coincide: chosen is drawn wide and pale below,
    # rejected thin and dashed on top, so both stay visible (issue 18, 16).
    lines = alt.Chart(pd.DataFrame(rows)).mark_line().encode(
        x=alt.X("token:Q", title="token position in the response"),
        y=alt.Y("reward:Q", title="reward if the text ended here"),
        color=alt.Color("response:N", scale=alt.Scale(domain=list(names),
                                                      range=["#2b8a3e", "#c92a2a"]),
                        legend=alt.Legend(orient="top", title=None)),
        strokeWidth=alt.StrokeWidth("response:N", scale=alt.Scale(domain=list(names), range=[4.5, 1.6]),
                                    legend=None),
        strokeDash=alt.StrokeDash("response:N", scale=alt.Scale(domain=list(names),
                                                                range=[[1, 0], [6, 3]]), legend=None),
        opacity=alt.Opacity("response:N", scale=alt.Scale(domain=list(names), range=[0.55, 1.0]),
                            legend=None),
        order=alt.Order("order:Q"),
        tooltip=["response:N", "token:Q", alt.Tooltip("reward:Q", format=".4f")])
    ends = pd.DataFrame([{"token": pooled_token(res), "reward": res.score, "response": name,
                          "what": f"the model's score (checked here, token {pooled_token(res)})"}
                         for name, res in zip(names, (pair.chosen, pair.rejected), strict=True)])
    dots = alt.Chart(ends).mark_point(filled=True, size=70).encode(
        x="token:Q", y="reward:Q", color=alt.Color("response:N", legend=None),
        tooltip=["response:N", "what:N", alt.Tooltip("reward:Q", format=".4f")])
    layers: list[alt.Chart] = [lines, dots]
    first = pair.comparison.first_difference
    if first is not None:
        rule = pd.DataFrame([{"token": first[0], "what": "first difference (chosen position)"}])
        layers.append(alt.Chart(rule).mark_rule(color="#b58900", strokeDash=[4, 3]).encode(
            x="token:Q", tooltip=["what:N", "token:Q"]))
    return alt.layer(*layers).properties(height=280)


def pooled_token(result: PerTokenResult) -> int:
    """The response token whose value was checked against the model's score (the token the
    model pools, or the last token for prefix passes)."""
    return len(result.rewards) - 1 if result.pooled is None else result.pooled


def method_caption(pair: TokenPair) -> str:
    """Which method drew the curves, and the check that the score sits on them."""
    parts = []
    for name, res in (("chosen", pair.chosen), ("rejected", pair.rejected)):
        parts.append(f"{name}: value at token {pooled_token(res)} = the model's score "
                     f"(difference {res.check:.1e})")
    notes = {r.note for r in (pair.chosen, pair.rejected) if r.note}
    return (f"Curves drawn by: {pair.chosen.method_label}. Checked before drawing, marked with a "
            f"dot: {'; '.join(parts)}." + "".join(f" {n}." for n in sorted(notes)))


def aligned_segments(aligned: Sequence[tuple[int, int, float]]) -> list[int]:
    """A run id per aligned point: a new run starts where either text skips tokens, so
    the difference is never drawn across a region where the texts differ."""
    runs, run = [], 0
    for k, (i, j, _) in enumerate(aligned):
        if k and (i != aligned[k - 1][0] + 1 or j != aligned[k - 1][1] + 1):
            run += 1
        runs.append(run)
    return runs


def difference_chart(pair: TokenPair,
                     window: int = 1) -> alt.LayerChart | alt.FacetChart | None:
    """chosen − rejected on the tokens both texts share, with the differing spans shaded."""
    aligned = pair.comparison.aligned
    if not aligned:
        return None
    runs = aligned_segments(aligned)
    values = [d for _, _, d in aligned]
    if window > 1:  # smooth within each run of shared tokens
        frame = pd.DataFrame({"d": values, "run": runs})
        values = frame.groupby("run")["d"].transform(
            lambda x: x.rolling(window, min_periods=1).mean()).tolist()
    rows = [{"token": aligned[k][0], "difference": v, "run": runs[k]}
            for k, v in downsample(values)]
    point = alt.OverlayMarkDef(size=16) if len(rows) <= 600 else False  # short runs stay visible
    line = alt.Chart(pd.DataFrame(rows)).mark_line(color="#1f6feb", strokeWidth=1.5, point=point).encode(
        x=alt.X("token:Q", title="chosen token position (shared tokens only)"),
        y=alt.Y("difference:Q", title="chosen − rejected"), detail="run:N",
        tooltip=[alt.Tooltip("token:Q"), alt.Tooltip("difference:Q", format=".4f")])
    zero = alt.Chart(pd.DataFrame([{"y": 0}])).mark_rule(color="#888").encode(y="y:Q")
    spans = [{"start": s.chosen_start, "end": max(s.chosen_end, s.chosen_start + 1)}
             for s in pair.comparison.spans[:200]]
    layers = [zero, line]
    if spans:
        layers.insert(0, alt.Chart(pd.DataFrame(spans)).mark_rect(color="#ffe08a", opacity=0.6)
                      .encode(x="start:Q", x2="end:Q"))
    return alt.layer(*layers).properties(height=200)


def biggest_moves(result: PerTokenResult, n: int = 8) -> pd.DataFrame:
    """The ``n`` tokens where the reward changes most."""
    d = deltas(result.rewards)
    top = sorted(range(len(d)), key=lambda k: -abs(d[k]))[:n]
    return pd.DataFrame([{"token position": k, "token": result.tokens[k], "change": round(d[k], 4),
                          "reward after": round(result.rewards[k], 4)} for k in sorted(top)])


def lacking(spans: Sequence[DiffSpan], side: str) -> int:
    """Tokens the other response has where ``side`` has none (pure insertions/deletions)."""
    if side == "chosen":
        return sum(s.rejected_end - s.rejected_start for s in spans if s.chosen_end == s.chosen_start)
    return sum(s.chosen_end - s.chosen_start for s in spans if s.rejected_end == s.rejected_start)


MOSTLY_DIFFERENT = 0.4  # above this share of differing tokens the outline marks only the start


def outlined(changed: set[int], n_tokens: int) -> tuple[set[int], bool]:
    """The tokens to outline, and whether the texts differ so much that only the first
    differing token is marked (outlining most of a text would hide the shading)."""
    if n_tokens and changed and len(changed) / n_tokens > MOSTLY_DIFFERENT:
        return {min(changed)}, True
    return changed, False


def _text_panel(result: PerTokenResult, text: str, spans: Sequence[DiffSpan], scale: float,
                name: str, side: str, key: str) -> None:
    changed = changed_positions(spans, side)
    marked, only_start = outlined(changed, len(result.tokens))
    missing = lacking(spans, side)
    st.caption(f"{name}: score {result.score:.4f} · {result.response_tokens:,} response tokens"
               + (f" + {result.closing_tokens} of the template's ending" if result.closing_tokens else "")
               + f" · method: {result.method}" + (f", stride {result.stride}" if result.stride > 1 else "")
               + (" · truncated to the window" if result.truncated else "")
               + (f" · {len(changed):,} of {len(result.tokens):,} tokens differ from the other "
                  "response: only where they start to differ is outlined" if only_start
                  else f" · {len(changed):,} tokens differ from the other response (outlined)")
               + (f" · the other has {missing:,} tokens this one lacks" if missing else ""))
    render_marked_text(segments(result, text, changed if only_start else marked, scale,
                                first_only=only_start), box=True, max_height=420, key=key)
    with st.expander(f"Tokens where the reward of {name} moves most"):
        st.dataframe(biggest_moves(result), hide_index=True, width="stretch", key=f"{key}-moves")


def render_token_pair(pair: TokenPair, names: tuple[str, str], key: str) -> None:
    """Both curves, their difference and both texts shaded by the change in reward."""
    c = pair.comparison
    cols = st.columns(3)
    cols[0].metric(f"score {names[0]}", f"{pair.chosen.score:.4f}")
    cols[1].metric(f"score {names[1]}", f"{pair.rejected.score:.4f}")
    cols[2].metric("margin (chosen − rejected)", signed(c.margin),
                   help="≤ 0 means the model prefers (or ties) the rejected response: wrong.")
    longest = max(len(pair.chosen.rewards), len(pair.rejected.rewards))
    window = st.select_slider(
        "Smoothing (trailing mean over tokens; 1 = raw)", WINDOWS, value=default_window(longest),
        key=f"{key}-smooth-{longest}",
        help="Charts only: the text shading below always uses the raw change at each token.")
    st.altair_chart(curves_chart(pair, names, window), width="stretch", key=f"{key}-curves")
    st.caption(method_caption(pair))  # our own words and numbers, no data text
    diff = difference_chart(pair, window)
    if diff is not None:
        gap = c.gap_words()
        st.caption("Difference where the texts share tokens (yellow: where they differ)"
                   + (f"; {gap}" if gap else "") + ".")
        st.altair_chart(diff, width="stretch", key=f"{key}-diff")
    scale = max((abs(x) for r in (pair.chosen, pair.rejected) for x in deltas(r.rewards)), default=0.0)
    st.caption("Text shading: green where the reward goes up at that token, red where it goes "
               "down (stronger = bigger change, same scale for both texts; small moves are left "
               "plain); outlined yellow = tokens where the two responses differ.")
    tabs = st.tabs([label(names[0]), label(names[1])])
    with tabs[0]:
        _text_panel(pair.chosen, pair.chosen_text, c.spans, scale, names[0], "chosen",
                    f"{key}-chosen")
    with tabs[1]:
        _text_panel(pair.rejected, pair.rejected_text, c.spans, scale, names[1], "rejected",
                    f"{key}-rejected")
