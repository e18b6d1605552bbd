"""Many annotators on one server: each presses a label key a second; press → committed.

    .venv/bin/python benchmarks/bench_many.py [--clients route|browser] [--counts 10,30]
                                              [--seconds 20]

``route``: scripted clients of the action route (one thread each, HTTP, the same JSON the
key scripts send), no page reruns: what the route alone takes. ``browser``: Chromium
contexts on the annotate page, each its own annotator, pressing a key a second (the
browsers share the machine's cores with the server, so this measures both). Each label
is aimed at the annotator's own question, cycling over its passages.

Prints, per number of annotators: p50 / p95 / max press → committed (the database's
``applied_actions.applied_at``, same clock), the server's CPU (share of one core) and
resident memory, and the first count whose p95 passes 300 ms. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import threading
import time
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_keys import demo_server, pct, wait_idle_server  # noqa: E402

from needlework.actions.route import ROUTE  # noqa: E402
from needlework.teams.accounts import SESSION_COOKIE  # noqa: E402
from tests.browser.harness import launch_browser  # noqa: E402
from tests.browser.keys import DATASET, open_annotate  # noqa: E402

LABELS = ["irrelevant", "ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN"]


def committed(db_path: Path, ids: list[str]) -> dict[str, float]:
    conn = sqlite3.connect(db_path, timeout=30)
    try:
        out: dict[str, float] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = conn.execute(f"select id, applied_at from applied_actions where id in "
                                f"({','.join('?' * len(chunk))})", chunk)
            out.update({i: datetime.fromisoformat(at).timestamp() * 1000 for i, at in rows})
        return out
    finally:
        conn.close()


class Usage:
    """The server process's CPU seconds and resident memory, from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0


def route_clients(url: str, order: list[tuple[str, int]], count: int, seconds: float
                  ) -> dict[str, float]:
    """``count`` threads, each a label a second (starts spread over the first second)."""
    sent: dict[str, float] = {}
    lock = threading.Lock()

    def client(k: int) -> None:
        who = f"many-{k}-{uuid.uuid4().hex[:4]}"
        key, n = order[k % len(order)]
        time.sleep(k / count)
        end = time.monotonic() + seconds
        press = 0
        while time.monotonic() < end:
            action = {"id": uuid.uuid4().hex, "kind": "set", "dataset": DATASET, "item": key,
                      "annotator": who, "field": f"label:{press % max(1, n) + 1}",
                      "value": LABELS[press % 5], "t": int(time.time() * 1000)}
            body = json.dumps({"actions": [action]}).encode()
            request = urllib.request.Request(url + ROUTE, body, method="POST", headers={
                "Content-Type": "application/json", "Origin": url,
                "Cookie": f"{SESSION_COOKIE}={who}"})  # one browser each (the rate bound)
            at = time.time() * 1000
            with urllib.request.urlopen(request, timeout=30) as r:
                r.read()
            with lock:
                sent[action["id"]] = at
            press += 1
            time.sleep(max(0.0, 1.0 - (time.time() * 1000 - at) / 1000))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sent


def browser_clients(url: str, order: list[tuple[str, int]], count: int, seconds: float,
                    playwright) -> dict[str, float]:
    """``count`` Chromium contexts, each an annotator pressing a label key a second."""
    browser = launch_browser(playwright)
    pages = []
    try:
        for k in range(count):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            open_annotate(page, url, order[k % len(order)][0], f"many-{k}-{uuid.uuid4().hex[:4]}")
            page.evaluate("window.__pushed = {}; (() => { const c = window.__nwCore; "
                          "const push = c.push.bind(c); c.push = (a) => { const o = push(a); "
                          "window.__pushed[o.id] = o.t; return o; }; })(); true")
            pages.append(page)
        end = time.monotonic() + seconds
        press = 0
        while time.monotonic() < end:  # one round: each annotator presses once
            start = time.monotonic()
            for k, page in enumerate(pages):
                page.keyboard.press(str((press + k) % 5 + 1))
            press += 1
            time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
        time.sleep(3)
        sent: dict[str, float] = {}
        for page in pages:
            sent.update(page.evaluate("window.__pushed"))
        return sent
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", choices=["route", "browser"], default="route")
    parser.add_argument("--counts", default="1,10,30,60,100",
                        help="numbers of annotators, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="pressing time per count")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    with demo_server() as (server, db_path, order):
        usage = Usage(server.proc.pid)
        playwright = None
        try:
            if args.clients == "browser":
                from playwright.sync_api import sync_playwright  # noqa: PLC0415
                playwright = sync_playwright().start()
            print(f"{args.clients} clients, a label a second each, {args.seconds:.0f} s per count")
            passed = None
            for count in counts:
                wait_idle_server(server.proc.pid)
                cpu0, t0 = usage.cpu(), time.monotonic()
                if args.clients == "route":
                    sent = route_clients(server.url, order, count, args.seconds)
                else:
                    sent = browser_clients(server.url, order, count, args.seconds, playwright)
                cpu = (usage.cpu() - cpu0) / (time.monotonic() - t0)
                done = committed(db_path, list(sent))
                lat = [done[i] - t for i, t in sent.items() if i in done]
                p95 = pct(lat, .95)
                if passed is None and p95 > 300:
                    passed = count
                print(f"{count:4d} annotators: press→committed p50 {statistics.median(lat):6.0f} ms, "
                      f"p95 {p95:6.0f} ms, max {max(lat):6.0f} ms ({len(lat)} of {len(sent)} "
                      f"committed) · server CPU {cpu * 100:4.0f} % of a core, "
                      f"RSS {usage.rss_mb():5.0f} MB", flush=True)
            print("p95 passes 300 ms at: " + (f"{passed} annotators" if passed else
                                              f"none of {counts}"))
        finally:
            if playwright is not None:
                playwright.stop()


if __name__ == "__main__":
    main()
