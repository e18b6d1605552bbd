"""The differential check of Annotate's input (issue 56, point 4): a random sequence of
every key and click typed in Chromium at a pace leaves the database exactly as the input
interpreter alone computes from the same sequence.

The interpreter alone runs under node (``tests/js/annotate_replay.cjs``) on a calm page:
before each event it is given the page as the server would draw it from what is saved (a
scratch copy of the database), and the actions it answers are applied there with
:func:`needlework.actions.service.apply_actions`; N, P and S move along the question list. The
browser types the same events into the real page, as fast as asked: the two databases
must end the same for the annotator."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path
from typing import Any

import store
from needlework.actions.service import apply_actions
from needlework.grounding import item as gitem
from needlework.grounding.keymap import dimension_keys, label_keys
from needlework.view.prefs import hides_suggestions
from store.grounding import openings
from tests.browser.keys import DATASET, read
from tests.conftest import ROOT

DIMS = dimension_keys()
REPLAY = ROOT / "tests" / "js" / "annotate_replay.cjs"
KEY_NAMES = {"enter": "Enter", " ": "Space", "escape": "Escape", "Z": "Shift+Z"}

Event = dict[str, Any]


def random_events(seed: int, count: int) -> list[Event]:
    """About ``count`` events as a fast annotator makes them: label keys most of all, 0, J
    and K, W walks (a digit, Enter, Space or 0 per dimension, some cut short by another
    key), Q then a dimension and an option, clicks on a card's label and on a
    dimension's option, N and P, and Y, R, Z, Shift+Z, F, H, V, D, S, Esc. A click names
    its passage as ``pick`` (the passage is ``1 + pick % n`` of the question then aimed at)."""
    rng = random.Random(seed)
    out: list[Event] = []

    def key(k: str) -> None:
        out.append({"type": "key", "key": k})

    while len(out) < count:
        x = rng.random()
        if x < 0.40:
            key(rng.choice("12345"))
        elif x < 0.48:
            key(rng.choice("0jk"))
        elif x < 0.56:
            key("w")
            for dim in DIMS[:rng.randint(2, len(DIMS))]:
                key(rng.choice([str(rng.randint(1, len(dim["options"]))), "enter", " ", "0"]))
        elif x < 0.60:
            k = rng.randrange(len(DIMS))
            for part in ("q", str(k + 1), str(rng.randint(0, len(DIMS[k]["options"])))):
                key(part)
        elif x < 0.66:
            out.append({"type": "click", "what": "label", "pick": rng.randrange(1000),
                        "digit": rng.choice("12345")})
        elif x < 0.70:
            k = rng.randrange(len(DIMS))
            out.append({"type": "click", "what": "dim", "dim": k,
                        "option": rng.randrange(len(DIMS[k]["options"]))})
        elif x < 0.76:
            key(rng.choice("np"))
        else:
            key(rng.choice(["y", "r", "z", "Z", "f", "h", "v", "d", "s", "escape"]))
    return out


def copy_db(source: Path, target: Path) -> Path:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


class Alone:
    """The interpreter alone, one step a line, in a node process of its own."""

    def __init__(self) -> None:
        node = shutil.which("node")
        assert node, "node not found: `make test` installs it"
        self.proc = subprocess.Popen([node, str(REPLAY)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def step(self, event: Event, view: dict[str, Any]) -> tuple[list[dict[str, Any]], dict]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"event": event, "view": view}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return answer["effects"], answer["state"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


def page_data(db, key: str, who: str) -> dict[str, Any]:
    """What the page draws of question ``key`` for ``who`` (the fields the interpreter
    reads): the saved labels and dimensions, the file's dimensions unless H hides them,
    whether there are suggestions to accept (the server decides which)."""
    record = json.loads(db.execute("select record from items where dataset = ? and key = ?",
                                   [DATASET, key]).fetchone()[0])
    fields = dict(db.execute("select field, value from annotations where dataset = ? and "
                             "item_key = ? and annotator = ?", [DATASET, key, who]).fetchall())
    saved = {f: json.loads(v) for f, v in fields.items()}
    hidden = hides_suggestions(db, who)
    n, cursor = openings(db, DATASET, who, [key])[key]
    any_suggestion = db.execute("select count(*) from suggestions where dataset = ? and "
                                "item_key = ?", [DATASET, key]).fetchone()[0] > 0
    return {
        "dataset": DATASET, "annotator": who, "item": key, "n": n, "cursor": cursor,
        "labels": {f[6:]: v for f, v in saved.items() if f.startswith("label:")},
        "dimValues": {f: v for f, v in saved.items() if f.startswith("dim:")},
        "fileDims": {} if hidden else {f"dim:{f}": v for f, v
                                       in gitem.imported_dims(record).items() if v},
        "suggested": {"1": "?"} if any_suggestion and not hidden else {},
        "answered": bool((saved.get("answer") or "").strip()), "hidden": hidden,
        "dims": DIMS, "keys": label_keys(), "seq": 0, "moves": {},
        "line": {"ahead": [], "behind": []},
    }


def interpreted(db_path: Path, order: list[tuple[str, int]], start: int, who: str,
                events: list[Event], log: list[dict[str, Any]] | None = None
                ) -> dict[tuple[str, str], Any]:
    """The annotations ``who`` has after ``events``, by the interpreter alone on a calm
    page, applied to the database at ``db_path`` (a scratch copy); ``log`` gets the
    actions, in order."""
    db = store.connect(db_path)
    alone = Alone()
    keys = [k for k, _ in order]
    at = {"index": start}
    sent = {"n": 0}

    def view() -> dict[str, Any]:
        return {"data": page_data(db, keys[at["index"]], who), "who": who, "overlay": []}

    def run(effects: list[dict[str, Any]]) -> None:
        for effect in effects:
            if "push" in effect:
                if log is not None:
                    log.append(effect["push"])
                sent["n"] += 1
                done = apply_actions(db, [dict(effect["push"], id=f"alone-{who}-{sent['n']}")])
                assert done.error is None, done
            elif "replay" in effect:
                for event in effect["replay"]:
                    run(alone.step(event, view())[0])
            elif "ask" in effect:
                step = {"next": 1, "previous": -1}.get(effect["ask"])
                assert step is not None, effect  # U is not typed here
                if 0 <= at["index"] + step < len(keys):
                    at["index"] += step
                    n, cursor = openings(db, DATASET, who, [keys[at["index"]]])[keys[at["index"]]]
                    target = {"item": keys[at["index"]], "n": n, "cursor": cursor}
                    run(alone.step({"type": "arrive", "target": target}, view())[0])

    try:
        run(alone.step({"type": "arrive", "target": None}, view())[0])
        run(alone.step({"type": "data"}, view())[0])
        state: dict[str, Any] = {}
        for event in events:
            if event["type"] == "click":
                n = max(1, state.get("n") or order[at["index"]][1])
                event = _aimed(event, keys[at["index"]], n)
            effects, state = alone.step(event, view())
            run(effects)
            effects, state = alone.step({"type": "data"}, view())  # the calm page redraws
            run(effects)
        return saved_of(db, who)
    finally:
        alone.close()
        db.conn.close()


def _aimed(event: Event, item: str, n: int) -> Event:
    """A click as the page sends it: on question ``item``, its passage chosen by ``pick``."""
    out = {k: v for k, v in event.items() if k != "pick"}
    out["item"] = item
    if event["what"] == "label":
        out["passage"] = 1 + event["pick"] % n
    return out


def saved_of(db, who: str) -> dict[tuple[str, str], Any]:
    rows = db.execute("select item_key, field, value from annotations where dataset = ? and "
                      "annotator = ? order by 1, 2", [DATASET, who]).fetchall()
    return {(k, f): json.loads(v) for k, f, v in rows}


def in_browser(db_path: Path, who: str) -> dict[tuple[str, str], Any]:
    rows = read(db_path, "select item_key, field, value from annotations where dataset = ? "
                "and annotator = ? order by 1, 2", [DATASET, who])
    return {(k, f): json.loads(v) for k, f, v in rows}


def type_events(page, events: list[Event], pace_ms: int) -> None:
    """Type ``events`` into the open Annotate page ``pace_ms`` apart (0: as fast as the
    browser takes them). A click waits, as a person does, until the page shows the
    question the keys aim at (its cards), then clicks there."""
    for event in events:
        if event["type"] == "key":
            page.keyboard.press(KEY_NAMES.get(event["key"], event["key"]))
        else:
            page.wait_for_function("() => { const S = window.__nwAnnotate; return S && S.data && "
                                   "S.data.item === S.item && !S.barrier && "
                                   "!S.input.waiting.length; }", timeout=30_000)
            if event["what"] == "label":
                n = page.evaluate("window.__nwAnnotate.n")
                selector = (f'.st-key-nw-card-{1 + event["pick"] % max(1, n)} '
                            f'button[data-nw-label="{event["digit"]}"]')
            else:
                selector = (f'.nw-dims button[data-nw-dim="{event["dim"]}"]'
                            f'[data-nw-option="{event["option"]}"]')
            page.locator(selector).click()
        if pace_ms:
            page.wait_for_timeout(pace_ms)  # the typist's pace: the gap between two events


def new_name(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:6]}"


#: Keeps every action the page's scripts send, in order (``sent``), for a failure's message.
RECORD = """() => { const c = window.__nwCore; if (c.__recorded) return; c.__recorded = true;
  const push = c.push.bind(c); window.__nwSent = [];
  c.push = (a) => { window.__nwSent.push(JSON.parse(JSON.stringify(a))); return push(a); };
  const S = window.__nwAnnotate; const say = S.say;
  S.say = (t) => { window.__nwSent.push({kind: "move", said: t}); return say(t); }; }"""


def record(page) -> None:
    page.evaluate(RECORD)


def sent(page) -> list[dict[str, Any]]:
    """The actions the page sent (moves left out) and, as ``{"said": ...}``, its notes."""
    return [a for a in page.evaluate("window.__nwSent || []")
            if a.get("kind") != "move" or "said" in a]


def first_difference(browser: list[dict[str, Any]], alone: list[dict[str, Any]]) -> str:
    """Where the browser's actions part from the interpreter's alone (ids, times and moves
    left out)."""
    def plain(a: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in a.items() if k not in ("id", "t", "tab", "cursor")}
    notes = {k: a["said"] for k, a in enumerate(browser) if "said" in a}
    actions = [a for a in browser if "said" not in a]
    got, want = [plain(a) for a in actions], [plain(a) for a in alone]
    for k, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return (f"action {k}: browser {g} / alone {w}; before it: {want[max(0, k - 3):k]}; "
                    f"the page's notes: {list(notes.values())}")
    return f"{len(got)} actions in the browser, {len(want)} alone"
