"""Import (and export) time and peak memory on GaRAGe-shaped files of 2.4K, 24K and 100K
questions (15 passages a question; ~1.5 GB at 100K), issue 20.

Each file is written under a temporary folder (``--tmp``, default the system's), imported
with ``python -m needlework import`` as a subprocess into a fresh database there, then
exported back with ``python -m needlework export``; the script prints wall time and the
peak resident memory of each subprocess (``os.wait4``'s rusage of that child alone), and
deletes the files. Target (issue 20): import peak memory <= 1 GB at 100K questions.

    nice -n 10 .venv/bin/python benchmarks/bench_import.py [--sizes 2400,24000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSAGES = 15
WORDS = ("museum ticket price adults children opening hours weekday weekend gallery exhibit "
         "collection founded century river bridge station train schedule season summer winter "
         "report revenue quarter growth market share analyst forecast policy change update "
         "release version server deploy config error latency request cache index query").split()
LABELS = ("ANSWER-THE-QUESTION", "RELATED-INFORMATION", "OUTDATED", "UNKNOWN", "")


def _pool(rng: random.Random, n: int = 512, words: int = 115) -> list[str]:
    """Passage texts (~950 characters each) to draw from: generating 1.5 GB word by word
    would take longer than the import."""
    return [" ".join(rng.choice(WORDS) for _ in range(words)) + "." for _ in range(n)]


def write_file(path: Path, questions: int, seed: int = 0) -> int:
    """A GaRAGe JSONL file of ``questions`` records; returns its size in bytes."""
    rng = random.Random(seed)
    pool = _pool(rng)
    with open(path, "w", encoding="utf-8") as f:
        for q in range(questions):
            grounding = [{f"cite_{n}": f"[{q}.{n}] " + pool[(q * 7 + n * 13) % len(pool)],
                          "age": f"{(q + n) % 30} days", "date": "2024-11-11",
                          "provider": "web" if n % 3 else "ent"}
                         for n in range(1, PASSAGES + 1)]
            correct = [LABELS[(q + n) % len(LABELS)] for n in range(PASSAGES)]
            record = {
                "sample_id": f"bench-{q:07d}",
                "question_date": "2025-01-14T09:12:00",
                "question": f"Question {q}: what does the {rng.choice(WORDS)} {rng.choice(WORDS)} cost?",
                "grounding": grounding,
                "question_valid": "YES", "question_seeking": "YES", "question_false_premise": "NO",
                "question_sensitive": "NO", "question_type": "", "question_complexity": "Simple",
                "question_category": ("Travel", "Finance", "Science", "Tech")[q % 4],
                "question_popularity": ("Head", "Torso", "Tail")[q % 3],
                "evidence_relevant": ["YES" if c else "NO" for c in correct],
                "evidence_correct": correct,
                "evidence_cited": ["YES" if n == 0 else "NO" for n in range(PASSAGES)],
                "answer_generate": "It costs what passage one says [cite_1].",
                "answer_related_info": "", "answer_validate": "", "comments": "",
                "question_tag": "web", "topic_tag": "web",
            }
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path.stat().st_size


def run(args: list[str]) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MB, exit code, stderr) of ``python -m needlework ARGS``."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "needlework", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    return seconds, usage.ru_maxrss / 1024, proc.returncode, stderr  # ru_maxrss is in KB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2400,24000,100000",
                        help="question counts, comma-separated (default: 2400,24000,100000)")
    parser.add_argument("--tmp", default=None, help="folder for the files and databases")
    parser.add_argument("--no-export", action="store_true", help="time the import only")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    base = Path(tempfile.mkdtemp(prefix="nw-bench-import-", dir=args.tmp))
    print(f"{'questions':>9} {'file MB':>8} {'write s':>8} {'import s':>9} {'import peak MB':>15} "
          f"{'export s':>9} {'export peak MB':>15}")
    worst = 0.0
    try:
        for n in sizes:
            folder = base / str(n)
            folder.mkdir()
            src = folder / f"garage-{n}.jsonl"
            t0 = time.perf_counter()
            size = write_file(src, n)
            written = time.perf_counter() - t0
            db = folder / "bench.db"
            seconds, peak, code, err = run(["import", str(src), "--db", str(db), "--no-progress"])
            if code != 0:
                print(f"import of {n} questions failed: {err.strip()}", file=sys.stderr)
                return 1
            src.unlink()  # room for the export
            worst = max(worst, peak) if n >= 100_000 else worst
            ex_s, ex_peak = float("nan"), float("nan")
            if not args.no_export:
                out = folder / "export.jsonl"
                ex_s, ex_peak, code, err = run(["export", "--dataset", src.stem, "--format", "garage",
                                                "--out", str(out), "--db", str(db)])
                if code != 0:
                    print(f"export of {n} questions failed: {err.strip()}", file=sys.stderr)
                    return 1
                if out.stat().st_size != size:
                    print(f"export of {n} questions: {out.stat().st_size} bytes, expected {size}",
                          file=sys.stderr)
            print(f"{n:>9} {size / 1e6:>8.0f} {written:>8.1f} {seconds:>9.1f} {peak:>15.0f} "
                  f"{ex_s:>9.1f} {ex_peak:>15.0f}", flush=True)
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if worst:
        print(f"target: import peak memory <= 1024 MB at 100K questions: {worst:.0f} MB "
              f"({'met' if worst <= 1024 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
