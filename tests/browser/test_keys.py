"""Every key press lands once, where it was aimed: at a human pace, at 60 ms, as fast as
the browser sends keys, across server kills, a frozen server, a long outage with a reload,
a write lock held past the busy timeout and a full disk.

Each test compares the database with exactly what its key sequence implies
(:func:`tests.browser.keys.implied`) and checks that nothing else changed and that no
error appeared on the page at any moment.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
import uuid
import zlib
from pathlib import Path

import pytest

from tests.browser.harness import AppServer, screenshot
from tests.browser.keys import (
    changes,
    comparisons,
    errors,
    everything_else,
    history_rows,
    implied,
    items,
    labels_of,
    open_annotate,
    open_review,
    pending,
    press,
    press_together,
    read,
    review_replay,
    review_sequence,
    sequence,
    settle,
    settle_review,
    verdict_history,
    verdicts_of,
)

PACES = {"150ms": 150, "60ms": 60, "burst": None}
#: annotators typing at once per pace (each their own sequence); more for a flake hunt.
#: Several people pressing at once on one server: test_two_tabs_of_one_annotator_and_a_
#: second_annotator_pressing_at_once and test_input_lands.py's four fresh pages.
RUNS = int(os.environ.get("NEEDLEWORK_KEY_RUNS", "1"))


def goto_after_outage(page, url: str) -> None:
    """Open ``url`` on a page that showed Chromium's connection error: that error page
    reloads itself once the server answers again (to where it was), which may interrupt
    the navigation asked for; either lands on the page."""
    try:
        page.goto(url)
    except Exception as exc:  # noqa: BLE001 - Playwright's error, checked by its words
        if "interrupted by another navigation" not in str(exc):
            raise


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def order(seeded_db):
    return items(seeded_db)


# First in the file: a minute of it is the outage, which the other tests fill when the
# file runs on several workers (started last, it would finish a minute after them).
def test_presses_to_a_frozen_server_then_a_60s_outage_with_a_reload_all_arrive_once(
        page, own_server, order):
    """Keys pressed while the server is frozen (it takes connections and never answers),
    the frozen server killed and left down for 60 s, the page reloaded while it is down:
    the badge shows the pending count throughout, and after the restart every press is
    applied once, where it was aimed (the labels after N on the next question)."""
    who = unique("outage")
    db = own_server.db_path
    open_annotate(page, own_server.url, order[2][0], who)
    press(page, list("23"), 150)
    settle(page)
    own_server.signal(signal.SIGSTOP)
    keys = list("45") + ["n"] + list("312")
    press(page, keys, 150)
    # the page has taken every press (5 labels pending) and sent them to the frozen server,
    # which holds the request unanswered
    page.wait_for_function("() => document.querySelector('#nw-save-status').dataset.pending "
                           "=== '5' && !!window.__nwCore.inFlight", timeout=10_000)
    own_server.kill()  # frozen, then gone: 60 s without a server from here
    down = time.time()
    badge = page.locator("#nw-save-status")
    for _ in range(3):  # the count of labels (not the move) stays on the page throughout
        assert "5 not saved yet" in badge.inner_text()
        page.wait_for_timeout(10_000)  # the outage itself: the badge read at 0, 10 and 20 s
    screenshot(page, "keys-outage-pending")
    with pytest.raises(Exception, match="ERR_CONNECTION_REFUSED"):
        page.reload(timeout=10_000)  # reloaded while the server is down
    time.sleep(max(0.0, 60 - (time.time() - down)))  # the outage lasts 60 s: the thing tested
    own_server.start()
    goto_after_outage(page, f"{own_server.url}/annotate?dataset=demo-grounding&item={order[3][0]}")
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    settle(page, timeout=60)
    assert labels_of(db, who) == implied(order, 2, list("23") + keys)
    assert history_rows(db, who) == changes(order, 2, list("23") + keys)
    assert errors(page) == []


@pytest.mark.parametrize("pace", list(PACES))
def test_label_keys_at_every_pace_land_once_where_aimed(page, browser, app_url, seeded_db, order,
                                                        pace):
    """RUNS annotators type at once, each in a context of their own, each their own
    sequence from their own question at the pace: every label lands once where it was
    aimed, and nothing else changes."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000})
                for _ in range(RUNS - 1)]
    try:
        pages = [page] + [c.new_page() for c in contexts]
        runs = []
        for run, tab in enumerate(pages):
            start = (run * 5) % 8
            keys = sequence(order, start, 100, seed=zlib.crc32(f"{pace}-{run}".encode()) % 10_000)
            runs.append((tab, unique(f"pace-{pace}-{run}"), start, keys))
        whos = [who for _, who, _, _ in runs]
        others = everything_else(seeded_db, whos)
        for tab, who, start, _ in runs:
            open_annotate(tab, app_url, order[start][0], who)
        press_together([(tab, keys) for tab, _, _, keys in runs], PACES[pace])
        for tab, who, start, keys in runs:
            settle(tab)
            assert labels_of(seeded_db, who) == implied(order, start, keys)
            assert history_rows(seeded_db, who) == changes(order, start, keys)
            assert errors(tab) == []
            tab.wait_for_function("() => document.querySelector('#nw-save-status').innerText"
                                  ".includes('all saved')", timeout=10_000)
        assert everything_else(seeded_db, whos) == others
    finally:
        for context in contexts:
            context.close()


