"""How often Annotate's input lands exactly as its interpreter alone says, in Chromium.

    .venv/bin/python benchmarks/bench_differential.py [--seeds 20] [--events 45]

For each seed and each pace (as fast as the browser takes them, 50 ms and 150 ms apart),
a random sequence of every key and click (labels, 0, J, K, W walks, Q, clicks on cards'
labels and dimensions' options, N, P, Y, R, Z, Shift+Z, F, H, V, D, S, Esc) is typed
into the real page with the rules judge's suggestions on, and the database is compared
with the one the interpreter alone leaves on a calm page (tests/browser/differential.py).
Prints how many matched per pace and, for each mismatch, where the actions parted.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import store  # noqa: E402
from needlework.seeding.demo import seed_demo  # noqa: E402
from tests.browser.differential import (  # noqa: E402
    copy_db,
    first_difference,
    in_browser,
    interpreted,
    new_name,
    random_events,
    record,
    sent,
    type_events,
)
from tests.browser.harness import AppServer, launch_browser  # noqa: E402
from tests.browser.keys import DATASET, items, open_annotate, settle  # noqa: E402

PACES = {"as fast as the browser takes them": 0, "50 ms apart": 50, "150 ms apart": 150}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="sequences per pace")
    parser.add_argument("--events", type=int, default=45, help="events per sequence")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "needlework.db"
        db = store.connect(db_path)
        seed_demo(db)
        db.conn.close()
        subprocess.run([sys.executable, "-m", "needlework", "suggestions", "ask", "--rules-judge",
                        "--dims", "--dataset", DATASET, "--db", str(db_path)], check=True,
                       capture_output=True)
        server = AppServer(db_path)
        server.start()
        order = items(db_path)
        try:
            with sync_playwright() as p:
                browser = launch_browser(p)
                for name, pace in PACES.items():
                    matched, began = 0, time.monotonic()
                    for seed in range(args.seeds):
                        context = browser.new_context(viewport={"width": 1400, "height": 1000})
                        page = context.new_page()
                        who = new_name(f"bench{pace}")
                        start = seed % (len(order) - 4)
                        events = random_events(seed=seed * 7 + pace, count=args.events)
                        alone = copy_db(db_path, Path(tmp) / f"alone-{pace}-{seed}.db")
                        open_annotate(page, server.url, order[start][0], who)
                        record(page)
                        type_events(page, events, pace)
                        settle(page)
                        log: list[dict] = []
                        expected = interpreted(alone, order, start, who, events, log)
                        if in_browser(db_path, who) == expected:
                            matched += 1
                        else:
                            print(f"  seed {seed}: {first_difference(sent(page), log)[:400]}")
                        context.close()
                    print(f"{name}: {matched} of {args.seeds} sequences matched "
                          f"({args.events} events each, {time.monotonic() - began:.0f} s)",
                          flush=True)
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
