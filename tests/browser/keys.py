"""Helpers for the keyboard tests: a model of what a key sequence implies, the browser
side (pressing at a pace, waiting for the outbox to drain) and the database side."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from tests.browser.harness import assert_no_exception, wait_idle, watch

DATASET = "demo-grounding"
LABELS = {"1": "irrelevant", "2": "ANSWER-THE-QUESTION", "3": "RELATED-INFORMATION",
          "4": "OUTDATED", "5": "UNKNOWN"}

#: Records anything that looks like an error the moment it appears on the page.
ERROR_WATCH = """
(() => {
  // every node the page adds, looked at once as it arrives (even one removed a moment
  // later): its own text only, so the watch costs no layout and little time per rerun
  window.__nwErrors = [];
  const WORDS = ["Traceback", "OperationalError", "DatabaseError", "no such savepoint"];
  const look = (node) => {
    if (node.nodeType === 1) {
      const found = node.matches('[data-testid="stException"]') ? [node]
        : node.querySelectorAll('[data-testid="stException"]');
      for (const el of found) window.__nwErrors.push((el.textContent || "").slice(0, 300));
    } else if (node.nodeType !== 3) return;
    if (node.nodeType === 1 && (node.tagName === "SCRIPT" || node.tagName === "STYLE")) return;
    const text = node.textContent || "";
    for (const word of WORDS) if (text.includes(word)) window.__nwErrors.push(word);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "characterData") look(r.target);
      for (const node of r.addedNodes) look(node);
    }
  }).observe(document, {childList: true, subtree: true, characterData: true});
})();
"""


def read(db_path, sql: str, params: Sequence = ()) -> list:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, list(params)).fetchall()
    finally:
        conn.close()


def items(db_path) -> list[tuple[str, int]]:
    """``(key, passage count)`` of the demo questions, in list order."""
    return [(k, n) for k, n in read(db_path, "select key, json_array_length(record, '$.grounding') "
                                    "from items where dataset = ? order by position", [DATASET])]


def labels_of(db_path, who: str) -> dict[tuple[str, int], str]:
    rows = read(db_path, "select item_key, field, value from annotations where dataset = ? and "
                "annotator = ? and field like 'label:%'", [DATASET, who])
    return {(k, int(f.split(":")[1])): json.loads(v) for k, f, v in rows}


def everything_else(db_path, who: str | Sequence[str]) -> list:
    """Every annotation row that is not a label of ``who`` (a name, or several typing at
    once): it must not change."""
    names = [who] if isinstance(who, str) else list(who)
    marks = ", ".join("?" * len(names))
    return read(db_path, "select dataset, item_key, annotator, field, value from annotations "
                f"where not (annotator in ({marks}) and field like 'label:%') order by 1, 2, 3, 4",
                names)


def sequence(order: list[tuple[str, int]], start: int, label_keys: int, seed: int,
             moves: bool = True) -> list[str]:
    """Keys a fast annotator types: labels for the passages of each question (now and
    then K back and a relabel, 0 to clear, J to skip), then N; ``label_keys`` label
    keys in all (relabelling on the last question when the list runs out)."""
    rng = random.Random(seed)
    keys: list[str] = []
    done = 0
    index = start
    while done < label_keys and index < len(order):
        _, n = order[index]
        for _ in range(n):
            if done >= label_keys:
                break
            keys.append(rng.choice("12345"))
            done += 1
            if moves and rng.random() < 0.12:
                keys.append(rng.choice(["k", "0", "j"]))
        if done < label_keys and index + 1 < len(order):
            keys.append("n")
        index += 1
    while done < label_keys:  # the list ran out: go back (K) and relabel on the last question
        keys += ["k", rng.choice("12345")]
        done += 1
    return keys


def implied(order: list[tuple[str, int]], start: int, keys: list[str],
            before: dict[tuple[str, int], str] | None = None) -> dict[tuple[str, int], str]:
    """The labels a key sequence leaves, by the page's rules: a label key labels the
    passage under the cursor and moves to the next (not past the last), 0 clears it,
    J / K move, N opens the next question with the cursor on its first unlabeled
    passage."""
    return replay(order, start, keys, before)[0]


def changes(order: list[tuple[str, int]], start: int, keys: list[str]) -> int:
    """How many history rows the sequence writes (a key that changes nothing writes none)."""
    return replay(order, start, keys)[1]


def replay(order: list[tuple[str, int]], start: int, keys: list[str],
           before: dict[tuple[str, int], str] | None = None
           ) -> tuple[dict[tuple[str, int], str], int]:
    labels = dict(before or {})
    changed = 0
    index = start

    def first_unlabeled(i: int) -> int:
        key, n = order[i]
        return next((p for p in range(1, n + 1) if (key, p) not in labels), 1)

    cursor = first_unlabeled(index)
    for k in keys:
        key, n = order[index]
        if k in LABELS:
            changed += labels.get((key, cursor)) != LABELS[k]
            labels[(key, cursor)] = LABELS[k]
            cursor = min(cursor + 1, n)
        elif k == "0":
            changed += labels.pop((key, cursor), None) is not None
        elif k == "j":
            cursor = min(cursor + 1, n)
        elif k == "k":
            cursor = max(cursor - 1, 1)
        elif k == "n" and index + 1 < len(order):
            index += 1
            cursor = first_unlabeled(index)
    return labels, changed


def history_rows(db_path, who: str) -> int:
    """History rows of ``who``'s labels (a change applied twice would write two)."""
    return read(db_path, "select count(*) from history where dataset = ? and annotator = ? "
                "and field like 'label:%'", [DATASET, who])[0][0]


