"""Review page widgets: the verdict panel, queue navigation, the comparison
picker, the item header and the response columns."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import streamlit as st

from components import st_dom
from components.callbacks import uninterrupted
from components.hints import import_words
from components.review.diff_view import render_diff
from components.review.long_text import cuts, render_long_text
from components.review.position import ADVANCE, Ident, intent, save_note, state_key
from components.review.reading import render_markdown_switch, render_view, render_whole_switch
from components.state import DATASET_KEY
from components.text import TEXT_STYLE, label, marked_html, render_text
from needlework.figures.stats_text import percent
from needlework.formats import RMBENCH_STYLES, Preference
from needlework.review import instances
from needlework.review.diff import cached_diff, quick_similarity
from needlework.review.lengths import count, counter_words
from needlework.review.queue import Comparison
from needlework.review.sides import CHOSEN, PLAIN, REJECTED, Sides
from needlework.teams.blind import against_yours
from needlework.teams.permissions import REVIEWER, User
from needlework.verdicts import REASONS, VERDICT_ICONS, VERDICTS
from needlework.words import plural

REVIEWABLE = ("preference", "needle")  # dataset kinds this page reviews
ButtonKind = Literal["primary", "secondary", "tertiary"]  # st.button's type=
NEAR_IDENTICAL = 0.6  # auto view: differences when at least this share of words is shared


def _time(stamp: str) -> str:
    return stamp[11:19] + " UTC" if len(stamp) >= 19 else stamp


def side_names(pref: Preference, fmt: str) -> tuple[list[str], list[str]]:
    """Display names of the chosen and rejected responses (RM-Bench: their style;
    RewardBench 2: numbers from 1, one completion too)."""
    if instances.applies(fmt):
        return instances.side_names(pref)
    if fmt == "rmbench" and len(pref.chosen) == len(pref.rejected) == len(RMBENCH_STYLES):
        return list(RMBENCH_STYLES), list(RMBENCH_STYLES)
    def names(n: int) -> list[str]:
        return [str(k + 1) for k in range(n)] if n > 1 else [""]
    return names(len(pref.chosen)), names(len(pref.rejected))


@uninterrupted
def _pick(name: str) -> None:
    """Choose ``name`` in the sidebar's dataset picker (bound to ``?dataset=``)."""
    st.session_state[DATASET_KEY] = name


def render_pick_dataset(rows: Sequence[Mapping[str, Any]], current: Mapping[str, Any] | None = None,
                        user: User | None = None) -> None:
    """Say what this page needs (and what the dataset picked is for), with a button that
    opens each dataset it can review here; where there is none, what ``user``'s role can
    do about it (:func:`components.hints.import_words`)."""
    usable = [r for r in rows if r["kind"] in REVIEWABLE]
    if not usable and user is not None and not user.at_least(REVIEWER):
        # an annotator sees only what is assigned to them: there may be others
        st.info("No preference dataset is assigned to you yet: your lead assigns them.",
                icon="⚖️")
        return
    if not usable:
        st.info("No preference datasets yet: "
                + import_words(user, "Long-form RewardBench, RM-Bench, RewardBench 2, pairs "
                                   "or needle files")
                + ".", icon="⚖️")
        return
    if current is not None:
        st.info(label(f"{current['name']} is a {current['kind']} dataset: it is annotated on the "
                      f"{'Annotate' if current['kind'] == 'grounding' else 'Needle lab'} page. "
                      "This page reviews preference pairs: pick one of these.", 300), icon="⚖️")
    else:
        st.info("This page reviews preference datasets: pick one.", icon="⚖️")
    for r in usable:
        st.button(f"{label(r['name'], 60)} · {plural(r['items'], 'item')}", key=f"rv_pick_ds|{r['name']}",
                  icon=":material/arrow_forward:", on_click=_pick, args=(r["name"],))


