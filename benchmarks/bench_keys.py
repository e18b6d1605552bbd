"""Key press → committed latency on the annotate page, in Chromium against `streamlit run`.

    .venv/bin/python benchmarks/bench_keys.py [--keys 100] [--rounds 2]

For each label key the browser records when the action was made (the key press), when
the server acknowledged it (the action route's response; before the route, the rerun's
answer), when the key script painted it "✓ saved" on its card (the frame after the
acknowledgement, for labels of the question on screen) and when a rerun whose data
includes it answered (the page redrawn with it); the
database records when the write was committed (``applied_actions.applied_at``, same
machine clock). Keys are typed 150 ms
apart, 60 ms apart and as fast as the browser sends them, across questions (N after
each question's passages). Prints p50 / p95 / max per pace; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import store  # noqa: E402
from needlework.seeding.demo import seed_demo  # noqa: E402
from tests.browser.harness import AppServer, launch_browser  # noqa: E402
from tests.browser.keys import implied, items, labels_of, open_annotate, press, sequence, settle  # noqa: E402

PACES = {"150 ms apart": 150, "60 ms apart": 60, "as fast as the browser sends": None}
RECORD = """
(() => {
  window.__benchPush = {}; window.__benchAck = {}; window.__benchPainted = {}; window.__benchAt = {}; window.__benchDrawn = {};
  const core = window.__nwCore;
  const push = core.push.bind(core), answer = core.answer.bind(core);
  const mark = (data) => {
    const now = Date.now();
    for (const id of (data && data.acks) || []) if (!(id in window.__benchAck)) window.__benchAck[id] = now;
  };
  core.push = (a) => { const out = push(a); window.__benchPush[out.id] = out.t; return out; };
  if (core.received) {  // the action route: acknowledged by the POST's response
    const received = core.received.bind(core);
    core.received = (data) => {
      mark(data);
      const out = received(data);
      // the key script paints a label it acknowledged "✓ saved" on its card, when the
      // card is of the question on screen (a label of a question already left is not shown)
      const acks = new Set((data && data.acks) || []);
      const here = core.settled.filter((s) => acks.has(s.action.id) &&
        window.__nwAnnotate && s.action.item === window.__nwAnnotate.item &&
        window.__nwAnnotate.data && window.__nwAnnotate.data.item === s.action.item);
      if (here.length) requestAnimationFrame(() => {
        const now = Date.now();
        for (const s of here) if (!(s.action.id in window.__benchPainted)) window.__benchPainted[s.action.id] = now;
      });
      for (const s of core.settled) if (!(s.action.id in window.__benchAt)) window.__benchAt[s.action.id] = s.at;
      return out;
    };
  }
  core.answer = (data) => {
    if (!core.received) mark(data);  // before: acknowledged by the rerun's answer
    const now = Date.now();
    const seen = Number((data && data.seen) || 0);
    for (const [id, at] of Object.entries(window.__benchAt)) {
      if (seen >= at && !(id in window.__benchDrawn)) window.__benchDrawn[id] = now;
    }
    if (!core.received) for (const id of (data && data.acks) || []) {
      if (!(id in window.__benchDrawn)) window.__benchDrawn[id] = now;
    }
    return answer(data);
  };
})();
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def committed_ms(db_path: Path, ids: list[str]) -> dict[str, float]:
    conn = sqlite3.connect(db_path)
    try:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(f"select id, applied_at from applied_actions where id in ({marks})", ids)
        return {i: datetime.fromisoformat(at).timestamp() * 1000 for i, at in rows}
    finally:
        conn.close()


def wait_idle_server(pid: int, timeout: float = 120) -> None:
    """Wait until the server process uses under 10 % of a core for a second (after a
    start it imports PyTorch and transformers in the background: the keys of the first
    seconds measure that import, not the keys)."""
    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu()
        time.sleep(1.0)
        if cpu() - before < 0.1:
            return


@contextmanager
def demo_server() -> Iterator[tuple[AppServer, Path, list[tuple[str, int]]]]:
    """A server on a fresh database seeded with the demo data: ``(server, database file,
    the demo grounding questions as (key, passages))``."""
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "needlework.db"
        db = store.connect(db_path)
        seed_demo(db)
        db.conn.close()
        server = AppServer(db_path)
        server.start()
        try:
            yield server, db_path, items(db_path)
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100, help="label keys per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per pace")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with demo_server() as (server, db_path, order), sync_playwright() as p:
        browser = launch_browser(p)
        print(f"{args.keys} label keys a round (N after each question's passages), "
              f"{args.rounds} rounds a pace, demo-grounding ({len(order)} questions)")
        for name, pace in PACES.items():
            commit, ack, painted, drawn, wrong = [], [], [], [], 0
            for r in range(args.rounds):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                who = f"bench-{uuid.uuid4().hex[:6]}"
                start = (r * 5) % 8
                keys = sequence(order, start, args.keys, seed=r, moves=False)
                open_annotate(page, server.url, order[start][0], who)
                wait_idle_server(server.proc.pid)
                page.evaluate(RECORD)
                press(page, keys, pace)
                settle(page)
                pushed = page.evaluate("window.__benchPush")
                acked = page.evaluate("window.__benchAck")
                shown = page.evaluate("window.__benchDrawn")
                painted_at = page.evaluate("window.__benchPainted")
                done = committed_ms(db_path, list(pushed))
                commit += [done[i] - t for i, t in pushed.items() if i in done]
                ack += [acked[i] - t for i, t in pushed.items() if i in acked]
                drawn += [shown[i] - t for i, t in pushed.items() if i in shown]
                painted += [painted_at[i] - t for i, t in pushed.items() if i in painted_at]
                wrong += labels_of(db_path, who) != implied(order, start, keys)
                page.close()
            print(f"{name:>28}: press→committed p50 {statistics.median(commit):6.0f} ms, "
                  f"p95 {pct(commit, .95):6.0f} ms, max {max(commit):6.0f} ms · "
                  f"press→acknowledged p50 {statistics.median(ack):6.0f} ms, "
                  f"p95 {pct(ack, .95):6.0f} ms · press→shown saved (the chip painted) "
                  + (f"p50 {statistics.median(painted):6.0f} ms, p95 {pct(painted, .95):6.0f} ms "
                     if painted else "none (keys went to questions not drawn yet) ") +
                  f"({len(painted)}) · "
                  f"press→page redrawn with it "
                  + (f"p50 {statistics.median(drawn):6.0f} ms, p95 {pct(drawn, .95):6.0f} ms "
                     if drawn else "none ") +
                  f"({len(drawn)}) · {len(commit)} actions, "
                  f"{wrong} rounds with a wrong database")
        browser.close()


if __name__ == "__main__":
    main()
