"""The question dimensions of the annotate page (GaRAGe's validity, false premise,
information seeking, time sensitivity, complexity, popularity and category).

The six dimensions with a fixed option list are one HTML element of option buttons,
like the passage cards' label buttons: the key script turns a click (or ``Q``, the
dimension's number, the option's number) into an action through the outbox, and a click
on the saved option clears it. No widget state is kept, so a rerun never sends a value
back. The category, whose list each dataset edits, stays a select.
"""

from __future__ import annotations

import streamlit as st
from sqlite_utils import Database

from components.annotate.item import (
    ItemContext,
    hide_imported,
    offers_suggestions,
    save,
    suggested_dim,
)
from components.callbacks import uninterrupted
from components.text import escape, label
from needlework.grounding import item as gitem
from needlework.grounding.keymap import choice_of, dimension_keys
from needlework.suggest.data import sure_text
from store.datasets import get_dataset, set_dataset_meta

_STYLE = """<style>
.nw-dims{display:grid;grid-template-columns:minmax(6.5rem,max-content) 1fr;gap:.3rem .6rem;
  align-items:center;margin:.1rem 0 .2rem 0}
.nw-dims .nw-dim-title{font-size:.85rem;color:rgb(49,51,63)}
.nw-dims .nw-dim-title kbd{font:inherit;font-size:.72rem;color:#555;border:1px solid #ccc;
  border-radius:.25rem;padding:0 .25rem;margin-right:.3rem;background:#f6f6f6}
.nw-dims .nw-dim-options{display:flex;flex-wrap:wrap;gap:.25rem}
.nw-dims button{font:inherit;font-size:.82rem;line-height:1.3;min-height:1.9rem;
  padding:.15rem .55rem;border-radius:.5rem;border:1px solid rgba(49,51,63,.2);
  background:var(--nw-bg,#fff);color:rgb(49,51,63);cursor:pointer}
.nw-dims button .nw-digit{color:#777;font-size:.72rem;margin-right:.25rem}
.nw-dims button:hover:not(:disabled):not(.nw-chosen){border-color:#1f6feb;color:#1f6feb}
.nw-dims button:focus-visible{outline:2px solid #1f6feb;outline-offset:1px}
.nw-dims button.nw-chosen{background:#1f6feb;border-color:#1f6feb;color:#fff}
.nw-dims button.nw-chosen .nw-digit{color:#dbe7ff}
.nw-dims button.nw-file{border-style:dashed;border-color:#6b7280}
.nw-dims button.nw-file::after{content:"file";font-size:.66rem;margin-left:.3rem;
  padding:0 .25rem;border-radius:.3rem;background:#eef2f7;color:#475569}
.nw-dims button.nw-chosen.nw-file::after{background:#dbe7ff;color:#1e3a8a}
.nw-dims button.nw-sugg{border:1.5px dashed #7c3aed}
.nw-dims button.nw-sugg::before{content:"model";font-size:.66rem;margin-right:.3rem;
  padding:0 .25rem;border-radius:.3rem;background:#ede9fe;color:#5b21b6}
.nw-dims button.nw-sugg[data-nw-sure]::before{content:attr(data-nw-sure)}
.nw-dims button:disabled{cursor:not-allowed;opacity:.55}
</style>"""


