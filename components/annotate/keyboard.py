"""The annotate page's keyboard: the browser aims each key at a passage, the outbox
delivers it (:mod:`components.outbox`).

The passage cursor lives in the browser (``js/annotate_keys.js``), so a key goes where
the annotator sees the outline even while the page is still redrawing. A label key
becomes an action naming dataset, item, passage, label and annotator; ``N`` / ``P`` /
``U`` ask the server for the next, previous or next unfinished question, and keys
pressed until it is shown are held and then aimed at it. The script also puts the
cursor in the answer on ``A``, leaves text fields on ``Esc`` (which saves them) and
commits the answer draft 1.5 s after typing pauses. No data goes into the script: the
server's view reaches it as the component's data.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from sqlite_utils import Database

from components import st_dom
from components.annotate.item import (
    HIDE_IMPORTED,
    ItemContext,
    acceptable,
    hide_imported,
    offers_suggestions,
    set_hidden,
)
from components.outbox import applied_through, courier, draw_code
from components.scripts import bundle
from needlework.grounding import item as gitem
from needlework.grounding.keymap import dimension_keys, label_keys
from needlework.grounding.labels import LABEL_PREFIX
from needlework.grounding.line import line
from store.grounding import openings

#: the key script's code (sent once per tab) and the courier of its data (every run)
_CODE = st.components.v2.component("needlework.annotate_keys", isolate_styles=False,
                                   js=bundle("annotate_keys.js"))
_KEYS = courier("annotate_keys")

_STYLE = f"""
<style>
{st_dom.wrapper("nw-top")}{{position:sticky;top:3.75rem;z-index:90;
  background:var(--nw-bg,#fff);padding:.3rem 0 .45rem 0;
  box-shadow:0 -3.75rem 0 6px var(--nw-bg,#fff),0 -6px 0 6px var(--nw-bg,#fff);
  border-bottom:1px solid rgba(128,128,128,.3)}}
{st_dom.SELECTORS["MAIN_BLOCK"].css}{{padding-top:3.2rem;padding-left:2.2rem;padding-right:2.2rem}}
{st_dom.key("nw-toolbar")} button{{padding-left:.42rem;padding-right:.42rem;min-height:2.1rem;font-size:.86rem}}
{st_dom.key("nw-toolbar")}{{column-gap:.25rem}}
</style>
"""


def first_unlabeled(ctx: ItemContext) -> int:
    """Where the cursor starts on an item: its first passage without a label of yours."""
    return next((n for n, v in ctx.labels.items() if v is None), 1)


def move_targets(db: Database, ctx: ItemContext, targets: dict[str, str | None]
                 ) -> dict[str, dict[str, Any]]:
    """Where N / P / U / L lead from this item (``targets``: seek → item key, from the
    question list), with each one's passage count and starting cursor: the key script
    moves there at once and aims the next keys at it while the page redraws."""
    found = openings(db, ctx.dataset, ctx.annotator, [k for k in targets.values() if k])
    return {seek: {"item": key, "n": found[key][0], "cursor": found[key][1]}
            for seek, key in targets.items() if key in found}


def line_data(db: Database, ctx: ItemContext, around: tuple[list[str], list[str]]
              ) -> dict[str, list[dict[str, Any]]]:
    """The questions after and before this one (``around``: their keys, nearest first,
    :attr:`components.annotate.questions.Nav.around`) with each one's passage count and
    starting cursor: where N and P lead from a question the page has not drawn yet."""
    return line(db, ctx.dataset, ctx.annotator, *around)


def key_data(ctx: ItemContext, cursor: int, moves: dict[str, dict[str, Any]] | None = None,
             seq: int = 0, around: dict[str, list[dict[str, Any]]] | None = None
             ) -> dict[str, Any]:
    """What the key script needs to aim keys at this item (plain JSON, our own shape:
    the saved labels and ``dim:`` fields too, which it shows changed until a rerun draws
    them); ``seq``: the tab's position as drawn (:class:`components.annotate.questions.Nav`);
    ``around``: :func:`line_data` (the data's ``line``)."""
    labels = {field[len(LABEL_PREFIX):]: value for field, (value, _) in ctx.fields.items()
              if field.startswith(LABEL_PREFIX)}
    dims = {field: value for field, (value, _) in ctx.fields.items() if field.startswith("dim:")}
    # the file's own dimension values, only where the person may see them (V, W's Enter)
    shown = {} if hide_imported(ctx) else {f"dim:{field}": value for field, value
                                           in gitem.imported_dims(ctx.record).items() if value}
    # the label each passage's accept (Y) gives: its first source's, as the server picks it;
    # only what Y may take now (none where suggestions show after your own label)
    offered = {str(p.number): rows[0]["value"] for p in ctx.passages
               if (rows := acceptable(ctx, p.number))}
    return {"dataset": ctx.dataset, "annotator": ctx.annotator, "item": ctx.key, "tag": ctx.tag,
            "suggested": offered,
            "n": len(ctx.passages), "cursor": cursor, "labels": labels, "dimValues": dims,
            "fileDims": shown,
            "answered": bool((ctx.value("answer") or "").strip()), "seq": seq,
            "seen": applied_through(), "flag": bool(ctx.value("flag")), "hidden": ctx.hidden,
            "dims": dimension_keys(), "keys": label_keys(), "moves": moves or {},
            "done": {"later": "no other question left for later: none flagged, none "
                              "skipped and still unfinished"},
            "line": around or {"ahead": [], "behind": []}}


def render_keyboard(ctx: ItemContext, cursor: int,
                    moves: dict[str, dict[str, Any]] | None = None, seq: int = 0,
                    around: dict[str, list[dict[str, Any]]] | None = None) -> None:
    """The page style and the key script, which also shows ``passage N of M`` and short
    notes about what a key did. ``moves``: :func:`move_targets`; ``seq`` and ``around``:
    as :func:`key_data`."""
    st.html(_STYLE)
    draw_code(_CODE, "nw-annotate-code")
    _KEYS(key="nw-annotate-keys", data=key_data(ctx, cursor, moves, seq, around),
          width="content")


def render_view_switches(ctx: ItemContext) -> None:
    """The switch (key H) that hides what could anchor the person: the file's own labels
    and dimensions and the model suggestions, each only where this person may see it; a
    sentence where the lead keeps the file's labels from annotators. It reads and keeps
    the person's choice in the database (:func:`components.annotate.item.set_hidden`), so
    the server counts what the page shows. The same on every item of a dataset. In the
    compact layout it sits on the progress line, in shorter words (the help says it all)."""
    file_labels, suggestions = ctx.file_labels, offers_suggestions(ctx)
    if not file_labels:
        st.caption("Blind labelling: your lead keeps the file's own labels and dimensions "
                   "from annotators, so they cannot anchor your labels.")
    what = " and ".join(w for w, on in (("the file's own labels and dimensions", file_labels),
                                        ("the model suggestions", suggestions)) if on)
    if not what:
        return
    short = " and ".join(w for w, on in (("the file's values", file_labels),
                                         ("the suggestions", suggestions)) if on)
    if ctx.annotator:  # the person's saved choice, drawn as it is
        st.session_state[HIDE_IMPORTED] = ctx.hidden
    st.toggle(f"Hide {short if ctx.compact else what} (H)", key=HIDE_IMPORTED,
              on_change=set_hidden, width="content",
              args=(ctx.annotator, HIDE_IMPORTED),
              help=f"Hide {what}, so they do not anchor your judgement (H). A label you give "
                   "while they are hidden counts as given without a suggestion in view.")
