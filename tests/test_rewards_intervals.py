"""A reward model's accuracy with its 95 % interval: best-of-n over items, pairwise with an
item's pairs resampled together, RM-Bench within domains; on the page (headline, table) and
in ``metrics --json``."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import store
from needlework.cli import main
from needlework.datasets.transfer import import_bytes
from needlework.figures.stats import bootstrap_mean
from needlework.figures.stats_text import percent_range
from needlework.rewards import registry
from needlework.rewards.results import intervals, rmbench_item_score
from store.scores import save_item_scores
from tests.conftest import ROOT, jsonl

SCORES = [([2.0], [1.0, 0.5, 0.0]),  # right; pairs 3 of 3
          ([1.0], [1.0, 0.0, 0.0]),  # a tie: wrong; pairs 2 of 3
          ([3.0], [0.0, 1.0, 2.0]),  # right; 3 of 3
          ([0.0], [1.0, -1.0, None])]  # wrong (missing); pairs 1 of the 2 counted


def entries() -> list[dict]:
    return [{"id": f"q{k}", "subset": "QA" if k < 2 else "Chat", "chosen_scores": c,
             "rejected_scores": r} for k, (c, r) in enumerate(SCORES)]


def test_best_of_n_and_pairwise_intervals_by_hand() -> None:
    got = intervals("lfrb", entries())
    bon = bootstrap_mean([1, 0, 1, 0])
    assert (got["bon"]["overall"]["low"], got["bon"]["overall"]["high"]) == (bon.low, bon.high)
    assert got["bon"]["subsets"]["QA"]["n"] == 2
    # pairwise: 9 of 11 counted pairs; items resampled with their pairs (3, 3, 3, 2)
    pair = bootstrap_mean([1, 2 / 3, 1, 1 / 2], weights=[3, 3, 3, 2])
    assert got["pairwise"]["overall"]["estimate"] == pytest.approx(9 / 11)
    assert (got["pairwise"]["overall"]["low"], got["pairwise"]["overall"]["high"]) == \
        (pair.low, pair.high)


def test_rmbench_interval_averages_the_domains() -> None:
    def entry(k: int, domain: str, wins: bool) -> dict:
        good, bad = ([3.0, 3.0, 3.0], [0.0, 0.0, 0.0]) if wins else ([0.0] * 3, [3.0] * 3)
        return {"id": f"{domain}{k}", "subset": domain, "chosen_scores": good,
                "rejected_scores": bad}

    rows = [entry(k, "chat", True) for k in range(3)] + [entry(0, "math", False)]
    assert rmbench_item_score(rows[0]) == 1.0 and rmbench_item_score(rows[-1]) == 0.0
    got = intervals("rmbench", rows)["rmbench"]
    # chat 1.0 (3 items), math 0.0 (1 item): (1 + 0) / 2 in every resample, a bootstrap of
    # zero width on 4 items: no interval, said so, rather than 50.0–50.0 %
    assert (got["overall"]["estimate"], got["overall"]["low"], got["overall"]["high"]) == (0.5, None, None)
    assert got["overall"]["method"] == "none"
    assert got["domains"]["chat"]["n"] == 3


def test_metrics_json_has_the_intervals(tmp_path, capsys) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries()), encoding="utf-8")
    assert main(["metrics", "--kind", "bon", "--scores", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["accuracy"] == 0.5  # the figures as before
    bon = bootstrap_mean([1, 0, 1, 0])
    assert report["intervals"]["overall"]["low"] == bon.low
    # Wilson's interval (0/1 per item) resampled nothing: no resamples named (issue 59)
    assert report["intervals"]["overall"]["method"] == "wilson"
    assert report["intervals"]["overall"]["resamples"] is None
    assert report["intervals"]["unit"] == "item"
    assert main(["metrics", "--kind", "pairwise", "--scores", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"]["overall"]["n"] == 4


@pytest.fixture
def app_db(tmp_path, monkeypatch):
    registry.MODELS.clear()
    path = tmp_path / "app.db"
    monkeypatch.setenv("NEEDLEWORK_DB", str(path))
    db = store.connect(path)
    records = [{"id": e["id"], "subset": e["subset"], "prompt": f"Question {k}?",
                "chosen": ["a careful answer"], "rejected": ["one", "two", "three"]}
               for k, e in enumerate(entries())]
    import_bytes(db, jsonl(records), "prefs.jsonl", dataset="prefs", format="lfrb")
    save_item_scores(db, "prefs", "f" * 32, "fp32|full", "some-rm",
                     [{"item_key": e["id"], **{k: e[k] for k in ("subset", "chosen_scores",
                                                                  "rejected_scores")}}
                      for e in entries()])
    yield db
    registry.MODELS.clear()


@pytest.mark.slow
def test_the_page_shows_each_accuracy_with_its_interval(app_db) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["dataset"] = "prefs"
    at.run()
    at.switch_page("app_pages/rewards.py")
    at.run()
    assert not at.exception, at.exception
    table = next(f.value for f in at.dataframe if "best-of-n 95 % interval" in f.value.columns)
    table = table.set_index("subset")
    bon = bootstrap_mean([1, 0, 1, 0])
    assert table.loc["overall", "best-of-n accuracy"] == "50.0%"
    assert table.loc["overall", "best-of-n 95 % interval"] == percent_range(bon)
    pair = bootstrap_mean([1, 2 / 3, 1, 1 / 2], weights=[3, 3, 3, 2])
    assert table.loc["overall", "pairwise 95 % interval"] == percent_range(pair)
    captions = " ".join(c.value for c in at.caption)
    assert f"Best-of-n 50.0%: 2 of 4 items, 95 % interval {percent_range(bon)}" in captions
    assert "95 % percentile bootstrap, 1,000 resamples, seed 0" in captions
