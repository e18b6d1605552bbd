"""Review pairs at any size (issue 20): the review page's server-side work per rerun on
Long-form-RewardBench-shaped datasets of 2.4K, 24K and 100K items (1 chosen × 3 rejected
responses each), in one process, the same way for every size.

For each size a file is generated and imported into a fresh database, one reviewer's
verdicts are written on a tenth of the items, then the page is run with Streamlit's
AppTest (the script's own time, no browser):

- open: the page's first run in a new session (the list is made: one read of the items'
  comparison counts);
- verdict → rerun: a verdict action delivered as the key script does (the outbox), then
  the rerun that moves to the next unreviewed comparison (median of ``--keys``);
- next → rerun: J (median);
- search → rerun: a word of one prompt typed into the search box (a new list);
- not fully reviewed (filter) → rerun, then a verdict → rerun with that filter on (the list
  brought up to date from the item that changed).

Prints one line per size. Compare columns: a rerun at 100K should cost what it costs at
2.4K (the list is never rebuilt by a key).

    nice -n 10 .venv/bin/python benchmarks/bench_review_scale.py [--sizes 2400,24000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

import store  # noqa: E402
from needlework.actions import positions  # noqa: E402
from needlework.actions.service import apply_actions  # noqa: E402
from needlework.datasets.transfer import import_file  # noqa: E402
from needlework.verdicts import make_value  # noqa: E402
from store.annotations import set_annotation  # noqa: E402
from tests.page_keys import TAB, as_tab, key_data  # noqa: E402

WHO = "bench-review"


def write_file(path: Path, n: int) -> None:
    """``n`` Long-form RewardBench records with ~60-word responses."""
    body = " ".join(f"word{k}" for k in range(60))
    with path.open("w", encoding="utf-8") as out:
        for k in range(n):
            out.write(json.dumps({
                "id": f"item-{k}", "subset": ("QA", "RAG", "Chat", "Writing")[k % 4],
                "prompt": f"Prompt {k}: explain topic {k % 997} in detail.",
                "chosen": [f"A careful answer {k}. {body}"],
                "rejected": [f"A wrong answer {k}. {body}", f"Off topic {k}.", f"{body} {k}"]}) + "\n")


def _timed(at) -> float:
    t0 = time.perf_counter()
    at.run()
    took = time.perf_counter() - t0
    assert not at.exception, at.exception
    return took


def measure(db_path: Path, n: int, keys: int) -> dict[str, float]:
    os.environ["NEEDLEWORK_DB"] = str(db_path)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["dataset"] = "lf"
    at.session_state["annotator"] = WHO
    at.run()
    at.switch_page("app_pages/review.py")
    out = {"open": _timed(at)}
    db = store.connect(db_path)
    as_tab(at)

    def ask(seek: str) -> float:
        """J / K / N: a move where the page's data says (tests/page_keys.py), then the rerun."""
        target = key_data(at, "review")["moves"].get(seek)
        if target is not None:
            positions.move(db, "", TAB, "review", "lf", target["item"], i=target["i"],
                           j=target["j"])
        return _timed(at)

    def verdict() -> float:
        pos = at.session_state["rv_pos"]
        delivery = apply_actions(db, [{"id": f"bench-{uuid.uuid4().hex}", "kind": "verdict",
                                       "dataset": "lf", "annotator": WHO, "item": pos["item"],
                                       "i": pos["i"], "j": pos["j"], "verdict": "agree"}])
        assert delivery.error is None and not delivery.rejected, delivery
        return ask("unreviewed")

    out["verdict"] = statistics.median(verdict() for _ in range(keys))
    out["next"] = statistics.median(ask("next") for _ in range(keys))
    at.text_input(key="rv_search").input(f"topic {n // 3 % 997} in")
    out["search"] = _timed(at)
    at.text_input(key="rv_search").input("")
    _timed(at)
    at.session_state["rv_filters_saved"] = {"state": "unreviewed"}
    out["filtered"] = _timed(at)
    out["verdict, filtered"] = statistics.median(verdict() for _ in range(keys))
    db.conn.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2400,24000,100000")
    parser.add_argument("--keys", type=int, default=5, help="verdicts and J presses per size")
    parser.add_argument("--tmp", default=None, help="folder for the files and databases")
    args = parser.parse_args()
    folder = Path(args.tmp or tempfile.mkdtemp(prefix="nw-bench-review-"))
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        src, db_path = folder / f"lf-{n}.jsonl", folder / f"lf-{n}.db"
        write_file(src, n)
        db = store.connect(db_path)
        t0 = time.perf_counter()
        import_file(db, src, dataset="lf", format="lfrb")
        imported = time.perf_counter() - t0
        for k in range(0, n, 10):  # a tenth of the items fully reviewed
            for j in range(3):
                set_annotation(db, "lf", f"item-{k}", WHO, f"verdict:0:{j}", make_value("tie"))
        db.conn.commit()
        db.conn.close()
        figures = measure(db_path, n, args.keys)
        rows.append((n, imported, figures))
        print(f"{n:>7,} items · import {imported:5.1f} s · " + " · ".join(
            f"{name} {value * 1000:6.0f} ms" for name, value in figures.items()), flush=True)
    if len(rows) > 1:
        (small, _, a), (large, _, b) = rows[0], rows[-1]
        print(f"{large:,} vs {small:,}: " + " · ".join(
            f"{name} {(b[name] - a[name]) * 1000:+.0f} ms" for name in a))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
