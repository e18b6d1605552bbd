"""The home page's tables: the datasets (with progress per annotator and a link that
opens each on its page) and the latest changes; and the links they use."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pandas as pd
import streamlit as st

PAGE_FOR_KIND = {
    "grounding": "pages/annotate.py",
    "preference": "pages/review.py",
    "needle": "pages/needle.py",
}


def dataset_url(page: str, dataset: str, item: str | None = None) -> str:
    """A relative link to ``page`` (``pages/x.py``; the home page is ``/``) that opens
    ``dataset`` (and ``item``): every value percent-encoded, so a name such as
    ``a&item=zz#x?dataset=evil`` stays one value."""
    path = page.removeprefix("pages/").removesuffix(".py")
    params = {"dataset": dataset} if item is None else {"dataset": dataset, "item": item}
    return ("/" if path == "home" else "/" + path) + "?" + urlencode(params, quote_via=quote)


def render_dataset_table(rows: list[dict], progress: dict[str, dict[str, int]]) -> None:
    """A table of datasets with items and, per annotator, items annotated."""
    if not rows:
        st.info("No datasets yet. Import one on the **Import & export** page.")
        return
    table = pd.DataFrame(
        [
            {
                "dataset": r["name"],
                "kind": r["kind"],
                "format": r["format"],
                "items": r["items"],
                "progress": ", ".join(
                    f"{who}: {n}/{r['items']}" for who, n in progress.get(r["name"], {}).items()
                )
                or "not started",
                "imported": (r["created_at"] or "")[:16].replace("T", " "),
                "open": dataset_url(PAGE_FOR_KIND[r["kind"]], r["name"]),
            }
            for r in rows
        ]
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            "open": st.column_config.LinkColumn("open", display_text="Open ›", width="small"),
            "items": st.column_config.NumberColumn("items", width="small"),
        },
    )


def render_activity(entries: list[dict]) -> None:
    """The latest changes (who, when, what), newest first."""
    if not entries:
        st.caption("Nothing yet: labels, answers and verdicts appear here as they are saved.")
        return
    frame = pd.DataFrame(
        [
            {
                "at": e["at"][:19].replace("T", " "),
                "who": e["by"],
                "dataset": e["dataset"],
                "item": (e.get("item_title") or e["item_key"])[:80],
                "field": e["field"],
                "value": "" if e["new_value"] is None else str(e["new_value"])[:60],
                "open": dataset_url("pages/home.py", e["dataset"], e["item_key"]),
            }
            for e in entries
        ]
    )
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "open": st.column_config.LinkColumn("open", display_text="Open ›", width="small")})
