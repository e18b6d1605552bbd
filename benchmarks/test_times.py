"""Where `make test`'s time goes: per test file and per test, set-up (fixtures: servers,
browsers, databases) apart from the test itself, and the CPU each used, from the last run's
records.

    .venv/bin/python benchmarks/test_times.py [--top 20] [FOLDER]

`make test` writes the records (NEEDLEWORK_TEST_TIMES=artifacts/test-times, one JSON line
per test phase, tests/conftest.py); `make test-times` prints this table. Seconds are
summed over the workers: the suite's wall time is about their sum divided by the workers.
CPU seconds are those of the worker's whole process tree during the test (its app servers,
Chromium, judges): on a machine with fewer cores than workers, the suite's wall time is
about the CPU summed divided by the cores, and a test that waits costs little.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "artifacts" / "test-times"))
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    rows = [json.loads(line) for path in sorted(Path(args.folder).glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"no records in {args.folder}: run `make test` first")
    if any(r.get("worker") != "main" for r in rows):  # an older run wrote each report twice
        rows = [r for r in rows if r.get("worker") != "main"]
    by_file: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    by_test: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    cpu_file: dict[str, float] = defaultdict(float)
    cpu_test: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        path = r["test"].split("::")[0]
        by_file[path][r["when"]] += r["seconds"]
        by_test[r["test"]][r["when"]] += r["seconds"]
        cpu_file[path] += r.get("cpu") or 0.0
        cpu_test[r["test"]] += r.get("cpu") or 0.0
        tests[path].add(r["test"])
    total = sum(sum(v.values()) for v in by_file.values())
    workers = len({r.get("worker", "main") for r in rows})
    print(f"{len(by_test):,} tests, {total / 60:.1f} min summed over {workers} worker(s) "
          f"(about {total / 60 / max(1, workers):.1f} min of wall time), "
          f"{sum(cpu_file.values()) / 60:.1f} min of CPU\n")
    print(f"top {args.top} files (seconds: all, set-up, test, tear-down, CPU; tests)")
    files = sorted(by_file.items(), key=lambda kv: -sum(kv[1].values()))
    for path, t in files[:args.top]:
        print(f"{sum(t.values()):8.1f} {t['setup']:8.1f} {t['call']:8.1f} {t['teardown']:8.1f} "
              f"{cpu_file[path]:8.1f} {len(tests[path]):5d}  {path}")
    print(f"\ntop {args.top} files by CPU (CPU seconds, seconds; tests)")
    for path, cpu in sorted(cpu_file.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{cpu:8.1f} {sum(by_file[path].values()):8.1f} {len(tests[path]):5d}  {path}")
    print(f"\ntop {args.top} tests (seconds: all, set-up, test)")
    for name, t in sorted(by_test.items(), key=lambda kv: -sum(kv[1].values()))[:args.top]:
        print(f"{sum(t.values()):8.1f} {t['setup']:8.1f} {t['call']:8.1f}  {name}")
    print(f"\ntop {args.top} tests by CPU (CPU seconds, seconds)")
    for name, cpu in sorted(cpu_test.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{cpu:8.1f} {sum(by_test[name].values()):8.1f}  {name}")
    print(f"\ntop {args.top} set-ups (a module's or session's fixtures are set up by its first test)")
    for name, t in sorted(by_test.items(), key=lambda kv: -kv[1]["setup"])[:args.top]:
        print(f"{t['setup']:8.1f}  {name}")
    print_tail(rows, args.top)


def print_tail(rows: list[dict], top: int) -> None:
    """When each worker ran out of tests, and the tests that ended last (records from a run
    that wrote each phase's end time, ``end``)."""
    ended = [r for r in rows if "end" in r]
    if not ended:
        return
    first = min(r["end"] - r["seconds"] for r in ended)
    last = max(r["end"] for r in ended)
    print(f"\nworkers (seconds from the first test's start: {last - first:.0f} in all)")
    for worker in sorted({r["worker"] for r in ended}):
        mine = [r for r in ended if r["worker"] == worker]
        done = max(r["end"] for r in mine)
        print(f"{worker:>8}  ran out of tests at {done - first:6.0f}, idle {last - done:4.0f} "
              f"at the end, busy {sum(r['seconds'] for r in mine):6.0f}")
    calls = sorted((r for r in ended if r["when"] == "call"), key=lambda r: r["end"])
    print(f"\nthe last {top} tests to end (end, seconds, worker)")
    for r in calls[-top:]:
        print(f"{r['end'] - first:8.0f} {r['seconds']:8.1f} {r['worker']:>6}  {r['test']}")


if __name__ == "__main__":
    main()
