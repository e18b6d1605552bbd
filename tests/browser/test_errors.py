"""An unexpected error shows the visitor a short notice, never a traceback with the
server's paths; the details go to the server's log (issue 11, point 12)."""

from __future__ import annotations

import sqlite3

from tests.browser.harness import ROOT, AppServer, wait_idle


def test_a_page_that_fails_shows_no_traceback_and_the_log_has_it(browser, seeded_db, tmp_path):
    db = tmp_path / "needlework.db"
    source, target = sqlite3.connect(seeded_db), sqlite3.connect(db)
    source.backup(target)
    source.close()
    (key,) = target.execute("select key from items where dataset = 'demo-grounding' "
                            "order by position limit 1").fetchone()
    target.execute("update items set record = '{damaged' where dataset = 'demo-grounding' "
                   "and key = ?", [key])  # a damaged row: the page cannot read it
    target.commit()
    target.close()
    server = AppServer(db)
    server.start()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/annotate?dataset=demo-grounding&item={key}")
        wait_idle(page, timeout=60_000)
        notice = page.locator('[data-testid="stException"]')
        notice.first.wait_for(timeout=30_000)
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert "error" in notice.first.inner_text().lower()
        for leak in ("Traceback", 'File "', str(ROOT), "OperationalError", "malformed",
                     "damaged"):
            assert leak not in text, leak
        log = server.log()
        # the details, with paths (SQLite's or Python's words for the damaged JSON)
        assert "malformed JSON" in log or "Expecting property name" in log, log[-2000:]
        assert str(ROOT / "app_pages") in log or "app_pages/annotate.py" in log, log[-2000:]
    finally:
        context.close()
        server.stop()
