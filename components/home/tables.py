"""The home page's dataset list: search, a row per dataset with its progress in words and
a link that opens it on its page (in this tab, where the annotator left off), and the
dataset's management (rename, archive, delete with what is lost named first).

Nothing here counts items or annotations: the counts are stored with the dataset and
kept by SQL as work is saved (``progress_totals``), so the page costs the same with a
dataset of 100,000 questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import streamlit as st

from components import st_dom
from components.callbacks import uninterrupted
from components.state import get_db, signed_in
from components.teams.session import may_open
from components.text import label, render_heading_text
from needlework.datasets import catalog
from needlework.grounding.progress import progress_text
from needlework.teams.permissions import PermissionDenied, User, can
from needlework.verdicts import progress_text as review_progress_text
from store.datasets import DatasetBusy, DatasetExists
from store.names import InvalidDatasetName

PAGE_FOR_KIND = {
    "grounding": "app_pages/annotate.py",
    "preference": "app_pages/review.py",
    "needle": "app_pages/needle.py",
}
KIND_WORDS = {"grounding": "grounding questions", "preference": "preference pairs",
              "needle": "needle pairs"}
SHOWN_ANNOTATORS = 3
OPEN = "Open ›"  # a link's words, in a dataset's row and beside each recent change
OPEN_HELP = ("Opens where you last worked on it: the item of your latest save or move; "
             "after a save that finished an item, the next one you have not finished; the "
             "first time, your first unfinished item")


def open_pages(user: User | None) -> dict[str, str]:
    """kind -> the page that opens a dataset of that kind, for the kinds whose page
    ``user``'s role may open (local mode: all)."""
    return {kind: page for kind, page in PAGE_FOR_KIND.items()
            if may_open(user, page.removeprefix("app_pages/").removesuffix(".py"))}


def dataset_url(page: str, dataset: str, item: str | None = None) -> str:
    """A relative link to ``page`` (``app_pages/x.py``; the home page is ``/``) that opens
    ``dataset`` (and ``item``): every value percent-encoded, so a name such as
    ``a&item=zz#x?dataset=evil`` stays one value."""
    path = page.removeprefix("app_pages/").removesuffix(".py")
    params = {"dataset": dataset} if item is None else {"dataset": dataset, "item": item}
    return ("/" if path == "home" else "/" + path) + "?" + urlencode(params, quote_via=quote)


def progress_lines(row: Mapping[str, Any], people: Sequence[Mapping[str, Any]],
                   scored: str | None, *, reader: str = "", others: int = 0) -> list[str]:
    """The progress of one dataset in words, true for the person reading them: per
    annotator (the pages' own wording), whether a model scored it. ``reader``: the person
    at the screen (``""``: unknown); ``others``: how many people who started it are not
    in ``people`` (an annotator sees their own line only). When the reader has not
    started it: ``you have not started; 2 others have`` where others did, ``not
    started`` only when nobody and nothing did. A person's ``total`` (their queue in team
    mode) replaces the dataset's item count."""
    words = progress_text if row["kind"] == "grounding" else review_progress_text
    lines = [words(int(p["done"]), int(p["started"]), int(p.get("total", row["items"])),
                   str(p["annotator"]))
             for p in people[:SHOWN_ANNOTATORS]]
    if len(people) > SHOWN_ANNOTATORS:
        lines.append(f"and {len(people) - SHOWN_ANNOTATORS} more annotators")
    started = {str(p["annotator"]) for p in people}
    if reader and reader not in started and (people or others):
        n = others + len(started)
        lines.insert(0, f"you have not started; {n} other{'s' if n != 1 else ''} "
                        f"{'have' if n != 1 else 'has'}")
    if scored:
        lines.append(f"scored by {scored}" if row["kind"] != "needle"
                     else f"needle run scored by {scored}")
    return lines or ["not started: nobody has labeled or reviewed anything yet"]


def render_link_placeholders() -> None:
    """Until the browser has loaded the code of Streamlit's page links (a moment on a first
    visit, seconds while the server is busy), Streamlit draws an empty grey box where each
    one goes: Home's rows and recent changes show the link's words there instead. Sent as
    Markdown, whose code comes with the page itself (``st.html``'s loads like the links'),
    in a box that takes no room."""
    skeleton, element = st_dom.SELECTORS["SKELETON"].css, st_dom.SELECTORS["ELEMENT_BY_ID"].css
    waiting = (f'[class*="{st_dom.KEY_CLASS}nw-ds-"] > {element} > {skeleton},'
               f'{st_dom.key("nw-activity")} {st_dom.SELECTORS["COLUMN"].css}:last-child '
               f"{skeleton}")
    words = ",".join(f"{one}::after" for one in waiting.split(","))
    st.markdown(
        f"<style>{waiting}{{background:none;animation:none;width:auto;height:auto;"
        "display:flex;align-items:center}"
        f"{words}{{content:'{OPEN}';font-size:14px;line-height:28px;padding:0 8px;"
        "color:rgb(49,51,63)}"
        f"{element}:has(.nw-link-wait){{display:none}}</style>"
        '<span class="nw-link-wait"></span>', unsafe_allow_html=True)


