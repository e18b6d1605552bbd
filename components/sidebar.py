"""The sidebar shared by every page: who works (a typed name, or the signed-in account
in team mode), the dataset picker and the dataset's guidelines."""

from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.state.session_state_proxy import get_session_state

from components.name_memory import restore_name
from components.outbox import receive_view
from components.pace import render_pace
from components.state import ANNOTATOR_KEY, DATASET_KEY, signed_in
from components.teams.guidelines import render_guidelines_panel
from components.teams.session import render_account
from needlework.teams.assignment import visible_datasets
from store.datasets import list_datasets


def chosen_dataset(current: str | None, linked: str | None, names: list[str],
                   opening: bool = False) -> str | None:
    """The dataset a run shows: the session's, else the ``?dataset=`` link's, else the
    first one (``None``: no datasets). A run that opens a page from a link (``opening``:
    Home's Open ›, a page link) shows the link's dataset, whatever the session held."""
    if opening and linked in names:
        return linked
    if current in names:
        return current
    if linked in names:
        return linked
    return names[0] if names else None


def _one_dataset_param(linked: str | None) -> None:
    """Keep one ``?dataset=`` in the address: a page link that names a dataset arrives
    with the picker's own value before it (Streamlit adds a bound parameter to a page
    change); ``linked``, the link's (the last), stays."""
    if linked is None or len(st.query_params.get_all(DATASET_KEY)) < 2:
        return
    try:
        st.query_params[DATASET_KEY] = linked
    except StreamlitAPIException:  # bound to the picker: Streamlit refuses a direct set
        try:
            with get_session_state().query_params() as params:
                params.set_with_no_forward_msg(DATASET_KEY, linked)
                params._send_query_param_msg()  # the address, with the one value
        except AttributeError:  # a Streamlit without these: the address keeps both
            return


def render_sidebar(db, opening: bool = False) -> dict[str, str | None]:
    """Read the browser's view (:mod:`components.outbox`), then draw who works and the dataset
    picker; return both values.

    Local mode: the annotator name is typed and kept for the browser session (across
    pages). Team mode: the signed-in account is shown with its role and a sign-out
    button, never a name field, and an annotator picks among the datasets assigned to
    them. The dataset is bound to the ``?dataset=`` query parameter, so links to a
    dataset (and ``?dataset=NAME&item=ID`` deep links) open it. Under the name: that
    person's own items today and median time per item (:mod:`components.pace`).
    """
    with st.sidebar:
        receive_view()
    user = signed_in()
    rows = list_datasets(db)
    if user is not None:
        mine = visible_datasets(db, user)
        if mine is not None:
            rows = [r for r in rows if r["name"] in set(mine)]
    names = [r["name"] for r in rows]
    kinds = {r["name"]: r["kind"] for r in rows}
    with st.sidebar:
        name = _who_works(db, user)
        dataset = _dataset_picker(db, names, kinds, user, opening)
    return {"annotator": name, "dataset": dataset}


def _who_works(db, user) -> str:
    """The signed-in account (team mode) or the typed name (local mode), then that
    person's pace; the name, stripped."""
    if user is not None:
        render_account(user)
        name = user.name
    else:
        restore_name(ANNOTATOR_KEY)
        # The session's own name is also the field's default: after a server restart
        # the browser may send a field's default instead of what it holds (with "",
        # the new session lost the name). A new session's first run cannot know the
        # name yet: js/name_memory.js types it back if it is lost then.
        name = st.text_input(
            "Annotator",
            value=st.session_state.get(ANNOTATOR_KEY) or "",
            key=ANNOTATOR_KEY,
            placeholder="your name (required to save work)",
            persist_state="session",
            help="Every label, answer and verdict is saved under this name, with the time.",
        )
        if not (name or "").strip():
            st.caption("✍️ Enter your name to save work.")
    render_pace(db, (name or "").strip())  # their own items today, time per item
    return (name or "").strip()


def _dataset_picker(db, names: list[str], kinds: dict[str, str], user,
                    opening: bool) -> str | None:
    """The dataset picker, bound to ``?dataset=``, with the chosen dataset's kind and
    guidelines under it; the dataset chosen."""
    # After a server restart the browser may send a picker's default instead of its
    # choice: with the first dataset as the default the page silently switched to it
    # (the review page's key script then waited for a page that never came). So
    # while ?dataset= names a dataset the picker has no default, and a lost choice
    # (None) comes back from the URL; without one the first dataset is the default
    # (and shown: a value set here on a first visit is not drawn by the browser).
    linked = st.query_params.get(DATASET_KEY)
    _one_dataset_param(linked)
    shown = chosen_dataset(st.session_state.get(DATASET_KEY), linked, names, opening)
    if shown != st.session_state.get(DATASET_KEY):
        st.session_state[DATASET_KEY] = shown
    dataset = st.selectbox(
        "Dataset",
        names,
        index=None if linked in names else 0 if names else None,
        key=DATASET_KEY,
        bind="query-params",
        placeholder="no datasets assigned to you yet" if user is not None and not names
        else "no datasets yet: import one",
        help="Links open a dataset with ?dataset=NAME (and an item with &item=ID).",
    )
    if dataset:
        st.caption(f"{kinds.get(dataset, '')} dataset")
        render_guidelines_panel(db, dataset)
    return dataset
