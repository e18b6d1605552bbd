"""The annotate page in Chromium, driven by the keyboard only (after typing the name).

Every key press is checked against the database file the server writes to.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.harness import assert_no_exception, screenshot, wait_idle

DATASET = "demo-grounding"
KEYS = {"1": "irrelevant", "2": "ANSWER-THE-QUESTION", "3": "RELATED-INFORMATION",
        "4": "OUTDATED", "5": "UNKNOWN"}


def _read(db_path, sql: str, params: list) -> list:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def stored(db_path, key: str, who: str, field: str):
    rows = _read(db_path, "select value from annotations where dataset = ? and item_key = ? "
                 "and annotator = ? and field = ?", [DATASET, key, who, field])
    return json.loads(rows[0][0]) if rows else None


def wait_stored(db_path, key: str, who: str, field: str, expected, timeout: float = 20.0):
    """Poll the database until ``field`` has ``expected``; fail with what it has."""
    deadline = time.time() + timeout
    while True:
        value = stored(db_path, key, who, field)
        if value == expected:
            return
        if time.time() > deadline:
            raise AssertionError(f"{who} {field}: expected {expected!r}, database has {value!r}")
        time.sleep(0.05)


#: The answer box as the page holds it: its text, whether it has the focus, the run state.
ANSWER_STATE = """() => { const t = document.querySelector('.st-key-nw-answer textarea');
  return {boxes: document.querySelectorAll('.st-key-nw-answer textarea').length,
          text: t && t.value, focused: document.activeElement === t, disabled: t && t.disabled,
          active: document.activeElement && document.activeElement.tagName,
          state: document.querySelector('[data-testid=stApp]').dataset.testScriptState,
          waiting: window.__nwAnnotate && window.__nwAnnotate.input.waiting.length,
          note: (document.querySelector('.nw-key-note') || {}).textContent,
          name: (document.querySelector('.st-key-annotator input') || {}).value,
          log: (window.__nwRecord || []).join('\\n')}; }"""

#: Records what happens to the focus, the answer box and the page's runs from now on
#: (window.__nwRecord): what :data:`ANSWER_STATE` prints when the answer is not saved.
RECORD = """() => {
  const log = window.__nwRecord = [];
  const t0 = performance.now();
  const add = (what) => { if (log.length < 400) log.push(`${Math.round(performance.now() - t0)} ${what}`); };
  const desc = (el) => {
    if (!el || !el.tagName) return String(el);
    const box = el.closest && el.closest('[class*=st-key-]');
    return el.tagName + (box ? ' ' + [...box.classList].find(c => c.startsWith('st-key-')).slice(0, 30) : '');
  };
  document.addEventListener('focusin', (e) => add('focus ' + desc(e.target)), true);
  document.addEventListener('focusout', (e) => add('blur ' + desc(e.target)), true);
  document.addEventListener('keydown', (e) => {
    if (!e.isTrusted || e.target.tagName !== 'TEXTAREA') add(`key ${e.key} on ${desc(e.target)}${e.isTrusted ? '' : ' (script)'}`);
  }, true);
  new MutationObserver((changes) => {
    for (const c of changes) {
      for (const n of c.removedNodes) if (n.nodeType === 1 && (n.tagName === 'TEXTAREA' || n.querySelector('textarea'))) add('answer box removed');
      for (const n of c.addedNodes) if (n.nodeType === 1 && (n.tagName === 'TEXTAREA' || n.querySelector('textarea'))) add('answer box added');
    }
  }).observe(document.body, {childList: true, subtree: true});
  const app = document.querySelector('[data-testid=stApp]');
  new MutationObserver(() => add('run ' + app.dataset.testScriptState)).observe(
    app, {attributes: true, attributeFilter: ['data-test-script-state']});
  const idle = window.__nwIdle;
  add(`sockets ${idle ? idle.opened + ' opened, ' + idle.closed + ' closed' : '?'}`);
  addEventListener('beforeunload', () => add('unload'));
}"""


@pytest.fixture(scope="module")
def item(seeded_db):
    """The first demo question with at least five passages: (key, passage count)."""
    rows = _read(seeded_db, "select key, json_array_length(record, '$.grounding') from items "
                 "where dataset = ? order by position", [DATASET])
    return next((k, n) for k, n in rows if n >= 5)


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def open_item(page, app_url, key: str, who: str) -> None:
    """Open the item by deep link, type the annotator name, leave the field with Esc."""
    page.goto(f"{app_url}/annotate?dataset={DATASET}&item={key}")
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    page.get_by_label("Annotator", exact=True).fill(who)
    page.keyboard.press("Enter")
    page.get_by_text(f"items done by {who}").wait_for(timeout=30_000)
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    assert_no_exception(page)


def test_keyboard_labels_every_passage_and_writes_a_cited_answer(page, app_url, seeded_db, item):
    key, count = item
    who = unique("kbd")
    open_item(page, app_url, key, who)
    sequence = [str(1 + i % 5) for i in range(count)]
    sequence[0] = "2"  # passage 1 answers the question
    for number, press in enumerate(sequence, start=1):
        page.keyboard.press(press)
        wait_stored(seeded_db, key, who, f"label:{number}", KEYS[press])
    page.get_by_text(f"This question: {count}/{count} passages labeled").wait_for()
    # the cursor's card (the last passage) was scrolled to just under the sticky toolbar
    page.wait_for_function(
        f"""() => {{ const bar = document.querySelector('.st-key-nw-top').getBoundingClientRect();
                     const card = document.querySelector('.st-key-nw-card-{count}').getBoundingClientRect();
                     return card.top >= bar.bottom && card.top < innerHeight - 100; }}""",
        timeout=10_000)
    # K moves the cursor back; 4 relabels that passage and moves on; 0 clears; 5 labels
    page.keyboard.press("k")
    page.keyboard.press("4")
    wait_stored(seeded_db, key, who, f"label:{count - 1}", "OUTDATED")
    page.keyboard.press("0")
    wait_stored(seeded_db, key, who, f"label:{count}", None)
    page.keyboard.press("5")
    wait_stored(seeded_db, key, who, f"label:{count}", "UNKNOWN")
    # A puts the cursor in the answer; typing digits there labels nothing; Esc saves
    page.evaluate(RECORD)
    page.keyboard.press("a")
    # while the page's run after 5 is still going, A waits for it (keys typed meanwhile
    # wait with it: tests/js/annotate_input.test.mjs), so the focus may come a moment later
    page.wait_for_function("() => document.activeElement.tagName === 'TEXTAREA'", timeout=10_000)
    answer = "It takes about 8 minutes 20 seconds [cite_1]; costs $5 and <b>$10</b>."
    page.keyboard.type(answer)
    page.keyboard.press("Escape")
    try:
        wait_stored(seeded_db, key, who, "answer", answer)
    except AssertionError as e:  # what the page held, for a failure seen once under load
        state = page.evaluate(ANSWER_STATE)
        log = state.pop("log")
        rows = _read(seeded_db, "select field, old_value, new_value, at from history where "
                     "dataset = ? and item_key = ? and annotator = ? order by id desc limit 6",
                     [DATASET, key, who])
        # the page's address, sockets and text: the failure hook (tests/browser/conftest.py)
        raise AssertionError(f"{e}; page: {state}\nlast saves: {rows}\n"
                             f"since A was pressed:\n{log}") from None
    assert stored(seeded_db, key, who, "label:2") == KEYS[sequence[1]]
    preview = page.locator("#nw-preview")
    preview.wait_for()
    assert "costs $5 and <b>$10</b>." in preview.inner_text()
    assert preview.locator("mark.nw-cite").first.inner_text() == "[cite_1]"
    page.wait_for_function(
        f"() => document.querySelectorAll('[id^=nw-stamp-]').length === {count} && "
        "[...document.querySelectorAll('[id^=nw-stamp-]')]"
        ".every(e => e.innerText.includes('saved'))", timeout=20_000)
    wait_idle(page)
    assert_no_exception(page)
    screenshot(page, "annotate-keyboard")
    # N opens the next question and the URL follows
    page.keyboard.press("n")
    page.wait_for_function(f"() => !location.search.includes('item={key}')", timeout=20_000)
    wait_idle(page)
    page.evaluate("document.querySelector('[data-testid=stMain]').scrollTo(0, 0)")
    page.wait_for_function("() => document.querySelector('[data-testid=stMain]').scrollTop === 0",
                           timeout=10_000)
    screenshot(page, "annotate-next-item")


def _stamps(page, expected: int) -> None:
    """Exactly ``expected`` passage cards show a saved label (the cards are drawn after the
    progress line: wait for them, up to 15 s)."""
    expect(page.locator('[id^="nw-stamp-"]', has_text="✓ saved")).to_have_count(
        expected, timeout=15_000)


def _labels(db_path, key: str, who: str) -> dict[str, str]:
    rows = _read(db_path, "select field, value from annotations where dataset = ? and "
                 "item_key = ? and annotator = ? and field like 'label:%'", [DATASET, key, who])
    return {field: json.loads(value) for field, value in rows}


def test_two_annotators_in_two_browsers_and_closing_one_mid_item_lose_nothing(
        app_url, seeded_db, item, browser):
    """ana and bo label the same item at the same time in two browser contexts; ana's
    browser is closed mid-item while a draft answer is being typed (no Esc, no blur);
    ana reopens the item: both label sets and ana's draft are all there."""
    key, _ = item
    ana, bo = unique("ana"), unique("bo")
    first = browser.new_context(viewport={"width": 1400, "height": 1000})  # ana's browser
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    reopened = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = first.new_page()
        page_b = other.new_page()
        open_item(page, app_url, key, ana)
        open_item(page_b, app_url, key, bo)
        for number, (press_a, press_b) in enumerate(zip("213", "332", strict=True), start=1):
            page.keyboard.press(press_a)
            page_b.keyboard.press(press_b)
            wait_stored(seeded_db, key, ana, f"label:{number}", KEYS[press_a])
            wait_stored(seeded_db, key, bo, f"label:{number}", KEYS[press_b])
        page.keyboard.press("a")
        page.keyboard.type("Draft saved while typing [cite_1]")
        wait_stored(seeded_db, key, ana, "answer", "Draft saved while typing [cite_1]")
        page.context.close()  # ana's browser goes away mid-item
        page_b.keyboard.press("4")
        wait_stored(seeded_db, key, bo, "label:4", "OUTDATED")
        assert _labels(seeded_db, key, ana) == {f"label:{n}": KEYS[p]
                                                for n, p in enumerate("213", start=1)}
        assert _labels(seeded_db, key, bo) == {f"label:{n}": KEYS[p]
                                               for n, p in enumerate("3324", start=1)}
        page_b.get_by_text("This question: 4/").wait_for()
        _stamps(page_b, 4)
        again = reopened.new_page()
        open_item(again, app_url, key, ana)
        again.get_by_text("This question: 3/").wait_for()
        _stamps(again, 3)
        area = again.locator(".st-key-nw-answer textarea")
        assert area.input_value() == "Draft saved while typing [cite_1]"
        screenshot(again, "annotate-reopened")
        # the agreement page lists the item as disputed; its link opens the annotate page
        again.goto(f"{app_url}/agreement?dataset={DATASET}")
        again.get_by_text("Where annotators disagree").wait_for(timeout=30_000)
        wait_idle(again)
        assert_no_exception(again)
        screenshot(again, "agreement")
        (question,) = _read(seeded_db, "select title from items where dataset = ? and key = ?",
                            [DATASET, key])[0]
        # the full question (other tests label the same dataset: many items are disputed)
        words = " ".join(question.split()[:6])
        link = again.locator('[data-testid="stPageLink"]', has_text=words).first
        link.click()
        again.wait_for_url(f"**/annotate?*item={key}*", timeout=15_000)
        again.locator(".st-key-nw-toolbar").wait_for()
        assert_no_exception(again)
    finally:
        for context in (first, other, reopened):
            context.close()


