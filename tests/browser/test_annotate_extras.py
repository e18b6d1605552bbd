"""The annotate page's keys beyond labels: dimensions by Q, undo and redo (Z, Shift+Z,
Ctrl+Z, which never blanks the name field), flag, skip, the rest irrelevant, the file's
labels hidden, the key map, and a note in view for what a key did (issue 18, 8, 9, 20)."""

from __future__ import annotations

import uuid

import store
from needlework.actions.service import apply_actions
from tests.browser.harness import screenshot, wait_idle
from tests.browser.keys import DATASET, errors, items, open_annotate, read, settle, wait_drawn


def value(db_path, key: str, who: str, field: str):
    import json  # noqa: PLC0415

    rows = read(db_path, "select value from annotations where dataset = ? and item_key = ? and "
                "annotator = ? and field = ?", [DATASET, key, who, field])
    return json.loads(rows[0][0]) if rows else None


def note(page) -> str:
    return page.locator(".nw-key-note").inner_text()


def test_dimension_keys_undo_redo_flag_skip_rest_and_hide(page, app_url, seeded_db):
    order = items(seeded_db)
    key, n = order[3]
    who = f"extras-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, key, who)
    # Q 5 3: complexity = Set; Q 4 3: time sensitivity = fast-changing (two fields)
    page.keyboard.type("q5")
    assert "Complexity: 1 Simple" in page.locator(".nw-cursor-pos").inner_text()
    page.keyboard.type("3q43")
    settle(page)
    assert value(seeded_db, key, who, "dim:question_complexity") == "Set"
    assert value(seeded_db, key, who, "dim:question_sensitive") == "YES"
    assert value(seeded_db, key, who, "dim:question_type") == "FAST-CHANGING"
    # labels, then Z undoes the last one and puts the cursor back on it; Shift+Z redoes
    page.keyboard.type("24")
    settle(page)
    page.keyboard.press("z")
    settle(page)
    assert value(seeded_db, key, who, "label:2") is None
    assert value(seeded_db, key, who, "label:1") == "ANSWER-THE-QUESTION"
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           ".includes('reverted passage 2')", timeout=15_000)
    page.keyboard.press("Shift+Z")
    settle(page)
    assert value(seeded_db, key, who, "label:2") == "OUTDATED"
    # Ctrl+Z outside a text field is our undo, and leaves the name field alone
    page.keyboard.press("Control+z")
    settle(page)
    assert value(seeded_db, key, who, "label:2") is None
    assert page.get_by_label("Annotator", exact=True).input_value() == who
    # R: every passage still unlabeled becomes irrelevant
    page.keyboard.press("r")
    settle(page)
    assert all(value(seeded_db, key, who, f"label:{p}") for p in range(1, n + 1))
    assert value(seeded_db, key, who, "label:1") == "ANSWER-THE-QUESTION"
    # D with an empty answer writes the deflection and says so in view
    page.keyboard.press("d")
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           ".includes('deflection written')", timeout=10_000)
    settle(page)
    assert value(seeded_db, key, who, "deflected") is True
    # F flags, and again unflags; H hides the file's labels; ? opens the key map
    page.keyboard.press("f")
    settle(page)
    assert value(seeded_db, key, who, "flag") == "flagged"
    page.keyboard.press("h")
    page.wait_for_function("() => !document.body.innerText.includes(\"file's label:\")",
                           timeout=15_000)
    page.keyboard.press("h")
    page.get_by_text("file's label:").first.wait_for(timeout=15_000)
    page.keyboard.press("?")
    page.get_by_text("set a question dimension").wait_for(timeout=10_000)
    screenshot(page, "annotate-keymap")
    page.keyboard.press("Escape")
    # M puts the cursor in the comment; Enter saves it; Esc leaves
    page.keyboard.press("m")
    assert page.evaluate("document.activeElement.closest('.st-key-nw-comment') !== null")
    page.keyboard.type("source 3 is a press release")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.get_by_text("✓ comment saved").wait_for(timeout=15_000)
    assert value(seeded_db, key, who, "comment") == "source 3 is a press release"
    page.get_by_text("flagged for later (F)").wait_for(timeout=10_000)
    # S marks the question skipped and opens the next
    page.keyboard.press("s")
    settle(page)
    assert value(seeded_db, key, who, "skipped") == "skipped"
    page.wait_for_function(f"() => !location.search.includes('item={key}')", timeout=20_000)
    assert errors(page) == []


