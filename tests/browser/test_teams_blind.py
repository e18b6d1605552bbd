"""What annotators see in team mode, in Chromium (issue 47): a gold item looks like any
other item and shows no gold answer, whatever the settings; a control group sees neither
the file's labels nor suggestions while the test group sees suggestions only; H hides them
and a label typed meanwhile counts as typed with nothing shown.

One team-mode server of its own; the lead's settings are changed in the database between
checks (each page load reads them). ``GOLDEN`` has four identical records (only their ids
differ), a model's suggestion on every passage of each, a reviewer's decision on items 2
and 3 and gold item 3: items 2 and 3 must draw the same page once the item's own text (its
id, its place in the list, the times of saves) is taken out. ``OPEN`` has no gold item.
"""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
import time

import pytest

import store
from needlework.teams import accounts
from needlework.teams.blind import set_suggestion_timing, set_visibility
from tests.browser.harness import assert_no_exception, screenshot, team_server, wait_idle
from tests.browser.test_teams import sign_in
from tests.teams_fixtures import GOLD, PASSWORDS, PLAIN, A, item_tag, look_alike

GOLDEN, OPEN, MIDWAY = "vault", "open", "midway"
PEOPLE = {"lead": "admin", "rita": "reviewer", "ana": "annotator", "bob": "annotator"}


@pytest.fixture(scope="module")
def server(tmp_path_factory, chromium_available):
    folder = tmp_path_factory.mktemp("blind")
    db_path = folder / "blind.db"
    db = store.connect(db_path)
    for name, role in PEOPLE.items():
        accounts.add_user(db, name, role, password=PASSWORDS[name])
    look_alike(db, (GOLDEN, OPEN, MIDWAY), GOLDEN)
    db.conn.close()
    with team_server(db_path) as app:
        yield app


def settings(db_path, dataset: str, *, file_labels: bool, when: str, names: list[str]) -> None:
    db = store.connect(db_path)
    try:
        lead = accounts.get_user(db, "lead")
        set_visibility(db, dataset, "annotators_see_file_labels", file_labels, actor=lead)
        set_suggestion_timing(db, dataset, when, names, actor=lead)
    finally:
        db.conn.close()


def signed_in(browser, server, who: str):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    sign_in(page, server.url, who, PASSWORDS[who])
    # the page asks the server for the session cookie after the sign-in: a page opened
    # before it is set would start signed out
    deadline = time.time() + 30
    while accounts.SESSION_COOKIE not in {c["name"] for c in ctx.cookies()}:
        assert time.time() < deadline, f"{who}'s session cookie was never set"
        page.wait_for_timeout(100)
    return ctx, page


def open_item(page, url: str, dataset: str, key: str) -> None:
    """Open ``key`` on Annotate and wait until the page has drawn all of it."""
    page.goto(f"{url}/annotate?dataset={dataset}&item={key}")
    try:
        page.locator(f'.st-key-nw-item-side [data-nw-item="{item_tag(dataset, key)}"]').wait_for(
            state="attached", timeout=90_000)
        page.wait_for_function("(key) => window.__nwAnnotate && window.__nwAnnotate.item === key",
                               arg=key, timeout=30_000)
    except Exception:
        screenshot(page, f"teams-blind-open-{dataset}-{key}")
        assert_no_exception(page)
        raise AssertionError(f"{key} of {dataset} never drawn: {page.url}\n"
                             f"{page.locator('body').inner_text()[:1500]}") from None
    wait_idle(page, 60_000)
    assert_no_exception(page)


#: Every element of the page as tag, its own classes (Streamlit's generated style classes
#: left out), test id, title, state and own text: what a person can see or hover.
_DOM = """() => {
  const out = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *, [data-testid="stSidebar"] *')) {
    if (el.closest('style, script')) continue;
    const own = [...el.classList].filter(c => c.startsWith('nw-') || c.startsWith('st-key-')
                                          || /^st[A-Z]/.test(c)).sort().join('.');
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent.trim())
                 .join(' ');
    out.push([el.tagName, own, el.getAttribute('data-testid') || '', el.getAttribute('title') || '',
              el.getAttribute('aria-pressed') || '', el.disabled ? 'disabled' : '',
              el.getAttribute('aria-checked') || '', text].join('|'));
  }
  return out.join('\\n');
}"""


