"""The page draws what is saved, in Chromium: after D, after a reload and Z, across N,
on the saved badge, at the passage marker, and for the slide title in fresh browsers.

Each case is one an annotator or presenter met: the database held one thing and the page
showed another (or a widget wrote back a value nobody typed)."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime

import pytest
from playwright.sync_api import expect

import store
from needlework.datasets.transfer import import_bytes
from needlework.formats.garage import DEFLECTION
from needlework.needle import builder
from needlework.needle.slide_meta import slide_title_of, with_slide_title
from store.annotations import set_annotation
from store.datasets import get_dataset, set_dataset_meta
from store.scores import save_item_scores
from tests.browser.harness import assert_no_exception, wait_idle
from tests.browser.keys import DATASET, items, open_annotate, read, settle
from tests.test_needle_page import small_needles


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def stored(db_path, key: str, who: str, field: str):
    rows = read(db_path, "select value from annotations where dataset = ? and item_key = ? "
                "and annotator = ? and field = ?", [DATASET, key, who, field])
    return json.loads(rows[0][0]) if rows else None


def wait_stored(db_path, key: str, who: str, field: str, expected, timeout: float = 20.0) -> None:
    deadline = time.time() + timeout
    while (value := stored(db_path, key, who, field)) != expected:
        if time.time() > deadline:
            raise AssertionError(f"{field}: expected {expected!r}, the database has {value!r}")
        time.sleep(0.05)


def expect_answer(page, value: str, timeout: float = 20_000) -> None:
    """Wait until the page's answer box shows ``value`` (and no other box another text;
    a server that has just started is slow for its first seconds: the torch import)."""
    page.wait_for_function(
        "(v) => { const boxes = Array.from(document.querySelectorAll("
        "'.st-key-nw-answer textarea')); return boxes.length > 0 && "
        "boxes.every((t) => t.value === v); }", arg=value, timeout=timeout)


@pytest.fixture(scope="module")
def order(seeded_db):
    return items(seeded_db)


def test_d_shows_the_deflection_it_saved(page, app_url, seeded_db, order):
    who = unique("deflect")
    key = order[0][0]
    open_annotate(page, app_url, key, who)
    expect_answer(page, "")
    page.keyboard.press("d")
    wait_stored(seeded_db, key, who, "answer", DEFLECTION)
    expect_answer(page, DEFLECTION)
    expect(page.locator(".st-key-nw-answer").locator("xpath=..").locator("..")
           .get_by_text("deflected")).to_be_visible()
    # and D again says the answer is not empty, without writing anything
    page.keyboard.press("d")
    expect(page.locator(".nw-key-note")).to_contain_text("not empty")
    assert_no_exception(page)


def _deflected(page, app_url, seeded_db, key: str, who: str) -> None:
    """Open question ``key`` as ``who`` and answer it with D: the deflection, saved and shown."""
    open_annotate(page, app_url, key, who)
    page.keyboard.press("d")
    wait_stored(seeded_db, key, who, "answer", DEFLECTION)
    expect_answer(page, DEFLECTION)


def test_z_after_a_reload_empties_the_box_and_typing_saves_only_what_was_typed(
        page, app_url, seeded_db, order):
    who, key = unique("undo"), order[1][0]
    _deflected(page, app_url, seeded_db, key, who)
    page.reload()
    page.wait_for_function("([item, who]) => window.__nwAnnotate && window.__nwAnnotate.data && "
                           "window.__nwAnnotate.item === item && "
                           "window.__nwAnnotate.data.annotator === who",
                           arg=[key, who], timeout=30_000)
    expect_answer(page, DEFLECTION)
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    page.keyboard.press("z")
    wait_stored(seeded_db, key, who, "answer", None)
    expect_answer(page, "")
    page.keyboard.press("a")
    page.keyboard.type("Only this. [cite_1]")
    page.keyboard.press("Escape")
    wait_stored(seeded_db, key, who, "answer", "Only this. [cite_1]")
    settle(page)  # nothing left to send, and no run under way or asked for
    wait_idle(page)
    assert stored(seeded_db, key, who, "answer") == "Only this. [cite_1]"
    assert_no_exception(page)


@pytest.mark.parametrize("first", ["z", "n"])
def test_a_and_an_answer_typed_at_once_after_z_or_n_save_the_answer_whole(
        page, app_url, seeded_db, order, first):
    """Z (on a deflected answer) or N, then A and the answer at full speed: A waits for the
    page to show the undo or the next question, and the characters typed meanwhile wait
    with it and go into the box, every one of them (the answer of the question N opened)."""
    who, text = unique(f"ahead-{first}"), f"Only this, after {first}. [cite_1]"
    if first == "z":
        key = target = order[2][0]
        _deflected(page, app_url, seeded_db, key, who)
    else:
        key, target = order[3][0], order[4][0]
        open_annotate(page, app_url, key, who)
    for press in (first, "a"):
        page.keyboard.press(press)
    page.keyboard.type(text)
    page.keyboard.press("Escape")
    wait_stored(seeded_db, target, who, "answer", text)
    expect_answer(page, text)
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    if first == "n":
        assert stored(seeded_db, key, who, "answer") is None
    assert_no_exception(page)


#: Every animation frame: the question the page shows (its id in the question line) and
#: the text of every answer box a person can see (not hidden, not inside a hidden box).
SAMPLER = """
(() => {
  window.__frames = [];
  const look = () => {
    const meta = document.querySelector('[data-testid="stMain"] #nw-question-meta');
    const answers = Array.from(document.querySelectorAll('.st-key-nw-answer textarea'))
      .filter((t) => t.checkVisibility({visibilityProperty: true, opacityProperty: false}))
      .map((t) => t.value);
    window.__frames.push([meta ? meta.textContent : "", answers]);
    if (window.__frames.length < 4000) requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();
"""


def test_after_n_the_last_questions_answer_is_never_shown_under_the_new_one(
        page, app_url, seeded_db, order):
    who = unique("next")
    (first, _), (second, _) = order[2], order[3]
    db = store.connect(seeded_db, migrate=False)
    try:
        set_annotation(db, DATASET, first, who, "answer", "The first question's own answer.")
    finally:
        db.conn.close()
    open_annotate(page, app_url, first, who)
    expect_answer(page, "The first question's own answer.")
    for _ in range(3):  # there and back, three times
        page.evaluate(SAMPLER)
        page.keyboard.press("n")
        page.wait_for_function("(item) => window.__nwAnnotate.data.item === item", arg=second,
                               timeout=20_000)
        wait_idle(page)
        expect_answer(page, "")
        page.keyboard.press("p")
        page.wait_for_function("(item) => window.__nwAnnotate.data.item === item", arg=first,
                               timeout=20_000)
        wait_idle(page)
        expect_answer(page, "The first question's own answer.")
        frames = page.evaluate("window.__frames")
        wrong = [f for f in frames if second in f[0] and
                 "The first question's own answer." in f[1]]
        assert not wrong, wrong[:3]
        assert any(second in f[0] for f in frames)  # the sampler saw the second question
    assert_no_exception(page)


#: Every text the saved badge showed, with when.
BADGE = """
(() => {
  window.__badge = [];
  const badge = document.getElementById("nw-save-status");
  const note = () => window.__badge.push([Date.now(), badge.textContent]);
  note();
  new MutationObserver(note).observe(badge, {childList: true, characterData: true, subtree: true});
})();
"""


def test_the_badge_never_says_all_saved_while_a_label_is_on_its_way(
        page, app_url, seeded_db, order):
    """N then a label key at once (the label waits for the next question when the page
    does not know it yet): from the press until the database has it, never "all saved"."""
    who = unique("badge")
    open_annotate(page, app_url, order[4][0], who)
    page.evaluate(BADGE)
    page.keyboard.press("n")
    page.keyboard.press("n")  # the second N waits for the server: its keys are held
    page.keyboard.press("3")
    pressed, text, held = page.evaluate(
        "[Date.now(), document.getElementById('nw-save-status').textContent, "
        "window.__nwAnnotate.held.length + window.__nwCore.queue.length]")
    target = order[6][0]
    wait_stored(seeded_db, target, who, "label:1", "RELATED-INFORMATION")
    if held:  # still on its way when the press returned: the badge says so
        assert "1 not saved yet" in text, text
    committed = read(seeded_db, "select max(at) from history where annotator = ?", [who])
    done = datetime.fromisoformat(committed[0][0]).timestamp() * 1000
    settle(page)
    shown = page.evaluate("window.__badge")
    early = [t for at, t in shown if pressed <= at < done - 5 and "all saved" in t]
    assert not early, (early, shown)
    expect(page.locator("#nw-save-status")).to_contain_text("all saved")
    # then it fades, covering no text of the page while nothing is being saved
    expect(page.locator("#nw-save-status")).to_have_css("opacity", "0", timeout=6_000)


def test_the_passage_marker_follows_the_outline(page, app_url, seeded_db, order):
    who = unique("marker")
    key, n = next((k, n) for k, n in order if n >= 5)
    open_annotate(page, app_url, key, who)
    page.keyboard.press("j")
    page.keyboard.press("j")
    outline = "(n) => getComputedStyle(document.querySelector(`#nw-head-${n} mark`)).outlineStyle"
    page.wait_for_function(f"({outline})(3) === 'solid'", timeout=5_000)
    assert page.evaluate(f"({outline})(1)") == "none"
    card = "(n) => getComputedStyle(document.querySelector(`.st-key-nw-card-${n}`)).boxShadow"
    assert page.evaluate(f"({card})(3)") != "none" and page.evaluate(f"({card})(1)") == "none"
    assert n >= 5



#: Samples, every animation frame, what the first card says about its label: the key
#: script's chip (drawn over the card as ``::after``) and the page's own stamp, if visible.
CARD_WATCH = """
(() => {
  window.__cardSeen = [];
  const look = () => {
    const card = document.querySelector('.st-key-nw-card-1');
    const stamp = document.getElementById('nw-stamp-1');
    if (card && stamp) {
      const chip = getComputedStyle(card, '::after').content;
      const shown = getComputedStyle(stamp).visibility !== 'hidden' ? stamp.textContent : '';
      window.__cardSeen.push([chip, shown]);
    }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();
"""


def test_a_label_on_its_way_shows_one_state_on_its_card(page, app_url, seeded_db, order):
    """From the key press until the rerun redraws the card, the card shows the key
    script's chip ("saving…", then "✓ saved") and never, beside it, the page's older
    "not labeled yet"."""
    who = unique("chip")
    key, _ = order[2]
    open_annotate(page, app_url, key, who)
    page.evaluate(CARD_WATCH)
    page.keyboard.press("3")
    wait_stored(seeded_db, key, who, "label:1", "RELATED-INFORMATION")
    settle(page)
    expect(page.locator("#nw-stamp-1")).to_contain_text("✓ saved")
    seen = page.evaluate("window.__cardSeen")
    chips = [(chip, shown) for chip, shown in seen if chip not in ("none", "normal")]
    assert chips, seen[-5:]  # the chip was drawn before the rerun redrew the card
    both = [(chip, shown) for chip, shown in chips if "not labeled" in shown]
    assert not both, both[:3]

@pytest.fixture(scope="module")
def titled_needles(seeded_db) -> tuple[str, str]:
    """A scored needle dataset whose saved slide title is set: (name, title)."""
    name, title = "title-needles", "Where the demo model misses the needle"
    records = small_needles(count=1)
    db = store.connect(seeded_db, migrate=False)
    try:
        import_bytes(db, builder.needle_format.dump(records).encode(), "n.jsonl",
                     format="needle", dataset=name)
        save_item_scores(db, name, "b" * 32, "fp32|full", "/models/title-rm",
                         [{"item_key": r["id"], "subset": str(r["length_tokens"]),
                           "chosen_scores": [1.0], "rejected_scores": [0.0]} for r in records])
        row = get_dataset(db, name)
        set_dataset_meta(db, name, with_slide_title(row["meta"], title, "lead", "2026-11-26T05:00:00"))
    finally:
        db.conn.close()
    return name, title


def test_the_slide_title_opens_as_saved_in_ten_fresh_browsers(browser, app_url, seeded_db,
                                                               titled_needles):
    name, title = titled_needles
    for attempt in range(10):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            page.goto(f"{app_url}/needle?dataset={name}")
            field = page.get_by_label("Slide title", exact=True)
            field.wait_for(timeout=60_000)
            expect(field).to_have_value(title)
            if attempt % 3 == 0:  # and presenting saves nothing over it
                page.get_by_role("button", name="Presentation mode").click()
                expect(page.locator("#nw-present-title")).to_contain_text(title, timeout=30_000)
                wait_idle(page)
            db = store.connect(seeded_db, migrate=False)
            try:
                assert slide_title_of(get_dataset(db, name)["meta"]) == title, attempt
            finally:
                db.conn.close()
            assert_no_exception(page)
        finally:
            context.close()
