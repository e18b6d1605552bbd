"""The review page in Chromium: keyboard verdicts checked in the database file,
diff navigation on a real RM-Bench pair, deep links, long responses, overview."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections import Counter

import pytest

import store
from needlework.datasets.transfer import import_bytes, import_file
from tests.browser.harness import assert_no_exception, screenshot, wait_idle
from tests.conftest import RMBENCH_DIR

DEMO = "demo-preference"
RMBENCH = "rm-chat"


def _rows(db_path, who: str) -> dict:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        rows = conn.execute("select item_key, field, value, updated_at from annotations "
                            "where annotator = ? and field like 'verdict:%'", [who]).fetchall()
    finally:
        conn.close()
    return {(k, f): (json.loads(v), u) for k, f, v, u in rows}


def wait_rows(db_path, who: str, count: int, timeout: float = 15.0) -> dict:
    """Poll the database until ``who`` has ``count`` verdicts."""
    deadline = time.time() + timeout
    while True:
        rows = _rows(db_path, who)
        if len(rows) >= count or time.time() > deadline:
            return rows
        time.sleep(0.05)


@pytest.fixture(scope="module")
def rmbench(seeded_db):
    """RM-Bench chat imported into the app's database (read from the shared data)."""
    db = store.connect(seeded_db)
    try:
        if db.execute("select 1 from datasets where name = ?", [RMBENCH]).fetchone() is None:
            import_file(db, RMBENCH_DIR / "chat_filtered.json", dataset=RMBENCH)
    finally:
        db.conn.close()
    return RMBENCH