def test_a_new_tab_and_homes_open_resume_at_the_first_unfinished_question(page, app_url,
                                                                            seeded_db):
    """The name this browser remembers reaches the session one run after the page opens:
    the page waits for it before choosing where to resume (it opened question 1, done,
    choosing for nobody)."""
    from tests.browser.keys import DATASET, items, open_annotate, settle  # noqa: PLC0415

    order = items(seeded_db)
    (first, n), (second, _) = order[0], order[1]
    who = f"resume-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, first, who)
    page.keyboard.type("1" * n)
    page.keyboard.press("d")
    settle(page)
    for how in ("address", "home"):
        tab = page.context.new_page()
        if how == "address":
            tab.goto(f"{app_url}/annotate?dataset={DATASET}")
        else:
            tab.goto(f"{app_url}/?dataset={DATASET}")
            tab.locator(f'a[href$="?dataset={DATASET}"]', has_text="Open ›").first.click()
        tab.wait_for_function("(who) => window.__nwAnnotate && window.__nwAnnotate.data && "
                              "window.__nwAnnotate.data.annotator === who", arg=who,
                              timeout=30_000)
        wait_idle(tab)
        assert tab.evaluate("window.__nwAnnotate.data.item") == second, how
        assert f"item={second}" in tab.url, how
        assert_no_exception(tab)
        tab.close()
