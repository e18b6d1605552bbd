"""The item being annotated: its context, question header and progress.

Passage cards and the keyboard toolbar are in :mod:`.passages`, the dimensions in
:mod:`.dimensions`, the answer editor in :mod:`.answer`, the question list in
:mod:`.questions`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import streamlit as st
from sqlite_utils import Database

from components import st_dom
from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.text import label, render_marked_text, render_text
from needlework.actions.writes import write_annotation
from needlework.grounding import item as gitem
from needlework.grounding.labels import label_field
from needlework.grounding.progress import progress_text
from needlework.teams.blind import (
    ALWAYS,
    NEVER,
    Timing,
    shows_suggestion,
    suggestion_timing,
    visibility,
)
from needlework.teams.permissions import PermissionDenied
from needlework.view.prefs import compact, hides_suggestions, set_compact, set_hides_suggestions
from store.grounding import item_fields
from store.suggestions import has_suggestions, item_suggestions


@dataclass
class ItemContext:
    """Everything the annotate page draws for one item of one annotator
    (``annotator`` is ``""`` in read-only mode)."""

    db: Database
    dataset: str
    key: str
    record: dict[str, Any]
    passages: list[gitem.Passage]
    annotator: str
    fields: dict[str, tuple[Any, str]]
    zone: ZoneInfo | None = None
    file_labels: bool = True  # whether this person may see the file's labels (blind mode)
    #: field → the model suggestions this person may see for it (store/suggestions.py)
    suggestions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: when they show (needlework.teams.blind.suggestion_timing): ``after``, a passage's
    #: only once it has this annotator's label
    timing: Timing = ALWAYS
    #: the person's H (needlework.view.prefs): the file's labels and suggestions hidden
    hidden: bool = False
    any_suggestions: bool = False  # the dataset has suggestions (on any item)
    #: the person's compact layout (needlework.view.prefs.compact)
    compact: bool = False

    @property
    def labels(self) -> dict[int, str | None]:
        """Passage number → this annotator's label (``None`` when unlabeled)."""
        return {p.number: self.value(label_field(p.number)) for p in self.passages}

    def value(self, field: str) -> Any:
        """This annotator's current value of ``field`` (``None`` when unset)."""
        entry = self.fields.get(field)
        return entry[0] if entry else None

    @property
    def tag(self) -> str:
        """A short name of this item for element keys (letters and digits only): the
        key script hides what a rerun has not yet redrawn for another item."""
        return hashlib.sha1(f"{self.dataset}|{self.key}".encode()).hexdigest()[:12]

    def widget_key(self, name: str) -> str:
        """A widget key unique to this dataset, item and annotator."""
        return f"nw-{name}|{self.dataset}|{self.key}|{self.annotator}"


HIDE_IMPORTED = "nw-hide-imported"  # the H toggle's key (the key script clicks it)
COMPACT = "nw-compact"  # the compact layout's toggle


def hide_imported(ctx: ItemContext) -> bool:
    """Whether the file's labels and dimensions are hidden: by the lead's blind setting
    (annotators in team mode, or any dataset with gold items: :mod:`needlework.teams.blind`),
    or by the person (the H key; avoids anchoring)."""
    return not ctx.file_labels or ctx.hidden


def offers_suggestions(ctx: ItemContext) -> bool:
    """Whether this person may be shown suggestions on this dataset at all (it has some,
    and the lead's timing is not ``never``), whether or not H hides them now; the same on
    every item of the dataset."""
    return ctx.any_suggestions and ctx.timing != NEVER


def suggested(ctx: ItemContext, number: int) -> list[dict[str, Any]]:
    """The suggestions for passage ``number`` this person sees now, by source: none while
    H hides them, none with the ``never`` timing, and with ``after`` none until the
    passage has their own label. Whether the file's labels show has no say."""
    return _shown(ctx, label_field(number))


def suggested_dim(ctx: ItemContext, name: str) -> list[dict[str, Any]]:
    """The suggestions for dimension ``name`` (``question_type``) this person sees now,
    by source (as for a passage: :func:`suggested`)."""
    return _shown(ctx, f"dim:{name}")


def _shown(ctx: ItemContext, field_: str) -> list[dict[str, Any]]:
    """What the server counts as shown too (needlework.actions.shown.shown_suggestions)."""
    if ctx.hidden:
        return []
    return ctx.suggestions.get(field_, []) if shows_suggestion(
        ctx.timing, ctx.value(field_) is not None) else []