def test_r_right_after_undo_marks_the_passage_the_undo_cleared(page, app_url, seeded_db):
    """Z then R, as fast as the browser sends them: the page still shows the label the
    undo took back, and R must not skip that passage (it did while R was decided in
    the browser)."""
    key, n = items(seeded_db)[5]
    who = f"zr-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, key, who)
    page.keyboard.type("24")
    page.keyboard.press("z")
    page.keyboard.press("r")
    settle(page)
    labels = [value(seeded_db, key, who, f"label:{p}") for p in range(1, n + 1)]
    assert labels == ["ANSWER-THE-QUESTION"] + ["irrelevant"] * (n - 1), labels
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           f".includes('{n - 1} unlabeled passage(s) marked irrelevant')",
                           timeout=15_000)
    # and again, at the 150 ms pace, after the labels are on the page
    page.keyboard.press("z")
    settle(page)
    assert value(seeded_db, key, who, f"label:{n}") is None
    page.keyboard.type("zr", delay=150)
    settle(page)
    labels = [value(seeded_db, key, who, f"label:{p}") for p in range(1, n + 1)]
    assert labels == ["ANSWER-THE-QUESTION"] + ["irrelevant"] * (n - 1), labels
    assert errors(page) == []


def test_a_click_or_f_right_after_undo_sets_what_the_page_showed(page, app_url, seeded_db):
    """A click on the label a passage shows clears it, and F flips the flag. Right after
    Z the page still shows the undone value: a click on it, or F, must set it again (it
    cleared it while the browser decided from its copy)."""
    key, _ = items(seeded_db)[6]
    who = f"zt-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, key, who)
    page.keyboard.type("k4")  # passage 1 → Outdated, the cursor stays there
    settle(page)
    assert value(seeded_db, key, who, "label:1") == "OUTDATED"
    button = page.locator('.st-key-nw-card-1 button[data-nw-label="4"]')
    page.keyboard.press("z")
    button.click()
    settle(page)
    assert value(seeded_db, key, who, "label:1") == "OUTDATED"
    button.click()  # once the page shows it: a click on it clears it
    settle(page)
    assert value(seeded_db, key, who, "label:1") is None
    page.keyboard.press("f")
    settle(page)
    assert value(seeded_db, key, who, "flag") == "flagged"
    page.keyboard.press("z")
    page.keyboard.press("f")
    settle(page)
    assert value(seeded_db, key, who, "flag") == "flagged"
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           ".includes('flagged for later')", timeout=15_000)
    assert errors(page) == []


def test_review_undo_and_redo_keys(page, app_url, seeded_db):
    from tests.browser.keys import comparisons, open_review, settle_review, verdicts_of  # noqa: PLC0415

    who = f"rv-undo-{uuid.uuid4().hex[:6]}"
    first = comparisons(seeded_db)[0]
    open_review(page, app_url, who)
    page.keyboard.press("t")
    settle_review(page)
    field = (first[0], f"verdict:{first[1]}:{first[2]}")
    assert verdicts_of(seeded_db, who)[field]["verdict"] == "tie"
    page.keyboard.press("z")
    settle_review(page)
    assert field not in verdicts_of(seeded_db, who)
    page.keyboard.press("Control+Shift+Z")
    settle_review(page)
    assert verdicts_of(seeded_db, who)[field]["verdict"] == "tie"
    assert page.get_by_label("Annotator", exact=True).input_value() == who
    assert errors(page) == []


def test_a_reason_key_right_after_undo_flips_the_reason_on_what_is_saved(page, app_url, seeded_db):
    """Review's 1-7 add or remove one reason. Right after Z the page still shows the
    reasons the undo took back: the key must change only its own reason (it re-saved the
    undone one while the browser sent the whole set it showed)."""
    from tests.browser.keys import comparisons, open_review, settle_review, verdicts_of  # noqa: PLC0415

    who = f"rv-flip-{uuid.uuid4().hex[:6]}"
    first = comparisons(seeded_db)[0]
    field = (first[0], f"verdict:{first[1]}:{first[2]}")
    open_review(page, app_url, who)
    page.keyboard.type("1t")  # a reason kept for the verdict, then the verdict (and on to the next)
    settle_review(page)
    assert verdicts_of(seeded_db, who)[field]["reasons"] == ["factual error"]
    page.keyboard.press("k")  # back to it
    settle_review(page)
    page.keyboard.press("2")
    settle_review(page)
    assert verdicts_of(seeded_db, who)[field]["reasons"] == ["factual error", "unsafe"]
    page.keyboard.press("z")
    page.keyboard.press("3")
    settle_review(page)
    assert verdicts_of(seeded_db, who)[field] == {
        "verdict": "tie", "reasons": ["factual error", "incomplete"], "note": ""}
    assert errors(page) == []


