"""Model suggestions (issue 30): keys per question with and without them, what an accept
key costs next to a label key, and the suggestion job's throughput and memory.

    .venv/bin/python benchmarks/bench_suggest.py [--keys] [--job 2000] [--scale 100000]

**Keys per question** (``--keys``), on demo-grounding with the rules judge's suggestions:
the annotator's target is the file's own label of each passage (a passage the file leaves
unlabelled is taken as the suggestion: the annotator agrees with it). Without suggestions
an annotator presses one label key per passage (each moves to the next) and N; with them,
Y, then for each passage whose suggestion is not the target, J/K to it and its label key,
then N. Both sequences are also computed for synthetic sources that give the target with
a seeded probability (0.6, 0.8, 0.95; clearly not a model: they show how the count moves
with a source's accuracy). The two rules-judge sequences are then typed in Chromium, 150 ms
apart, by two annotators over all 16 questions, and the database must hold exactly the
target labels (else the figure is not printed). The same run times press → committed for
the Y presses and the label presses (the browser's press time, the database's commit).

**Job** (``--job N``): a generated GaRAGe file of N questions (15 passages each) is
imported and ``suggestions ask --rules-judge`` runs on it in a subprocess: questions and
judge calls per second, the process's peak resident memory.

**Scale** (``--scale N``): N questions; the job runs for ``--seconds`` while its resident
memory is sampled every half second, is killed (SIGKILL), then runs again for the same
time: the second run must skip the questions the first stored and go on (printed).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_import import run as run_cli  # noqa: E402
from bench_import import write_file  # noqa: E402
from bench_keys import committed_ms, pct, wait_idle_server  # noqa: E402

import store  # noqa: E402
from needlework.grounding.labels import LABEL_KEYS, imported_label  # noqa: E402
from needlework.seeding.demo import seed_demo  # noqa: E402
from store.datasets import iter_items  # noqa: E402
from store.suggestions import dataset_suggestions  # noqa: E402

DATASET = "demo-grounding"
PY = str(ROOT / ".venv" / "bin" / "python")


def targets(db) -> list[tuple[str, list[str], list[str | None], list[bool]]]:
    """``(item, target labels, rules-judge suggestions, whether the file labels each
    passage)`` per demo question, in order."""
    rules = {(r["item_key"], int(r["field"].split(":")[1])): r["value"]
             for r in dataset_suggestions(db, DATASET) if r["field"].startswith("label:")}
    out = []
    for it in iter_items(db, DATASET):
        n = len(it["record"].get("grounding") or [])
        sugg = [rules.get((it["key"], p)) for p in range(1, n + 1)]
        want = [imported_label(it["record"], p) or sugg[p - 1] or "irrelevant"
                for p in range(1, n + 1)]
        filed = [imported_label(it["record"], p) is not None for p in range(1, n + 1)]
        out.append((it["key"], want, sugg, filed))
    return out


def keys_without(want: list[str]) -> list[str]:
    return [LABEL_KEYS[label] for label in want] + ["n"]


def keys_with(want: list[str], sugg: list[str | None]) -> list[str]:
    """Y, then J/K to each passage whose suggestion is not the target and its label key."""
    keys, cursor = ["y"], 1
    for p, (w, s) in enumerate(zip(want, sugg, strict=True), start=1):
        if w == s:
            continue
        keys += ["j"] * (p - cursor) if p > cursor else ["k"] * (cursor - p)
        keys.append(LABEL_KEYS[w])
        cursor = min(p + 1, len(want))
    return keys + ["n"]


def synthetic(want: list[str], accuracy: float, rng: random.Random) -> list[str]:
    return [w if rng.random() < accuracy else rng.choice([x for x in LABEL_KEYS if x != w])
            for w in want]


def bench_keys() -> None:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    from needlework.rag.rules_server import start_rules_server  # noqa: PLC0415
    from needlework.suggest.job import DIMS, LABELS, SuggestSpec, run_suggest_here  # noqa: PLC0415
    from tests.browser.harness import AppServer, launch_browser  # noqa: PLC0415
    from tests.browser.keys import labels_of, open_annotate, press, settle  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "needlework.db"
        db = store.connect(db_path)
        seed_demo(db)
        with start_rules_server() as rules:
            run_suggest_here(db, db_path, SuggestSpec(DATASET, rules.connection(), (LABELS, DIMS)))
        plan = targets(db)
        n_q = len(plan)
        known = [(w, s) for _, want, sugg, filed in plan
                 for w, s, f in zip(want, sugg, filed, strict=True) if f]
        right = sum(w == s for w, s in known)
        total = sum(len(want) for _, want, _, _ in plan)
        print(f"keys per question, {DATASET} ({n_q} questions, {total} passages, {len(known)} "
              "with a label in the file)")
        without = sum(len(keys_without(w)) for _, w, _, _ in plan) / n_q
        print(f"  without suggestions:                      {without:5.2f}")
        print(f"  with the rules judge's (the file's label for {right} of {len(known)}): "
              f"{sum(len(keys_with(w, s)) for _, w, s, _ in plan) / n_q:5.2f}")
        rng = random.Random(7)
        for acc in (0.6, 0.8, 0.95):
            count = sum(len(keys_with(w, synthetic(w, acc, rng))) for _, w, _, _ in plan) / n_q
            print(f"  with a synthetic source right {acc:.0%} of the time: {count:5.2f}")
        db.conn.close()
        server = AppServer(db_path)
        server.start()
        try:
            with sync_playwright() as p:
                browser = launch_browser(p)
                checks = {}
                for who, make in (("bench-plain", lambda w, s: keys_without(w)),
                                  ("bench-suggested", keys_with)):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    open_annotate(page, server.url, plan[0][0], who)
                    wait_idle_server(server.proc.pid)
                    page.evaluate("""(() => { window.__pushed = {};
                      const core = window.__nwCore, push = core.push.bind(core);
                      core.push = (a) => { const out = push(a);
                        window.__pushed[out.id] = [out.t, out.kind]; return out; }; })()""")
                    typed = 0
                    for _, want, sugg, _ in plan:
                        keys = make(want, sugg)
                        typed += len(keys)
                        press(page, keys, 150)
                        page.wait_for_timeout(300)  # N: the next question is drawn
                    settle(page)
                    got = labels_of(db_path, who)
                    expected = {(key, p): w for key, want, _, _ in plan
                                for p, w in enumerate(want, start=1)}
                    checks[who] = (got == expected, typed / n_q)
                    pushed = page.evaluate("window.__pushed")
                    done = committed_ms(db_path, list(pushed))
                    by_kind: dict[str, list[float]] = {}
                    for i, (t, kind) in pushed.items():
                        if i in done:
                            by_kind.setdefault(kind, []).append(done[i] - t)
                    for kind, ms in sorted(by_kind.items()):
                        if kind in ("set", "accept"):  # a label key is a "set"
                            print(f"  {who}: {'label' if kind == 'set' else kind:>6} press→committed p50 "
                                  f"{statistics.median(ms):4.0f} ms, p95 {pct(ms, .95):4.0f} ms "
                                  f"({len(ms)})")
                    page.close()
                browser.close()
        finally:
            server.stop()
        for who, (ok, per) in checks.items():
            print(f"  typed in Chromium by {who}: {per:5.2f} keys per question, database "
                  f"{'holds exactly the target labels' if ok else 'DIFFERS from the targets'}")


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _dataset(folder: Path, n: int) -> tuple[Path, str]:
    src = folder / f"garage-{n}.jsonl"
    write_file(src, n)
    db = folder / "bench.db"
    seconds, peak, code, err = run_cli(["import", str(src), "--db", str(db), "--no-progress"])
    if code != 0:
        raise SystemExit(f"import failed: {err}")
    src.unlink()
    print(f"  {n:,} questions imported in {seconds:.1f} s")
    return db, src.stem


def _ask(db: Path, dataset: str, seconds: float | None) -> tuple[dict | None, list[int], float]:
    """Run ``suggestions ask --rules-judge`` (killed after ``seconds``); its JSON result
    (None when killed), its RSS samples in kB, its wall time."""
    t0 = time.monotonic()
    proc = subprocess.Popen([PY, "-m", "needlework", "suggestions", "ask", "--dataset", dataset,
                             "--rules-judge", "--json", "--db", str(db)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples = []
    while proc.poll() is None:
        samples.append(_rss_kb(proc.pid))
        if seconds is not None and time.monotonic() - t0 > seconds:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return None, samples, time.monotonic() - t0
        time.sleep(0.5)
    out = proc.stdout.read() if proc.stdout else ""
    return json.loads(out) if out.strip() else None, samples, time.monotonic() - t0


def _stored(db: Path, dataset: str) -> tuple[int, int]:
    conn = store.connect(db)
    try:
        return conn.execute("select count(*), count(distinct item_key) from suggestions "
                            "where dataset = ?", [dataset]).fetchone()
    finally:
        conn.conn.close()


def bench_job(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"suggest job with the rules judge (local HTTP), {n:,} questions")
        db, dataset = _dataset(Path(tmp), n)
        result, samples, wall = _ask(db, dataset, None)
        if result is None or result.get("status") != "done":
            raise SystemExit(f"the job did not finish: {result}")
        calls = result["sent"] + result["cached"]
        print(f"  {result['questions']:,} questions, {calls:,} judge calls in {wall:.1f} s: "
              f"{result['questions'] / wall:.1f} questions/s, {calls / wall:.0f} calls/s "
              f"(process start included); peak RSS {max(samples) / 1024:.0f} MB")


def bench_scale(n: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print(f"suggest job at scale: {n:,} questions, killed after {seconds:.0f} s, run again")
        db, dataset = _dataset(Path(tmp), n)
        _, first, _ = _ask(db, dataset, seconds)
        stored, items = _stored(db, dataset)
        print(f"  first run: RSS {min(first[20:]) / 1024:.0f}-{max(first[20:]) / 1024:.0f} MB from 10 s on "
              f"(samples every 0.5 s; last 5: {[round(s / 1024) for s in first[-5:]]}); killed with "
              f"{stored:,} suggestions stored for {items:,} questions")
        _, second, _ = _ask(db, dataset, seconds)
        stored2, items2 = _stored(db, dataset)
        print(f"  second run: RSS {min(second[20:]) / 1024:.0f}-{max(second[20:]) / 1024:.0f} MB from 10 s on;"
              f" killed with {stored2:,} suggestions for {items2:,} questions "
              f"(+{items2 - items:,} questions: it went on from where the first stopped)")
        conn = store.connect(db)
        dup = conn.execute("select count(*) from (select item_key, field, source, count(*) c from "
                           "suggestions group by 1, 2, 3 having c > 1)").fetchone()[0]
        conn.conn.close()
        print(f"  fields suggested twice by the same source: {dup}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", action="store_true", help="keys per question (Chromium)")
    parser.add_argument("--job", type=int, default=0, metavar="N", help="job throughput on N questions")
    parser.add_argument("--scale", type=int, default=0, metavar="N", help="kill and resume on N questions")
    parser.add_argument("--seconds", type=float, default=60, help="each --scale run's time")
    args = parser.parse_args()
    if not (args.keys or args.job or args.scale):
        args.keys, args.job = True, 2000
    if args.keys:
        bench_keys()
    if args.job:
        bench_job(args.job)
    if args.scale:
        bench_scale(args.scale, args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