def dimensions_html(ctx: ItemContext) -> str:
    """The option buttons of the six fixed dimensions: the saved option marked
    ``nw-chosen``, the file's own value ``nw-file`` (unless hidden: the H key or the
    lead's blind setting), a model's suggested value ``nw-sugg`` (violet, dashed, its
    sources and scores on hover; when the person may see it: :func:`suggested_dim`).
    Every text is escaped."""
    imported = gitem.imported_dims(ctx.record)
    show_file = not hide_imported(ctx)
    disabled = "" if ctx.annotator else " disabled"
    rows = []
    for k, dim in enumerate(dimension_keys()):
        mine = choice_of(dim, [ctx.value(f"dim:{f}") for f in dim["fields"]])
        theirs = choice_of(dim, [imported[f] or None for f in dim["fields"]]) if show_file else None
        by_source: dict[str, dict[str, dict]] = {}  # a source's values of the dimension's fields
        for f in dim["fields"]:
            for row in suggested_dim(ctx, f):
                by_source.setdefault(row["source"], {})[f] = row
        model: dict[int, list[dict]] = {}
        for given in by_source.values():
            at = choice_of(dim, [given[f]["value"] if f in given else None for f in dim["fields"]])
            if at is not None:
                model.setdefault(at, []).append(next(iter(given.values())))
        buttons = []
        for i, option in enumerate(dim["options"]):
            classes = "nw-dim-option" + (" nw-chosen" if i == mine else "") + \
                (" nw-file" if i == theirs else "") + (" nw-sugg" if i in model else "")
            hint = ("Click again to clear. " if i == mine else "") + \
                ("The file's own value. " if i == theirs else "") + \
                "".join(f"Suggested by {r['source']}" + (f" ({sure_text(r).strip()})"
                                                         if sure_text(r) else "") + ". "
                        for r in model.get(i, [])) + \
                f"Q {k + 1} {i + 1}"
            sure = min((r["confidence"] for r in model.get(i, [])
                        if isinstance(r.get("confidence"), (int, float))), default=None)
            tag = f' data-nw-sure="model {sure * 100:.0f}%"' if sure is not None else ""
            buttons.append(
                f'<button type="button" class="{classes}"{tag} data-nw-dim="{k}" data-nw-option="{i}" '
                f'aria-pressed="{"true" if i == mine else "false"}" title="{escape(hint)}"'
                f'{disabled}><span class="nw-digit">{i + 1}</span>{escape(option)}</button>')
        title = f'<kbd>Q{k + 1}</kbd>{escape(dim["title"])}'
        rows.append(f'<span class="nw-dim-title" title="{escape(dim["help"])}">{title}</span>'
                    f'<span class="nw-dim-options" role="group" aria-label="{escape(dim["title"])}">'
                    + "".join(buttons) + "</span>")
    return f'<div id="nw-dims" class="nw-dims">{"".join(rows)}</div>'


@uninterrupted
def _on_category(ctx: ItemContext, widget: str) -> None:
    save(ctx, "dim:question_category", st.session_state.get(widget))


def render_dimensions(ctx: ItemContext, categories: list[str]) -> None:
    """The six fixed dimensions as option buttons, then the category select and the
    editor of the dataset's category list (the compact layout leaves the caption out:
    the key map says the same)."""
    if not ctx.compact and not ctx.file_labels:  # blind: the file's values are not theirs
        st.caption("Click an option; or W, then one digit per dimension (Space: leave it); "
                   "or Q, a dimension's number, an option's. Click the chosen option to clear "
                   "it." + (" Violet: a model's suggestion (H hides it)."
                            if offers_suggestions(ctx) else ""))
    elif not ctx.compact:
        st.caption("Click an option; or W, then one digit per dimension (Enter: the file's "
                   "value, Space: leave it); or Q, a dimension's number, an option's. V takes "
                   "the file's value of every dimension you have not set. Click the chosen "
                   "option to clear it. Dashed: the file's own value; violet: a model's (H "
                   "hides both).")
    st.html(_STYLE + dimensions_html(ctx))
    mine = ctx.value("dim:question_category")
    mine = mine if mine in categories else None
    imported = "" if hide_imported(ctx) else gitem.imported_dims(ctx.record)["question_category"]
    widget = ctx.widget_key(f"dim-question_category-{mine}")  # keyed by the saved value
    left, right = st.columns([2, 1], gap="small", vertical_alignment="bottom")
    with left, st.container(key="nw-category"):
        st.selectbox("Category · Q7", categories, index=None if mine is None else categories.index(mine),
                     key=widget, on_change=_on_category, args=(ctx, widget),
                     placeholder="—" if hide_imported(ctx) else
                     (f"{imported} (in the file)" if imported else "— (not in the file)"),
                     disabled=not ctx.annotator,
                     help="The list is editable per dataset (Categories).")
    with right:
        render_category_editor(ctx.db, ctx.dataset, categories)
    offered = suggested_dim(ctx, "question_category")  # as the option buttons' model values
    if offered:
        st.caption(label("Category suggested: " + ", ".join(
            f"{row['value']} ({row['source']}{sure_text(row)})" for row in offered), 300))


def render_category_editor(db: Database, dataset: str, categories: list[str]) -> None:
    """A popover to edit the dataset's category list (kept in ``datasets.meta``)."""
    with st.popover("Categories", icon=":material/edit:", help="Edit this dataset's category list",
                    width="stretch"):
        text = st.text_area("One category per line", "\n".join(categories), height=260,
                            key=f"nw-categories|{dataset}")
        if st.button("Save the list", key=f"nw-categories-save|{dataset}"):
            row = get_dataset(db, dataset) or {"meta": {}}
            meta = dict(row["meta"])
            meta[gitem.CATEGORIES_META] = gitem.parse_categories(text)
            set_dataset_meta(db, dataset, meta)
            st.toast("Category list saved")