def test_dimension_buttons_set_and_clear_and_the_page_stays_where_it_is(page, app_url, seeded_db):
    """A click on a dimension's option sets it and shows it chosen at once; a click on
    the chosen one clears it; Q keys set one too. The page stays where the annotator
    scrolled (it jumped back to the passage after each dimension)."""
    key, _ = items(seeded_db)[2]
    who = f"dims-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, key, who)
    dims = page.locator("#nw-dims")
    dims.scroll_into_view_if_needed()
    top = dims.bounding_box()["y"]
    chosen = ('() => getComputedStyle(document.querySelector('
              '\'#nw-dims button[data-nw-dim="4"][data-nw-option="2"]\')).color === "rgb(255, 255, 255)"')
    option = page.locator('#nw-dims button[data-nw-dim="4"][data-nw-option="2"]')  # Set
    option.click()
    assert page.evaluate(chosen)  # drawn chosen before the server has answered
    settle(page)
    assert value(seeded_db, key, who, "dim:question_complexity") == "Set"
    page.wait_for_function("() => document.querySelector('#nw-dims button[data-nw-dim=\"4\"]"
                           "[data-nw-option=\"2\"]').classList.contains('nw-chosen')", timeout=15_000)
    page.keyboard.type("q62", delay=150)  # popularity: Torso
    settle(page)
    assert value(seeded_db, key, who, "dim:question_popularity") == "Torso"
    page.wait_for_function("() => document.querySelector('#nw-dims button[data-nw-dim=\"5\"]"
                           "[data-nw-option=\"1\"]').classList.contains('nw-chosen')", timeout=15_000)
    wait_drawn(page)  # the rerun that draws the saved values is on the page
    # nothing to wait for: the test checks that no scroll comes. The key script scrolls
    # 120 ms after a redraw when it scrolls at all (js/annotate_keys.js): 400 ms covers it
    page.wait_for_timeout(400)
    assert abs(dims.bounding_box()["y"] - top) < 5, (top, dims.bounding_box())
    option.click()  # the chosen one: cleared
    settle(page)
    assert value(seeded_db, key, who, "dim:question_complexity") is None
    page.wait_for_function("() => !document.querySelector('#nw-dims button[data-nw-dim=\"4\"]"
                           "[data-nw-option=\"2\"]').classList.contains('nw-chosen')", timeout=15_000)
    assert not page.evaluate(chosen)
    assert errors(page) == []