BAR_STYLE = """
<style>
@media (min-height: 780px){
  BAR_WRAPPER{position:sticky;bottom:0;z-index:90}
}
.st-key-rv-bar{background:var(--nw-bg,#fff);border-top:1px solid rgba(128,128,128,.3);
  padding:.35rem 0 2.1rem 0}
.st-key-rv-bar button{min-height:1.85rem;padding:0 .34rem}
.st-key-rv-verdicts{column-gap:.2rem}
.st-key-rv-bar button p{white-space:nowrap;font-size:.88rem}
.st-key-rv-picker button div,.st-key-rv-picker button p{white-space:normal;overflow:visible;
  text-overflow:clip}
.st-key-rv-responses .nw-box{max-height:max(16rem,calc(100vh - 21rem)) !important;
  font-size:.95rem;line-height:1.45}
.nw-prompt{border:1px solid rgba(128,128,128,.35);border-radius:.5rem;padding:.3rem .7rem;
  margin:0;overflow-y:auto;max-height:max(4.9rem,min(220px,calc(100vh - 43rem)))}
</style>
""".replace("BAR_WRAPPER", st_dom.wrapper("rv-bar"))


PROMPT_WORD = "background:none;font-weight:600;padding:0"  # the word "Prompt" (ours)
SUGGESTED = "#6d28d9"  # suggestions are violet, as on the annotate page


def suggestion_line(row: Mapping[str, Any], sides: Sides = PLAIN) -> str:
    """``Chosen better (reward:demo-model 1.30)`` for a suggested verdict (Markdown-safe;
    ``sides`` names the verdict)."""
    score = "" if row.get("score") is None else f" {row['score']:.2f}"
    name = sides.verdict_words(str(row["value"]))
    return f"{name} ({label(str(row['source']), 60)}{score})"


def suggestion_note(offered: Sequence[Mapping[str, Any]], mine: str | None, *,
                    after: bool = False, held: bool = False, sides: Sides = PLAIN) -> str:
    """The caption's words on a comparison's suggested verdict (Markdown-safe, violet; ``""``
    when there is nothing to say): ``suggested: … · Y accepts``; with the ``after``
    timing, once the comparison has your verdict ``mine``, ``model: … — differs from
    yours``, and before (``held``: a suggestion waits) that it shows after yours."""
    if after and held:
        return " · :violet[the model's verdict shows once you give yours]"
    if not offered:
        return ""
    lines = ", ".join(suggestion_line(r, sides) for r in offered)
    if after:
        words = against_yours(mine, [r["value"] for r in offered])
        mark = (f":violet[{words}]" if words == "same as yours"
                else f":orange-background[**{words}**]")
        return f" · :violet[model: {lines}] — {mark}"
    return f" · :violet[suggested: {lines} · Y accepts]"


def render_verdict_bar(mine: Mapping[str, Any] | None, unreviewed: int,
                       offered: Sequence[Mapping[str, Any]] = (), *, accept: bool = True,
                       sides: Sides = PLAIN) -> None:
    """The verdict buttons (A F T B S), the reasons (1–7) and the moves (K J N), in a bar
    that stays at the bottom of the window while the responses scroll above it (in a
    window at least 780 px high; in a lower one it follows the responses, which then
    keep the first screen). The key
    script handles the keys and the clicks on these buttons (``js/review_keys.js``).
    ``offered``: the suggested verdicts shown (dashed); ``accept``: whether Y takes them;
    ``sides``: the words, order and keys of the verdicts (the left response's first)."""
    current = (mine or {}).get("verdict")
    saved_reasons = list((mine or {}).get("reasons") or [])
    st.html(BAR_STYLE)
    by_verdict: dict[str, list[str]] = {}
    for row in offered:  # the suggested verdicts: a dashed violet border, sources on hover
        by_verdict.setdefault(str(sides.shown(str(row["value"]))), []).append(
            suggestion_line(row, sides))
    current = sides.shown(current)
    # drawn with or without suggestions: the bar after it keeps its place on the page (a
    # bar redrawn in another place is missing for a moment, and the key script, which
    # looks for it, would drop a key pressed then)
    st.html("<style>" + "".join(
        f".st-key-rv_v_{v} button{{border:2px dashed {SUGGESTED}}}" for v in by_verdict
        if v in sides.order()) + "</style>")
    with st.container(key="rv-bar", gap="xsmall"):
        with st.container(horizontal=True, gap="xsmall", key="rv-verdicts",
                          vertical_alignment="center"):
            for verdict in sides.order():
                text, key = sides.verdict_words(verdict), sides.shortcut(verdict)
                hint = (f"Suggested: {', '.join(by_verdict[verdict])}."
                        + (" Y accepts." if accept else "") if verdict in by_verdict else None)
                st.button(text, key=f"rv_v_{verdict}", shortcut=key, icon=sides.icon(verdict),
                          type="primary" if verdict == current else "secondary", help=hint)
            st.space("stretch")
            st.button("", key="rv_prev", shortcut="K", icon=":material/arrow_back:",
                      help="Previous comparison")
            st.button("", key="rv_next", shortcut="J", icon=":material/arrow_forward:",
                      help="Next comparison")
            st.button("Next unreviewed", key="rv_next_unreviewed", shortcut="N",
                      icon=":material/skip_next:", type="primary", disabled=unreviewed == 0)
        with st.container(horizontal=True, gap="xsmall", vertical_alignment="center"):
            # the rule a fast typist needs (docs/review.md): 1-7 right after a verdict go
            # with it, even when the page has moved on; before one, they wait for it
            st.caption("Reasons · after a verdict: for it")
            for tag, key in REASONS.items():
                st.button(tag, key=f"rv_r_{key}", shortcut=key,
                          type="primary" if tag in saved_reasons else "secondary")