#: Records every action a tab makes, in the order it made them.
PUSHED = ("window.__pushed = []; (() => { const c = window.__nwCore; const push = c.push.bind(c); "
          "c.push = (a) => { const o = push(a); window.__pushed.push([o.id, o.field, o.value]); "
          "return o; }; })(); true")


def test_two_tabs_of_one_annotator_and_a_second_annotator_pressing_at_once(page, app_url,
                                                                          seeded_db, order):
    """Two tabs of ana on one question and bo on the same question, keys interleaved 25 ms
    apart: every press applied once, each tab's in the order it was pressed, ana's labels
    those of her last applied presses, bo's exactly what his keys imply."""
    start = next(i for i, (_, n) in enumerate(order) if n >= 4 and i >= 8)
    key, n = order[start]
    ana, bo = unique("tabs"), unique("beside")
    tabs = [page, page.context.new_page()]
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        third = other.new_page()
        for tab in tabs:
            open_annotate(tab, app_url, key, ana)
        open_annotate(third, app_url, key, bo)
        for tab in [*tabs, third]:
            tab.evaluate(PUSHED)
        plans = {0: list("1234k5"), 1: list("5432j1"), 2: list("3214")}
        pages = {0: tabs[0], 1: tabs[1], 2: third}
        for step in range(max(len(p) for p in plans.values())):
            for k, keys in plans.items():
                if step < len(keys):
                    pages[k].keyboard.press(keys[step])
                    pages[k].wait_for_timeout(25)  # the typists' pace: keys 25 ms apart
        for tab in pages.values():
            settle(tab)
        applied = read(seeded_db, "select id, outcome from applied_actions where annotator = ? "
                       "order by rowid", [ana])
        pushed = [tab.evaluate("window.__pushed") for tab in tabs]
        ids = [a[0] for a in applied]
        assert sorted(ids) == sorted(i for made in pushed for i, _, _ in made)  # each once
        for made in pushed:  # each tab's in its own order
            mine = [i for i in ids if i in {m[0] for m in made}]
            assert mine == [m[0] for m in made]
        last: dict[str, str | None] = {}
        by_id = {i: (field, value) for made in pushed for i, field, value in made}
        for i, outcome in applied:
            assert outcome in ("applied", "unchanged"), outcome
            field, value = by_id[i]
            last[field] = value
        assert {(key, int(f.split(":")[1])): v for f, v in last.items() if v} == \
            labels_of(seeded_db, ana)
        assert labels_of(seeded_db, bo) == implied(order, start, plans[2])
        for tab in pages.values():
            assert errors(tab) == []
    finally:
        other.close()


@pytest.fixture
def own_server(tmp_path, seeded_db):
    """A server of its own (on a copy of the seeded database) that the test may kill."""
    db = tmp_path / "needlework.db"
    source = sqlite3.connect(seeded_db)
    target = sqlite3.connect(db)
    source.backup(target)
    source.close()
    target.close()
    server = AppServer(db)
    server.start()
    yield server
    server.signal(signal.SIGCONT)
    server.stop()


