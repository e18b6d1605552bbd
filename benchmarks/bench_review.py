"""Review page speed: first screen of a 36,000-token pair in Chromium, and the
server-side rerun after a verdict. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_review.py [--trials 5] [--verdicts 40]

Targets (issue 5): first screen ≤ 2 s; rerun after a verdict p95 ≤ 300 ms.
The pair is generated from the demo corpus's sentences (the project's own text)
until each response has 36,000 tokens (o200k_base when it can be loaded, else the
stated estimate).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import store  # noqa: E402
from needlework import tokens  # noqa: E402
from needlework.datasets.transfer import import_bytes  # noqa: E402
from needlework.demo.corpus import corpus_texts  # noqa: E402

TARGET_TOKENS = 36_000
DATASET = "bench-long"


def sentences() -> list[str]:
    """English sentences of the demo corpus (written by the project)."""
    out = []
    for text in corpus_texts():
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) > 5)
    return sorted(set(out))


def long_text(pool: list[str], seed: int) -> str:
    """Paragraphs of 4–8 sentences until the text has TARGET_TOKENS tokens."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < TARGET_TOKENS:
        paragraph = " ".join(rng.choice(pool) for _ in range(rng.randint(4, 8)))
        paragraphs.append(paragraph)
        size += tokens.count_tokens(paragraph + "\n\n", timeout=5).tokens
    return "\n\n".join(paragraphs)


def near_copy(text: str, seed: int, changes: int = 5) -> str:
    """``text`` with ``changes`` words replaced (a near-identical rejected response)."""
    rng = random.Random(seed)
    words = text.split(" ")
    for k in rng.sample(range(len(words)), changes):
        words[k] = "WRONG"
    return " ".join(words)


def build_db(path: Path) -> dict[str, str]:
    pool = sentences()
    chosen, other = long_text(pool, 1), long_text(pool, 2)
    records = [
        {"id": "LONG_1", "subset": "QA", "prompt": "Write a very long report.", "chosen": [chosen],
         "rejected": [other, near_copy(chosen, 3), "A short answer."]},
        {"id": "LONG_2", "subset": "QA", "prompt": "Write another long report.", "chosen": [other],
         "rejected": [near_copy(other, 4), chosen, "Too short."]},
    ]
    db = store.connect(path)
    import_bytes(db, "".join(json.dumps(r) + "\n" for r in records).encode("utf-8"),
                 "bench.jsonl", dataset=DATASET)
    db.conn.close()
    method = tokens.count_tokens("x", timeout=0).method
    return {"chosen_tokens": str(tokens.count_tokens(chosen, timeout=0)), "method": method,
            "chosen_chars": f"{len(chosen):,}", "other_chars": f"{len(other):,}"}


def _visit(browser_or_context, url: str, item: str) -> float:
    """Seconds from navigation to the first chunk of both responses being visible."""
    page = browser_or_context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    start = time.perf_counter()
    page.goto(f"{url}/review?dataset={DATASET}&item={item}", wait_until="commit")
    selector = ".nw-text.nw-box" if item == "LONG_1" else "mark.nw-current"
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stMain\"] {selector}').length >= 2"
        " && [...document.querySelectorAll('.nw-text.nw-box')].slice(-2)"
        ".every(b => b.innerText.length > 200)", timeout=60_000, polling=10)
    elapsed = time.perf_counter() - start
    page.close()
    return elapsed