def render_verdict_panel(
    dataset: str, ident: Ident, mine: Mapping[str, Any] | None, others: Sequence[dict[str, Any]],
    me: str, names: tuple[list[str], list[str]], last: str = "", sides: Sides = PLAIN,
) -> None:
    """Which comparison the verdict is for (the item's id, then the pair), the note, the
    saved status and the others' verdicts (the buttons are in :func:`render_verdict_bar`)."""
    if sides.neutral:
        first = sides.first()
        pair = " vs ".join(
            sides.title(side, names[side == REJECTED][ident[2] if side == REJECTED else ident[1]])
            for side in (first, REJECTED if first == CHOSEN else CHOSEN))
    else:
        pair = (f"{side_title(sides.words[0], names[0][ident[1]])} vs "
                f"{side_title(sides.words[1], names[1][ident[2]])}")
    st.markdown(f"**Verdict** on item {label(ident[0], 60)} · {pair}")
    note_key = state_key("note", dataset, ident)
    if note_key not in st.session_state:
        st.session_state[note_key] = (mine or {}).get("note") or ""
    st.text_input("Note", key=note_key, placeholder="optional · Enter saves · Esc leaves",
                  on_change=save_note, args=(dataset, ident))
    st.toggle("Next unreviewed after a verdict", value=True, key=ADVANCE)
    _status(mine, me, last, sides)
    for row in others:
        reasons = label(", ".join(map(str, row["reasons"])), 80)
        st.caption(f"{label(row['annotator'], 40)}: {sides.icon(row['verdict'])} "
                   f"{label(sides.verdict_words(str(row['verdict'])), 30)}"
                   + (f" · {reasons}" if reasons else ""))


def _status(mine: Mapping[str, Any] | None, me: str, last: str, sides: Sides = PLAIN) -> None:
    if not me:
        st.caption("✍️ Enter your name in the sidebar to save verdicts.")
    elif mine:
        name = (sides.verdict_words(mine["verdict"]) if mine["verdict"] in VERDICTS
                else label(str(mine["verdict"]), 20))
        name = name if sides.neutral else name.lower()
        st.success(f"Saved: {name} · {_time(mine['updated_at'])} by {label(me, 40)}", icon="💾")
    else:
        st.caption("Not reviewed by you yet. Reasons and the note are saved with the verdict.")
    if last:
        st.caption(f"Last saved: {last}")


def render_queue_nav(total: int, position: int | None, unreviewed: int) -> None:
    """Where I am in the list (the moves are in the verdict bar: K / J / N)."""
    where = f"{position + 1:,} of {total:,}" if position is not None else f"outside this view ({total:,})"
    st.markdown(f"**Queue** · comparison {where}")
    st.caption(f"{unreviewed:,} not reviewed by you in this view.")


