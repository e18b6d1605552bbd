"""Streamlit's own DOM, checked on real pages: every selector of components/st_dom.py
(the table the styles and key scripts take them from) matches on the Annotate or Review
page, and a failure names each one that no longer does, with what it was for."""

from __future__ import annotations

import pytest

from components import st_dom
from tests.browser.harness import wait_idle
from tests.browser.keys import DATASET, items, open_review

pytestmark = pytest.mark.browser

# the containers drawn with key= whose class and layout wrapper the styles rely on
_KEYED = {"annotate": ["nw-top", "nw-toolbar", "nw-outbox-box", "nw-item-cards",
                       "nw-item-side", "annotator"],
          "review": ["rv-bar", "rv-verdicts", "rv-responses", "nw-outbox-box"]}
_WRAPPED = {"annotate": ["nw-top", "nw-outbox-box"], "review": ["rv-bar"]}


def _count(page, css: str) -> int:
    return page.evaluate("(css) => document.querySelectorAll(css).length", css)


def _check(page, where: str, missing: dict[str, str]) -> set[str]:
    """The table's selectors that match on this page (and the keyed ones that do not,
    into ``missing``)."""
    page.locator(st_dom.SELECTORS["SIDEBAR"].css).wait_for(timeout=30_000)
    found = {name for name, s in st_dom.SELECTORS.items() if _count(page, s.css)}
    for key in _KEYED[where]:
        if not _count(page, st_dom.key(key)):
            missing[f"key({key!r}) on {where}"] = f"{st_dom.key(key)}: the class of key={key}"
    for key in _WRAPPED[where]:
        if not _count(page, st_dom.wrapper(key)):
            missing[f"wrapper({key!r}) on {where}"] = (
                f"{st_dom.wrapper(key)}: the layout wrapper around key={key}")
    return found


def test_every_streamlit_selector_matches_on_a_real_page(page, app_url, seeded_db) -> None:
    missing: dict[str, str] = {}
    first = items(seeded_db)[0][0]
    page.goto(f"{app_url}/annotate?dataset={DATASET}&item={first}")
    page.wait_for_function("(item) => window.__nwAnnotate && window.__nwAnnotate.data && "
                           "window.__nwAnnotate.data.item === item", arg=first, timeout=90_000)
    wait_idle(page)  # the key script is drawn in the toolbar, before the question's cards
    found = _check(page, "annotate", missing)
    open_review(page, app_url, "dom-check")
    found |= _check(page, "review", missing)
    for name, s in st_dom.SELECTORS.items():
        if name not in found and s.page not in ("elsewhere", "stale"):
            missing[name] = f"{s.css}: {s.what}"
        if name in found and s.page == "stale":
            missing[name] = f"{s.css}: marked stale in st_dom, yet it matches again"
    assert not missing, "Streamlit's DOM changed; these selectors of components/st_dom.py " \
        "match nothing:\n" + "\n".join(f"  {k}: {v}" for k, v in sorted(missing.items()))