def render_datasets(rows: Sequence[Mapping[str, Any]], progress: Mapping[str, Sequence[Mapping[str, Any]]],
                    scored: Mapping[str, str | None], pages: Mapping[str, str], *,
                    archived: bool = False, reader: str = "",
                    others: Mapping[str, int] | None = None) -> None:
    """One row per dataset (of ``rows``, already searched): name, what it is, progress in
    words for ``reader`` (``others``: per dataset, the people who started it left out of
    ``progress``; see :func:`progress_lines`), **Open ›** (this tab, where ``pages`` has
    a page for its kind) and **Manage**."""
    if not rows:
        st.caption("No archived datasets." if archived else "No dataset matches the search.")
        return
    for r in rows:
        name = r["name"]
        with st.container(border=True, horizontal=True, vertical_alignment="center", gap="small",
                          key=f"nw-ds-{abs(hash(name))}"):
            with st.container(gap=None, width="stretch"):
                render_heading_text(name, 80)
                words = KIND_WORDS.get(r["kind"], r["kind"])
                words = words[:-1] if r["items"] == 1 and words.endswith("s") else words
                st.caption(f"{r['items']:,} {words} · {r['format']} · "
                           f"imported {(r['created_at'] or '')[:10]}"
                           + (f" by {label(r['created_by'], 40)}" if r.get("created_by") else ""))
            with st.container(gap=None, width="stretch"):
                for line in progress_lines(r, progress.get(name, ()), scored.get(name),
                                           reader=reader, others=(others or {}).get(name, 0)):
                    st.caption(label(line, 160))
            if not archived and r["kind"] in pages:
                st.page_link(pages[r["kind"]], label=OPEN, query_params={"dataset": name},
                             help=OPEN_HELP)
            if can(signed_in(), "delete"):  # rename, archive, delete: admins in team mode
                _manage(name, archived)


def _manage(name: str, archived: bool) -> None:
    """Rename, archive (or restore) and delete one dataset, drawn only while open."""
    box = st.popover("Manage", icon=":material/more_horiz:", key=f"nw-ds-manage|{name}",
                     on_change="rerun", help="Rename, archive or delete this dataset")
    if not box.open:
        return
    with box:
        new = st.text_input("New name", value=name, key=f"nw-ds-name|{name}", max_chars=120)
        st.button("Rename", key=f"nw-ds-rename|{name}", on_click=_rename, args=(name, new),
                  disabled=new.strip() == name)
        st.divider()
        if archived:
            st.button("Restore", key=f"nw-ds-restore|{name}", on_click=_archive, args=(name, False),
                      help="Back in the dataset pickers")
        else:
            st.button("Archive", key=f"nw-ds-archive|{name}", on_click=_archive, args=(name, True),
                      help="Hidden from the dataset pickers; nothing is deleted; restore it here")
        st.divider()
        st.caption(label(f"Deleting {name} deletes {catalog.loss_text(get_db(), name)}. "
                         "This cannot be undone: export it first to keep a copy.", 600))
        typed = st.text_input("Type the dataset's name to delete it", key=f"nw-ds-confirm|{name}")
        st.button("Delete for good", key=f"nw-ds-delete|{name}", type="primary",
                  icon=":material/delete_forever:", disabled=typed.strip() != name,
                  on_click=_delete, args=(name,))


def _say(message: str, icon: str = ":material/error:") -> None:
    st.session_state["nw-home-flash"] = (message, icon)


@uninterrupted
def _rename(old: str, new: str) -> None:
    try:
        done = catalog.rename(get_db(), old, new, actor=signed_in())
    except (InvalidDatasetName, DatasetExists, DatasetBusy, KeyError, PermissionDenied) as e:
        _say(f"Not renamed: {e}")
        return
    if st.session_state.get("dataset") == old:
        st.session_state["dataset"] = done
    _say(f"Renamed {old} to {done}.", ":material/check:")


@uninterrupted
def _archive(name: str, archived: bool) -> None:
    try:
        catalog.archive(get_db(), name, archived, actor=signed_in())
    except (KeyError, PermissionDenied) as e:
        _say(f"Nothing changed: {e}")
        return
    _say(f"Archived {name}: find it under “Archived”." if archived else f"Restored {name}.",
         ":material/inventory_2:")


@uninterrupted
def _delete(name: str) -> None:
    try:
        catalog.delete(get_db(), name, actor=signed_in())
    except PermissionDenied as e:
        _say(f"Not deleted: {e}")
        return
    _say(f"Deleted {name}.", ":material/delete:")


def render_flash() -> None:
    """The outcome of the last management action, once."""
    flash = st.session_state.pop("nw-home-flash", None)
    if flash:
        st.toast(label(flash[0], 300), icon=flash[1])
