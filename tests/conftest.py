"""Shared fixtures: in-memory and file databases, sample records, data paths."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

import store

ROOT = Path(__file__).resolve().parents[1]

# AppTest runs pages in this process: show their errors in full (the app's own config hides
# them from visitors; browser tests run servers with that config, see tests/browser/harness.py).
os.environ["STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"] = "full"


def _threads_per_process(workers: int, cores: int) -> int:
    """torch threads for each process of a test worker: the cores shared out among the
    workers, at least one."""
    return max(1, cores // max(1, workers))


# Several workers on few cores (`make test` runs one more than the cores): each process a
# worker starts (itself, the app servers, the judges' servers, the command line) would
# otherwise run a torch thread pool the size of the machine, and pools that outnumber the
# cores wait on each other (the needle lab's scoring took 56 s instead of 35 s beside two
# busy cores). Set before torch is imported; the children inherit it. A value already set
# by whoever runs the tests is kept.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", str(_threads_per_process(
        int(os.environ["PYTEST_XDIST_WORKER_COUNT"]), os.cpu_count() or 1)))
SHARED_DATA = ROOT.parent / "shared" / "data"
RMBENCH_DIR = SHARED_DATA / "rm-bench"


@pytest.fixture(scope="session")
def demo_models_dir() -> Path:
    """data/ with the shipped demo models installed, each file checked against
    models/SHA256SUMS: the same weights on every machine, built by a build that passed the
    checks of needlework.seeding.demo_models.DEMO_MODELS (what tests may rely on)."""
    from needlework.seeding import demo_models  # noqa: PLC0415

    demo_models.install(ROOT / "data")
    return ROOT / "data"


@pytest.fixture
def db():
    """A migrated in-memory database."""
    return store.connect(":memory:")


@pytest.fixture
def db_path(tmp_path):
    """A path to a fresh database file (WAL)."""
    path = tmp_path / "needlework.db"
    store.connect(path).conn.close()
    return path


GARAGE_RECORD = {
    "sample_id": "0b7c1f0e-1111-4a5b-9c3d-000000000001",
    "question_date": "2025-01-14T09:12:00",
    "question": "What does a ticket cost at the Lakeside Museum?",
    "grounding": [
        {"cite_1": "Tickets costs $5 and $10 for adults.", "age": "2 months, 3 days",
         "date": "2024-11-11", "provider": "web"},
        {"cite_2": "<script>document.title='x'</script> Opening hours 9-5.", "age": "",
         "date": "", "provider": "ent"},
        {"cite_3": "The museum was founded in 1901.", "age": "3 years", "date": "2022-01-01",
         "provider": "web"},
    ],
    "question_valid": "YES",
    "question_seeking": "YES",
    "question_false_premise": "NO",
    "question_sensitive": "YES",
    "question_type": "SLOW-CHANGING",
    "question_complexity": "Simple",
    "question_category": "Travel",
    "question_popularity": "Tail",
    "evidence_relevant": ["YES", "NO", "YES"],
    "evidence_correct": ["ANSWER-THE-QUESTION", "", "RELATED-INFORMATION"],
    "evidence_cited": ["YES", "NO", "NO"],
    "answer_generate": "Adults pay $5 or $10 [cite_1].",
    "answer_related_info": "",
    "answer_validate": "",
    "comments": "",
    "question_tag": "web",
    "topic_tag": "web",
    "extra_field_kept": {"nested": [1, 2, 3]},
}


@pytest.fixture
def garage_record():
    return copy.deepcopy(GARAGE_RECORD)


def garage_records(n: int = 3) -> list[dict]:
    out = []
    for i in range(n):
        r = copy.deepcopy(GARAGE_RECORD)
        r["sample_id"] = f"sample-{i + 1}"
        out.append(r)
    return out


def jsonl(records: list) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


# -- time per test phase, for `make test-times` (benchmarks/test_times.py) -----------------
# With NEEDLEWORK_TEST_TIMES set to a folder, each test's set-up, call and tear-down times
# are written there, one JSON line each, a file per xdist worker. `make test` sets it.
_TIMES = os.environ.get("NEEDLEWORK_TEST_TIMES")


_CPU_MARK = pytest.StashKey[float]()
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user and system) of process ``root`` and every process below it, with
    the children they have reaped: a test's app servers, judges, Chromium and its renderers,
    a process started and ended within the test. 0.0 where /proc has no children lists."""
    ticks, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{pid}/task"):
                stack.extend(int(c) for c in
                             Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        except OSError:  # ended meanwhile, or no /proc: its time is in its parent's
            continue
    return ticks / _TICK


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # each phase's CPU: the worker's whole process tree's, from the end of the phase before
    outcome = yield
    if not _TIMES:
        return
    now = tree_cpu_seconds(os.getpid())
    start = item.stash.get(_CPU_MARK, None)
    if start is not None:  # below 0 where processes left the tree unreaped (a browser's
        # renderers as it closes): that phase's CPU is not known, and is counted as none
        outcome.get_result().user_properties.append(("cpu", round(max(0.0, now - start), 2)))
    item.stash[_CPU_MARK] = now


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _TIMES:
        item.stash[_CPU_MARK] = tree_cpu_seconds(os.getpid())
    yield


def pytest_runtest_logreport(report) -> None:
    # written once, by the process that runs the session: under pytest-xdist the
    # controller, which hears every worker's reports (a worker's own would double them)
    if not _TIMES or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    node = getattr(report, "node", None)
    worker = getattr(getattr(node, "gateway", None), "id", None) or "main"
    folder = Path(_TIMES)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{worker}.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"test": report.nodeid, "when": report.when,
                              "seconds": round(report.duration, 3), "outcome": report.outcome,
                              "worker": worker, "end": round(report.stop, 3),
                              "cpu": dict(report.user_properties).get("cpu")}) + "\n")