def test_w_walks_the_dimensions_one_key_each_and_v_takes_the_files_values(
        page, app_url, seeded_db):
    """W then one key per dimension (a digit, Enter for the file's value, Space to leave
    it): 7 keys for six dimensions, where Q took 18. V takes the file's value of every
    dimension not set yet, in one key. Q 7 opens the category list; typing filters it."""
    order = items(seeded_db)
    key, _ = order[4]
    who = f"walk-{uuid.uuid4().hex[:6]}"
    open_annotate(page, app_url, key, who)
    file = {f: v for f, v in read(seeded_db, "select key, value from json_each((select record "
                                  "from items where dataset = ? and key = ?))",
                                  [DATASET, key]) if f.startswith("question_")}
    page.keyboard.press("w")
    assert "Valid (1/6)" in page.locator(".nw-cursor-pos").inner_text()
    page.keyboard.press("2")       # valid: NO
    page.keyboard.press("Enter")   # false premise: the file's
    page.keyboard.press(" ")       # info-seeking: left as it is
    page.keyboard.type("3", delay=150)  # time sensitivity: fast-changing
    page.keyboard.type("6", delay=150)  # complexity: Multi-hop
    page.keyboard.type("1", delay=150)  # popularity: Head, and the walk is done
    page.keyboard.press("2")       # a label again: the walk has ended
    settle(page)
    assert value(seeded_db, key, who, "dim:question_valid") == "NO"
    assert value(seeded_db, key, who, "dim:question_false_premise") == file["question_false_premise"]
    assert value(seeded_db, key, who, "dim:question_seeking") is None
    assert value(seeded_db, key, who, "dim:question_type") == "FAST-CHANGING"
    assert value(seeded_db, key, who, "dim:question_complexity") == "Multi-hop"
    assert value(seeded_db, key, who, "dim:question_popularity") == "Head"
    assert value(seeded_db, key, who, "label:1") == "ANSWER-THE-QUESTION"
    # V: the file's values where nothing is set (info-seeking, the category); the rest stay
    page.keyboard.press("v")
    settle(page)
    assert value(seeded_db, key, who, "dim:question_seeking") == file["question_seeking"]
    assert value(seeded_db, key, who, "dim:question_category") == file["question_category"]
    assert value(seeded_db, key, who, "dim:question_valid") == "NO"
    assert value(seeded_db, key, who, "dim:question_complexity") == "Multi-hop"
    page.wait_for_function("() => document.querySelector('.nw-key-note').innerText"
                           ".includes('took the file')", timeout=10_000)
    # the page drawn with V's values (a redraw still on its way would take the focus from
    # the list Q 7 opens: the page holds its redraw while the list has the focus, but one
    # already running under load still lands)
    page.wait_for_function("() => { const c = window.__nwCore; return !c.redrawTimer && "
                           "c.settled.every((s) => s.at <= (c.drawn || 0)); }", timeout=30_000)
    wait_idle(page)
    # Q 7: the category list opens; letters filter it instead of acting as keys
    page.keyboard.type("q7")
    page.wait_for_function("() => document.activeElement && document.activeElement"
                           ".closest('.st-key-nw-category') !== null && document.activeElement"
                           ".getAttribute('aria-expanded') === 'true'", timeout=10_000)
    page.keyboard.type("s")  # not S (skip): a filter of the list
    page.wait_for_function("() => document.activeElement.closest('.st-key-nw-category') !== null "
                           "&& document.activeElement.value === 's'", timeout=10_000)
    settle(page)  # a skip would have been sent (and answered) by now
    assert value(seeded_db, key, who, "skipped") is None
    page.keyboard.press("Escape")
    assert errors(page) == []
    # a category chosen from the list; then with the focus in the select, its list closed,
    # a key is a key again, with no Esc between
    combo = page.locator('.st-key-nw-category input[role="combobox"]')
    combo.click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=10_000)
    choice = next(o for o in options.all_inner_texts() if o != file["question_category"])
    page.get_by_role("option", name=choice, exact=True).click()
    settle(page)
    wait_idle(page)  # the choice's own rerun draws the select anew (keyed by the value)
    combo.focus()  # the focus in the select's input, its list closed
    page.wait_for_function("() => document.activeElement.getAttribute('role') === 'combobox' "
                           "&& document.activeElement.getAttribute('aria-expanded') === 'false'",
                           timeout=10_000)
    at = page.evaluate("() => window.__nwAnnotate.cursor")  # the passage the key labels
    page.keyboard.press("3")  # RELATED-INFORMATION
    settle(page)
    assert value(seeded_db, key, who, "dim:question_category") == choice
    assert value(seeded_db, key, who, f"label:{at}") == "RELATED-INFORMATION"
    assert errors(page) == []


def _finish(db_path, key: str, passages: int, who: str) -> None:
    """``who`` finishes question ``key``: every passage labeled and a deflection."""
    db = store.connect(db_path)
    try:
        tag = uuid.uuid4().hex[:8]
        done = apply_actions(db, [
            *({"id": f"fin-{tag}-{n}", "kind": "set", "dataset": DATASET, "item": key,
               "annotator": who, "field": f"label:{n}", "value": "irrelevant"}
              for n in range(1, passages + 1)),
            {"id": f"fin-{tag}-d", "kind": "deflect", "dataset": DATASET, "item": key,
             "annotator": who}])
        assert done.error is None and len(done.acked) == passages + 1
    finally:
        db.conn.close()


def test_u_after_n_goes_along_the_line_before_the_page_draws(page, app_url, seeded_db):
    """N then U pressed before the page has drawn the next question: U goes at once to
    the first question after it the annotator has not finished (two finished ones are
    passed over), and a label typed then lands there; nothing is held for the page."""
    order = items(seeded_db)
    who = f"line-{uuid.uuid4().hex[:6]}"
    for key, n in order[7:9]:
        _finish(seeded_db, key, n, who)
    open_annotate(page, app_url, order[5][0], who)
    # N and U in one task of the page's script: no redraw can come between them
    got = page.evaluate("""() => {
      for (const key of ["n", "u"]) {
        document.body.dispatchEvent(new KeyboardEvent("keydown", {key, bubbles: true}));
      }
      const S = window.__nwAnnotate;
      return {item: S.item, barrier: S.barrier, held: S.held.length};
    }""")
    assert got == {"item": order[9][0], "barrier": None, "held": 0}, (got, order[5:10])
    page.keyboard.press("3")
    settle(page)
    assert value(seeded_db, order[9][0], who, "label:1") == "RELATED-INFORMATION"
    page.wait_for_function("(item) => window.__nwAnnotate.data.item === item",
                           arg=order[9][0], timeout=30_000)
    assert errors(page) == []
