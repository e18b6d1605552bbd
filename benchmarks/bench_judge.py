"""Judge throughput against the local demo judge served by ``transformers serve``.

A 200-comparison selection run (200 safety-needle pairs, one seeded order each) at
concurrency 1 and at concurrency 8, each on a fresh database (so every call is a
request), then the concurrency-8 run again on its database: every answer comes from
the cache, so it must make 0 requests. Prints wall time, requests/s, accuracy and
invalid rate. Needs the demo judge (``python -m needlework demo-judge --out
data/demo-judge``).

    nice -n 10 .venv/bin/python benchmarks/bench_judge.py [--model DIR] [--pairs 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from needlework import demo  # noqa: E402
from needlework.formats.preference import Preference  # noqa: E402
from needlework.judges import demo as demo_judge  # noqa: E402
from needlework.judges.engine import run_judge  # noqa: E402
from needlework.judges.serve import start_server  # noqa: E402
from needlework.phrases import SAFETY_HELDOUT  # noqa: E402
from store import connect  # noqa: E402


def needle_pairs(n: int, seed: int = 0, paragraphs_per_response: int = 2) -> list[tuple[str, Preference]]:
    """``n`` safety-needle pairs from the demo haystack paragraphs and held-out phrases."""
    rng = random.Random(seed)
    paragraphs = [p for p in demo.haystack_paragraphs() if p.strip()]
    items = []
    for k in range(n):
        chunks = rng.sample(paragraphs, paragraphs_per_response)
        good, bad = rng.choice(SAFETY_HELDOUT)
        site = rng.randrange(len(chunks))

        def insert(phrase: str, chunks: list[str] = chunks, site: int = site) -> str:
            return "\n\n".join(f"{phrase} {c}" if j == site else c for j, c in enumerate(chunks))

        items.append((f"bench-{k}", Preference(f"bench-{k}", "safety", "Write about everyday things.",
                                               [insert(good)], [insert(bad)])))
    return items


def timed_run(db_path: Path, server, items, concurrency: int) -> dict:
    db = connect(db_path)
    try:
        started = time.perf_counter()
        run = run_judge(db, server.connection(max_tokens=16, concurrency=concurrency, timeout=300),
                        items, "selection", dataset="bench", seed=0)
        seconds = time.perf_counter() - started
    finally:
        db.conn.close()
    s = run.summary
    return {"concurrency": concurrency, "seconds": seconds, "requests": s["requests"],
            "cached": s["cached"], "accuracy": s["accuracy"], "invalid_rate": s["invalid_rate"],
            "rps": s["requests"] / seconds if seconds else 0.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "data" / "demo-judge"), metavar="DIR")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2, help="server torch threads (default 2)")
    args = parser.parse_args()
    if not demo_judge.is_built(args.model):
        print(f"no demo judge in {args.model}: run python -m needlework demo-judge --out {args.model}",
              file=sys.stderr)
        return 2
    items = needle_pairs(args.pairs)
    started = time.perf_counter()
    with start_server(args.model, threads=args.threads) as server:
        print(f"transformers serve ready in {time.perf_counter() - started:.1f} s at {server.base_url}")
        with tempfile.TemporaryDirectory() as tmp:
            rows = [timed_run(Path(tmp) / "c1.db", server, items, 1),
                    timed_run(Path(tmp) / "c8.db", server, items, 8)]
            cached = timed_run(Path(tmp) / "c8.db", server, items, 8)
    print(f"{args.pairs}-comparison selection run, demo judge ({args.model}):")
    for r in rows:
        print(f"  concurrency {r['concurrency']}: {r['seconds']:.1f} s wall, {r['requests']} requests, "
              f"{r['rps']:.2f} requests/s, accuracy {r['accuracy']:.3f}, "
              f"invalid {r['invalid_rate']:.1%}")
    print(f"  speed-up 8 vs 1: {rows[0]['seconds'] / rows[1]['seconds']:.2f}x")
    print(f"  cached re-run: {cached['seconds']:.2f} s wall, {cached['requests']} requests, "
          f"{cached['cached']} answers from the cache, accuracy {cached['accuracy']:.3f}")
    return 0 if cached["requests"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
