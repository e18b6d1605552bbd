"""A page nobody touches changes nothing in the document: the key scripts and the save
badge redraw on a one-second tick, and each write to the page (a style element's text, the
badge's) makes the browser restyle it, for hours on an annotator's screen."""

from __future__ import annotations

import uuid

from tests.browser.keys import items, open_annotate, open_review, wait_mounted

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

#: Waits until the document has not changed for ``quiet`` ms: null then, else (after
#: ``limit`` ms) the last changes it kept seeing, described as :data:`WATCH` does.
QUIET = """([quiet, limit]) => new Promise((done) => {
    const seen = [];
    const start = performance.now();
    let last = start;
    const observer = new MutationObserver((records) => {
      last = performance.now();
      for (const r of records) {
        const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        seen.push(`${r.type} ${el ? (el.id || el.tagName + '.' + el.className).slice(0, 80) : ''}`);
      }
    });
    observer.observe(document, {subtree: true, childList: true, attributes: true,
                                characterData: true});
    const check = () => {
      const now = performance.now();
      if (now - last >= quiet || now - start >= limit) {
        observer.disconnect();
        done(now - last >= quiet ? null : seen.slice(-20));
      } else {
        setTimeout(check, 25);
      }
    };
    setTimeout(check, 25);
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
            wait_mounted(page)
            # what the last run set off is over: the document unchanged for half a second
            # (under the one-second tick, so a page written every tick gets there too)
            assert page.evaluate(QUIET, [500, 15_000]) is None, where
            assert page.evaluate(WATCH, 3500) == [], where  # the span tested: 3.5 s, no write
    finally:
        context.close()