def open_annotate(page, app_url: str, item: str, who: str) -> None:
    """Open the item by deep link, type the annotator name, and wait until the key
    script has the item for that name and the browser remembers the name."""
    watch(page, ERROR_WATCH)
    page.goto(f"{app_url}/annotate?dataset={DATASET}&item={item}")
    page.locator(".st-key-nw-toolbar").wait_for(timeout=30_000)
    page.get_by_label("Annotator", exact=True).fill(who)
    page.keyboard.press("Enter")
    page.get_by_text(f"items done by {who}").wait_for(timeout=30_000)
    page.keyboard.press("Escape")
    page.wait_for_function(
        "([item, who]) => window.__nwAnnotate && window.__nwAnnotate.data && "
        "window.__nwAnnotate.item === item && window.__nwAnnotate.data.annotator === who && "
        "localStorage.getItem('nw-annotator') === who", arg=[item, who], timeout=30_000)
    assert page.evaluate("document.activeElement.tagName") == "BODY"
    assert_no_exception(page)


def press(page, keys: list[str], pace_ms: int | None) -> None:
    """Press ``keys`` ``pace_ms`` apart, or as fast as the browser takes them (None)."""
    if pace_ms is None:
        page.keyboard.type("".join(keys))
        return
    if all(len(k) == 1 for k in keys):  # each key down ``pace_ms``, then the next: one call
        page.keyboard.type("".join(keys), delay=pace_ms)
        return
    for k in keys:
        page.keyboard.press(k)
        page.wait_for_timeout(pace_ms)  # the typist's pace: the gap between two keys


def press_together(runs: Sequence[tuple[Any, Sequence[str]]], pace_ms: int | None) -> None:
    """Press each page's keys at once, as annotators in tabs of their own type side by
    side: each page's keys ``pace_ms`` apart on its own clock (a key every ``pace_ms``,
    counted from one press to the next, or right after the last one was taken when that
    took longer), the pages' presses interleaved; or, with ``None``, each page's keys as
    fast as the browser takes them, one page after the other."""
    if pace_ms is None:
        for page, keys in runs:
            page.keyboard.type("".join(keys))
        return
    gap = pace_ms / 1000
    now = time.monotonic()
    due = [now + k * gap / len(runs) for k in range(len(runs))]  # staggered starts
    at = [0] * len(runs)
    while True:
        left = [k for k, (_, keys) in enumerate(runs) if at[k] < len(keys)]
        if not left:
            return
        k = min(left, key=lambda n: due[n])
        wait = due[k] - time.monotonic()
        if wait > 0:
            time.sleep(wait)  # the typists' pace: this page's next key is not due yet
        page, keys = runs[k]
        pressed = time.monotonic()
        page.keyboard.press(keys[at[k]])
        at[k] += 1
        due[k] = pressed + gap


def pending(page) -> int:
    return page.evaluate("window.__nwCore ? window.__nwCore.queue.length : -1")


def settle(page, timeout: float = 90) -> None:
    """Wait until the browser has nothing left to send (no pending action, no key held
    for a question being opened)."""
    deadline = time.time() + timeout
    script = ("() => window.__nwCore && window.__nwCore.queue.length === 0 && "
              "(!window.__nwAnnotate || (!window.__nwAnnotate.barrier && "
              "window.__nwAnnotate.held.length === 0 && "
              "!(window.__nwAnnotate.input && window.__nwAnnotate.input.waiting.length)))")
    while time.time() < deadline:
        try:
            if page.evaluate(script):
                return
        except Exception:  # noqa: BLE001 - the page may be reloading
            pass
        time.sleep(0.1)
    raise AssertionError(f"still pending after {timeout} s: {pending(page)} actions; "
                         f"{key_state(page)}")