def test_kills_20_to_150_ms_after_a_press_invent_nothing_and_lose_nothing(page, own_server,
                                                                          order):
    """12 trials: press a few keys (an N among them now and then), SIGKILL the server
    20-150 ms after the last press, start it again; every press arrives exactly once."""
    who = unique("kill")
    db = own_server.db_path
    others = everything_else(db, who)
    open_annotate(page, own_server.url, order[0][0], who)
    pressed: list[str] = []
    variants = ["31", "2k5", "31k4", "n2143", "4k10j2", "5k3k1", "2k4", "n3k5"]
    for trial in range(12):
        keys = list(variants[trial % len(variants)])
        press(page, keys, 25)
        pressed += keys
        page.wait_for_timeout(20 + trial * 12)  # the kill's moment: 20 .. 152 ms after the press
        own_server.kill()
        own_server.start()
        settle(page, timeout=60)
    assert labels_of(db, who) == implied(order, 0, pressed)
    assert history_rows(db, who) == changes(order, 0, pressed)
    assert everything_else(db, who) == others
    assert errors(page) == []


def test_actions_applied_whose_answer_was_lost_are_not_applied_again(page, own_server, order):
    """The server committed the presses but its answers never reached the browser (as when
    it dies right after the commit): the browser sends them again, and they change nothing."""
    who = unique("lost-ack")
    db = own_server.db_path
    open_annotate(page, own_server.url, order[1][0], who)
    # the action route's responses are lost: the outbox never reads an acknowledgement
    page.evaluate("window.__nwCore.__received = window.__nwCore.received; "
                  "window.__nwCore.received = () => {}; true")
    keys = list("3k4") + list("25k1") + ["n"] + list("4k2")
    press(page, keys, 60)
    deadline = time.time() + 20
    while history_rows(db, who) < changes(order, 1, keys) and time.time() < deadline:
        time.sleep(0.1)
    assert pending(page) > 0  # nothing acknowledged: everything will be sent again
    own_server.kill()
    page.evaluate("window.__nwCore.received = window.__nwCore.__received; true")
    own_server.start()
    settle(page, timeout=60)
    assert labels_of(db, who) == implied(order, 1, keys)
    assert history_rows(db, who) == changes(order, 1, keys)
    assert errors(page) == []


def test_a_write_lock_past_the_busy_timeout_keeps_presses_pending_then_delivers(page, own_server,
                                                                                  order):
    who = unique("locked")
    db = own_server.db_path
    open_annotate(page, own_server.url, order[6][0], who)
    holder = sqlite3.connect(db, timeout=1)
    holder.execute("begin immediate")  # another process holds the write lock: 4 refusals
    try:
        keys = list("123")
        press(page, keys, 150)
        badge = page.locator("#nw-save-status")
        page.wait_for_function("() => document.querySelector('#nw-save-status').innerText"
                               ".includes('database is busy')", timeout=20_000)
        assert "3 not saved yet" in badge.inner_text()
        screenshot(page, "keys-database-busy")
        # sent, then retried after 0.5, 1 and 2 s, each refused busy (the outbox doubles its
        # wait after each busy answer, from 0.5 s: 4 s after the fourth), and retried again
        # after 4 s: that request waits for the lock, which is let go below
        page.wait_for_function("() => window.__nwCore.backoff >= 4000 && "
                               "window.__nwCore.error === 'busy' && !!window.__nwCore.inFlight",
                               timeout=60_000)
        assert "3 not saved yet" in badge.inner_text()
        assert labels_of(db, who) == {}
        assert pending(page) == 3
    finally:
        holder.rollback()
        holder.close()
    settle(page, timeout=60)
    assert labels_of(db, who) == implied(order, 6, keys)
    assert errors(page) == []


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True)
    return done.returncode == 0