def acceptable(ctx: ItemContext, number: int) -> list[dict[str, Any]]:
    """The suggestions Y may give passage ``number`` now: those shown where they show
    before a label (``always``); none with ``after``, where a passage shows its suggestion
    only once it has a label, and Y labels only passages without one."""
    return suggested(ctx, number) if ctx.timing == ALWAYS else []


def load_context(db: Database, dataset: str, item: dict[str, Any], who: str) -> ItemContext:
    """Read one item and the annotator's fields on it, and what they may see of it (H as
    the person last chose it, read from the database: the server decides with the same)."""
    fields = item_fields(db, dataset, item["key"], who) if who else {}
    actor = signed_in()
    timing = suggestion_timing(db, dataset, item["key"], actor, who)
    suggested: dict[str, list[dict[str, Any]]] = {}
    if timing != NEVER:
        for row in item_suggestions(db, dataset, item["key"]):
            suggested.setdefault(row["field"], []).append(row)
    hidden = hides_suggestions(db, who) if who else bool(st.session_state.get(HIDE_IMPORTED))
    dense = compact(db, who) if who else bool(st.session_state.get(COMPACT))
    return ItemContext(db, dataset, item["key"], item["record"], gitem.passages(item["record"]),
                       who, fields, browser_zone(),
                       file_labels=visibility(db, dataset, actor).file_labels,
                       suggestions=suggested, timing=timing, hidden=hidden,
                       any_suggestions=timing != NEVER and has_suggestions(db, dataset),
                       compact=dense)


@uninterrupted
def set_hidden(who: str, widget: str) -> None:
    """The H toggle's callback: keep the person's choice (:mod:`needlework.view.prefs`);
    without a name it lives in this session only."""
    on = bool(st.session_state.get(widget))
    if not who:
        return
    try:
        set_hides_suggestions(get_db(), who, on, actor=signed_in())
    except (PermissionDenied, ValueError) as e:
        st.toast(label(str(e), 300), icon=":material/block:")


@uninterrupted
def set_compact_layout(who: str, widget: str) -> None:
    """The compact toggle's callback: keep the person's choice (as :func:`set_hidden`)."""
    on = bool(st.session_state.get(widget))
    if not who:
        return
    try:
        set_compact(get_db(), who, on, actor=signed_in())
    except (PermissionDenied, ValueError) as e:
        st.toast(label(str(e), 300), icon=":material/block:")


def browser_zone() -> ZoneInfo | None:
    """The browser's time zone (``None``: unknown, times are shown in UTC)."""
    try:
        zone = st.context.timezone
        return ZoneInfo(zone) if zone else None
    except (ValueError, KeyError, OSError):
        return None


def local_time(iso: str, zone: ZoneInfo | None = None) -> str:
    """``HH:MM:SS`` of a stored UTC time in ``zone`` (UTC when ``None``)."""
    try:
        moment = datetime.fromisoformat(iso)
        return moment.astimezone(zone or UTC).strftime("%H:%M:%S")
    except (ValueError, TypeError):
        return iso[11:19]


def saved_text(ctx: ItemContext, field: str) -> str:
    """``saved 14:02:11 by ana`` for a field this annotator set, else ``""`` (Markdown-safe:
    the name is escaped, as it is shown in captions)."""
    entry = ctx.fields.get(field)
    return f"saved {local_time(entry[1], ctx.zone)} by {label(ctx.annotator, 60)}" if entry else ""


def save(ctx: ItemContext, field: str, value: Any) -> None:
    """Write one annotation now (committed before returning). A callback: it uses this
    run's connection, never the one of the run that drew the widget. In team mode it is
    written as the signed-in user, who may be refused (said in a toast)."""
    try:
        write_annotation(get_db(), ctx.dataset, ctx.key, field, value, annotator=ctx.annotator,
                         actor=signed_in())
    except PermissionDenied as e:
        st.toast(label(str(e), 300), icon=":material/block:")


ELEMENT = st_dom.SELECTORS["ELEMENT"].css  # Streamlit's container around one element


def hide_other_items(ctx: ItemContext) -> None:
    """A style, drawn before the question, that keeps the last question's cards and answer
    from showing under the new one while a rerun replaces them: the cards and the side
    column stay hidden until their :func:`item_marker` for this item is drawn (it comes
    last, so everything before it is this item's), and what the last question had beyond
    it is hidden until the run removes it. The containers keep their keys from question
    to question, so the browser updates their elements instead of building them anew."""
    tag = ctx.tag
    st.html(f'<style>.st-key-nw-item-cards:not(:has([data-nw-item="{tag}"])),'
            f'.st-key-nw-item-side:not(:has([data-nw-item="{tag}"])){{visibility:hidden}}'
            f'{ELEMENT}:has([data-nw-item="{tag}"]) ~ *{{display:none}}</style>')


