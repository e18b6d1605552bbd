"""Streamlit's own page structure, in one place: every selector of Streamlit's DOM the
page styles and the key scripts use.

Streamlit does not promise its DOM: a release may rename a ``data-testid``, drop the
layout wrapper around a keyed container or change the ``st-key-`` class it gives an
element drawn with ``key=``. The selectors we rely on are written here once.
:data:`SELECTORS` is the table; Python styles take them from it (:func:`key`,
:func:`wrapper`, :func:`hide_box`), and the key scripts get the same table as the
``nwDom`` object (:func:`js`, kept in ``js/st_dom.js``, which a test compares with this
table). ``tests/browser/test_st_dom.py`` opens real pages and names each selector that
no longer matches.

Our own markup (``data-nw-*`` attributes, ``nw-*`` classes and ids) is not listed: we
write it, Streamlit cannot change it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

#: the class Streamlit gives an element or container drawn with ``key=NAME``
KEY_CLASS = "st-key-"


@dataclass(frozen=True)
class Selector:
    """One selector of Streamlit's DOM: the CSS, what it finds, and where the browser test
    looks for it: ``""``, ``annotate`` or ``review`` (the pages it opens); ``elsewhere``:
    on pages it does not open (the needle lab's slide, Review's overview), not checked;
    ``stale``: Streamlit no longer draws it (the test checks that it still matches
    nothing, so that the entry is looked at again when it does)."""

    css: str
    what: str
    page: str = ""


SELECTORS: dict[str, Selector] = {
    "APP": Selector('[data-testid="stApp"]',
                    "the app's root: its data-test-script-state says whether a run is under "
                    "way (the key scripts wait for a run to end before they type into a box)"),
    "MAIN": Selector('[data-testid="stMain"]', "the main area (beside the sidebar)"),
    "MAIN_BLOCK": Selector(".stMainBlockContainer",
                           "the main area's block container (its padding)"),
    "SIDEBAR": Selector('[data-testid="stSidebar"]', "the sidebar"),
    "LAYOUT_WRAPPER": Selector('[data-testid="stLayoutWrapper"]',
                               "the wrapper around a container drawn with key= (sticky bars, "
                               "hidden boxes)"),
    "ELEMENT": Selector(".stElementContainer", "the container around one element"),
    "SELECTBOX": Selector('[data-testid="stSelectbox"]', "a select box", "annotate"),
    "SELECT": Selector('[data-testid="stSelectbox"] input[role="combobox"],'
                       '[data-testid="stMultiSelect"] input[role="combobox"]',
                       "a select box's own input (a combo box)", "annotate"),
    "SELECT_OPEN": Selector('[data-testid="stSelectbox"] button[aria-haspopup="listbox"]',
                            "a select box's button that opens its list", "annotate"),
    "DATAFRAME": Selector('[data-testid="stDataFrame"]', "a data frame (Review's overview)",
                          "elsewhere"),
    "NAME_FIELD": Selector('[data-testid="stSidebar"] input[aria-label="Annotator"]',
                           "the sidebar's Annotator field (local mode)", "annotate"),
    "NOTE_FIELD": Selector('[data-testid="stSidebar"] input[aria-label="Note"]',
                           "the sidebar's Note field of a comparison", "review"),
    # the needle lab's slide (components/needle/presentation.py and js/slide.js keep
    # their own copies for now; listed so that the browser test watches them too)
    "HEADER": Selector('[data-testid="stHeader"]', "the page header (the slide hides it)"),
    "TOOLBAR": Selector('[data-testid="stToolbar"]', "the header's toolbar (the slide hides it)",
                        "elsewhere"),
    "SIDEBAR_OPENER": Selector('[data-testid="stSidebarCollapsedControl"]',
                               "the collapsed sidebar's opener (the slide hides it)", "elsewhere"),
    "ELEMENT_TOOLBAR": Selector('[data-testid="stElementToolbar"]',
                                "a chart's hover toolbar (the slide hides it)", "elsewhere"),
    "ICON": Selector('[data-testid="stIconMaterial"]', "a Material icon"),
    "COLUMN": Selector('[data-testid="stColumn"]', "one column of st.columns"),
    "SKELETON": Selector('[data-testid="stSkeleton"]',
                         "the grey box Streamlit draws while an element's code loads (Home's "
                         "Open › links show their words there instead)", "elsewhere"),
    "ELEMENT_BY_ID": Selector('[data-testid="stElementContainer"]',
                              "the container around one element (js/slide.js's form)"),
    "MAIN_BLOCK_BY_ID": Selector('[data-testid="stMainBlockContainer"]',
                                 "the main block container (js/slide.js's form)"),
}


def key(name: str) -> str:
    """The selector of the element or container drawn with ``key=name``."""
    return f".{KEY_CLASS}{name}"


def wrapper(name: str) -> str:
    """The layout wrapper Streamlit puts around the container drawn with ``key=name``
    (what takes its room in the page's flow: a sticky bar is made sticky there)."""
    return f"{SELECTORS['LAYOUT_WRAPPER'].css}:has(> {key(name)})"


def hidden(name: str) -> str:
    """A CSS rule that hides the container drawn with ``key=name`` and takes its room
    away (an invisible component's box)."""
    return f"{key(name)},{wrapper(name)}{{display:none}}"


def js() -> str:
    """The table as the key scripts' ``nwDom`` object (``nwDom.MAIN``, ...,
    ``nwDom.key(name)``), exported by the ES module ``js/st_dom.js``: its text."""
    table = {name: s.css for name, s in SELECTORS.items()}
    return ("// @ts-check\n"
            "// Streamlit's own DOM, for the key scripts: made from components/st_dom.py "
            "(its SELECTORS), never edited by hand.\n"
            "// `python -m components.st_dom` writes it again.\n"
            f"export const nwDom = Object.freeze(Object.assign({json.dumps(table, indent=1)}, {{\n"
            f"  KEY_CLASS: {json.dumps(KEY_CLASS)},\n"
            "  key: (/** @type {string} */ name) => \".\" + " + json.dumps(KEY_CLASS) + " + name,\n"
            "  // whether a run of the app is under way or asked for (its elements may still change)\n"
            "  running: () => {\n"
            "    const app = document.querySelector(" + json.dumps(SELECTORS["APP"].css) + ");\n"
            "    const state = app && app.getAttribute(\"data-test-script-state\");\n"
            "    return state === \"running\" || state === \"rerunRequested\";\n"
            "  },\n"
            "}));\n")


JS_FILE = Path(__file__).parent / "js" / "st_dom.js"

if __name__ == "__main__":
    JS_FILE.write_text(js(), encoding="utf-8")
