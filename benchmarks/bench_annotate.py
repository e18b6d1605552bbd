"""Grounding annotation speed: import, label writes, annotate-page reruns.

Prints figures; asserts nothing. Run: ``.venv/bin/python benchmarks/bench_annotate.py``
(``--questions/--passages`` to change the synthetic set, ``--reruns``, ``--writes``).

1. Import: a synthetic GaRAGe file of 2,400 questions / 35,000 passages through
   ``needlework.datasets.transfer.import_bytes`` (parse, validate, insert) into a file DB
   in WAL mode. Target ≤ 10 s.
2. Label write: the function the label buttons and keys call
   (``components.annotate.item.save`` → ``store.annotations.set_annotation``: read old
   value, upsert, history row, commit), timed from the call to the committed return
   on the same file DB. Target p95 ≤ 20 ms.
3. Annotate-page rerun with a 15-passage item: ``streamlit.testing`` AppTest runs
   of the whole app (router, sidebar, the annotate page) after a label key, each
   timed around ``AppTest.run()`` (so AppTest's own overhead is included).
   Target p95 ≤ 300 ms. Before it, ``--annotators`` other annotators (default 2)
   label every passage, so the progress and disagreement queries run on a fully
   annotated set (~70,000 label rows).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("museum ticket price river bridge council report revenue growth quarter vaccine "
         "season forecast league final election budget rail station airport school policy "
         "study patients results launch model release update storm coast harvest").split()
LABELS = ("ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN", "")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def synthetic(questions: int, passages: int, seed: int = 7) -> bytes:
    """A GaRAGe JSONL file with ``questions`` records and ``passages`` passages in all
    (the first record has 15 passages)."""
    rng = random.Random(seed)
    base, extra = divmod(passages - 15, questions - 1)
    lines = []
    for i in range(questions):
        n = 15 if i == 0 else base + (1 if i <= extra else 0)
        correct = [rng.choice(LABELS) for _ in range(n)]
        record = {
            "sample_id": f"q-{i:05d}",
            "question_date": "2025-01-14T09:12:00",
            "question": _text(rng, 12).rstrip(".") + "?",
            "grounding": [{f"cite_{k}": _text(rng, 70), "age": "",
                           "date": f"2024-{1 + k % 12:02d}-{1 + k % 27:02d}",
                           "provider": "web" if k % 3 else "ent"} for k in range(1, n + 1)],
            "question_valid": "YES", "question_seeking": "YES", "question_false_premise": "NO",
            "question_sensitive": "NO", "question_type": "", "question_complexity": "Simple",
            "question_category": rng.choice(["Science", "Finance", "Travel", "Sports"]),
            "question_popularity": rng.choice(["Head", "Torso", "Tail"]),
            "evidence_relevant": ["YES" if c else "NO" for c in correct],
            "evidence_correct": correct,
            "evidence_cited": ["YES" if c == LABELS[0] else "NO" for c in correct],
            "answer_generate": "An answer [cite_1].", "answer_related_info": "",
            "answer_validate": "", "comments": "", "question_tag": "web", "topic_tag": "web",
        }
        lines.append(json.dumps(record))
    return ("\n".join(lines) + "\n").encode()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _report(name: str, seconds: list[float], target: str) -> None:
    ms = [s * 1000 for s in seconds]
    print(f"{name}: n={len(ms)} p50={statistics.median(ms):.1f} ms "
          f"p95={_pct(ms, 0.95):.1f} ms max={max(ms):.1f} ms ({target})")


def bench_import(path: Path, data: bytes) -> None:
    import store  # noqa: PLC0415
    from needlework.datasets.transfer import import_bytes  # noqa: PLC0415

    db = store.connect(path)
    start = time.perf_counter()
    summary = import_bytes(db, data, "synthetic.jsonl", dataset="bench")
    took = time.perf_counter() - start
    passages = db.execute("select sum(json_array_length(record, '$.grounding')) from items "
                          "where dataset = 'bench'").fetchone()[0]
    print(f"import: {summary.items} questions / {passages} passages, "
          f"{len(data) / 1e6:.1f} MB in {took:.2f} s (target ≤ 10 s)")
    db.conn.close()


def bench_writes(path: Path, writes: int) -> None:
    import store  # noqa: PLC0415
    from components.annotate.item import load_context, save  # noqa: PLC0415
    from store.datasets import get_item  # noqa: PLC0415

    db = store.connect(path)
    mode = db.execute("pragma journal_mode").fetchone()[0]
    times = []
    for i in range(writes):
        item = get_item(db, "bench", f"q-{1 + i % 2000:05d}")
        ctx = load_context(db, "bench", item, "bench-annotator")
        start = time.perf_counter()
        save(ctx, f"label:{1 + i % len(ctx.passages)}", LABELS[i % 4])
        times.append(time.perf_counter() - start)
    _report(f"label write, callback to commit (file DB, journal_mode={mode})", times,
            "target p95 ≤ 20 ms")
    db.conn.close()


def prefill(path: Path, annotators: int) -> None:
    """Give every passage a label from ``annotators`` other annotators (bulk insert,
    not timed), so progress and disagreement queries see a fully annotated set."""
    import store  # noqa: PLC0415

    db = store.connect(path)
    rows = db.execute("select key, json_array_length(record, '$.grounding') from items "
                      "where dataset = 'bench'").fetchall()
    rng = random.Random(11)
    with db.atomic():
        for a in range(annotators):
            db.conn.executemany(
                "insert or replace into annotations (dataset, item_key, annotator, field, value, "
                "updated_at) values ('bench', ?, ?, ?, ?, '2025-01-01T00:00:00.000+00:00')",
                [(key, f"prefill-{a}", f"label:{n}", json.dumps(rng.choice(LABELS[:4])))
                 for key, count in rows for n in range(1, count + 1)])
    total = db.execute("select count(*) from annotations").fetchone()[0]
    print(f"prefill: {annotators} other annotator(s) labeled every passage "
          f"({total} annotation rows)")
    db.conn.close()


def bench_reruns(path: Path, reruns: int) -> None:
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    os.environ["NEEDLEWORK_DB"] = str(path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["annotator"] = "bench-rerun"
    at.query_params.update({"dataset": "bench", "item": "q-00000"})
    at.run()
    at.switch_page("app_pages/annotate.py")
    at.query_params.update({"dataset": "bench", "item": "q-00000"})
    at.run()
    assert not at.exception, at.exception
    assert at.query_params.get("item") == "q-00000"
    times, cpu = [], []
    for i in range(reruns):
        key = "nw-key-prev" if i % 16 == 15 else f"nw-key-{1 + i % 5}"
        at.button(key=key).click()
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    _report("annotate-page rerun, 15-passage item (AppTest.run of the whole app), wall",
            times[2:], "target p95 ≤ 300 ms")
    _report("  the same reruns, CPU time of this process (less sensitive to a busy machine)",
            cpu[2:], "target p95 ≤ 300 ms")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  (load average {load:.1f} on {os.cpu_count()} CPUs while measuring)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=2400)
    parser.add_argument("--passages", type=int, default=35000)
    parser.add_argument("--writes", type=int, default=400)
    parser.add_argument("--reruns", type=int, default=40)
    parser.add_argument("--annotators", type=int, default=2,
                        help="other annotators who labeled every passage before the rerun test")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        data = synthetic(args.questions, args.passages)
        bench_import(path, data)
        bench_writes(path, args.writes)
        prefill(path, args.annotators)
        bench_reruns(path, args.reruns)


if __name__ == "__main__":
    main()