def drawn(page, dataset: str, key: str) -> tuple[str, str]:
    """The page's text and DOM with what belongs to the item itself taken out: its id, its
    marker, its place in the list (``Q2/4``, ``Q2 · 2 of 4``) and the times of saves."""
    text, dom = page.locator("body").inner_text(), page.evaluate(_DOM)

    def neutral(s: str) -> str:
        s = s.replace(key, "ITEM").replace(item_tag(dataset, key), "TAG")
        s = re.sub(r"\d\d:\d\d:\d\d", "HH:MM:SS", s)
        s = re.sub(r"\bQ\d+ · ", "QN · ", s)  # the question's number, then its place
        return re.sub(r"\b[Q#]?\d+\s*(/|of)\s*4\b", "N of 4", s)

    return neutral(text), neutral(dom)


def first_difference(a: str, b: str) -> str:
    """Where ``a`` and ``b`` first differ, with the lines around it (a unified diff)."""
    diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), "plain", "gold", n=3,
                                     lineterm=""))
    return "\n".join(diff[:40]) if diff else "no difference"


#: Each value of each setting once, as drawn by Chromium; every combination is compared
#: element by element in tests/test_teams_gold_alike.py.
COMBINATIONS = [(False, "always", True), (True, "after", True), (True, "never", False)]


def test_a_gold_item_looks_like_any_other_whatever_the_settings(browser, server):
    ctx, page = signed_in(browser, server, "ana")
    started = time.monotonic()
    try:
        for file_labels, when, in_group in COMBINATIONS:
            settings(server.db_path, GOLDEN, file_labels=file_labels, when=when,
                     names=["ana"] if in_group else ["bob"])
            where = f"file labels {file_labels}, {when}, ana {'in' if in_group else 'not in'} the group"
            pages = {}
            for key in (PLAIN, GOLD):
                open_item(page, server.url, GOLDEN, key)
                pages[key] = drawn(page, GOLDEN, key)
            (text, dom), (gold_text, gold_dom) = pages[PLAIN], pages[GOLD]
            if gold_text != text or gold_dom != dom:
                screenshot(page, f"teams-blind-gold-{file_labels}-{when}-{in_group}")
            assert gold_text == text, f"{where}: {first_difference(text, gold_text)}"
            assert gold_dom == dom, f"{where}: {first_difference(dom, gold_dom)}"
            # no gold answer, no file's label (the dataset has a gold item), no decision
            assert "file's label" not in gold_text and "gold" not in gold_text.lower(), where
            assert "Reviewer's decision" not in gold_text, where
            assert 'class="nw-dim-option nw-file' not in page.content()
            # the suggestions are there when the setting says so, on both alike
            shown = in_group and when != "never"
            assert ("suggested: Answer (judge 0.75)" in gold_text) is (shown and when == "always"), where
            assert ("model: Answer (judge 0.75) — same as yours" in gold_text) is (
                shown and when == "after"), where
            assert ("Hide the model suggestions (H)" in gold_text) is shown, where
    finally:
        ctx.close()
    assert time.monotonic() - started < 600  # one server, settings changed between checks


def _via(db_path, who: str, key: str, field: str, dataset: str = OPEN):
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        row = conn.execute("select via from annotations where dataset = ? and annotator = ? and "
                           "item_key = ? and field = ?", [dataset, who, key, field]).fetchone()
    finally:
        conn.close()
    return None if row is None else (row[0] and json.loads(row[0]), True)


def _wait_via(db_path, who: str, key: str, field: str, dataset: str = OPEN,
              timeout: float = 20.0):
    deadline = time.time() + timeout
    while (got := _via(db_path, who, key, field, dataset)) is None:
        assert time.time() < deadline, f"{who}'s {field} of {key} was never saved"
        time.sleep(0.1)
    return got[0]


def test_the_control_group_sees_neither_the_test_group_suggestions_only(browser, server):
    settings(server.db_path, OPEN, file_labels=False, when="always", names=["bob"])
    ana_ctx, ana = signed_in(browser, server, "ana")
    bob_ctx, bob = signed_in(browser, server, "bob")
    try:
        open_item(ana, server.url, OPEN, "sample-1")
        text = ana.locator("body").inner_text()
        assert "file's label" not in text and "suggested:" not in text and "model:" not in text
        assert ana.locator("button.nw-suggested").count() == 0
        assert ana.evaluate("window.__nwAnnotate.data.suggested") == {}
        assert "Blind labelling" in text
        open_item(bob, server.url, OPEN, "sample-1")
        text = bob.locator("body").inner_text()
        assert "suggested: Answer (judge 0.75)" in text and "file's label" not in text
        assert bob.locator("button.nw-suggested").count() == 3
        screenshot(bob, "teams-blind-test-group")
        # the file's labels for everyone: both see them, the suggestions stay the test group's
        settings(server.db_path, OPEN, file_labels=True, when="always", names=["bob"])
        open_item(ana, server.url, OPEN, "sample-1")
        text = ana.locator("body").inner_text()
        assert "file's label" in text and "suggested:" not in text
        open_item(bob, server.url, OPEN, "sample-1")
        assert "suggested: Answer (judge 0.75)" in bob.locator("body").inner_text()
        # H hides both for bob; a label typed meanwhile is typed with nothing shown
        bob.keyboard.press("Escape")
        bob.keyboard.press("h")
        bob.wait_for_function("() => !document.body.innerText.includes('suggested:') && "
                              "!document.body.innerText.includes(\"file's label\")",
                              timeout=20_000)
        wait_idle(bob, 60_000)
        bob.keyboard.press("2")  # passage 1: Answer, the judge's own value
        assert _wait_via(server.db_path, "bob", "sample-1", "label:1") is None
        # H is kept: a reload draws the page hidden still
        open_item(bob, server.url, OPEN, "sample-2")
        assert "suggested:" not in bob.locator("body").inner_text()
        bob.keyboard.press("Escape")
        bob.keyboard.press("h")
        bob.get_by_text("suggested: Answer (judge 0.75)").first.wait_for(timeout=20_000)
        wait_idle(bob, 60_000)
        bob.keyboard.press("2")
        assert _wait_via(server.db_path, "bob", "sample-2", "label:1") == {
            "how": "typed", "source": "judge", "suggested": A}
    finally:
        ana_ctx.close()
        bob_ctx.close()