#: True once every action the server acknowledged is in the page's data: the rerun asked
#: for after the acknowledgement has been drawn (the outbox's ``drawn`` nonce has reached
#: the one each acknowledgement waits for) and no redraw waits for the keys to pause.
DRAWN = ("() => { const c = window.__nwCore; return !!c && c.queue.length === 0 && !c.inFlight "
         "&& !c.redrawTimer && c.settled.every((s) => s.at <= (c.drawn || 0)); }")


def wait_drawn(page, timeout: float = 30_000) -> None:
    """Wait until the page has drawn what its keys saved (:data:`DRAWN`), then until it
    is idle (:func:`~tests.browser.harness.wait_idle`)."""
    page.wait_for_function(DRAWN, timeout=timeout, polling=25)
    wait_idle(page, timeout)


#: True once the page's own scripts are there: the outbox (and its save badge), on every
#: page, and in local mode the name memory. They mount after the run that draws them, and
#: the outbox may then ask for a run of its own; an idle page before that is not yet idle.
MOUNTED = ("(local) => !!window.__nwCore && !!document.querySelector('#nw-save-status') && "
           "(!local || window.__nwName !== undefined) && "
           # a key page's script has its code loaded and the page's data (js/mail.js)
           "(!document.querySelector('.st-key-nw-toolbar') || "
           "!!(window.__nwAnnotate && window.__nwAnnotate.data)) && "
           "(!document.querySelector('.st-key-rv-bar') || "
           "!!(window.__nwReview && window.__nwReview.data))")


def wait_mounted(page, local: bool = True, timeout: float = 30_000) -> None:
    """Wait until the page's scripts have mounted (:data:`MOUNTED`), then until the page
    is idle (:func:`~tests.browser.harness.wait_idle`)."""
    page.wait_for_function(MOUNTED, arg=local, timeout=timeout, polling=25)
    wait_idle(page, timeout)


def key_state(page) -> str:
    """What the key scripts hold (for a failure message): their barrier, the move they
    wait for, the page's data of them and the page's URL."""
    try:
        return page.evaluate("""() => JSON.stringify({url: location.href,
          core: window.__nwCore && {queue: window.__nwCore.queue.length, error: window.__nwCore.error,
                                    inFlight: window.__nwCore.inFlight, tab: window.__nwCore.tab},
          annotate: window.__nwAnnotate && {item: window.__nwAnnotate.item, cursor: window.__nwAnnotate.cursor,
            waitSeq: String(window.__nwAnnotate.waitSeq), barrier: window.__nwAnnotate.barrier,
            held: window.__nwAnnotate.held,
            data: window.__nwAnnotate.data && {item: window.__nwAnnotate.data.item,
              seq: window.__nwAnnotate.data.seq, annotator: window.__nwAnnotate.data.annotator}},
          review: window.__nwReview && {at: window.__nwReview.at, waitSeq: String(window.__nwReview.waitSeq),
            barrier: window.__nwReview.barrier, held: window.__nwReview.held,
            data: window.__nwReview.data && {item: window.__nwReview.data.item, i: window.__nwReview.data.i,
              j: window.__nwReview.data.j, seq: window.__nwReview.data.seq,
              annotator: window.__nwReview.data.annotator}},
          text: document.body.innerText.slice(0, 600)})""")
    except Exception as e:  # noqa: BLE001 - a page that is gone says so
        return f"(page state unavailable: {e})"


def errors(page) -> list[str]:
    return page.evaluate("window.__nwErrors || []")


# -- the review page ------------------------------------------------------------------

PREFERENCE = "demo-preference"
VERDICTS = {"a": "agree", "f": "flip", "t": "tie", "b": "both-bad", "s": "skip"}
REASONS = {"1": "factual error", "2": "unsafe", "3": "incomplete", "4": "verbose",
           "5": "formatting", "6": "off-topic", "7": "other"}


def comparisons(db_path) -> list[tuple[str, int, int]]:
    """Every comparison of the demo preference set, in queue order."""
    rows = read(db_path, "select key, json_array_length(record, '$.chosen'), "
                "json_array_length(record, '$.rejected') from items where dataset = ? "
                "order by position", [PREFERENCE])
    return [(k, i, j) for k, nc, nr in rows for i in range(nc) for j in range(nr)]


def review_sequence(verdict_keys: int, seed: int) -> list[str]:
    """Verdicts as a fast reviewer types them, with reasons before or after some of
    them and now and then a move back, forward or to the next unreviewed one."""
    rng = random.Random(seed)
    keys: list[str] = []
    for _ in range(verdict_keys):
        if rng.random() < 0.3:
            keys.append(rng.choice("1234567"))
        keys.append(rng.choice("aftbs"))
        if rng.random() < 0.15:
            keys.append(rng.choice("kjn"))
            if rng.random() < 0.5:
                keys.append(rng.choice("1234567"))
    return keys