def render_item_header(
    key: str, subset: str, pref: Preference, in_queue: bool, disagree: Sequence[tuple[int, int]],
    sides: Sides = PLAIN,
) -> None:
    """Item id, subset, and notes that come with the record (not to a blind annotator:
    RM-Bench's note says what is wrong with the rejected responses). The prompt is drawn
    with the responses (:func:`render_prompt`), where it stays on screen."""
    cols = st.columns([4, 2])
    cols[0].markdown(f"#### Item {label(key, 60)}")
    badges = cols[1].container(horizontal=True, horizontal_alignment="right")
    if subset:
        badges.badge(label(subset, 30), color="blue")
    if pref.subset and pref.subset != subset:
        badges.badge(label(pref.subset, 30), color="gray")
    if disagree:
        badges.badge("model disagrees", icon="⚠️", color="orange")
    if not in_queue:
        st.caption("This comparison is outside the current filters.")
    error = pref.meta.get("error")
    if isinstance(error, str) and error and not sides.neutral:
        with st.expander("The dataset's note on the rejected answers (RM-Bench `error`)"):
            render_text(error)


def render_picker(
    pref: Preference, names: tuple[list[str], list[str]], current: Comparison,
    mine: Mapping[Ident, str], in_scope: Sequence[tuple[int, int]], sides: Sides = PLAIN,
) -> None:
    """A grid of comparisons (rows: chosen, columns: rejected) with my verdicts;
    comparisons outside the queue's scope are drawn plain. Neutral ``sides``: one row,
    ``Pair 1``, ``Pair 2``, … (the grid's rows and columns would name the sides)."""
    if len(pref.chosen) == 1 and len(pref.rejected) == 1:
        return
    with st.container(key="rv-picker"):
        if sides.neutral:
            _picker_row(current, mine, in_scope, len(pref.chosen), len(pref.rejected), sides)
        else:
            _picker_grid(names, current, mine, in_scope, len(pref.chosen), len(pref.rejected),
                         sides)


def _picker_row(current: Comparison, mine: Mapping[Ident, str],
                in_scope: Sequence[tuple[int, int]], n_chosen: int, n_rejected: int,
                sides: Sides) -> None:
    pairs = [(i, j) for i in range(n_chosen) for j in range(n_rejected)]
    for (i, j), col in zip(pairs, st.columns(len(pairs)), strict=True):
        verdict = mine.get((current.item, i, j))
        text = (f"{sides.icon(verdict)} {label(sides.verdict_words(verdict), 20)}"
                if verdict else "○ not reviewed")
        kind: ButtonKind = "primary" if (i, j) == (current.i, current.j) else (
            "secondary" if (i, j) in in_scope else "tertiary")
        col.button(f"Pair {pairs.index((i, j)) + 1} · {text}", key=f"rv_pick_{i}_{j}",
                   width="stretch", type=kind)


def _picker_grid(names: tuple[list[str], list[str]], current: Comparison, mine: Mapping[Ident, str],
                 in_scope: Sequence[tuple[int, int]], n_chosen: int, n_rejected: int,
                 sides: Sides = PLAIN) -> None:
    chosen_names, rejected_names = names
    many = n_chosen > 1
    spec = [1.1] + [1] * n_rejected if many else n_rejected
    if many:
        header = st.columns(spec)
        header[0].caption(f"{sides.words[0]} ↓ · {sides.words[1]} →")
        for col, name in zip(header[1:], rejected_names, strict=True):
            col.caption(name)
    for i in range(n_chosen):
        cols = st.columns(spec, vertical_alignment="center")
        if many:
            cols[0].caption(chosen_names[i])
        for j, col in enumerate(cols[1:] if many else cols):
            verdict = mine.get((current.item, i, j))
            text = (f"{VERDICT_ICONS.get(verdict, '')} "
                    f"{label(sides.verdict_words(verdict), 20)}" if verdict
                    else "○ not reviewed")
            if not many:
                text = f"{sides.title(REJECTED, rejected_names[j])} · {text}"
            kind: ButtonKind = "primary" if (i, j) == (current.i, current.j) else (
                "secondary" if (i, j) in in_scope else "tertiary")
            col.button(text, key=f"rv_pick_{i}_{j}", width="stretch", type=kind)


def side_title(side: str, name: str) -> str:
    """``Chosen``, ``Rejected 2`` or ``Rejected · concise`` (names are ours, not data)."""
    if not name:
        return side
    return f"{side} {name}" if name.isdigit() else f"{side} · {name}"


