"""A page nobody touches changes nothing in the document: the key scripts and the save
badge redraw on a one-second tick, and each write to the page (a style element's text, the
badge's) makes the browser restyle it, for hours on an annotator's screen."""

from __future__ import annotations

import uuid

from tests.browser.harness import wait_idle
from tests.browser.keys import items, open_annotate, open_review

#: Every change to the document for ``ms`` milliseconds, described (none expected).
WATCH = """(ms) => new Promise((done) => {
    const seen = [];
    const observer = new MutationObserver((records) => {
      for (const r of records) {
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        seen.push(`${r.type} ${el ? (el.id || el.tagName + '.' + el.className).slice(0, 80) : ''}`);
      }
    });
    observer.observe(document, {subtree: true, childList: true, attributes: true,
                                characterData: true});
    setTimeout(() => { observer.disconnect(); done(seen); }, ms);
})"""


def test_an_idle_page_writes_nothing(browser, app_url, seeded_db):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        who = f"idle-{uuid.uuid4().hex[:6]}"
        for where in ("annotate", "review", "home"):
            if where == "annotate":
                open_annotate(page, app_url, items(seeded_db)[0][0], who)
            elif where == "review":
                open_review(page, app_url, who)
            else:
                page.goto(app_url + "/")
            wait_idle(page)
            page.wait_for_timeout(1500)  # what the last rerun set off (the badge's fade) is over
            assert page.evaluate(WATCH, 3500) == [], where
    finally:
        context.close()