def review_replay(queue: list[tuple[str, int, int]], keys: list[str]) -> tuple[dict, int]:
    """The verdicts a key sequence leaves (``{(item, "verdict:i:j"): value}``) and how many
    history rows it writes, by the page's rules: a verdict is saved with the reasons
    picked for that comparison (or its saved ones) and moves to the next unreviewed
    comparison (wrapping); a reason key right after a verdict toggles that verdict's
    reason (wherever the page moved on to) until another key comes, else a saved
    verdict's reason at once, or a draft that goes with the verdict; J / K / N move (and
    drop a draft of the comparison they leave: the page says so)."""
    saved: dict[tuple[str, int, int], dict] = {}
    drafts: dict[tuple[str, int, int], list[str]] = {}
    rows = 0
    cur = 0
    after: tuple[str, int, int] | None = None  # the verdict just given

    def unreviewed_after(k: int) -> int | None:
        for step in range(1, len(queue) + 1):
            if queue[(k + step) % len(queue)] not in saved:
                return (k + step) % len(queue)
        return None

    def ordered(tags) -> list[str]:
        return [r for r in REASONS.values() if r in set(tags)]

    for key in keys:
        ident = queue[cur]
        if key in REASONS and after is not None:
            ident = after
        elif key not in VERDICTS:
            after = None
        if key in VERDICTS:
            reasons = drafts.pop(ident) if ident in drafts else saved.get(ident, {}).get("reasons", [])
            value = {"verdict": VERDICTS[key], "reasons": ordered(reasons), "note": ""}
            rows += saved.get(ident) != value
            saved[ident] = value
            after = ident
            nxt = unreviewed_after(cur)
            cur = cur if nxt is None else nxt
        elif key in REASONS:
            tag = REASONS[key]
            now = drafts.get(ident, saved.get(ident, {}).get("reasons", []))
            now = [r for r in now if r != tag] if tag in now else [*now, tag]
            if ident in saved:
                value = dict(saved[ident], reasons=ordered(now))
                rows += saved[ident] != value
                saved[ident] = value
            else:
                drafts[ident] = ordered(now)
        elif key in "jkn":
            drafts.pop(ident, None)
        if key == "j":
            cur = min(cur + 1, len(queue) - 1)
        elif key == "k":
            cur = max(cur - 1, 0)
        elif key == "n":
            nxt = unreviewed_after(cur)
            cur = cur if nxt is None else nxt
    return {(i, f"verdict:{a}:{b}"): v for (i, a, b), v in saved.items()}, rows


def verdicts_of(db_path, who: str) -> dict[tuple[str, str], dict]:
    rows = read(db_path, "select item_key, field, value from annotations where dataset = ? and "
                "annotator = ? and field like 'verdict:%'", [PREFERENCE, who])
    return {(k, f): json.loads(v) for k, f, v in rows}


def verdict_history(db_path, who: str) -> int:
    return read(db_path, "select count(*) from history where dataset = ? and annotator = ? "
                "and field like 'verdict:%'", [PREFERENCE, who])[0][0]


def open_review(page, app_url: str, who: str, at: tuple[str, int, int] | None = None) -> None:
    """Open Review as ``who``: on the comparison ``at`` (item, i, j from 0) through its
    link, else where the page puts a tab that has no place yet. That depends on the name
    the browser remembers (the last one typed on this origin): with one, the page opens
    where that reviewer left off, before ``who`` is typed; a test that opens Review
    twice in one tab and means a comparison passes ``at``. Returns once the key script
    has the page for ``who`` and the browser remembers ``who``."""
    watch(page, ERROR_WATCH)
    link = "" if at is None else f"&item={at[0]}&i={at[1] + 1}&j={at[2] + 1}"
    page.goto(f"{app_url}/review?dataset={PREFERENCE}{link}")
    page.locator(".st-key-rv-verdicts").wait_for(timeout=30_000)
    page.get_by_label("Annotator", exact=True).fill(who)
    page.keyboard.press("Enter")
    page.get_by_text("Enter your name in the sidebar to save verdicts.").wait_for(
        state="detached", timeout=30_000)
    page.keyboard.press("Escape")
    page.wait_for_function("(who) => window.__nwReview && window.__nwReview.data && "
                           "window.__nwReview.data.annotator === who && "
                           "localStorage.getItem('nw-annotator') === who", arg=who, timeout=30_000)


def settle_review(page, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    script = ("() => window.__nwCore && window.__nwCore.queue.length === 0 && "
              "window.__nwReview && !window.__nwReview.barrier && window.__nwReview.held.length === 0")
    while time.time() < deadline:
        try:
            if page.evaluate(script):
                return
        except Exception:  # noqa: BLE001 - the page may be reloading
            pass
        time.sleep(0.1)
    raise AssertionError(f"still pending after {timeout} s: {pending(page)} actions; "
                         f"{key_state(page)}")