def pick_dataset(page, name: str) -> None:
    """Choose a dataset in the sidebar picker; wait for its review page; leave the picker."""
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').click()
    page.get_by_role("option", name=name, exact=True).click()
    page.locator('[data-testid="stMain"]').get_by_text("in this view").wait_for(
        timeout=15_000)
    wait_idle(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # leave the picker
    assert page.evaluate("document.activeElement.tagName") not in ("INPUT", "TEXTAREA")


def sign_in(page, who: str) -> None:
    """Type the annotator name, commit it with Enter, leave the field with Esc."""
    page.get_by_label("Annotator", exact=True).fill(who)
    page.keyboard.press("Enter")
    page.get_by_text("Enter your name in the sidebar to save verdicts.").wait_for(
        state="detached", timeout=15_000)
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.tagName") not in ("INPUT", "TEXTAREA")


def verdict_header(page, text: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_text(text, exact=False).wait_for(timeout=15_000)


def open_review(page, app_url, prefix: str) -> str:
    """The review page on the demo pairs, signed in as a new name (returned), on the
    first comparison."""
    who = f"{prefix}-{uuid.uuid4().hex[:6]}"
    page.goto(f"{app_url}/review")
    wait_idle(page)
    pick_dataset(page, DEMO)
    sign_in(page, who)
    verdict_header(page, "Chosen vs rejected 1")
    return who


def test_keyboard_review_of_three_comparisons(page, app_url, seeded_db):
    who = open_review(page, app_url, "kbd")
    page.keyboard.press("a")  # chosen better
    assert len(wait_rows(seeded_db, who, 1)) == 1
    verdict_header(page, "Chosen vs rejected 2")
    page.keyboard.press("f")  # rejected better
    assert len(wait_rows(seeded_db, who, 2)) == 2
    verdict_header(page, "Chosen vs rejected 3")
    page.keyboard.press("3")  # reason: incomplete, right after F: with F's verdict
    page.wait_for_function("() => document.querySelector('.nw-review-note').innerText"
                           ".includes('with the verdict you just gave')", timeout=10_000)
    wait_idle(page)
    note = page.get_by_label("Note", exact=True)
    note.click()
    page.keyboard.type("a fast tab: both bad? skip")  # letters that are shortcuts elsewhere
    page.keyboard.press("Enter")
    wait_idle(page)
    assert len(_rows(seeded_db, who)) == 2  # typing fired no shortcut (the reason is F's row)
    page.keyboard.press("Escape")
    page.keyboard.press("t")  # tie
    rows = wait_rows(seeded_db, who, 3)
    item = next(k for k, _ in rows)
    values = {field: value for (_, field), (value, _) in rows.items()}
    assert values == {
        "verdict:0:0": {"verdict": "agree", "reasons": [], "note": ""},
        "verdict:0:1": {"verdict": "flip", "reasons": ["incomplete"], "note": ""},
        "verdict:0:2": {"verdict": "tie", "reasons": [], "note": "a fast tab: both bad? skip"},
    }
    assert all(stamp for _, stamp in rows.values()) and {k for k, _ in rows} == {item}
    page.get_by_text("Last saved:").wait_for(timeout=10_000)
    assert_no_exception(page)
    screenshot(page, "review-keyboard")


def test_a_verdict_typed_before_the_page_draws_its_comparison_carries_no_other_note(
        page, app_url, seeded_db):
    """A note typed on the first comparison (no verdict yet), then J and T at full speed:
    the tie lands on the second comparison before the page has drawn it, and the note
    field still showing the first comparison's words is not saved with it."""
    who = open_review(page, app_url, "note-ahead")
    note = page.get_by_label("Note", exact=True)
    note.click()
    page.keyboard.type("only for the first")
    page.keyboard.press("Enter")
    wait_idle(page)
    page.keyboard.press("Escape")
    page.keyboard.type("jt")  # as fast as the browser sends them
    rows = wait_rows(seeded_db, who, 1)
    assert [(field, value) for (_, field), (value, _) in rows.items()] == [
        ("verdict:0:1", {"verdict": "tie", "reasons": [], "note": ""})]
    assert_no_exception(page)


def test_diff_navigation_on_a_real_rmbench_pair(page, app_url, rmbench):
    page.goto(f"{app_url}/review?item=95")
    wait_idle(page)
    pick_dataset(page, rmbench)
    main = page.locator('[data-testid="stMain"]')
    current = main.locator("mark.nw-current")
    current.first.wait_for(timeout=15_000)
    assert current.all_inner_texts() == ["root vegetables", "orchids"]
    assert main.locator("mark.nw-chg").count() == 4
    page.keyboard.press("d")  # next difference
    page.wait_for_function(
        "() => [...document.querySelectorAll('mark.nw-current')].map(m => m.innerText)"
        ".join('|') === 'strawberries|ferns'", timeout=15_000)
    assert "item=95" in page.url
    assert_no_exception(page)
    screenshot(page, "review-diff")


def test_deep_link_opens_a_long_item_first_screen_first(page, app_url):
    page.goto(f"{app_url}/review?dataset={DEMO}&item=RAG_5")
    wait_idle(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Item RAG_5").wait_for(timeout=15_000)
    main.locator("mark.nw-current").first.wait_for(timeout=15_000)  # near-identical: a diff
    main.get_by_role("radio", name="Side by side").click()
    main.get_by_role("button", name="More").first.wait_for(timeout=15_000)  # the rest on demand
    wait_idle(page)
    boxes = main.locator(".st-key-rv-responses .nw-text.nw-box")  # the prompt is no box
    shown = len(boxes.nth(0).inner_text())
    main.get_by_role("button", name="All").first.click()
    page.wait_for_function(
        "() => document.querySelectorAll('.st-key-rv-responses .nw-text.nw-box')[0]"
        f".innerText.length > {shown * 4}", timeout=15_000)
    assert_no_exception(page)
    screenshot(page, "review-long")


def test_dataset_overview(page, app_url):
    page.goto(f"{app_url}/review")
    wait_idle(page)
    pick_dataset(page, DEMO)
    page.get_by_role("radio", name="Dataset overview").click()
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Response lengths").wait_for(timeout=15_000)
    if not main.locator('[data-testid="stVegaLiteChart"]').count():
        # the token counts are counted once, in the background, when asked for
        main.get_by_text("need counting first").wait_for(timeout=15_000)
        main.get_by_text("Filters and sort").first.click()
        main.get_by_role("button", name="Count tokens").click()
    main.locator('[data-testid="stVegaLiteChart"]').first.wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)
    screenshot(page, "review-overview")


def test_a_grounding_dataset_offers_buttons_that_open_a_preference_one(page, app_url):
    """Issue 18, point 3: the page's action with a grounding dataset picked is not a dead
    link: it opens the preference dataset, in the same tab."""
    page.goto(f"{app_url}/review?dataset=demo-grounding")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("is a grounding dataset").wait_for(timeout=15_000)
    main.get_by_role("button", name=f"{DEMO} ·").click()
    main.get_by_text("in this view").wait_for(timeout=15_000)
    main.get_by_text("Item QA_1").wait_for(timeout=15_000)
    assert f"dataset={DEMO}" in page.url
    assert_no_exception(page)


def test_search_then_one_verdict_for_the_next_comparisons(page, app_url, seeded_db):
    """Issue 18, point 22 in the browser: a search by id lands on the match; the sidebar's
    one-verdict-for-several saves each comparison under the reviewer's name."""
    who = f"bulk-{uuid.uuid4().hex[:6]}"
    page.goto(f"{app_url}/review?dataset={DEMO}")
    page.locator('[data-testid="stMain"]').get_by_text("in this view").wait_for(timeout=15_000)
    sign_in(page, who)
    search = page.get_by_placeholder("search prompts or ids")
    search.fill("qa_2")
    search.press("Enter")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Item QA_2").wait_for(timeout=15_000)
    main.get_by_text("1 of 28 items").wait_for(timeout=15_000)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("One verdict for several comparisons").click()
    go = sidebar.get_by_role("button", name="on these")
    go.wait_for(timeout=15_000)
    assert "these 3" in go.inner_text()  # the view holds QA_2's three comparisons
    # clicked while a run is still redrawing the sidebar, the click saved nothing (twice in
    # full runs under load): wait until the page is drawn, as a person looks before clicking
    wait_idle(page)
    go.click()
    rows = wait_rows(seeded_db, who, 3)
    if not rows:  # seen once in a full run under load, not reproduced alone: say what showed
        screenshot(page, "review-bulk-nothing-saved")
        toasts = page.locator('[data-testid="stToast"]').all_inner_texts()
        raise AssertionError(f"nothing saved for {who}; url {page.url}; toasts {toasts}; "
                             f"sidebar: {sidebar.inner_text()[-600:]}")
    assert {(k, f) for k, f in rows} == {("QA_2", f"verdict:0:{j}") for j in range(3)}
    assert {v["verdict"] for v, _ in rows.values()} == {"agree"}
    wait_idle(page)
    assert_no_exception(page)


IN_VIEW = """() => {
  const m = document.querySelector('[data-testid="stMain"] mark.nw-current');
  const bar = document.querySelector('.st-key-rv-bar');
  if (!m) return null;
  const r = m.getBoundingClientRect();
  const limit = bar ? bar.getBoundingClientRect().top : innerHeight;
  return r.top >= 0 && r.bottom <= limit;
}"""


def test_d_brings_the_next_difference_into_the_window_above_the_verdict_bar(page, app_url):
    """At 1280×800 the difference D moves to landed below the window or under the sticky
    verdict bar (issue 29): the page scrolls to it."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{app_url}/review?dataset={DEMO}&item=RAG_5")
    wait_idle(page)
    main = page.locator('[data-testid="stMain"]')
    main.locator("mark.nw-current").first.wait_for(timeout=15_000)
    n = int(main.get_by_text("Difference 1 of").inner_text().split(" of ")[1].split()[0])
    assert n >= 2, n
    wait_idle(page)
    for k in range(2, min(n, 4) + 1):
        page.keyboard.press("d")
        main.get_by_text(f"Difference {k} of {n}").wait_for(timeout=15_000)
        page.wait_for_function(IN_VIEW, timeout=5_000)
    page.keyboard.press("Shift+D")
    main.get_by_text(f"Difference {min(n, 4) - 1} of {n}").wait_for(timeout=15_000)
    page.wait_for_function(IN_VIEW, timeout=5_000)
    assert_no_exception(page)


def test_m_opens_the_note_and_z_says_which_comparison_it_reverted(page, app_url, seeded_db):
    who = open_review(page, app_url, "mz")
    page.keyboard.press("a")  # chosen better: the page moves on to the next unreviewed
    rows = wait_rows(seeded_db, who, 1)
    (item, field), _ = next(iter(rows.items()))
    verdict_header(page, "Chosen vs rejected 2")
    wait_idle(page)
    page.keyboard.press("z")  # undoes the verdict on a comparison no longer on screen
    page.wait_for_function(
        "() => [...document.querySelectorAll('.nw-review-note')].some((n) => "
        "n.textContent.includes('not the one on screen'))", timeout=15_000)
    note = page.locator(".nw-review-note").first.inner_text()
    assert f"item {item}, chosen 1 vs rejected 1" in note, note
    assert _rows(seeded_db, who) == {}
    page.keyboard.press("m")  # the note's field, ready for typing
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Note"
    page.keyboard.type("shorter")
    page.keyboard.press("Escape")
    assert_no_exception(page)


def test_the_verdict_bar_stays_in_place_between_items_of_different_shapes(page, app_url,
                                                                          seeded_db):
    """RM-Bench records with and without the dataset's `error` note, one after the other:
    moving on to the next item redraws what is above the verdict bar, never the bar itself
    (the key script drops a key pressed while it finds no bar), and verdicts typed 150 ms
    apart across the items all land, each on its own comparison."""
    name = f"mixed-{uuid.uuid4().hex[:6]}"
    records = [{"id": k, "subset": "chat", "prompt": f"Question {k}?",
                "chosen": [f"good {k} {s}" for s in range(3)],
                "rejected": [f"bad {k} {s}" for s in range(3)],
                **({"error": f"note {k}"} if k % 2 else {})} for k in range(1, 5)]
    db = store.connect(seeded_db)
    try:
        import_bytes(db, json.dumps(records).encode(), "chat_mixed.json", dataset=name)
    finally:
        db.conn.close()
    who = f"shape-{uuid.uuid4().hex[:6]}"
    page.goto(f"{app_url}/review")
    wait_idle(page)
    pick_dataset(page, name)
    sign_in(page, who)
    page.locator(".st-key-rv-verdicts").wait_for(timeout=15_000)
    page.evaluate("""() => {
      window.__barGone = 0;
      new MutationObserver(() => {
        if (!document.querySelector('.st-key-rv-verdicts')) window.__barGone += 1;
      }).observe(document.body, {childList: true, subtree: true});
    }""")
    # a pace, the thing tested: keys 150 ms apart; each verdict moves on (3 comparisons an item)
    page.keyboard.type("a" * 10, delay=150)
    rows = wait_rows(seeded_db, who, 10, timeout=30)
    wait_idle(page)
    assert page.evaluate("window.__barGone") == 0
    assert Counter(k for k, _ in rows) == {"1": 3, "2": 3, "3": 3, "4": 1}
    assert_no_exception(page)