def first_screen(url: str, trials: int) -> dict[str, list[float]]:
    """Seconds to the first screen: side by side (two different 36k-token texts) and as a
    diff (near-identical), each in a new browser profile (nothing cached: the worst case)
    and in a browser that opened the app before (Streamlit's static files cached, as for
    an annotator at work); and, as a baseline, to the app shell (sidebar and heading) of
    the Import & export page in a new profile."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    from tests.browser.harness import launch_browser  # noqa: PLC0415

    out: dict[str, list[float]] = {"side": [], "diff": [], "shell": [], "side_cached": [],
                                   "diff_cached": []}
    with sync_playwright() as p:
        browser = launch_browser(p)
        for item in ("LONG_1", "LONG_2"):  # the first visits warm the server up; reported apart
            print(f"  cold first visit ({item}): {_visit(browser, url, item):.2f} s")
        for _ in range(trials):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            start = time.perf_counter()
            page.goto(f"{url}/data", wait_until="commit")
            page.get_by_text("Import & export").first.wait_for(timeout=60_000)
            page.locator('[data-testid="stMain"] h1').wait_for(timeout=60_000)
            out["shell"].append(time.perf_counter() - start)
            page.close()
            out["side"].append(_visit(browser, url, "LONG_1"))
            out["diff"].append(_visit(browser, url, "LONG_2"))
        context = browser.new_context()
        _visit(context, url, "LONG_1")  # fills this profile's cache
        for _ in range(trials):
            out["side_cached"].append(_visit(context, url, "LONG_1"))
            out["diff_cached"].append(_visit(context, url, "LONG_2"))
        context.close()
        browser.close()
    return out


def rerun_after_verdict(path: Path, count: int) -> tuple[list[float], list[float]]:
    """Per verdict key: seconds the script run took on the server side (timed around
    Streamlit's ScriptRunner._run_script: callbacks, the page, the deltas) and the
    AppTest round trip (adds AppTest's polling). Verdicts alternate on the 36k-token
    pair, so every one is a real write and the pair is redrawn."""
    from streamlit.runtime.scriptrunner import script_runner  # noqa: PLC0415
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    runs: list[float] = []
    original = script_runner.ScriptRunner._run_script

    def timed(self, rerun_data):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(self, rerun_data)
        finally:
            runs.append(time.perf_counter() - start)

    script_runner.ScriptRunner._run_script = timed
    os.environ["NEEDLEWORK_DB"] = str(path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["dataset"] = DATASET
    at.session_state["annotator"] = "bench"
    at.session_state["rv_advance"] = False  # stay on the 36k-token pair
    at.query_params["item"] = "LONG_2"
    at.run()
    at.switch_page("app_pages/review.py")
    at.run()
    round_trips = []
    runs.clear()
    for k in range(count):
        at.button(key="rv_v_agree" if k % 2 == 0 else "rv_v_flip").click()
        start = time.perf_counter()
        at.run()
        round_trips.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    script_runner.ScriptRunner._run_script = original
    return list(runs), round_trips


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--verdicts", type=int, default=40)
    args = parser.parse_args()
    os.chdir(ROOT)
    from tests.browser.harness import streamlit_server  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        facts = build_db(path)
        print(f"pair: chosen {facts['chosen_tokens']} ({facts['chosen_chars']} chars), rejected "
              f"{facts['other_chars']} chars; token counts by {facts['method']}")
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at the start")
        with streamlit_server(path) as url:
            screens = first_screen(url, args.trials)

        def line(name: str, key: str) -> None:
            times = screens[key]
            print(f"{name:<66} median {statistics.median(times):.2f} s, max {max(times):.2f} s "
                  f"({len(times)} visits)")

        print("first screen of a pair (target ≤ 2 s):")
        line("  new browser profile, the app shell alone (Import & export):", "shell")
        line("  new browser profile, side by side, two different 36k-token texts:", "side")
        line("  new browser profile, diff mode, near-identical 36k-token pair:", "diff")
        line("  browser that opened the app before, side by side:", "side_cached")
        line("  browser that opened the app before, diff mode:", "diff_cached")
        runs, trips = rerun_after_verdict(path, args.verdicts)
        for name, times in (("server-side script run", runs), ("AppTest round trip", trips)):
            print(f"rerun after a verdict, {name} (36k-token pair on screen): median "
                  f"{statistics.median(times) * 1000:.0f} ms, p95 {p95(times) * 1000:.0f} ms, max "
                  f"{max(times) * 1000:.0f} ms (target p95 ≤ 300 ms, {len(times)} verdicts)")

if __name__ == "__main__":
    main()