def item_marker(ctx: ItemContext) -> None:
    """The last element of the cards and of the side column: see :func:`hide_other_items`."""
    st.html(f'<span data-nw-item="{ctx.tag}"></span>')


#: Nothing covers the page's text: the save badge sits in Streamlit's header bar (left of
#: its menu), where no text is; toasts come up at the bottom left, over the sidebar's
#: empty foot, not over the question line under the header.
NOTHING_OVER_TEXT = (
    "#nw-save-status{top:.8rem!important;bottom:auto!important;right:4.5rem!important}"
    '[data-testid="stToastContainer"]{top:auto!important;bottom:1rem!important;'
    "left:1rem!important;right:auto!important;width:16.5rem!important}"
    '[data-testid="stToast"]{width:auto!important;max-width:16.5rem!important}')


def render_question(ctx: ItemContext, position: int, total: int,
                    in_list: tuple[int | None, int, str] | None = None) -> None:
    """The question in large literal text with its id and date. ``in_list``: (its place
    from 0, or ``None``; how many; what they are, "in your queue" or "shown") in the
    person's own queue (team mode), which the header counts instead of the dataset
    (``Q4 · 2 of 6 in your queue``, as the list's caption counts)."""
    question = str(ctx.record.get("question") or "")
    date = str(ctx.record.get("question_date") or "no date")
    if in_list is None:
        where = f"Q{position + 1}/{total}"
    elif in_list[0] is None:
        where = f"Q{position + 1} · not among the {in_list[1]:,} {in_list[2]}"
    else:
        where = f"Q{position + 1} · {in_list[0] + 1:,} of {in_list[1]:,} {in_list[2]}"
    render_marked_text(
        [(where, "nw-cite", None), (f"  asked {date} · id {ctx.key}", None, None)],
        key="nw-question-meta",
    )
    st.html('<style>#nw-question-meta{font-size:.8rem;color:#555;margin:0}'
            '#nw-question{font-size:1.25rem;font-weight:600;line-height:1.35}'
            + ('#nw-question{font-size:1.1rem;line-height:1.3}' if ctx.compact else '')
            + NOTHING_OVER_TEXT + '</style>')
    render_text(question, key="nw-question")


def render_progress(ctx: ItemContext, done: int, started: int, total: int,
                    switches: Callable[[ItemContext], None] | None = None) -> None:
    """Passages labeled in this item, and questions finished in the dataset by this
    annotator, in the same words as the home page (:func:`progress.progress_text`). In the
    compact layout one line of words with the view's ``switches`` (H) and Compact beside
    them: the passages start a line higher."""
    labeled = sum(1 for v in ctx.labels.values() if v is not None)
    n = len(ctx.passages)
    answered = "answer saved" if (ctx.value("answer") or "").strip() else "no answer yet"
    if ctx.compact:  # one line of words, no bars
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.caption(f"This question: {labeled}/{n} passages labeled · {answered} · "
                       + label(progress_text(done, started, total, ctx.annotator or "you"), 160))
            if switches is not None:
                switches(ctx)
            render_compact_switch(ctx)
        return
    cols = st.columns([2, 2, 0.8], vertical_alignment="bottom")
    cols[0].progress(labeled / n if n else 1.0,
                     text=f"This question: {labeled}/{n} passages labeled · {answered}")
    cols[1].progress(done / total if total else 0.0,
                     text=label(progress_text(done, started, total, ctx.annotator or "you"), 160))
    with cols[2]:
        render_compact_switch(ctx)


def render_compact_switch(ctx: ItemContext) -> None:
    """The compact layout's switch (:data:`needlework.view.prefs.COMPACT`): the person's
    choice as kept in the database, drawn as it is."""
    if ctx.annotator:
        st.session_state[COMPACT] = ctx.compact
    st.toggle("Compact", key=COMPACT, width="content", on_change=set_compact_layout,
              args=(ctx.annotator, COMPACT),
              help="Two lines of each passage and the outlined one whole, smaller buttons, "
                   "the switches on this line and the dimensions above the answer: five "
                   "passages and the dimensions on one screen. Kept for you.")
