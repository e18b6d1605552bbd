"""The same run gives the same interval on the Reward model page and in ``metrics --json``,
whatever the row order of the scores file; a small all-wrong run shows Wilson's interval,
not ``0.0–0.0 %``. A real SQLite file, the real page (AppTest), the real CLI."""

from __future__ import annotations

import html
import json
import random

from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.figures.stats import wilson
from needlework.figures.stats_text import percent_range
from needlework.rewards import registry
from needlework.rewards.results import results, scores_lines
from store.scores import item_scores, save_item_scores
from tests.conftest import ROOT, jsonl

PAGE = "app_pages/rewards.py"
FP = "e" * 32


def scored(k: int) -> tuple[list[float], list[float]]:
    """Item k's scores: the chosen response beats k % 4 of its three rejected ones (shares
    0, 1/3, 2/3, 1 of its pairs: not a plain proportion, so the pairwise interval is a
    bootstrap)."""
    wins = k % 4
    return [2.0], [1.0] * min(wins, 3) + [3.0] * (3 - min(wins, 3))


def open_page(db_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("NEEDLEWORK_DB", str(db_path))
    registry.MODELS.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def table(at: AppTest, column: str):
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def save(db, name: str, n: int, scores) -> None:
    records = [{"id": f"q{k:02d}", "subset": "QA" if k % 2 else "Chat", "prompt": f"Q {k}?",
                "chosen": [f"good {k}"], "rejected": [f"bad {k}", f"worse {k}", f"worst {k}"]}
               for k in range(n)]
    import_bytes(db, jsonl(records), f"{name}.jsonl", dataset=name, format="lfrb")
    rows = [{"item_key": f"q{k:02d}", "subset": "QA" if k % 2 else "Chat",
             "chosen_scores": c, "rejected_scores": r} for k, (c, r) in enumerate(scores)]
    random.Random(5).shuffle(rows)  # stored in an order of its own
    save_item_scores(db, name, FP, "fp32|full", "some-rm", rows)


def test_page_and_cli_give_the_same_pairwise_interval_in_any_row_order(tmp_path, monkeypatch,
                                                                          capsys) -> None:
    path = tmp_path / "app.db"
    db = store.connect(path)
    save(db, "prefs", 24, [scored(k) for k in range(24)])
    run = {"fingerprint": FP, "variant": "fp32|full", "model": "some-rm"}
    dataset = {"name": "prefs", "format": "lfrb"}
    entries = results(db, dataset, run).entries
    assert len(entries) == len(item_scores(db, "prefs", FP, "fp32|full")) == 24
    jsons = []
    for order in ("as stored", "reversed", "shuffled"):
        lines = scores_lines(entries, "some-rm")
        if order == "reversed":
            lines.reverse()
        elif order == "shuffled":
            random.Random(11).shuffle(lines)
        out = tmp_path / f"scores-{order.replace(' ', '-')}.jsonl"
        out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        assert main(["metrics", "--kind", "pairwise", "--scores", str(out), "--json"]) == 0
        jsons.append(json.loads(capsys.readouterr().out))
    cli = [j["intervals"]["overall"] for j in jsons]
    assert cli[0] == cli[1] == cli[2]  # every field, to the last bit
    # 6 items at each of 0, 1/3, 2/3, 1 of their 3 pairs: 36 of 72 pairs
    assert jsons[0]["accuracy"] == 0.5 and cli[0]["estimate"] == 0.5
    assert cli[0]["method"] == "bootstrap" and cli[0]["low"] < 0.5 < cli[0]["high"]
    at = open_page(path, monkeypatch)
    frame = table(at, "pairwise 95 % interval").set_index("subset")
    assert frame.loc["overall", "pairwise 95 % interval"] == percent_range(cli[0])
    for subset in ("Chat", "QA"):
        assert frame.loc[subset, "pairwise 95 % interval"] == \
            percent_range(jsons[1]["intervals"]["subsets"][subset])
    captions = " ".join(c.value for c in at.caption)
    assert f"95 % interval {percent_range(cli[0])} (95 % bootstrap)" in captions


def test_five_items_all_wrong_show_wilsons_interval_not_a_zero_width_one(tmp_path,
                                                                         monkeypatch) -> None:
    path = tmp_path / "app.db"
    db = store.connect(path)
    save(db, "prefs", 5, [([0.0], [1.0, 2.0, 3.0])] * 5)
    at = open_page(path, monkeypatch)
    frame = table(at, "best-of-n 95 % interval").set_index("subset")
    # 0 of 5: Wilson's upper end z² / (5 + z²) = 3.8415 / 8.8415 = 0.4345 -> 43.4 %
    assert frame.loc["overall", "best-of-n 95 % interval"] == "0.0–43.4 %"
    assert frame.loc["overall", "pairwise 95 % interval"] == "0.0–43.4 %"  # 0 of 15 pairs, 5 items
    # 0 of 2 (Chat: q00, q02, q04 is 3; QA: q01, q03 is 2): z² / (2 + z²) = 0.6576 -> 65.8 %
    assert frame.loc["QA", "best-of-n 95 % interval"] == "0.0–65.8 %"
    assert not any(cell.endswith("0.0–0.0 %") for cell in frame["best-of-n 95 % interval"])
    captions = " ".join(c.value for c in at.caption)
    assert "(95 % Wilson)" in captions and "95 % Wilson score interval" in captions


def test_compare_two_classifiers_uses_mcnemar_and_its_counts_agree(tmp_path, monkeypatch) -> None:
    path = tmp_path / "app.db"
    db = store.connect(path)
    # rm-a right on items 0..11 of 16, rm-b right on 0..5 and 12..13: a alone right on 6..11
    # (6 items), b alone on 12, 13 (2 items), both on 0..5, neither on 14, 15
    save(db, "prefs", 16, [([2.0], [1.0, 1.0, 1.0]) if k < 12 else ([0.0], [1.0, 1.0, 1.0])
                           for k in range(16)])
    rows = [{"item_key": f"q{k:02d}", "subset": "QA" if k % 2 else "Chat",
             "chosen_scores": [2.0] if k < 6 or k in (12, 13) else [0.0],
             "rejected_scores": [1.0, 1.0, 1.0]} for k in range(16)]
    save_item_scores(db, "prefs", "b" * 32, "fp32|full", "rm-b", rows)
    at = open_page(path, monkeypatch)
    at.selectbox(key="rw_run").set_value(f"score:{FP}|fp32|full").run()
    at.selectbox(key="rw_compare").set_value(f"score:{'b' * 32}|fp32|full").run()
    assert not at.exception, at.exception
    both = table(at, "test").set_index("subset")
    a, b = "some-rm", "rm-b"
    assert both.loc["overall", "test"] == "McNemar's exact test"
    assert (both.loc["overall", f"{a} better"], both.loc["overall", f"{b} better"],
            both.loc["overall", "tied"]) == (6, 2, 8)
    # McNemar by the binomial: 2 * (C(8,0) + C(8,1) + C(8,2)) / 2**8 = 2 * 37 / 256
    assert both.loc["overall", "p"] == f"{2 * 37 / 256:.3g}"
    assert both.loc["overall", f"{a} 95 % interval"] == percent_range(wilson(12, 16))
    assert both.loc["overall", f"{a} method"] == "95 % Wilson"
    labels = [e.label for e in at.expander if e.label.startswith("Items where they differ")]
    assert labels == ["Items where they differ (8)"]  # 6 + 2, the items counted above
    text = html.unescape(" ".join(h.value for h in at.get("html")))
    assert "some-rm is ahead of rm-b by 25.0 points" in text  # 12/16 - 8/16
    assert "some-rm better on 6 items, rm-b better on 2 items, tied on 8 items" in text
    assert "McNemar's exact test p = 0.289" in text