def _acceptance_row(page, who: str) -> dict[str, str]:
    """The Quality page's "Acceptance per annotator" row of ``who``: column -> cell."""
    grid = page.locator('[data-testid="stDataFrame"]').filter(
        has=page.locator("[role=columnheader]", has_text="shown a suggestion")).first
    grid.wait_for(timeout=60_000)
    headers = [h.strip() for h in grid.locator("[role=columnheader]").all_inner_texts()]
    for row in grid.locator("[role=row]").all()[1:]:
        cells = [c.strip() for c in row.locator("[role=gridcell]").all_inner_texts()]
        if cells and cells[0] == who:
            return dict(zip(headers[-len(cells):], cells, strict=True))
    raise AssertionError(f"no acceptance row of {who}: {headers}")


def test_a_midway_switch_counts_only_what_was_on_screen(browser, server):
    """The scripted case in the browser: ana is in the control group while she labels
    sample-1 with the judge's own values (nothing on screen), the lead then adds her to the
    test group, she accepts sample-2's three suggestions with Y and, on sample-3, types
    Outdated over the judge's Answer and the judge's Irrelevant. Counted by hand: saved 8,
    shown 5, accepted 3, overridden 1, typed the suggestion 1; the Quality page says so."""
    settings(server.db_path, MIDWAY, file_labels=False, when="always", names=["bob"])
    ana_ctx, ana = signed_in(browser, server, "ana")
    rita_ctx, rita = signed_in(browser, server, "rita")
    try:
        open_item(ana, server.url, MIDWAY, "sample-1")
        assert "suggested:" not in ana.locator("body").inner_text()
        for key in ("2", "1", "3"):  # the judge's A I R, typed with nothing shown
            ana.keyboard.press(key)
            ana.wait_for_timeout(150)  # the annotator's pace: keys 150 ms apart
        assert _wait_via(server.db_path, "ana", "sample-1", "label:3", MIDWAY) is None
        settings(server.db_path, MIDWAY, file_labels=False, when="always", names=["ana", "bob"])
        open_item(ana, server.url, MIDWAY, "sample-2")
        ana.get_by_text("suggested: Answer (judge 0.75)").first.wait_for(timeout=20_000)
        ana.keyboard.press("y")
        assert _wait_via(server.db_path, "ana", "sample-2", "label:3", MIDWAY) == {
            "how": "accepted", "source": "judge", "score": 0.75}
        open_item(ana, server.url, MIDWAY, "sample-3")
        ana.keyboard.press("4")  # Outdated over the judge's Answer
        ana.wait_for_timeout(150)  # the annotator's pace: keys 150 ms apart
        ana.keyboard.press("1")  # Irrelevant, the judge's own value
        assert _wait_via(server.db_path, "ana", "sample-3", "label:1", MIDWAY)["how"] == "changed"
        assert _wait_via(server.db_path, "ana", "sample-3", "label:2", MIDWAY)["how"] == "typed"
        rita.goto(f"{server.url}/quality?dataset={MIDWAY}")
        row = _acceptance_row(rita, "ana")
        screenshot(rita, "teams-blind-midway-quality")
        assert (row["saved"], row["shown a suggestion"], row["accepted"], row["overridden"],
                row["typed the suggestion"]) == ("8", "5", "3", "1", "1"), row
        assert row["accepted %"].startswith("60")  # 3 of the 5 shown
    finally:
        ana_ctx.close()
        rita_ctx.close()