def _header(side: str, name: str, text: str, score: float | None, fallback,
            sides: Sides = PLAIN) -> str:
    counted = count(text, *fallback)
    parts = [f"**{sides.title(side, name)}**",
             f"{counted.tokens:,} tokens ({label(counter_words(counted.method), 60)})"]
    if score is not None:
        parts.append(f"score {score:.3f}")
    return " · ".join(parts)


def render_prompt(prompt: str) -> None:
    """The prompt (literal), right above the responses: when the page scrolls to show a
    comparison's responses, the prompt stays on screen. Its box holds three lines in a
    window 800 px high (more in a taller one) and scrolls a longer prompt."""
    # not an nw-box: the key script fits and scrolls the responses' boxes only
    st.html(TEXT_STYLE + '<div class="nw-text nw-prompt" id="rv-prompt">'
            + marked_html([("Prompt · ", None, PROMPT_WORD), (prompt, None, None)]) + "</div>")


def render_responses(
    dataset: str, pref: Preference, names: tuple[list[str], list[str]], current: Comparison,
    scores: Mapping[str, Any] | None, fallback: tuple, sides: Sides = PLAIN,
) -> str:
    """The chosen and rejected responses side by side, or their differences (neutral
    ``sides``: Response A on the left, whichever it is).
    Returns a marker that changes with the difference in focus (for the key script)."""
    i, j = current.i, current.j
    ident = current.ident
    chosen_scores = (scores or {}).get("chosen_scores") or []
    rejected_scores = (scores or {}).get("rejected_scores") or []
    shown = {CHOSEN: (pref.chosen[i], names[0][i], chosen_scores[i] if i < len(chosen_scores) else None),
             REJECTED: (pref.rejected[j], names[1][j],
                        rejected_scores[j] if j < len(rejected_scores) else None)}
    order = (CHOSEN, REJECTED) if sides.first() == CHOSEN else (REJECTED, CHOSEN)
    a, b = shown[order[0]][0], shown[order[1]][0]
    head_a, head_b = (_header(side, shown[side][1], shown[side][0], shown[side][2], fallback, sides)
                      for side in order)
    headers = (head_a, head_b)
    render_prompt(pref.prompt)
    controls = st.container(horizontal=True, vertical_alignment="center")
    view = render_view(controls)  # the person's, kept (components/review/reading.py)
    diff = None
    if view == "diff" or (view == "auto" and a != b and quick_similarity(a, b) >= NEAR_IDENTICAL):
        diff = cached_diff(a, b)
        if view == "auto" and diff.similarity < NEAR_IDENTICAL:
            diff = None
    if diff is None:
        markdown = render_markdown_switch(controls)
        whole = render_whole_switch(controls, diff=False, cut=cuts(a) or cuts(b))
        if view == "auto" or a == b:
            controls.caption("Side by side: " + ("the two texts are identical" if a == b else
                                                 "not near-identical (auto)"))
        left, right = st.columns(2, gap="medium")
        for col, header, text, side in ((left, headers[0], a, "a"), (right, headers[1], b, "b")):
            with col:
                st.markdown(header)
                render_long_text(text, f"rv-{side}{'-md' if markdown else ''}-{current.item}-{i}-{j}",
                                 markdown=markdown, whole=whole)
        return "side-md" if markdown else "side"
    n = len(diff.differences)
    key = state_key("diff", dataset, ident)
    k = min(max(0, st.session_state.get(key, 0)), max(0, n - 1))
    controls.button("Prev. difference", key="rv_dprev", shortcut="Shift+D", icon="⬆️",
                    disabled=k == 0, on_click=intent, args=("diff", k - 1, ident))
    controls.button("Next difference", key="rv_dnext", shortcut="D", icon="⬇️",
                    disabled=k >= n - 1, on_click=intent, args=("diff", k + 1, ident))
    whole = render_whole_switch(controls, diff=True)
    same = percent(diff.similarity, digits=1 if 0.99 < diff.similarity < 1 else 0, space=False)
    word_a, word_b = ("A", "B") if sides.neutral else sides.words
    st.caption(f"Difference {k + 1 if n else 0} of {n} (outlined) · {same} of words identical · "
               f"red struck: only in {word_a} · green: only in {word_b} · yellow: changed")
    render_diff(diff, k, headers, f"rv-d-{current.item}-{i}-{j}", whole=whole)
    return f"{k}-{zlib.crc32(repr(ident).encode('utf-8'))}-{int(whole)}"
