"""Review keys: key press → committed verdict on the Review page, in Chromium against
`streamlit run`, at 150 ms apart, 60 ms apart and as fast as the browser sends them.

    .venv/bin/python benchmarks/bench_review_keys.py [--verdicts 40] [--rounds 2]

Each round types a reviewer's keys on demo-preference (``tests.browser.keys.review_sequence``:
verdicts, each moving on to the next unreviewed comparison, with reasons before some and
now and then J, K or N). The page records when each verdict key went down (a capture
listener, before the key script sees it); the database records when each verdict was
committed (``applied_actions.applied_at``, same machine clock). The n-th verdict key makes
the n-th verdict action, whether it was sent at once or held until the page had drawn a
move, so press → committed counts the holding too. Also printed: from the last key to
nothing left to send, and whether the database holds exactly what the keys imply
(``tests.browser.keys.review_replay``). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_keys import committed_ms, demo_server, pct, wait_idle_server  # noqa: E402

from tests.browser.harness import launch_browser  # noqa: E402
from tests.browser.keys import (  # noqa: E402
    comparisons,
    open_review,
    press,
    review_replay,
    review_sequence,
    settle_review,
    verdicts_of,
)

PACES = {"150 ms apart": 150, "60 ms apart": 60, "as fast as the browser sends": None}
RECORD = """
(verdictKeys) => {
  window.__benchDown = [];
  window.__benchVerdicts = [];
  document.addEventListener("keydown", (e) => {
    if (verdictKeys.includes(e.key.toLowerCase())) window.__benchDown.push(Date.now());
  }, true);
  const core = window.__nwCore;
  const push = core.push.bind(core);
  core.push = (a) => {
    const out = push(a);
    if (out.kind === "verdict") window.__benchVerdicts.push(out.id);
    return out;
  };
  return true;
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=40, help="verdict keys per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per pace")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with demo_server() as (server, db_path, _), sync_playwright() as p:
        browser = launch_browser(p)
        queue = comparisons(db_path)
        print(f"{args.verdicts} verdict keys a round (with reasons and J/K/N), {args.rounds} "
              f"rounds a pace, demo-preference ({len(queue)} comparisons)")
        for name, pace in PACES.items():
            commit, tail, wrong = [], [], 0
            for r in range(args.rounds):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                who = f"bench-{uuid.uuid4().hex[:6]}"
                keys = review_sequence(args.verdicts, seed=100 + r)
                open_review(page, server.url, who)
                wait_idle_server(server.proc.pid)
                page.evaluate(RECORD, list("aftbs"))
                press(page, keys, pace)
                last = time.time() * 1000
                settle_review(page)
                tail.append(time.time() * 1000 - last)
                down = page.evaluate("window.__benchDown")
                made = page.evaluate("window.__benchVerdicts")
                done = committed_ms(db_path, made)
                commit += [done[i] - t for i, t in zip(made, down, strict=False) if i in done]
                expected, _ = review_replay(queue, keys)
                wrong += verdicts_of(db_path, who) != expected
                page.close()
            print(f"{name:>28}: press→committed p50 {statistics.median(commit):6.0f} ms, "
                  f"p95 {pct(commit, .95):6.0f} ms, max {max(commit):6.0f} ms · last key → "
                  f"nothing left to send {statistics.median(tail):6.0f} ms (median of rounds) · "
                  f"{len(commit)} verdicts, {wrong} rounds with a wrong database")
        browser.close()


if __name__ == "__main__":
    main()