def test_a_full_disk_keeps_presses_pending_then_delivers_when_space_returns(page, tmp_path,
                                                                            seeded_db, order):
    disk = tmp_path / "small-disk"
    if not _mount_tmpfs(disk, "24m"):
        pytest.skip("cannot mount a tmpfs here (needs root): the full-disk path is covered by "
                    "tests/test_actions.py with SQLITE_FULL")
    try:
        db = disk / "needlework.db"
        source, target = sqlite3.connect(seeded_db), sqlite3.connect(db)
        source.backup(target)
        source.close()
        target.close()
        server = AppServer(db)
        server.start()
        try:
            who = unique("full")
            open_annotate(page, server.url, order[8][0], who)
            filler = disk / "filler"
            with open(filler, "wb", buffering=0) as out:  # fill the disk to the last byte
                # (unbuffered: closing it has nothing left to write on the full disk)
                block = b"\0" * 65536
                try:
                    while True:
                        out.write(block)
                        out.flush()
                except OSError:
                    pass
            keys = list("2451")
            press(page, keys, 150)
            page.wait_for_function("() => document.querySelector('#nw-save-status').innerText"
                                   ".includes('disk is full')", timeout=30_000)
            screenshot(page, "keys-disk-full")
            assert pending(page) == 4
            filler.unlink()
            settle(page, timeout=60)
            assert labels_of(db, who) == implied(order, 8, keys)
            assert errors(page) == []
        finally:
            server.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
        shutil.rmtree(disk, ignore_errors=True)


@pytest.mark.parametrize("pace", list(PACES))
def test_review_keys_at_every_pace_land_once_on_the_comparison_on_screen(page, app_url,
                                                                         seeded_db, pace):
    who = unique(f"review-{pace}")
    queue = comparisons(seeded_db)
    keys = review_sequence(40, seed=len(pace))
    others = read(seeded_db, "select * from annotations where annotator != ? order by id", [who])
    open_review(page, app_url, who)
    press(page, keys, PACES[pace])
    settle_review(page)
    expected, rows = review_replay(queue, keys)
    assert verdicts_of(seeded_db, who) == expected
    assert verdict_history(seeded_db, who) == rows
    assert read(seeded_db, "select * from annotations where annotator != ? order by id",
                [who]) == others
    assert errors(page) == []


def test_review_keys_survive_kills_20_to_150_ms_after_a_press(page, own_server):
    who = unique("review-kill")
    db = own_server.db_path
    queue = comparisons(db)
    open_review(page, own_server.url, who)
    pressed: list[str] = []
    for trial in range(6):
        keys = list(["2a", "f", "t3", "bk4", "s1n", "a"][trial])
        press(page, keys, 40)
        pressed += keys
        page.wait_for_timeout(20 + trial * 25)  # the kill's moment: 20 .. 145 ms after the press
        own_server.kill()
        own_server.start()
        settle_review(page, timeout=60)
    expected, rows = review_replay(queue, pressed)
    assert verdicts_of(db, who) == expected
    assert verdict_history(db, who) == rows
    assert errors(page) == []


def test_review_reason_keys_pending_through_an_outage_and_a_reload_land_once(page, own_server):
    """Reason keys on a comparison with a verdict (each flips one reason on what is saved)
    pressed while the server is down, the page reloaded meanwhile: after the restart each
    is applied once, in order."""
    who = unique("review-reload")
    db = own_server.db_path
    first = comparisons(db)[0]
    field = (first[0], f"verdict:{first[1]}:{first[2]}")
    open_review(page, own_server.url, who)
    press(page, list("1t"), 150)  # a reason for the verdict, the verdict (and on to the next)
    settle_review(page)
    press(page, ["k"], 150)  # back to it
    settle_review(page)
    own_server.kill()
    press(page, list("232"), 150)  # + unsafe, + incomplete, - unsafe
    assert "3 not saved yet" in page.locator("#nw-save-status").inner_text()
    with pytest.raises(Exception, match="ERR_CONNECTION_REFUSED"):
        page.reload(timeout=10_000)  # reloaded while the server is down
    own_server.start()
    goto_after_outage(page, f"{own_server.url}/review?dataset=demo-preference")
    page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
    settle_review(page, timeout=60)
    assert verdicts_of(db, who)[field] == {
        "verdict": "tie", "reasons": ["factual error", "incomplete"], "note": ""}
    assert verdict_history(db, who) == 4  # the verdict, then one change per reason key
    assert errors(page) == []
